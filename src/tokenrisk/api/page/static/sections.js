// The journey, taxes and limits, contract code, pools and top holders, in plain words.
import { $, el, percent, gas, usd, amount, tokenAmount, compact, scaled, isNumber, sentence, revertNode, addressNode, fillTable } from "./format.js";

const STEP_NAMES = { buy: "Buy", transfer: "Send to another wallet", sell: "Sell" };
const OUTCOME_WORDS = { ok: "went through", failed: "failed", "not reached": "not tried: an earlier step failed" };

export function renderJourney(body) {
  const steps = Array.isArray(body.journey) ? body.journey : [];
  $("journey").replaceChildren(...steps.map((step, i) => {
    const facts = [];
    if (step.tax !== undefined && step.tax !== null) facts.push(`tax ${percent(step.tax)}`);
    if (step.gas !== undefined && step.gas !== null) facts.push(gas(step.gas));
    return el("li", { class: `step step-${String(step.outcome).replace(/\s+/g, "-")}`, "data-step": step.step, "data-outcome": step.outcome },
      el("span", { class: "step-name" }, `${i + 1}. ${STEP_NAMES[step.step] || step.step}`),
      el("span", { class: "outcome" }, OUTCOME_WORDS[step.outcome] || step.outcome),
      facts.length ? el("span", { class: "step-facts" }, facts.join(" · ")) : null,
      step.reason ? el("span", { class: "reason" }, "Reverted with ", revertNode(step.reason)) : null);
  }));
  const error = body.simulationSuccess ? "" : body.simulationError;
  $("simulation-error").textContent = steps.length ? (error ? sentence(error) : "")
    : `No buy could be simulated${error ? `: ${error}` : ""}.`;
}

function stepOutcome(body, name) {
  const step = (body.journey || []).find((s) => s.step === name);
  return step ? step.outcome : undefined;
}

// A leg's tax in words: what the buyer lost against the quote, and in tokens when they differ
function taxText(body, leg, key) {
  const outcome = stepOutcome(body, leg);
  if (outcome === "failed") return `the ${leg} failed: nothing arrived`;
  if (outcome === "not reached") return "not measured: an earlier step failed";
  const sim = body.simulationResult || {};
  const details = (body.taxDetails || {})[leg] || {};
  const note = notMeasured(details);
  if (!isNumber(sim[key])) return `not measured${note ? `: ${note}` : ""}`;
  let text = percent(sim[key]);
  if (isNumber(details.tokenUnit) && isNumber(details.effective) && Math.abs(details.effective - details.tokenUnit) >= 0.5) {
    text += ` of the value quoted (${percent(details.tokenUnit)} of the tokens)`;
  }
  return note ? `${text} (not measured ${note})` : text;
}

// taxDetails' "notMeasured": {effective|tokenUnit: why} for a leg, or a sentence
function notMeasured(details) {
  const missing = details.notMeasured ?? details.unmeasured;
  if (typeof missing === "string") return missing;
  if (!missing || typeof missing !== "object") return "";
  const figure = { effective: "against the quote", tokenUnit: "in tokens" };
  return Object.entries(missing).map(([what, why]) => `${figure[what] || what}: ${why}`).join("; ");
}

function gasText(body, leg, key) {
  const outcome = stepOutcome(body, leg);
  if (outcome && outcome !== "ok") return `none: the ${leg} did not go through`;
  return gas((body.simulationResult || {})[key]);
}

function limitText(limit, body) {
  if (!limit) return "no limit found";
  const withSymbol = body.withToken ? body.withToken.symbol : "";
  return `${amount(limit.token)} ${body.token.symbol} (worth ${amount(limit.withToken)} ${withSymbol})`;
}

export function renderCosts(body) {
  const sim = body.simulationResult || {};
  const rows = [
    ["Buy tax", taxText(body, "buy", "buyTax")],
    ["Sell tax", taxText(body, "sell", "sellTax")],
    ["Tax on sending to another wallet", taxText(body, "transfer", "transferTax")],
    ["Gas for a buy", gasText(body, "buy", "buyGas")],
    ["Gas for a sell", gasText(body, "sell", "sellGas")],
    ["Largest buy that works", body.simulationResult ? limitText(sim.maxBuy, body) : "not measured"],
    ["Largest sell that works", body.simulationResult ? limitText(sim.maxSell, body) : "not measured"],
  ];
  const holders = (body.taxDetails || {}).holders;
  if (holders && (isNumber(holders.averageEffective) || holders.notMeasured)) {
    rows.push(["Average sell tax of the real holders who could sell", isNumber(holders.averageEffective)
      ? percent(holders.averageEffective) : `not measured: ${holders.notMeasured}`]);
  }
  if (body.pair) {
    const p = body.pair;
    const liquidity = isNumber(p.liquidity) ? `${usd(p.liquidity)} liquidity` : `liquidity unknown${p.liquidityUnknown ? ` (${p.liquidityUnknown})` : ""}`;
    rows.push(["Pool the simulation traded on", [`${p.pair.name}, ${liquidity}`, ...hookText(p.pair)]]);
  }
  fillTable($("costs"), rows);
  const notes = ((body.taxDetails || {}).explanation || [])
    .filter((n) => !/^not checked: /.test(n) && !/no debug_traceCall/.test(n));
  $("tax-notes").replaceChildren(...notes.map((n) => el("li", {}, sentence(n))));
}

export function renderCode(body) {
  const code = body.contractCode;
  $("code-section").hidden = !code;
  if (!code) return;
  const unknown = (code.verificationUnknown || []).length;
  const yes = (v, no) => (v ? "yes" : no);
  fillTable($("code"), [
    ["Token's source code published", yes(code.rootOpenSource, unknown ? "not known to be published" : "no")],
    ["Everything it calls while trading published", yes(code.openSource, unknown ? `not known for ${unknown} contract${unknown === 1 ? "" : "s"} (no verification source answered)` : "no")],
    ["A proxy (its code can be swapped)", yes(code.isProxy, "no")],
    ["Delegatecalls while trading", yes(code.hasProxyCalls, "none")],
  ]);
}


// A Uniswap V4 pool's hook runs on every swap: its address and what it may do there
function hookText(pair) {
  const hooks = pair.hooks;
  if (!hooks || /^0x0+$/.test(String(hooks))) return [];
  const may = (pair.hookPermissions || []).join(", ");
  return [el("br"), "its hook (runs on every swap) ", addressNode(String(hooks)),
    may ? el("span", { class: "muted" }, ` (${may})`) : null];
}

function feeText(item) {
  const fee = item.Fee ?? item.FeeTier ?? (item.Pair && item.Pair.Fee);
  const hooks = item.Hooks ?? (item.Pair && item.Pair.Hooks);
  const parts = [isNumber(fee) ? `${Number(fee) / 10000}%` : "not reported"];
  if (hooks && !/^0x0+$/.test(String(hooks))) parts.push(el("br"), "hook ", addressNode(String(hooks)));
  return parts;
}

export async function loadPairs(api, address, chainId) {
  const tbody = $("pairs").tBodies[0];
  tbody.replaceChildren();
  $("pairs-status").textContent = "Loading pools…";
  try {
    const { body } = await api("/v1/GetPairs", { address, chainID: chainId });
    $("pairs-status").textContent = body.length ? "" : "No pools found.";
    for (const item of body) {
      const name = String(item.Pair.Name);
      const at = name.indexOf(": ");
      const liquidity = isNumber(item.Liquidity) ? usd(item.Liquidity) : `unknown${item.LiquidityUnknown ? ` (${item.LiquidityUnknown})` : ""}`;
      tbody.append(el("tr", {},
        el("td", { "data-label": "DEX" }, at > 0 ? name.slice(0, at) : name),
        el("td", { "data-label": "Pool" }, at > 0 ? name.slice(at + 2) : ""),
        el("td", { "data-label": "Fee" }, feeText(item)),
        el("td", { "data-label": "Liquidity" }, liquidity),
        el("td", { "data-label": "Address" }, addressNode(item.Pair.Address))));
    }
  } catch (error) {
    $("pairs-status").textContent = `Pools could not be loaded: ${error.message}`;
  }
}

export async function loadHolders(api, honeypot, chainId) {
  const tbody = $("holders").tBodies[0];
  tbody.replaceChildren();
  $("holders-more").hidden = true;
  $("holders-status").textContent = "Loading holders…";
  const token = honeypot.token;
  try {
    const { body } = await api("/v1/TopHolders", { address: token.address, chainID: chainId });
    const supply = BigInt(body.totalSupply || "0");
    $("holders-balance-head").textContent = `balance (${token.symbol})`;
    $("holders-status").textContent = body.holders.length
      ? `Total supply ${tokenAmount(body.totalSupply, token)}.` : "No holders found.";
    const shown = 10;
    body.holders.forEach((holder, i) => {
      const share = supply > 0n ? Number((BigInt(holder.balance) * 1000000n) / supply) / 10000 : null;
      const bar = el("span", { class: "share-bar", "aria-hidden": "true" });
      if (share !== null) bar.style.width = `${Math.min(100, share)}%`;
      tbody.append(el("tr", { hidden: i >= shown },
        el("td", {}, i + 1),
        el("td", {}, addressNode(holder.address), holder.isContract ? el("span", { class: "tag" }, "contract") : null),
        el("td", { class: "num" }, compact(scaled(holder.balance, token.decimals))),
        el("td", { class: "share num" }, share === null ? "" : `${share.toFixed(2)}%`, el("span", { class: "share-track" }, bar))));
    });
    $("holders-more").hidden = body.holders.length <= shown;
    $("holders-more").textContent = `Show all ${body.holders.length} holders`;
  } catch (error) {
    $("holders-status").textContent = `Holders could not be loaded: ${error.message}`;
  }
}

export function showAllHolders() {
  for (const row of $("holders").tBodies[0].rows) row.hidden = false;
  $("holders-more").hidden = true;
}
