// tokenrisk's page: asks the service's own API and renders the answer.
// Untrusted text (token names, revert reasons) only ever goes into textContent.
"use strict";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOKEN_PATH = /^\/token\/([^/]+)\/([^/]+)\/?$/;
const SVG = "http://www.w3.org/2000/svg";

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// --- formatting: every number says its unit ----------------------------------------

function percent(value) {
  return value === undefined || value === null ? "not measured" : `${Number(value).toFixed(2)} %`;
}

function gas(value) {
  return value === undefined || value === null ? "not measured" : `${Number(value).toLocaleString("en-US")} gas`;
}

function usd(value) {
  return `$${Number(value).toLocaleString("en-US", { maximumFractionDigits: 2 })}`;
}

function scaled(raw, decimals) {
  // raw integer string -> decimal string, exact (BigInt), at most 6 fraction digits
  let value;
  try { value = BigInt(raw); } catch (_) { return String(raw); }
  const base = 10n ** BigInt(decimals);
  const whole = (value / base).toLocaleString("en-US");
  let fraction = (value % base).toString().padStart(decimals, "0").slice(0, 6).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

// --- the API ------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, params) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null));
  const headers = { Accept: "application/json" };
  const key = localStorage.getItem("tokenrisk.apiKey");
  if (key) headers["X-API-KEY"] = key;
  const response = await fetch(`${path}?${query}`, { headers });
  let body = null;
  try { body = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    if (response.status === 401) $("key-form").hidden = false;
    const message = body && typeof body.error === "string" ? body.error : response.statusText;
    throw new ApiError(response.status, message);
  }
  return { body, headers: response.headers };
}

// --- state and navigation -------------------------------------------------------------

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
}

function clearAll() {
  $("error").hidden = true;
  $("error").textContent = "";
  $("result").hidden = true;
  $("status").textContent = "";
}

async function run(address, chain) {
  clearAll();
  if (!ADDRESS.test(address)) {
    showError("That is not an address: expected 0x followed by 40 hexadecimal characters.");
    return;
  }
  $("status").textContent = "Simulating buy, transfer and sell…";
  $("check").disabled = true;
  try {
    const { body, headers } = await api("/v2/IsHoneypot", { address, chainID: chain });
    const chainId = body.chain.id;
    const path = `/token/${chainId}/${body.token.address}`;
    if (location.pathname !== path) history.replaceState({ address, chain: chainId }, "", path);
    $("status").textContent = skippedNote(headers);
    renderHoneypot(body);
    $("result").hidden = false;
    await Promise.all([loadPairs(body.token.address, chainId), loadHolders(body, chainId)]);
  } catch (error) {
    $("status").textContent = "";
    showError(error instanceof ApiError ? `${error.message} (HTTP ${error.status})` : String(error));
  } finally {
    $("check").disabled = false;
  }
}

function skippedNote(headers) {
  const skipped = headers.get("X-Skipped-Chains");
  return skipped ? `Not searched (node unavailable): chain ${skipped}.` : "";
}

// --- IsHoneypot -----------------------------------------------------------------------

function renderHoneypot(body) {
  const token = body.token;
  $("token-title").textContent = `${token.name} (${token.symbol}) on ${body.chain.name}`;
  $("token-address").textContent = token.address;
  renderVerdict(body);
  renderJourney(body);
  renderCosts(body);
  renderPowers(body.ownerPowers);
  renderCode(body.contractCode);
  renderHolderChart(body.holderAnalysis);
  const link = el("a", { href: location.pathname }, location.origin + location.pathname);
  $("share").replaceChildren("Share: ", link);
}

function renderVerdict(body) {
  const box = $("verdict");
  const result = body.honeypotResult;
  let text = "UNKNOWN: the simulation could not run";
  let kind = "unknown";
  if (result && result.isHoneypot) {
    text = "HONEYPOT" + (result.honeypotReason ? `: ${result.honeypotReason}` : "");
    kind = "honeypot";
  } else if (result) {
    text = "Not a honeypot: a buyer could sell";
    kind = "ok";
  }
  box.textContent = text;
  box.dataset.kind = kind;
  const summary = body.summary;
  const level = summary.riskLevel === undefined ? "" : ` (level ${summary.riskLevel} of 100)`;
  $("risk").replaceChildren("Risk: ", el("strong", { class: `risk-${summary.risk}` }, summary.risk), level);
  const reasons = $("reasons");
  reasons.replaceChildren();
  for (const flag of summary.flags || []) {
    reasons.append(el("li", { class: `severity-${flag.severity}` },
      el("span", { class: "severity" }, flag.severity), " ", flag.description));
  }
}

function journeySteps(body) {
  if (Array.isArray(body.journey)) return body.journey;
  return [];  // no simulation ran: nothing to show step by step
}

function renderJourney(body) {
  const list = $("journey");
  list.replaceChildren();
  const labels = { buy: "Buy", transfer: "Transfer to another wallet", sell: "Sell" };
  for (const step of journeySteps(body)) {
    const facts = [];
    if (step.tax !== undefined) facts.push(`tax ${percent(step.tax)}`);
    if (step.gas !== undefined) facts.push(gas(step.gas));
    const item = el("li", { class: `step step-${step.outcome.replace(" ", "-")}`, "data-step": step.step },
      el("span", { class: "step-name" }, labels[step.step] || step.step),
      el("span", { class: "outcome" }, step.outcome),
      facts.length ? el("span", { class: "facts" }, facts.join(", ")) : null,
      step.reason ? el("span", { class: "reason" }, step.reason) : null);
    list.append(item);
  }
  $("simulation-error").textContent = body.simulationSuccess ? "" : (body.simulationError || "");
}

function renderCosts(body) {
  const rows = [];
  const sim = body.simulationResult || {};
  const withSymbol = body.withToken ? body.withToken.symbol : "";
  rows.push(["Buy tax", percent(sim.buyTax)], ["Sell tax", percent(sim.sellTax)],
    ["Transfer tax", percent(sim.transferTax)], ["Buy gas", gas(sim.buyGas)], ["Sell gas", gas(sim.sellGas)]);
  for (const [key, label] of [["maxBuy", "Largest buy"], ["maxSell", "Largest sell"]]) {
    const limit = sim[key];
    rows.push([label, limit
      ? `${limit.token.toLocaleString("en-US")} ${body.token.symbol} (= ${limit.withToken.toLocaleString("en-US")} ${withSymbol})`
      : "no limit found"]);
  }
  if (body.pair) rows.push(["Pool used", `${body.pair.pair.name} ${body.pair.pair.type}, liquidity ${usd(body.pair.liquidity)}`]);
  fillTable($("costs"), rows);
}

function fillTable(table, rows) {
  const tbody = table.tBodies[0];
  tbody.replaceChildren(...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))));
}

function renderCode(code) {
  $("code-section").hidden = !code;
  const rows = [];
  if (code) {
    rows.push(["Token contract open source", code.rootOpenSource ? "yes" : "no"],
      ["Everything it calls open source", code.openSource ? "yes" : "no"],
      ["Is a proxy", code.isProxy ? "yes" : "no"], ["Delegatecalls on the path", code.hasProxyCalls ? "yes" : "no"]);
  }
  fillTable($("code"), rows);
}

// Owner powers come from an extension whose shape may grow: render any JSON readably.
function renderPowers(powers) {
  $("powers-section").hidden = powers === undefined || powers === null;
  $("powers").replaceChildren(powers === undefined || powers === null ? "" : jsonView(powers));
}

function jsonView(value) {
  if (Array.isArray(value)) {
    if (value.length && value.every((v) => v && typeof v === "object" && !Array.isArray(v))) {
      const keys = [...new Set(value.flatMap(Object.keys))];
      return el("table", { class: "json" },
        el("thead", {}, el("tr", {}, ...keys.map((k) => el("th", {}, k)))),
        el("tbody", {}, ...value.map((row) => el("tr", {}, ...keys.map((k) => el("td", {}, row[k] === undefined ? "" : jsonView(row[k])))))));
    }
    return el("span", {}, value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))).join(", "));
  }
  if (value && typeof value === "object") {
    return el("dl", { class: "json" }, ...Object.entries(value).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, jsonView(v))]));
  }
  return document.createTextNode(String(value));
}

// --- holders' sells: a bar chart (hand-written SVG) ----------------------------------

function renderHolderChart(analysis) {
  $("holders-chart-section").hidden = !analysis;
  const box = $("holders-chart");
  box.replaceChildren();
  if (!analysis) return;
  $("holders-summary").textContent =
    `${analysis.holders} holders simulated: ${analysis.successful} could sell, ${analysis.failed} could not` +
    (Number(analysis.siphoned) ? `, ${analysis.siphoned} had tokens taken` : "") +
    `. Average tax ${percent(analysis.averageTax)}, highest ${percent(analysis.highestTax)}, average ${gas(analysis.averageGas)}.`;
  const bars = (analysis.taxDistribution || []).map((b) => ({ label: `${b.tax} %`, count: b.count, kind: "tax" }));
  if (Number(analysis.failed)) bars.push({ label: "failed", count: Number(analysis.failed), kind: "failed" });
  if (Number(analysis.siphoned)) bars.push({ label: "siphoned", count: Number(analysis.siphoned), kind: "siphoned" });
  box.append(barChart(bars));
}

function barChart(bars) {
  const width = Math.max(320, 60 * bars.length + 60), height = 220, top = 20, bottom = 40, left = 40;
  const max = Math.max(1, ...bars.map((b) => b.count));
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": "wallets by sell tax paid, and wallets whose sell failed" });
  const plot = height - top - bottom;
  chart.append(svg("line", { x1: left, y1: top + plot, x2: width - 10, y2: top + plot, class: "axis" }));
  chart.append(svg("text", { x: 4, y: top - 6, class: "axis-label" }, "wallets"));
  bars.forEach((bar, i) => {
    const h = Math.max(1, Math.round((bar.count / max) * plot));
    const x = left + 10 + i * 60;
    const rect = svg("rect", { x, y: top + plot - h, width: 40, height: h, class: `bar bar-${bar.kind}`,
      "data-label": bar.label, "data-count": bar.count });
    rect.append(svg("title", {}, `${bar.label}: ${bar.count} wallets`));
    chart.append(rect);
    chart.append(svg("text", { x: x + 20, y: top + plot - h - 4, "text-anchor": "middle", class: "count" }, bar.count));
    chart.append(svg("text", { x: x + 20, y: top + plot + 16, "text-anchor": "middle", class: "label" }, bar.label));
  });
  chart.append(svg("text", { x: left, y: height - 6, class: "axis-label" }, "sell tax paid (token units) · failed sells"));
  return chart;
}

// --- pools and holders ------------------------------------------------------------------

async function loadPairs(address, chainId) {
  const tbody = $("pairs").tBodies[0];
  tbody.replaceChildren();
  $("pairs-status").textContent = "Loading pools…";
  try {
    const { body } = await api("/v1/GetPairs", { address, chainID: chainId });
    $("pairs-status").textContent = body.length ? "" : "No pools found.";
    for (const item of body) {
      tbody.append(el("tr", {}, el("td", {}, item.Pair.Name),
        el("td", { class: "mono" }, item.Pair.Address), el("td", {}, usd(item.Liquidity)),
        el("td", { class: "mono" }, item.Router)));
    }
  } catch (error) {
    $("pairs-status").textContent = `Pools unavailable: ${error.message}`;
  }
}

async function loadHolders(honeypot, chainId) {
  const tbody = $("holders").tBodies[0];
  tbody.replaceChildren();
  $("holders-status").textContent = "Loading holders…";
  try {
    const { body } = await api("/v1/TopHolders", { address: honeypot.token.address, chainID: chainId });
    const decimals = honeypot.token.decimals;
    const supply = BigInt(body.totalSupply || "0");
    $("holders-status").textContent = body.holders.length ? `Total supply ${scaled(body.totalSupply, decimals)} ${honeypot.token.symbol}` : "No holders found.";
    body.holders.forEach((holder, i) => {
      const share = supply > 0n ? `${(Number((BigInt(holder.balance) * 1000000n) / supply) / 10000).toFixed(2)} %` : "";
      tbody.append(el("tr", {}, el("td", {}, i + 1), el("td", { class: "mono" }, holder.address),
        el("td", {}, `${scaled(holder.balance, decimals)} ${honeypot.token.symbol}`), el("td", {}, share),
        el("td", {}, holder.isContract ? "contract" : "")));
    });
  } catch (error) {
    $("holders-status").textContent = `Holders unavailable: ${error.message}`;
  }
}

// --- start -------------------------------------------------------------------------------

function start() {
  $("check-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const address = $("address").value.trim();
    const chain = $("chain").value;
    if (ADDRESS.test(address) && chain) history.pushState({}, "", `/token/${chain}/${address}`);
    run(address, chain);
  });
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem("tokenrisk.apiKey", $("api-key").value.trim());
    $("key-form").hidden = true;
    run($("address").value.trim(), $("chain").value);
  });
  window.addEventListener("popstate", fromLocation);
  fromLocation();
}

function fromLocation() {
  const match = TOKEN_PATH.exec(location.pathname);
  if (!match) return;
  $("address").value = decodeURIComponent(match[2]);
  const option = [...$("chain").options].find((o) => o.value === match[1]);
  if (option) $("chain").value = match[1];
  run(decodeURIComponent(match[2]), decodeURIComponent(match[1]));
}

document.addEventListener("DOMContentLoaded", start);
