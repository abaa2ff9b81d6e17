// Formatting and DOM helpers: every number says its unit; untrusted text only ever
// goes into text nodes (el() appends strings as text, never as HTML).

const SVG_NS = "http://www.w3.org/2000/svg";

export function $(id) { return document.getElementById(id); }

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

export function isNumber(value) {
  return value !== undefined && value !== null && value !== "" && Number.isFinite(Number(value));
}

// 0 -> "0 %", 3 -> "3 %", 9.71 -> "9.71 %"; absent -> "not measured" (never 0)
export function percent(value) {
  if (!isNumber(value)) return "not measured";
  const n = Number(value);
  return `${Number.isInteger(n) ? n : n.toFixed(2)}%`;
}

export function gas(value) {
  return isNumber(value) ? `${Number(value).toLocaleString("en-US", { maximumFractionDigits: 0 })} gas` : "not measured";
}

export function usd(value) {
  return isNumber(value) ? `$${Number(value).toLocaleString("en-US", { maximumFractionDigits: 2 })}` : "unknown";
}

export function amount(value) {
  return Number(value).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

// raw integer string -> decimal string, exact (BigInt), at most 6 fraction digits
export function scaled(raw, decimals) {
  let value;
  try { value = BigInt(raw); } catch (_) { return String(raw); }
  const places = Number(decimals) || 0;
  const base = 10n ** BigInt(places);
  const whole = (value / base).toLocaleString("en-US");
  const fraction = places ? (value % base).toString().padStart(places, "0").slice(0, 6).replace(/0+$/, "") : "";
  return fraction ? `${whole}.${fraction}` : whole;
}

// A scaled amount for people: "382,974,309.16" -> "382,974,309"; beyond 15 digits,
// "about 3.64 × 10^58"; small amounts keep up to 4 decimals
export function compact(text) {
  const [whole, fraction] = String(text).split(".");
  const digits = whole.replace(/,/g, "");
  if (/^\d{16,}$/.test(digits)) return `about ${digits[0]}.${digits.slice(1, 3)} × 10^${digits.length - 1}`;
  if (!fraction || digits.length >= 4) return whole;
  return `${whole}.${fraction.slice(0, 4)}`.replace(/\.?0+$/, "");
}

// long digit runs in a sentence (raw amounts) rounded so a person can read them
export function readableNumbers(text) {
  return String(text).replace(/\d{16,}/g, (digits) => compact(digits));
}

export function tokenAmount(raw, token) {
  return `${compact(scaled(raw, token.decimals))} ${token.symbol}`;
}

const UNITS = [[86400 * 365, "year"], [86400, "day"], [3600, "hour"], [60, "minute"], [1, "second"]];

// 3600 -> "1 hour", 604800 -> "7 days", 5400 -> "1.5 hours"
export function duration(seconds) {
  const s = Number(seconds);
  if (!Number.isFinite(s) || s < 0) return String(seconds);
  for (const [size, name] of UNITS) {
    if (s >= size || size === 1) {
      const n = Math.round((s / size) * 10) / 10;
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  }
  return `${s} seconds`;
}

export function shortAddress(address) {
  const text = String(address || "");
  return /^0x[0-9a-fA-F]{40}$/.test(text) ? `${text.slice(0, 6)}…${text.slice(-4)}` : text;
}

// An address: the full text for wide screens and copying, a short form at phone width.
export function addressNode(address) {
  return el("span", { class: "addr", title: address },
    el("span", { class: "addr-full mono" }, address),
    el("span", { class: "addr-short mono", "aria-hidden": "true" }, shortAddress(address)));
}

export function capitalised(text) {
  const s = String(text || "");
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

export function sentence(text) {
  const s = capitalised(String(text || "").trim());
  return s && !/[.!?]$/.test(s) ? `${s}.` : s;
}

// "execution reverted: Seller not whitelisted" -> the token's own words in monospace
export function revertNode(reason) {
  const text = String(reason || "").replace(/^execution reverted:?\s*/, "");
  return el("code", { class: "revert" }, text || "reverted without a reason");
}

export function fillTable(table, rows) {
  table.tBodies[0].replaceChildren(...rows.map(([label, value]) =>
    el("tr", {}, el("th", { scope: "row" }, label), el("td", {}, value))));
}
