/* Elements the page script makes (compare.js's view, prices.js's planner). Imports nothing. */

// An element with its text (never markup) and, optionally, its class.
export function cell(tag, text, cls) {
  var el = document.createElement(tag);
  el.textContent = text;
  if (cls) el.className = cls;
  return el;
}

// A table wider than its box says so above it, naming the columns out of view (kept current on scroll and resize).
function headName(th) {
  var text = (th.textContent || "").replace(/\s+/g, " ").trim();
  return text.length > 32 ? text.slice(0, 31) + "\u2026" : text;
}

export function scrollCue(wrap) {
  if (wrap.orCue) { wrap.orCue(); return; }
  var table = wrap.querySelector("table");
  if (!table) return;
  var cue = document.createElement("p");
  cue.className = "or-scroll-cue";
  cue.setAttribute("data-or-scroll-cue", "");
  cue.hidden = true;
  wrap.parentNode.insertBefore(cue, wrap);
  var pending = false;
  function update() {
    pending = false;
    var hidden = wrap.scrollWidth - wrap.clientWidth - wrap.scrollLeft > 2;
    wrap.classList.toggle("or-scrolls", hidden);
    if (!hidden) { cue.hidden = true; return; }
    var edge = wrap.getBoundingClientRect().right + 2;
    var row = table.tHead && table.tHead.rows[0];
    // a column counts as out of view when less than half of it shows
    var names = row ? Array.prototype.filter.call(row.cells, function (c) {
      var r = c.getBoundingClientRect();
      return c.offsetParent !== null && r.left + r.width / 2 > edge;
    }).map(headName) : [];
    cue.textContent = "Scrolls sideways \u2192 " + (names.length ? names.length + (names.length === 1 ? " more column: " :
      " more columns: ") + names.join(", ") : "more to the right");
    cue.hidden = false;
  }
  function later() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(update);
  }
  wrap.orCue = update;
  wrap.addEventListener("scroll", later, { passive: true });
  if (typeof ResizeObserver !== "undefined") {
    var seen = new ResizeObserver(later);
    seen.observe(wrap);
    seen.observe(table);
  }
  update();
}
