// Real holders selling: wallets per sell tax paid, and wallets whose sell failed or whose
// tokens were taken; a hand-written SVG bar chart with axes, ticks and a legend.
import { $, el, svg, percent, gas } from "./format.js";

const KINDS = {
  tax: "sold; the bar's label is the sell tax they paid",
  failed: "could not sell",
  siphoned: "had tokens taken without selling",
};

export function renderHolderChart(analysis) {
  $("holders-chart-section").hidden = !analysis;
  $("holders-chart").replaceChildren();
  $("chart-legend").replaceChildren();
  if (!analysis) return;
  const siphoned = Number(analysis.siphoned) || 0;
  $("holders-summary").textContent =
    `${analysis.holders} of the largest holders were simulated selling as themselves: ${analysis.successful} could sell, ` +
    `${analysis.failed} could not${siphoned ? `, ${siphoned} had tokens taken` : ""}. ` +
    `Average sell tax ${percent(analysis.averageTax)}, highest ${percent(analysis.highestTax)}; average ${gas(analysis.averageGas)}.`;
  const bars = (analysis.taxDistribution || []).map((b) => ({ label: `${b.tax}%`, count: Number(b.count), kind: "tax" }));
  if (Number(analysis.failed)) bars.push({ label: "failed", count: Number(analysis.failed), kind: "failed" });
  if (siphoned) bars.push({ label: "taken", count: siphoned, kind: "siphoned" });
  $("holders-chart").append(barChart(bars));
  const kinds = [...new Set(bars.map((b) => b.kind))];
  $("chart-legend").replaceChildren(...kinds.map((k) =>
    el("li", {}, el("span", { class: `swatch bar-${k}`, "aria-hidden": "true" }), `Wallets that ${KINDS[k]}`)));
}

function ticks(max) {
  const step = Math.max(1, Math.ceil(max / 4));
  const out = [];
  for (let v = 0; v <= max; v += step) out.push(v);
  if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
  return out;
}

function barChart(bars) {
  const slot = 56, left = 48, right = 12, top = 16, bottom = 52;
  const width = Math.max(320, left + right + slot * bars.length), height = 240;
  const plot = height - top - bottom;
  const scale = ticks(Math.max(1, ...bars.map((b) => b.count)));
  const max = scale[scale.length - 1];
  const y = (v) => top + plot - (v / max) * plot;
  const described = bars.map((b) => `${b.label}: ${b.count} wallets`).join(", ");
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": `Holders' sells: ${described}` });
  for (const v of scale) {
    chart.append(svg("line", { x1: left, y1: y(v), x2: width - right, y2: y(v), class: v ? "grid" : "axis" }));
    chart.append(svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, v));
  }
  chart.append(svg("line", { x1: left, y1: top, x2: left, y2: top + plot, class: "axis" }));
  chart.append(svg("text", { x: 12, y: top + plot / 2, transform: `rotate(-90 12 ${top + plot / 2})`, "text-anchor": "middle", class: "axis-label" }, "wallets"));
  bars.forEach((bar, i) => {
    const x = left + 8 + i * slot;
    const h = Math.max(1, (bar.count / max) * plot);
    const rect = svg("rect", { x, y: top + plot - h, width: slot - 16, height: h, class: `bar bar-${bar.kind}`,
      "data-label": bar.label, "data-count": bar.count });
    rect.append(svg("title", {}, `${bar.label}: ${bar.count} wallets`));
    chart.append(rect);
    chart.append(svg("text", { x: x + (slot - 16) / 2, y: top + plot - h - 4, "text-anchor": "middle", class: "count" }, bar.count));
    chart.append(svg("text", { x: x + (slot - 16) / 2, y: top + plot + 16, "text-anchor": "middle", class: "tick" }, bar.label));
  });
  chart.append(svg("text", { x: left + (width - left - right) / 2, y: height - 10, "text-anchor": "middle", class: "axis-label" },
    "sell tax paid (in tokens), or what went wrong"));
  return chart;
}
