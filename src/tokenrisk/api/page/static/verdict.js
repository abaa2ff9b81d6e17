// The verdict a person reads first: what a buyer can do now, what the owner can still
// do to them, and the risk, all in one coloured box whose colour follows the risk.
import { $, el, percent, isNumber, sentence, duration, capitalised } from "./format.js";

const RISK_KIND = { very_low: "ok", low: "ok", medium: "caution", high: "danger", very_high: "danger", honeypot: "honeypot" };
const RISK_WORDS = { very_low: "very low", low: "low", medium: "medium", high: "high", very_high: "very high", honeypot: "honeypot", unknown: "unknown" };
export const TRACE_FLAG = "call_trace_unavailable";

// ok | caution | danger | honeypot | unknown: the honeypot decision first, then the risk
export function verdictKind(body) {
  const result = body.honeypotResult;
  if (!result) return "unknown";
  if (result.isHoneypot) return "honeypot";
  return RISK_KIND[body.summary && body.summary.risk] || "unknown";
}

export function findingKinds() {
  try { return JSON.parse($("finding-kinds").textContent || "{}"); } catch (_) { return {}; }
}

export function harmful(findings) {
  return (findings || []).filter((f) => f && f.severity !== "info");
}

// The caller record of a finding (by address), and what kind of holder it is
export function holderOf(powers, address) {
  const callers = (powers && powers.callers) || [];
  return callers.find((c) => c && c.address && address && c.address.toLowerCase() === String(address).toLowerCase()) || null;
}

// An API that says what each caller is (kind) also tries contracts as senders; before
// that, a contract caller was listed but never tried
export function contractsUntried(powers) {
  const callers = (powers && powers.callers) || [];
  return callers.some((c) => c && c.isContract && c.kind === undefined);
}

export function holderKind(caller) {
  if (!caller) return { label: "not named", contract: false };
  const kind = String(caller.kind || caller.type || "").toLowerCase();
  const delay = caller.delay ?? caller.delaySeconds ?? caller.minDelay;
  const threshold = caller.threshold;
  const owners = caller.owners ?? caller.signers;
  if (kind === "timelock" || (isNumber(delay) && kind !== "eoa")) {
    return { label: isNumber(delay) ? `a timelock: every call waits ${duration(delay)}` : "a timelock", contract: true, delay };
  }
  if (kind === "multisig" || isNumber(threshold)) {
    const count = Array.isArray(owners) ? owners.length : owners;
    const of = isNumber(threshold) ? ` needing ${threshold}${isNumber(count) ? ` of ${count}` : ""} signatures` : "";
    return { label: `a multisig${of}`, contract: true };
  }
  if (kind === "eoa" || caller.isContract === false) return { label: "a single wallet (one private key)", contract: false, eoa: true };
  return { label: "a contract (it acts only through its own code)", contract: true };
}

// A finding as words for the verdict: "Owner can stop trading" held by a single wallet ->
// { verb: "stop trading", when: " at any time" }; a title not about the owner stays whole
export function powerWords(finding, kinds, powers) {
  const title = finding.title || (kinds[finding.id] && kinds[finding.id].title) || finding.id;
  const holder = holderKind(holderOf(powers, finding.caller));
  let when = "";
  if (finding.caller && holder.eoa) when = " at any time";
  else if (finding.caller && isNumber(holder.delay)) when = ` after a wait of ${duration(holder.delay)}`;
  const verb = /^owner can /i.test(title) ? title.slice(10) : "";
  return { verb, when, text: verb ? `The owner can ${verb}${when}.` : sentence(title) };
}

// "The owner can block all sells and raise the sell tax at any time. It has 2 more powers, below."
export function powersSentence(findings, kinds, powers) {
  const seen = new Map();
  for (const f of findings) {
    const words = powerWords(f, kinds, powers);
    if (!seen.has(words.text)) seen.set(words.text, words);
  }
  const items = [...seen.values()];
  const [a, b] = items;
  let text = a.text;
  if (b && a.verb && b.verb && a.when === b.when) text = `The owner can ${a.verb} and ${b.verb}${a.when}.`;
  else if (b) text = `${a.text} ${b.text}`;
  const more = items.length - (b ? 2 : 1);
  return more > 0 ? `${text} It has ${more} more power${more === 1 ? "" : "s"}, below.` : text;
}

function journeyStep(body, name) {
  return (body.journey || []).find((s) => s.step === name);
}

function nowSentence(body, kind) {
  const result = body.honeypotResult;
  if (kind === "unknown" && !result) {
    return ["Could not tell whether a buyer can sell.", body.simulationError ? sentence(body.simulationError) : ""];
  }
  if (result && result.isHoneypot) {
    const sell = journeyStep(body, "sell");
    const head = sell && sell.outcome === "ok"
      ? "Honeypot: a sell goes through, but the buyer gets (almost) nothing back."
      : "Honeypot: a buyer cannot sell this token.";
    return [head, result.honeypotReason ? sentence(result.honeypotReason) : ""];
  }
  const sim = body.simulationResult || {};
  const tax = isNumber(sim.sellTax) && Number(sim.sellTax) > 0 ? ` with a ${percent(sim.sellTax)} sell tax` : "";
  const unmeasured = sim.sellTax === undefined || sim.sellTax === null ? " (the sell tax was not measured)" : "";
  const transfer = journeyStep(body, "transfer");
  const moved = transfer && transfer.outcome === "failed" ? " Sending it to another wallet fails." : "";
  return [`Sells work today${tax}${unmeasured}.${moved}`, "A simulated buyer bought it, sent it to a second wallet and sold it."];
}

function ownerSentence(body, kind, kinds) {
  const powers = body.ownerPowers;
  if (!powers) return "The owner's powers were not checked.";
  if (powers.scanned === false) {
    return `The owner's powers could not be checked${powers.error ? ` (${powers.error})` : ""}.`;
  }
  const bad = harmful(powers.findings);
  if (bad.length) {
    return powersSentence(bad, kinds, powers);
  }
  if (powers.renounced) return "Ownership is renounced and no one else could use a privileged function.";
  const tried = isNumber(powers.functions) ? ` (${powers.functions} owner functions tried)` : "";
  const base = `No owner power that could hurt a buyer was found${tried}.`;
  return contractsUntried(powers) ? `${base} The owner is a contract; what it can do through its own code is not tried.` : base;
}

function concern(body, kind, kinds) {
  if (kind !== "caution" && kind !== "danger") return "";
  const powers = body.ownerPowers;
  if (powers && harmful(powers.findings).length) return "";
  const flag = ((body.summary && body.summary.flags) || []).find((f) => f.severity !== "info" && !kinds[f.flag]);
  return flag ? `Main concern: ${sentence(flag.description)}` : "";
}

export function renderVerdict(body, kinds) {
  const kind = verdictKind(body);
  const box = $("verdict");
  box.dataset.kind = kind;
  const [now, why] = nowSentence(body, kind);
  $("verdict-now").replaceChildren(el("strong", {}, now), ...(why ? [el("span", { class: "verdict-why" }, " ", why)] : []));
  const extra = concern(body, kind, kinds);
  $("verdict-owner").classList.toggle("power", Boolean(body.ownerPowers && harmful(body.ownerPowers.findings).length));
  $("verdict-owner").replaceChildren(ownerSentence(body, kind, kinds), ...(extra ? [el("span", { class: "verdict-why" }, " ", extra)] : []));
  const summary = body.summary || {};
  const level = isNumber(summary.riskLevel) ? ` · ${summary.riskLevel} of 100` : "";
  $("risk").replaceChildren("Risk: ", el("strong", {}, RISK_WORDS[summary.risk] || summary.risk || "unknown"), level);
  renderReasons(summary.flags || [], kinds);
  renderPartial(body);
}

function renderReasons(flags, kinds) {
  const items = flags.map((flag) => {
    const finding = kinds[flag.flag];
    const text = finding
      ? [finding.title, ". ", el("a", { href: `#finding-${flag.flag}` }, "Details below")]
      : [flag.description];
    return el("li", { class: `severity-${flag.severity}`, "data-flag": flag.flag },
      el("span", { class: "chip" }, flag.severity), " ", ...text);
  });
  if (!items.length) items.push(el("li", { class: "severity-none" }, "Nothing the checks look for was found."));
  $("reasons").replaceChildren(...items);
}

// A partial answer: what the node's limits left unchecked, and what to do
export function partialItems(body, skipped) {
  const items = [];
  for (const entry of body.unchecked || []) {
    const text = String(entry);
    const at = text.indexOf(": ");
    items.push(at > 0 ? [capitalised(text.slice(0, at)), sentence(text.slice(at + 2))] : [sentence(text), ""]);
  }
  const flags = (body.summary && body.summary.flags) || [];
  const trace = flags.find((f) => f.flag === TRACE_FLAG);
  if (trace) items.push(["Contracts called while trading", sentence(trace.description)]);
  if (skipped) items.push([`Chain ${skipped}`, "Not searched: its node did not answer."]);
  return items;
}

function renderPartial(body) {
  const items = partialItems(body, $("partial").dataset.skipped || "");
  $("partial").hidden = items.length === 0;
  $("partial-list").replaceChildren(...items.map(([what, why]) =>
    el("li", {}, el("strong", {}, what), why ? `: ${why}` : "")));
  $("partial-help").textContent = items.length
    ? "Treat these parts as unknown, not as safe. To check them too, point tokenrisk at a node that supports them (docs/chains.md lists what each node can do)."
    : "";
}
