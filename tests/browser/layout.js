// Run by tests/browser/pagecheck.py: what a person would see as broken in the page
// as laid out now (see LAYOUT_PROBLEMS there). Returns a list of problems in words.
() => {
  const problems = [];
  const name = (e) => e.id ? `#${e.id}` : `${e.tagName.toLowerCase()}${e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : ""}`;
  const path = (e) => { const out = []; for (let n = e; n && n !== document.body && out.length < 4; n = n.parentElement) out.unshift(name(n)); return out.join(" > "); };
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) problems.push(`the page scrolls sideways: ${doc.scrollWidth}px wide in a ${doc.clientWidth}px window`);
  const out = [];
  const wide = [];
  for (const e of document.querySelectorAll("body *")) {
    if (e.closest("svg") && e.tagName.toLowerCase() !== "svg") continue;
    if (!shown(e)) continue;
    const style = getComputedStyle(e);
    if (style.position === "absolute" || style.position === "fixed") continue;
    const parent = e.parentElement;
    if (parent && parent !== document.body) {
      const ps = getComputedStyle(parent);
      if (!["auto", "scroll", "hidden", "clip"].includes(ps.overflowX)) {
        const r = e.getBoundingClientRect(), p = parent.getBoundingClientRect();
        if (r.right > p.right + 1 || r.left < p.left - 1) {
          out.push(e);
          problems.push(`${path(e)} sticks out of its container by ${Math.round(Math.max(r.right - p.right, p.left - r.left))}px`);
        }
      }
    }
    const inline = style.display === "inline";
    if (!inline && e.clientWidth > 0 && style.overflowX === "visible" && e.scrollWidth > e.clientWidth + 1) wide.push(e);
  }
  // content wider than its box, said once: only where no element inside already sticks out
  for (const e of wide) {
    if (!out.some((o) => e.contains(o)) && !wide.some((w) => w !== e && e.contains(w))) {
      problems.push(`${path(e)}: its content is ${e.scrollWidth}px wide in ${e.clientWidth}px`);
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const text = node.textContent.replace(/\s+/g, " ").trim();
    if (text.length < 6 || !node.parentElement || !shown(node.parentElement) || node.parentElement.closest("svg")) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    if (tops.size >= 3 && text.length / tops.size < 4) {
      problems.push(`"${text.slice(0, 40)}" in ${path(node.parentElement)} wraps letter by letter (${tops.size} lines)`);
    }
  }
  return problems;
}
