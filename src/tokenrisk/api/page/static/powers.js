// What the owner can still do: each finding as a card (meaning, who, how it was found,
// and the evidence one click away), the buyer selling later, and who holds the powers.
import { $, el, isNumber, duration, sentence, revertNode, addressNode, tokenAmount, readableNumbers } from "./format.js";
import { holderOf, holderKind, contractsUntried } from "./verdict.js";

const WHAT = {
  "buyer sell": "The buyer's sell",
  "other wallet sell": "Another wallet's sell",
  "new buy": "A new buyer's buy",
  "buyer transfer": "The buyer sending to another wallet",
  "sell tax %": "Sell tax",
  "buy tax %": "Buy tax",
  totalSupply: "Total supply",
  "buyer balance": "The buyer's balance",
};
const LABEL_SECONDS = { h: 3600, d: 86400, w: 604800, m: 60 };

function whatText(what) {
  const text = String(what);
  if (WHAT[text]) return WHAT[text];
  const later = /^sell after (\d+)([hdwm])$/.exec(text);
  if (later) return `A sell ${duration(Number(later[1]) * LABEL_SECONDS[later[2]])} after buying`;
  return sentence(text).replace(/\.$/, "");
}

function evidenceValue(what, value, token) {
  const text = String(value);
  if (text === "ok") return el("span", { class: "good" }, "went through");
  if (/%/.test(what) && isNumber(text)) return `${Number(text)}%`;
  if (/^\d+$/.test(text)) return /balance|supply/i.test(what) && token ? tokenAmount(text, token) : BigInt(text).toLocaleString("en-US");
  if (/revert|fail|error|out of gas/i.test(text)) return el("span", { class: "bad" }, "failed: ", revertNode(text));
  return el("code", { class: "revert" }, text);
}

// the pool's V4 hook a finding is about (its evidence names it), shown beside "who"
const HOOK_ROWS = new Set(["hook contract called", "hook contract"]);
function hookOf(finding) {
  const row = (finding.evidence || []).find((e) => HOOK_ROWS.has(String(e.what)));
  return row ? String(row.after) : null;
}

function evidenceTable(finding, token) {
  const rows = (finding.evidence || []).filter((e) => !HOOK_ROWS.has(String(e.what))).map((e) => el("tr", {},
    el("th", { scope: "row" }, whatText(e.what)),
    el("td", { "data-label": "Before" }, evidenceValue(e.what, e.before, token)),
    el("td", { "data-label": "After" }, evidenceValue(e.what, e.after, token))));
  return el("table", { class: "evidence" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "What was tried"),
      el("th", { scope: "col" }, finding.caller ? "Without the owner's call" : "Right after buying"),
      el("th", { scope: "col" }, finding.caller ? "After the owner's call" : "Later"))),
    el("tbody", {}, rows));
}

function howFound(finding) {
  const confidence = String(finding.confidence || finding.detection || "simulated").toLowerCase();
  if (confidence.startsWith("static")) {
    return "Read from the contract's bytecode (static analysis); no simulation confirmed it, so it is less certain.";
  }
  if (!finding.caller) return "Simulated: the same buyer sold again later, with no owner action.";
  return "Simulated: the owner's call was made in a simulation, then the same trades ran again and were compared.";
}

function callLine(finding) {
  if (!finding.caller && !finding.selector) return null;
  const args = (finding.args || []).length ? el("code", { class: "args" }, finding.args.join(", ")) : "no arguments";
  const hook = hookOf(finding);
  const on = hook ? [" on the hook ", addressNode(hook)] : [];
  return el("p", { class: "call" }, "The call: ", el("code", {}, finding.function || finding.selector), ...on, " with ", args, ".");
}

function card(finding, kinds, powers, id, token) {
  const kind = kinds[finding.id] || {};
  const holder = holderOf(powers, finding.caller);
  const hook = hookOf(finding);
  const who = finding.caller
    ? [addressNode(finding.caller), `: ${holderKind(holder).label}`,
      finding.control ? el("span", { class: "muted" }, ` (rated lower for that: ${finding.control})`) : null]
    : ["Nobody: it happens by itself as time passes"];
  return el("article", { class: `finding severity-${finding.severity}`, id, "data-finding": finding.id },
    el("div", { class: "finding-head" }, el("span", { class: "chip" }, finding.severity),
      el("h3", {}, finding.title || kind.title || finding.id)),
    el("p", { class: "meaning" }, finding.meaning || kind.meaning || ""),
    (finding.advice || kind.advice) ? el("p", { class: "advice" }, el("strong", {}, "What to do: "), finding.advice || kind.advice) : null,
    el("dl", { class: "finding-facts" },
      el("dt", {}, "Who can do it"), el("dd", {}, who),
      hook ? el("dt", {}, "Where") : null,
      hook ? el("dd", { "data-hook": hook }, "On the pool's Uniswap V4 hook ", addressNode(hook), ", which runs on every swap") : null,
      el("dt", {}, "How it was found"), el("dd", {}, howFound(finding)),
      finding.detail ? el("dt", {}, "Measured") : null, finding.detail ? el("dd", {}, sentence(readableNumbers(finding.detail))) : null),
    el("details", { class: "evidence-box" }, el("summary", {}, "Show evidence"),
      callLine(finding), evidenceTable(finding, token)));
}

const FOUND_BY = [
  [/^hook (.+)$/, (m) => `${foundByText(m[1]).replace("the token", "the hook")}, for the pool's V4 hook`],
  [/^deployer$/, () => "deployed the token"],
  [/^storage slot (.+)$/, (m) => `stored in the token's storage (slot ${m[1]})`],
  [/^(.+\(\))$/, (m) => `returned by ${m[1]}`],
];

function foundByText(how) {
  for (const [pattern, words] of FOUND_BY) {
    const match = pattern.exec(String(how));
    if (match) return words(match);
  }
  return String(how);
}

function renderCallers(powers) {
  const callers = powers.callers || [];
  const items = callers.map((c) => el("li", {}, addressNode(c.address), `: ${holderKind(c).label}`,
    el("span", { class: "muted" }, ` (${(c.foundBy || []).map(foundByText).join("; ") || "how it was found is not said"})`)));
  if (!items.length) items.push(el("li", {}, powers.renounced ? "Nobody: ownership is renounced." : "No privileged caller was found."));
  $("callers").replaceChildren(...items);
}

function renderFuture(powers) {
  const future = powers.futureSells || [];
  const items = future.map((f) => el("li", { class: f.ok ? "good" : "bad", "data-after": f.after },
    el("strong", {}, `In ${isNumber(f.seconds) ? duration(f.seconds) : f.after}: `),
    f.ok ? "the sell works" : ["the sell fails", f.reason ? [": ", revertNode(f.reason)] : ""]));
  if (!items.length) items.push(el("li", {}, "Not checked."));
  $("future").replaceChildren(...items);
}

function summaryText(powers, count) {
  if (powers.scanned === false) {
    return `The check of the owner's powers could not run${powers.error ? `: ${powers.error}` : ""}. The rest of the answer is complete.`;
  }
  const tried = isNumber(powers.functions)
    ? `Tried ${powers.functions} function${powers.functions === 1 ? "" : "s"} only a privileged caller can use` +
      (isNumber(powers.simulations) ? `, in ${powers.simulations} simulations` : "") + ". "
    : "";
  const found = count ? `${count} power${count === 1 ? "" : "s"} found that can hurt a buyer.` : "None of them could hurt a buyer.";
  const bounded = powers.bounded ? " The scan stopped at its limits, so some functions were not tried." : "";
  return tried + found + bounded;
}

export function renderPowers(powers, kinds, token) {
  $("powers-section").hidden = !powers;
  if (!powers) return;
  const findings = powers.findings || [];
  const used = new Set();
  const cards = findings.map((f) => {
    let id = `finding-${f.id}`;
    for (let n = 2; used.has(id); n++) id = `finding-${f.id}-${n}`;
    used.add(id);
    return card(f, kinds, powers, id, token);
  });
  const count = findings.filter((f) => f.severity !== "info").length;
  $("powers-summary").textContent = summaryText(powers, count);
  $("findings").replaceChildren(...cards);
  renderFuture(powers);
  renderCallers(powers);
  $("powers-scope").textContent = contractsUntried(powers)
    ? "Only arguments from a fixed list are tried, and an owner that is a contract acts only through its own code, so a power can be missed (docs/owner-powers.md, Limits)."
    : "Only arguments from a fixed list are tried, so a power can be missed (docs/owner-powers.md, Limits).";
}
