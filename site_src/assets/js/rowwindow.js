/* Windowed rendering of a long recipes table: after "Show all" (thousands of rows), only the rows near the viewport
   are in the table body, between two spacer rows that stand for the rows above and below it at the rows' measured
   height, so that the scrollbar is true. A sort or a filter over all rows then costs a key sort and one screen of
   rows: with every row in the body, a sort after "Show all" took 287-1,161 ms to its next frame at 10,000 rows and
   130-832 ms at the committed registry's 2,222 (benchmarks/results/site_scale_10k_2026-12-04.txt), most of it
   styling and laying out rows nobody saw.
   The rows are the table's own <tr> elements (table.orRows), moved in and out of the body: a row keeps its hooks, its
   compare tick and its prices while out of view (priceRow brings it up to the prices in force as it comes in). The
   browser's find-in-page sees only the rows in the body (the page says so); the text filter searches them all. */
import { isSpacer, placeInOrder, putAway } from "./rows.js";
import { priceRow, flushPrices } from "./prices.js";
import { build } from "./packed.js";

// Rows kept in the body past each edge of the viewport: a Tab from the last row on screen, or a short scroll, lands
// on a row already there (focusing it scrolls it into view, and the window follows).
export let OVERSCAN = 12;
// Rows placed when no row of the table has been laid out yet (nothing to measure): the window is corrected once the
// frame that lays them out has been painted.
export let FIRST_BATCH = 40;

function spacer(table) {
  var tr = document.createElement("tr");
  tr.className = "or-spacer";
  tr.setAttribute("data-or-spacer", "");
  tr.setAttribute("aria-hidden", "true");
  var td = document.createElement("td");
  td.colSpan = table.tHead ? table.tHead.rows[0].cells.length : 1;
  tr.appendChild(td);
  return tr;
}

export function isWindowed(table) {
  return !!(table.orWindow && table.orWindow.list);
}

// The rows the table shows, in its order, whether in the window or out of it (the browser tests' way to read a
// windowed table; read-only: moving these rows is the table's business). Each at the prices in force: a reprice still
// running a slice a task (prices.js repriceLater) is finished first, as the CSV and a sort do.
export function shownRows(table) {
  flushPrices(table);
  if (isWindowed(table)) {
    build(table.orWindow.list);  // packed.js: a row not built yet has no cells to read
    return table.orWindow.list.slice();
  }
  return Array.prototype.filter.call(table.tBodies[0].rows, function (row) { return !row.hidden && !isSpacer(row); });
}

// A row of the table (by its recipe id) scrolled into view, in the window if the table is windowed, as a reader
// scrolls to it (the browser tests' way to tick a row far off screen); false where the table does not show it.
export function revealRow(table, id) {
  var list = shownRows(table), at = -1;
  for (var i = 0; i < list.length; i++) if (list[i].dataset.orRecipe === id) { at = i; break; }
  if (at < 0) return false;
  var w = table.orWindow;
  if (isWindowed(table) && !list[at].isConnected) {
    var top = table.tBodies[0].getBoundingClientRect().top;
    window.scrollTo(0, window.scrollY + top + at * w.height - window.innerHeight / 2);
    render(table, w);
  }
  list[at].scrollIntoView({ block: "center" });
  return list[at].isConnected;
}

// The window of a table: made on first use, with one scroll and one resize listener (gone once the table has left
// the document: Material's instant navigation replaces the page's content).
function state(table) {
  if (table.orWindow) return table.orWindow;
  var w = { list: null, start: 0, end: 0, height: 0, top: spacer(table), bottom: spacer(table), frame: 0 };
  table.orWindow = w;
  function follow() {
    if (!table.isConnected) {
      window.removeEventListener("scroll", follow);
      window.removeEventListener("resize", follow);
      return;
    }
    if (!w.list || w.frame) return;
    w.frame = requestAnimationFrame(function () { w.frame = 0; if (w.list) render(table, w); });
  }
  window.addEventListener("scroll", follow, { passive: true });
  window.addEventListener("resize", follow, { passive: true });
  return w;
}

// The mean height of the rows in the body, as the last frame laid them out (read before any change, so no layout
// is forced); a change under half a pixel is ignored, so that the spacers do not creep while one scrolls.
function measure(w, body) {
  var rows = body.rows, total = 0, count = 0;
  for (var i = 0; i < rows.length; i++) {
    var row = rows[i];
    if (row === w.top || row === w.bottom || row.hidden) continue;
    var height = row.getBoundingClientRect().height;
    if (height > 0) { total += height; count++; }
  }
  if (count && Math.abs(total / count - w.height) >= 0.5) w.height = total / count;
}

// The rows [start, end) of the list that the viewport and OVERSCAN rows each side cover.
function span(w, body, n) {
  if (!w.height) return [0, Math.min(n, FIRST_BATCH)];
  var top = body.getBoundingClientRect().top, h = w.height;
  var from = Math.max(0, -top), to = Math.max(0, window.innerHeight - top);
  var end = Math.min(n, Math.ceil(to / h) + OVERSCAN);
  var start = Math.min(Math.max(0, Math.floor(from / h) - OVERSCAN), Math.max(0, end - OVERSCAN));
  return [start, end];
}

function render(table, w) {
  var body = table.tBodies[0], list = w.list, n = list.length;
  measure(w, body);
  var range = span(w, body, n), start = range[0], end = range[1];
  var wanted = list.slice(start, end), i;
  // The rows leaving the body go out of view (putAway); those staying keep their place (a row moved is styled and
  // laid out again); the others come in by runs, each run one fragment.
  for (i = 0; i < wanted.length; i++) wanted[i].orInWindow = true;
  var leaving = Array.prototype.filter.call(body.rows, function (r) { return !r.orInWindow && !isSpacer(r); });
  for (i = 0; i < wanted.length; i++) wanted[i].orInWindow = false;
  if (leaving.length) putAway(table, leaving);
  build(wanted);
  if (w.top.parentNode !== body) body.insertBefore(w.top, body.firstChild);
  // a row out of the document may be behind a price or budget change
  placeInOrder(body, wanted, w.top.nextElementSibling, function (row) { priceRow(table, row); });
  if (body.lastElementChild !== w.bottom) body.appendChild(w.bottom);
  w.top.firstChild.style.height = start * w.height + "px";
  w.bottom.firstChild.style.height = (n - end) * w.height + "px";
  w.start = start;
  w.end = end;
}

// The table shows `list` (its rows in order), windowed. Once the frame that lays the new rows out has been
// painted, the window is placed again at their measured height.
export function showWindowed(table, list) {
  var w = state(table);
  w.list = list;
  table.setAttribute("data-or-windowed", "");
  render(table, w);
  requestAnimationFrame(function () {
    setTimeout(function () { if (w.list === list) render(table, w); }, 0);
  });
}

// Back to a body of whole rows: the spacers leave, the rows in the window stay (the caller places them).
export function unwindow(table) {
  var w = table.orWindow;
  if (!w || !w.list) return;
  w.list = null;
  if (w.frame) cancelAnimationFrame(w.frame);
  w.frame = 0;
  if (w.top.parentNode) w.top.parentNode.removeChild(w.top);
  if (w.bottom.parentNode) w.bottom.parentNode.removeChild(w.bottom);
  table.removeAttribute("data-or-windowed");
}
