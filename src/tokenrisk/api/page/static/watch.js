// The watch feature on the page (docs/watch.md): a live feed of new pools and alerts from
// GET /v2/watch/events (an EventSource), and a "Watch this token" button on a result.
// Shown only when the server says a watcher follows its chains (body[data-watch="on"]).
// Event bodies come from the chain (token addresses, flags): text nodes only.
import { $, el, addressNode, percent } from "./format.js";

const KEY = "tokenrisk.apiKey";
const MAX_CARDS = 50; // the feed keeps the newest cards; older ones are in the API
const FIELDS = {
  isHoneypot: "Honeypot", risk: "Risk", buyTax: "Buy tax", sellTax: "Sell tax",
  transferTax: "Transfer tax", flag: "Flag",
};
let feed = null;
let current = null; // [address, chainID] of the token shown

export function watchEnabled() {
  return document.body.dataset.watch === "on";
}

function apiKey() {
  return localStorage.getItem(KEY) || "";
}

// --- the live feed -----------------------------------------------------------------------

export function startFeed() {
  if (!watchEnabled() || typeof EventSource === "undefined") return;
  $("feed-section").hidden = false;
  if (feed) feed.close();
  const key = apiKey(); // EventSource sends no headers: the key goes as ?apiKey=
  feed = new EventSource(`/v2/watch/events${key ? `?apiKey=${encodeURIComponent(key)}` : ""}`);
  feed.addEventListener("open", () => { $("feed-status").textContent = "Connected: new events appear at the top as the watcher commits them."; });
  feed.addEventListener("error", () => {
    $("feed-status").textContent = "Lost the connection to the watcher's stream; reconnecting (nothing is missed: the stream resumes where it stopped).";
  });
  for (const kind of ["new_pool", "alert", "retracted"]) {
    feed.addEventListener(kind, (message) => {
      let body;
      try { body = JSON.parse(message.data); } catch (_) { return; }
      addCard(kind, body);
    });
  }
}

function addCard(kind, body) {
  const list = $("feed");
  if (kind === "retracted") {
    const undone = list.querySelector(`[data-event-id="${CSS.escape(String(body.eventId))}"]`);
    if (undone) {
      undone.dataset.retracted = "true";
      undone.append(el("p", { class: "retracted" }, `Undone by a chain reorganisation at block ${body.block}: this did not happen after all.`));
    }
    return;
  }
  const card = kind === "alert" ? alertCard(body) : poolCard(body);
  card.dataset.eventId = String(body.id || "");
  list.prepend(card);
  while (list.children.length > MAX_CARDS) list.lastElementChild.remove();
}

function tokenLink(body) {
  return el("a", { href: `/token/${encodeURIComponent(body.chainID)}/${encodeURIComponent(body.token)}` }, addressNode(String(body.token)));
}

function verdictText(answer) {
  if (!answer) return "Not checked yet.";
  if (answer.isHoneypot === true) return `Honeypot: a buyer cannot sell it${answer.honeypotReason ? ` (${answer.honeypotReason})` : ""}.`;
  if (answer.isHoneypot === false) return `Sells work · risk ${String(answer.risk || "unknown").replace(/_/g, " ")} · buy tax ${percent(answer.buyTax)}, sell tax ${percent(answer.sellTax)}.`;
  return "Could not tell whether a buyer can sell.";
}

function where(body) {
  return el("p", { class: "feed-where muted" }, `Block ${body.block} on chain ${body.chainID}`,
    body.transaction ? [" · transaction ", el("span", { class: "mono tx", title: body.transaction }, String(body.transaction))] : " · no single transaction (an interval re-check)");
}

function poolCard(body) {
  const honeypot = body.answer && body.answer.isHoneypot === true;
  return el("li", { class: `feed-card ${honeypot ? "bad" : ""}`, "data-kind": "new_pool", "data-seq": body.seq, "data-token": String(body.token).toLowerCase() },
    el("p", { class: "feed-head" }, el("span", { class: "chip" }, "New pool"), " ", tokenLink(body)),
    el("p", { class: "feed-verdict" }, verdictText(body.answer)),
    el("p", { class: "muted" }, "Pool ", addressNode(String(body.pool || "unknown"))),
    where(body));
}

function shown(field, value) {
  if (value === null || value === undefined) return field === "flag" ? "none" : "not measured";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (/Tax$/.test(field)) return percent(value);
  return String(value).replace(/_/g, " ");
}

function changeItem(change) {
  const field = String(change.field);
  if (field === "flag") {
    const [verb, flag] = change.after ? ["appeared", change.after] : ["went away", change.before];
    return el("li", {}, "Flag ", el("code", {}, String(flag)), ` ${verb}`);
  }
  return el("li", { "data-field": field }, `${FIELDS[field] || field}: `,
    el("span", { class: "before" }, shown(field, change.before)), " → ",
    el("strong", { class: "after" }, shown(field, change.after)));
}

function alertCard(body) {
  const changes = Array.isArray(body.changes) ? body.changes : [];
  return el("li", { class: "feed-card bad", "data-kind": "alert", "data-seq": body.seq, "data-token": String(body.token).toLowerCase() },
    el("p", { class: "feed-head" }, el("span", { class: "chip" }, "Alert"), " ", tokenLink(body), " changed"),
    el("ul", { class: "changes" }, changes.map(changeItem)),
    el("p", { class: "feed-verdict" }, `Now: ${verdictText(body.answer)}`),
    where(body));
}

// --- the watch button ------------------------------------------------------------------------

async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body) headers["Content-Type"] = "application/json";
  const key = apiKey();
  if (key) headers["X-API-KEY"] = key;
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  let answer = null;
  try { answer = await response.json(); } catch (_) { /* not JSON */ }
  return { status: response.status, ok: response.ok, body: answer };
}

function failure(status, body) {
  const said = body && typeof body.error === "string" ? ` The server said: “${body.error}” (HTTP ${status}).` : ` (HTTP ${status})`;
  switch (status) {
    case 401:
      $("key-form").hidden = false;
      return `Watching needs an API key on this server: enter it in the key box above.${said}`;
    case 403: return `Your API key cannot watch more tokens: unwatch one, or ask the operator for a higher allowance.${said}`;
    case 400: return `This token cannot be watched here.${said}`;
    case 429: return `Too many requests for now: try again in a minute.${said}`;
    default: return `Could not change the watchlist: try again; if it keeps happening, tell the server's operator.${said}`;
  }
}

function setWatching(watching) {
  const button = $("watch-button");
  button.dataset.watching = watching ? "true" : "false";
  button.textContent = watching ? "Stop watching" : "Watch this token";
  button.setAttribute("aria-pressed", watching ? "true" : "false");
}

// Called with each shown result: the button says whether this key already watches it.
export async function showWatch(address, chainId) {
  if (!watchEnabled()) return;
  current = [address, Number(chainId)];
  $("watch-status").textContent = "";
  $("watch-box").hidden = false;
  setWatching(false);
  try {
    const { ok, status, body } = await call("GET", "/v2/watch");
    if (!ok) { $("watch-status").textContent = failure(status, body); return; }
    const mine = (body.watching || []).some((w) => String(w.address).toLowerCase() === address.toLowerCase() && Number(w.chainID) === current[1]);
    setWatching(mine);
  } catch (_) {
    $("watch-status").textContent = "Could not reach the tokenrisk server to read your watchlist.";
  }
}

async function toggle() {
  if (!current) return;
  const [address, chainID] = current;
  const button = $("watch-button");
  const watching = button.dataset.watching === "true";
  button.disabled = true;
  try {
    const { ok, status, body } = watching
      ? await call("DELETE", `/v2/watch/${chainID}/${encodeURIComponent(address)}`)
      : await call("POST", "/v2/watch", { address, chainID });
    if (!ok) { $("watch-status").textContent = failure(status, body); return; }
    setWatching(!watching);
    $("watch-status").textContent = watching
      ? "No longer watching this token."
      : "Watching: the watcher re-checks this token whenever something that can change its answer happens, and an alert appears in the live feed below.";
  } catch (_) {
    $("watch-status").textContent = "Could not reach the tokenrisk server: the watchlist did not change.";
  } finally {
    button.disabled = false;
  }
}

export function setupWatch() {
  $("watch-button").addEventListener("click", toggle);
  startFeed();
}
