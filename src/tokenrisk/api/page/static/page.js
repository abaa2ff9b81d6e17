// tokenrisk's page: asks the service's own API and renders the answer in words.
// Untrusted text (token names, revert reasons) only ever goes into text nodes.
import { $, el, duration, shortAddress, sentence } from "./format.js";
import { renderVerdict, findingKinds } from "./verdict.js";
import { renderPowers } from "./powers.js";
import { renderJourney, renderCosts, renderCode, loadPairs, loadHolders, showAllHolders } from "./sections.js";
import { renderHolderChart } from "./chart.js";
import { setupWatch, showWatch, startFeed } from "./watch.js";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOKEN_PATH = /^\/token\/([^/]+)\/([^/]+)\/?$/;
const KINDS = findingKinds();
let last = null;

// --- the API ------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message, body, retryAfter) {
    super(message);
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

async function api(path, params) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined));
  const headers = { Accept: "application/json" };
  const key = localStorage.getItem("tokenrisk.apiKey");
  if (key) headers["X-API-KEY"] = key;
  const response = await fetch(`${path}?${query}`, { headers });
  let body = null;
  try { body = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    if (response.status === 401) $("key-form").hidden = false;
    const message = body && typeof body.error === "string" ? body.error : response.statusText;
    throw new ApiError(response.status, message, body, response.headers.get("Retry-After"));
  }
  return { body, headers: response.headers };
}

// --- errors in words, each with what to do --------------------------------------------

const AGAIN = "Try again in a minute; if it keeps happening, the server's operator should look at the node (its state is at /health).";

function explainStatus(error) {
  const wait = Number(error.retryAfter) > 0 ? `Try again in ${duration(error.retryAfter)}.` : "Try again in a minute.";
  const body = error.body || {};
  switch (error.status) {
    case 400:
      return /chain/i.test(error.message)
        ? ["This chain is not known here", "The server has no node for the chain asked for.", "Pick a chain from the list, or leave “any configured chain” to search them all.", false]
        : ["The request could not be checked", sentence(error.message), "Check the address and the chain.", false];
    case 401: return ["This server needs an API key", "Checks here need a key.", "Enter your key in the box above; it stays in this browser.", false];
    case 403: return ["Your API key does not allow this", sentence(error.message), "Ask the server's operator for a key with a higher allowance.", false];
    case 404:
      if (body.token) {
        const t = body.token;
        return ["No pool to trade in", `${t.name} (${t.symbol}) has no pool this server can trade in${body.reason ? `: ${body.reason}` : "."}`,
          "A buyer's trip cannot be simulated without a pool. If the token trades on another chain, pick that chain; if its pool was just created, try again shortly.", false];
      }
      return ["Nothing to check at this address", sentence(error.message), "Check the address and the chain: there may be no token contract there.", false];
    case 429: return ["Too many checks for now", "This server limits how many checks one user can run.", wait, true];
    case 502: return ["The node gave an answer that cannot be used", "The blockchain node behind this server answered with an error.", AGAIN, true];
    case 503:
      return error.retryAfter
        ? ["The server is busy", "Every simulation slot is taken right now.", wait, true]
        : ["The node cannot be reached", "The blockchain node behind this server did not answer.", AGAIN, true];
    case 504: return ["The check took too long", "The node did not finish the simulations in time; it may be slow or busy.", "Try again: a second try is often faster.", true];
    default: return ["Something went wrong on the server", sentence(error.message), "Try again; if it keeps happening, tell the server's operator.", true];
  }
}

function explain(error) {
  if (error instanceof ApiError) return [...explainStatus(error), `The server said: “${error.message}” (HTTP ${error.status}).`];
  return ["Could not reach the tokenrisk server", "The page got no answer from the server.", "Check your connection, or whether the server is running, then try again.", true, String(error)];
}

function showError([title, text, help, retry, detail]) {
  $("error-title").textContent = title;
  $("error-text").textContent = text;
  $("error-help").textContent = help;
  $("error-detail").textContent = detail || "";
  $("retry").hidden = !retry;
  $("error").hidden = false;
}

function clearAll() {
  $("error").hidden = true;
  $("result").hidden = true;
  $("status").replaceChildren();
  $("copy-status").textContent = "";
  $("watch-box").hidden = true;
}

// --- one check ----------------------------------------------------------------------------

function chainLabel(chain) {
  const option = [...$("chain").options].find((o) => o.value === chain);
  return chain && option ? option.textContent : "every configured chain";
}

function showLoading(address, chain) {
  $("status").replaceChildren(el("span", { class: "spinner", "aria-hidden": "true" }),
    el("span", {}, `Checking ${shortAddress(address)} on ${chainLabel(chain)}: a simulated buyer buys, sends and sells it, and the owner's functions are tried. This usually takes a few seconds.`));
}

async function run(address, chain) {
  clearAll();
  last = [address, chain];
  if (!ADDRESS.test(address)) {
    document.body.dataset.state = "error";
    const count = address.startsWith("0x") ? address.length - 2 : address.length;
    showError(["That is not a token address",
      `An address is 0x followed by 40 hexadecimal characters (0-9, a-f); this has ${count} after ${address.startsWith("0x") ? "0x" : "no 0x"}.`,
      "Copy the token's contract address from a block explorer or your wallet and paste it above.", false]);
    return;
  }
  showLoading(address, chain);
  document.body.dataset.state = "loading";
  $("check").disabled = true;
  $("main").setAttribute("aria-busy", "true");
  try {
    const { body, headers } = await api("/v2/IsHoneypot", { address, chainID: chain });
    const chainId = body.chain.id;
    const path = `/token/${chainId}/${body.token.address}`;
    if (location.pathname !== path) history.replaceState({}, "", path);
    $("partial").dataset.skipped = headers.get("X-Skipped-Chains") || "";
    renderHoneypot(body);
    $("status").replaceChildren();
    $("result").hidden = false;
    await Promise.all([loadPairs(api, body.token.address, chainId), loadHolders(api, body, chainId),
      showWatch(body.token.address, chainId)]);
    document.body.dataset.state = "done";
  } catch (error) {
    $("status").replaceChildren();
    showError(explain(error));
    document.body.dataset.state = "error";
  } finally {
    $("check").disabled = false;
    $("main").removeAttribute("aria-busy");
  }
}

function renderHoneypot(body) {
  const token = body.token;
  $("token-title").textContent = `${token.name} (${token.symbol})`;
  const fork = body.chain.forkBlock !== undefined ? ` · checked on a local fork made at block ${Number(body.chain.forkBlock).toLocaleString("en-US")}` : "";
  $("token-meta").replaceChildren(el("span", { id: "token-address", class: "mono" }, token.address),
    el("span", {}, ` on ${body.chain.name} (chain ${body.chain.id})${fork}`));
  renderVerdict(body, KINDS);
  renderPowers(body.ownerPowers, KINDS, body.token);
  renderJourney(body);
  renderCosts(body);
  renderCode(body);
  renderHolderChart(body.holderAnalysis);
  $("share-link").value = location.origin + location.pathname;
}

async function copyLink() {
  const input = $("share-link");
  try {
    await navigator.clipboard.writeText(input.value);
    $("copy-status").textContent = "Link copied.";
  } catch (_) {
    input.select();
    $("copy-status").textContent = "Press Ctrl+C (or ⌘C) to copy the selected link.";
  }
}

// --- start ----------------------------------------------------------------------------------

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
    startFeed(); // the stream's alerts are the key's
    run($("address").value.trim(), $("chain").value);
  });
  $("retry").addEventListener("click", () => { if (last) run(...last); });
  $("copy-link").addEventListener("click", copyLink);
  $("holders-more").addEventListener("click", showAllHolders);
  setupWatch();
  window.addEventListener("popstate", fromLocation);
  fromLocation();
}

function fromLocation() {
  const match = TOKEN_PATH.exec(location.pathname);
  if (!match) return;
  const address = decodeURIComponent(match[2]);
  const chain = decodeURIComponent(match[1]);
  $("address").value = address;
  if ([...$("chain").options].some((o) => o.value === chain)) $("chain").value = chain;
  run(address, chain);
}

start();
