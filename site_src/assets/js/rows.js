/* A recipe table's rows, shared by the table (table.js), its window (rowwindow.js) and the prices (prices.js): how
   many rows a table keeps in view, placing rows in the body and putting them away, the spacer rows of a window, and
   each row's sort keys and each column's ranks (a reprice forgets the priced columns'). Imports no module of the page
   script but packed.js, so that the modules above it import each other in one direction only. */
import { cellRaw } from "./packed.js";

// Every table's rows, in its order (table.orRows): the rows in the body and those served as compact JSON in a
// <template data-or-rows> (past the first LIVE: _macros.j2; packed.js builds them when needed). Rows out of view
// wait, hidden, in a second body that is
// itself hidden (table.orStash): still in the document, so that every row's hooks (data-or-recipe, ...) can be
// read there. Above DETACH rows they leave the document instead (table.orRows still lists them; "Show all" puts
// every row in view): at 10,000 rows in the document, hidden or not, a keystroke or a reprice cost 100-500 ms of
// style and DOM work in Chromium, against 5-70 ms with them out of it; at the committed registry's 2,218 rows,
// filter keystroke median 34 / max 60 ms and price key median 58 / max 94 ms in it, 14 / 38 and 17 / 35 out of it
// (benchmarks/site_scale.py --committed). A table without filters shows every row up to BIG rows, else its first LIVE.
export let BIG = 1000, LIVE = 60, DETACH = BIG;  // BIG and LIVE: generator/site/tables.py's ALL_ROWS_UP_TO, LIVE_ROWS

// The two rows that stand for the rows above and below a window (rowwindow.js).
export function isSpacer(row) {
  return row.hasAttribute("data-or-spacer");
}

// Rows into the body before `at`, in the list's order (rowwindow.js and the filters' first rows): a row already in
// its place stays (a row moved is styled and laid out again); the others go in by runs, each run one fragment.
// `each` (optional) sees every row first.
export function placeInOrder(body, list, at, each) {
  var run = null;
  for (var i = 0; i < list.length; i++) {
    var row = list[i];
    if (each) each(row);
    if (row === at) {
      if (run) body.insertBefore(run, at);
      run = null;
      at = at.nextElementSibling;
      continue;
    }
    if (row.hidden) row.hidden = false;
    (run || (run = document.createDocumentFragment())).appendChild(row);
  }
  if (run) body.insertBefore(run, at);
}

// Rows leaving the view: hidden, into the stash or out of the document.
export function putAway(table, list) {
  var fragment = document.createDocumentFragment();
  list.forEach(function (row) { row.hidden = true; if (table.orDetach) { if (row.parentNode) row.parentNode.removeChild(row); } else fragment.appendChild(row); });
  if (!table.orDetach) table.orStash.appendChild(fragment);
}

// Sort keys and column ranks (table.js sorts with them).
export function sortKey(raw, kind) {
  if (raw === null || raw === "" || raw === "\u2013") return null;
  if (kind === "number") {
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }
  return raw.toLowerCase();
}

// A row's sort key for a header, read once (a reprice forgets the keys of the columns it changes: PRICED).
export function rowKey(row, th, index) {
  var keys = row.orKeys || (row.orKeys = {});
  var column = th.dataset.orSort;
  var key = keys[column];
  if (key === undefined) key = keys[column] = sortKey(cellRaw(row, index), th.dataset.orKind || "text");
  return key;
}

// The columns whose keys a price or a budget changes (the cells repriceUsd and repriceTrain write).
export let PRICED = ["usd", "train"];

export function forgetPriced(table, row) {
  for (var i = 0; i < PRICED.length; i++) {
    if (row.orKeys) row.orKeys[PRICED[i]] = undefined;
    if (table.orRanks) table.orRanks[PRICED[i]] = null;
  }
}

// A column's rank for each row (indexed by row.orIdx): equal keys share a rank, the smallest key is 0, an
// unknown key is -1. Worked out once a column (a reprice forgets the priced columns'), so that a click sorts
// numbers in a typed array: calling a comparator ~130,000 times on row objects took most of a sort's script
// time at 10,000 rows (benchmarks/site_scale.py).
export function columnRanks(table, th, index) {
  var ranks = table.orRanks || (table.orRanks = {});
  var column = th.dataset.orSort;
  if (ranks[column]) return ranks[column];
  var rows = table.orRows, known = [];
  for (var i = 0; i < rows.length; i++) {
    var key = rowKey(rows[i], th, index);
    if (key !== null) known.push({ key: key, at: rows[i].orIdx });
  }
  known.sort(function (a, b) { return a.key < b.key ? -1 : (a.key > b.key ? 1 : 0); });
  var rank = new Int32Array(rows.length).fill(-1), top = -1;
  for (i = 0; i < known.length; i++) {
    if (i === 0 || known[i - 1].key < known[i].key) top++;
    rank[known[i].at] = top;
  }
  ranks[column] = { rank: rank, top: top };
  return ranks[column];
}

// Large tables read every row's keys and rank every column in idle time after load (and after a reprice), so
// that a click on a header does not (about 40-70 ms at 10,000 rows for the keys).
export function warmKeys(table) {
  if (!table.orRows || table.orRows.length <= BIG || !table.tHead) return;
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells).filter(function (th) { return th.dataset.orSort; });
  var at = 0, column = 0, token = {};
  table.orWarmToken = token;
  var later = window.requestIdleCallback || function (f) { return setTimeout(f, 50); };
  function slice() {
    if (table.orWarmToken !== token) return;  // a newer warm-up took over
    var rows = table.orRows;
    if (at < rows.length) {
      for (var end = Math.min(at + 1000, rows.length); at < end; at++) {
        for (var h = 0; h < heads.length; h++) rowKey(rows[at], heads[h], heads[h].cellIndex);
      }
    } else {
      columnRanks(table, heads[column], heads[column].cellIndex);
      column++;
    }
    if (column < heads.length) later(slice);
  }
  later(slice);
}
