/* Recipe tables: rows served live or inert, sorting, filters, "Show all", the CSV of the rows in view, and the
   small sortable tables (failed layouts). */
import { params, MAX_TEXT, NAME, setParams } from "./url.js";
import { BIG, LIVE, DETACH, columnRanks, isSpacer, placeInOrder, putAway, warmKeys } from "./rows.js";
import { priceRow, flushPrices } from "./prices.js";
import { showWindowed, unwindow } from "./rowwindow.js";
import { build, packedRows, rowAttr, rowText } from "./packed.js";
import { csvCell, csvText } from "./csv.js";
import { scrollCue } from "./dom.js";

// CSV of the rows in view: text cells neutralised as recipes.csv's are (csv.js, generator.site.formatting.csv_text:
// wherever a spreadsheet could start a cell, a formula character gets a single quote before it), figures as the
// page's sort keys (Python's repr of the value generator/figures computed), unknown figures empty.
export { csvCell, csvText };

// [name, value, figure]: a figure column is written as the number it is; every other column is text, neutralised in
// tableCsv whatever its function returns (csvText twice changes nothing).
export let CSV_COLUMNS = [
  ["id", function (row) { return csvText(row.dataset.orRecipe || ""); }],
  ["model", function (row) { return csvText(row.dataset.model || ""); }],
  ["gpu_type", function (row) { return csvText(row.dataset.gpu_type || ""); }],
  ["gpu_count", function (row) { return row.dataset.gpu_count || ""; }, true],
  ["status", function (row) { return csvText(row.dataset.status || ""); }],
  ["framework", function (row) { return csvText(row.dataset.framework || ""); }],
  ["layout", function (row, cells) { return csvText(cells.layout ? cells.layout.textContent.trim() : ""); }],
  ["precision", function (row) { return csvText(row.dataset.precision || ""); }],
  // data-mfu_peak is left out at its usual value (a 10,000-row page stays under 600 KB gzip); data-training is
  // always there: an unstated training kind is "not stated", never pre-training.
  ["training", function (row) {
    var t = row.dataset.training || "";
    return csvText(t === "not stated" ? "" : t);  // empty where unstated, as recipes.csv writes it
  }],
  ["tokens_per_s_per_gpu", function (row) { return figure(row, "tokens"); }, true],
  // data-throughput only on a time-to-train row (views.throughput_kind), as recipes.csv writes it
  ["throughput", function (row) { return csvText(row.dataset.throughput || "steady-state"); }],
  ["usd_per_million_tokens", function (row) { return figure(row, "usd"); }, true],
  ["mfu", function (row) { return figure(row, "mfu"); }, true],
  ["mfu_peak", function (row) {
    return row.hasAttribute("data-mfu_peak") ? csvText(row.dataset.mfu_peak) : (figure(row, "mfu") ? "bf16" : "");
  }],
  ["step_time_cv_percent", function (row) { return figure(row, "cv"); }, true],
  ["measured", function (row) { return row.dataset.measured || ""; }]
];

export function figure(row, col) {
  var cell = row.querySelector('[data-or-col="' + col + '"]');
  return cell ? cell.getAttribute("data-sort") || "" : "";
}

export function tableCsv(table) {
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var index = {};
  heads.forEach(function (th, i) { if (th.dataset.orSort) index[th.dataset.orSort] = i; });
  var lines = [CSV_COLUMNS.map(function (c) { return c[0]; }).join(",")];
  flushPrices(table);
  var ordered = table.orRows || Array.prototype.slice.call(table.tBodies[0].rows);
  build(ordered.filter(function (row) { return row.orMatch !== false; }));
  ordered.forEach(function (row) {
    if (row.orMatch === false) return;  // filtered out (a row only waiting for "Show all" is in view)
    var cells = { layout: row.cells[index.layout], measured: row.cells[index.measured] };
    lines.push(CSV_COLUMNS.map(function (c) {
      var value = c[1](row, cells);
      return csvCell(c[2] ? value : csvText(value));
    }).join(","));
  });
  return lines.join("\n") + "\n";
}

export function initCsv(root) {
  root.querySelectorAll("table.or-sortable").forEach(function (table) {
    if (table.dataset.orCsvReady) return;
    table.dataset.orCsvReady = "1";
    var bar = document.createElement("p");
    bar.className = "or-toolbar";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "md-button or-small-button";
    button.setAttribute("data-or-csv", table.id);
    button.textContent = "Download CSV of the rows in view";
    button.addEventListener("click", function () {
      var url = URL.createObjectURL(new Blob([tableCsv(table)], { type: "text/csv" }));
      var link = document.createElement("a");
      link.href = url;
      link.download = (table.id || "recipes") + "-view.csv";
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
    });
    bar.appendChild(button);
    (table.closest(".or-table-wrap") || table).insertAdjacentElement("beforebegin", bar);
  });
}

// What "Show all" costs the reader (rowwindow.js): the rows far off screen are out of the page.
export let OFF_SCREEN = "Rows far off screen are left out of the page until you scroll to them, so the browser's " +
  "find-in-page does not see them; the text filter searches every row.";

// Every table's rows, in its order, as table.orRows; those out of view put away (rows.js says where they wait).
export function initRows(root) {
  root.querySelectorAll("table.or-sortable").forEach(function (table) {
    if (table.orRows) return;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var inert = root.querySelector('template[data-or-rows="' + table.id + '"]');
    if (inert) {
      rows = rows.concat(packedRows(inert.content.textContent, table));  // packed.js: built when needed
      inert.remove();
    }
    rows.forEach(function (row, i) { row.orIdx = i; });  // its place as served: columnRanks' index
    table.orRows = rows;
    table.orDetach = rows.length > DETACH;
    var stash = document.createElement("tbody");
    stash.hidden = true;
    stash.className = "or-stash";
    table.appendChild(stash);
    table.orStash = stash;
    var filtered = !!root.querySelector('[data-or-filters="' + table.id + '"]');
    if (filtered) return;  // initFilters places the rows
    table.orPlace = function (order) {
      table.orRows = order;
      if (table.orShowAll && order.length > BIG) {
        showWindowed(table, order);  // rowwindow.js: the rows near the viewport, spacers for the rest
        return;
      }
      var shown = order.length <= BIG ? order : order.slice(0, LIVE);
      build(shown);
      var fragment = document.createDocumentFragment();
      shown.forEach(function (row) { row.hidden = false; fragment.appendChild(row); });
      body.appendChild(fragment);
      putAway(table, order.slice(shown.length));
    };
    if (inert) table.orPlace(rows);
    if (rows.length > BIG) offerAll(root, table);
  });
}

// A table without filters of more than BIG rows shows its first LIVE (the page says so, data-or-partial);
// "Show all" shows every row, in the table's order, windowed (rowwindow.js), and later sorts keep them all.
export function offerAll(root, table) {
  var note = root.querySelector('[data-or-partial="' + table.id + '"]');
  if (!note || note.querySelector("button")) return;
  var button = document.createElement("button");
  button.type = "button";
  button.className = "md-button or-small-button";
  button.setAttribute("data-or-show-all", "");
  button.textContent = "Show all " + table.orRows.length.toLocaleString("en-US");
  button.addEventListener("click", function () {
    flushPrices(table);  // rows out of the document may be behind a price change
    table.orShowAll = true;
    table.orPlace(table.orRows);
    note.textContent = "All " + table.orRows.length.toLocaleString("en-US") + " recipes shown. " + OFF_SCREEN;
  });
  note.appendChild(document.createTextNode(" "));
  note.appendChild(button);
}

// Sorting. The served order is kept on load (the header it follows carries aria-sort); the first click on a
// header sorts best-first (data-or-best: "desc" for tokens/s and MFU, "asc" for $ and CV), a second click
// reverses; rows without a value (data-sort="") stay last in both directions. One header is marked at a time.
// Listeners on the table hear "or:sorted" after each sort (the filters re-show their rows). The keys and ranks
// a sort reads are rows.js's.
//
// A stable sort of the table's rows on a column (ties keep their current order), unknown keys last in both
// directions: each row's rank folded with its current place into one number, sorted natively.
export function sortRows(table, th, direction, split) {
  var index = Array.prototype.indexOf.call(th.parentNode.children, th);
  var body = table.tBodies[0];
  flushPrices(table);
  var rows = table.orRows, n = rows.length;
  var ranked = columnRanks(table, th, index), rank = ranked.rank, top = ranked.top;
  var descending = direction === "descending";
  var folded = new Float64Array(n);
  for (var i = 0; i < n; i++) {
    var r = rank[rows[i].orIdx];
    folded[i] = (r < 0 ? top + 1 : (descending ? top - r : r)) * n + i;  // at most ~1e8 at 10,000: exact
  }
  folded.sort();
  var order = new Array(n);
  for (i = 0; i < n; i++) order[i] = rows[folded[i] % n];
  if (table.orPlace) {
    // A filtered or large table moves only the rows it shows: re-appending every row cost a whole frame budget
    // at 10,000 rows (benchmarks/site_scale.py). On a click, the rows below the window follow a frame later.
    table.orPlace(order, split);
  } else {
    var fragment = document.createDocumentFragment();
    order.forEach(function (row) { fragment.appendChild(row); });
    body.appendChild(fragment);
  }
  // The headers after the rows: the rows' placing reads the layout of the last frame, unchanged until then.
  table.querySelectorAll("thead th[aria-sort]").forEach(function (h) { if (h !== th) h.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", direction);
}

export function nextDirection(th) {
  var best = th.dataset.orBest === "desc" ? "descending" : "ascending";
  var current = th.getAttribute("aria-sort");
  if (!current) return best;
  return current === "descending" ? "ascending" : "descending";
}

export function initSort(root) {
  root.querySelectorAll("table.or-sortable").forEach(function (table) {
    if (table.dataset.orSortReady) return;
    table.dataset.orSortReady = "1";
    table.querySelectorAll("thead th[data-or-sort]").forEach(function (th) {
      // On the whole cell: the button inside makes it reachable by keyboard, and its click bubbles here.
      th.addEventListener("click", function () {
        var direction = nextDirection(th);
        sortRows(table, th, direction, true);
        setParams({ sort: th.dataset.orSort, dir: direction === "descending" ? "desc" : "asc" });
      });
    });
    // A sort in the URL (a shared link, a reload) is applied once; without one the served order stays.
    var p = params(), key = p.get("sort");
    var th = key && NAME.test(key) ? table.querySelector('thead th[data-or-sort="' + key + '"]') : null;
    if (th) sortRows(table, th, p.get("dir") === "desc" ? "descending" : "ascending");
    warmKeys(table);
  });
}

// Showing table rows again is slow: re-showing all 1,000 rows on a keystroke took 500-700 ms in Chromium on a
// 2-core machine (benchmarks/site_scale.py). A filter change therefore shows the first LIMIT matches in the
// frame it causes and offers "Show all" for the rest, which shows every match windowed (rowwindow.js: the rows
// near the viewport in the body, spacers for the others). The count names every match; filters and sorts act on
// all rows. The rows shown are the table body's, in the table's order (table.orRows); the others wait in its
// hidden second body or out of the document, so a keystroke or a sort moves at most 2 x LIMIT rows, or a
// window's worth after "Show all".
export let LIMIT = 60;

export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function initFilters(root) {
  root.querySelectorAll("[data-or-filters]").forEach(function (box) {
    if (box.dataset.orFilterReady) return;
    box.dataset.orFilterReady = "1";
    var table = document.getElementById(box.dataset.orFilters);
    if (!table) return;
    var body = table.tBodies[0];
    // Each row's lower-cased text and filter values, read once so that a keystroke only compares strings.
    var rows = table.orRows;
    var selects = Array.prototype.slice.call(box.querySelectorAll("select[data-or-filter]"));
    var keys = selects.map(function (s) { return s.dataset.orFilter; });
    rows.forEach(function (row) {
      row.orText = rowText(row).toLowerCase();  // packed.js: a row not built yet is read from its values
      row.orValues = keys.map(function (k) { return rowAttr(row, "data-" + k); });
    });
    var text = box.querySelector("[data-or-filter-text]");
    var initial = params();
    selects.forEach(function (s) {
      var wanted = initial.get(s.dataset.orFilter);
      if (wanted !== null && Array.prototype.some.call(s.options, function (o) { return o.value === wanted; })) {
        s.value = wanted;
      }
    });
    if (text && initial.get("text") !== null) text.value = initial.get("text").slice(0, MAX_TEXT);
    var count = box.querySelector("[data-or-count]");
    var showAll = false, frame = 0;
    var more = document.createElement("p");
    more.className = "or-more";
    more.hidden = true;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "md-button";
    button.setAttribute("data-or-show-all", "");
    more.appendChild(button);
    (table.closest(".or-table-wrap") || table).insertAdjacentElement("afterend", more);

    // Rows into view at the top of the body, in order (the rows leaving it have left). A row already in its
    // place stays there: a row moved is styled and laid out again, so a keystroke that keeps the first rows
    // costs no row work. The others go in by runs, each run one fragment.
    function showFirst(list) { placeInOrder(body, list, body.firstElementChild); }

    // How many rows, from the top of the body, the window may show: the rows that start above its bottom, in the
    // layout of the last frame (read before any change here: no forced layout), and a margin for rows of other
    // heights; where the body ends above the bottom, as many more as fit at its shortest row. null: not known.
    var rowHeight = 0;
    function slotsInView() {
      var bottom = window.innerHeight, shown = body.rows, i = 0, box = null;
      for (; i < shown.length; i++) {
        if (isSpacer(shown[i])) continue;
        box = shown[i].getBoundingClientRect();
        if (box.height > 0 && (!rowHeight || box.height < rowHeight)) rowHeight = box.height;
        if (box.top >= bottom) break;
      }
      if (i === shown.length) {
        if (!rowHeight) return null;
        var end = box ? box.bottom : body.getBoundingClientRect().top;
        i += Math.max(0, Math.ceil((bottom - end) / rowHeight));
      }
      return i + Math.ceil(i / 4) + 2;
    }

    // The body becomes the matches (at most LIMIT, unless "Show all": then windowed). With `split`, only the rows
    // the window may show go in before the frame this change paints; the rest go in by a task after that frame (a
    // sort or a keystroke replaces up to LIMIT rows, and styling and laying out the rows nobody sees yet was most of
    // its frame at 10,000 rows: benchmarks/site_scale.py). data-or-filling is on the table until every row is in.
    var rest = 0;
    function place(target, split) {
      if (rest) clearTimeout(rest);
      rest = 0;
      if (target.length > LIMIT) {
        showWindowed(table, target);
        table.removeAttribute("data-or-filling");
        return;
      }
      var now = split ? slotsInView() : null;
      unwindow(table);
      var head = now !== null && now < target.length ? target.slice(0, now) : target;
      // The rows shown now that are not among the head go out of view (a row among them stays: it may be in its
      // place already).
      for (var i = 0; i < head.length; i++) head[i].orInView = true;
      var leaving = Array.prototype.filter.call(body.rows, function (r) { return !r.orInView; });
      for (i = 0; i < head.length; i++) head[i].orInView = false;
      if (leaving.length) putAway(table, leaving);
      build(head);
      head.forEach(function (row) { priceRow(table, row); });
      showFirst(head);
      if (head.length < target.length) {
        table.setAttribute("data-or-filling", "");
        // After the frame that paints this: a task queued from the frame's own callbacks.
        frame = requestAnimationFrame(function () {
          frame = 0;
          rest = setTimeout(function () { rest = 0; place(target, false); }, 0);
        });
        return;
      }
      table.removeAttribute("data-or-filling");
    }

    function apply(split) {
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
      var wanted = selects.map(function (s, j) { return [j, s.value]; }).filter(function (kv) { return kv[1] !== ""; });
      var needle = text ? text.value.trim().toLowerCase() : "";
      var matches = 0, target = [];
      for (var i = 0; i < rows.length; i++) {
        var row = rows[i];
        var ok = needle === "" || row.orText.indexOf(needle) !== -1;
        for (var j = 0; ok && j < wanted.length; j++) ok = row.orValues[wanted[j][0]] === wanted[j][1];
        row.orMatch = ok;
        if (!ok) continue;
        matches++;
        if (showAll || target.length < LIMIT) target.push(row);
      }
      place(target, split);
      // Texts rewritten only when they change (a text written is laid out again, the same or not).
      if (count) {
        setText(count, matches + " of " + rows.length + " recipes" +
          (target.length < matches ? " (first " + target.length + " shown)" : ""));
      }
      if (more.hidden !== target.length >= matches) more.hidden = target.length >= matches;
      setText(button, "Show all " + matches + " matching recipes");
    }

    // Every row waits out of view at first; apply() brings the rows in view into the body.
    putAway(table, rows.filter(function (row) { return row.parentNode !== body; }));

    function refilter() {
      showAll = false;
      apply(true);
      var changes = { text: text ? text.value : "" };
      selects.forEach(function (s) { changes[s.dataset.orFilter] = s.value; });
      setParams(changes);
    }
    selects.forEach(function (s) { s.addEventListener("change", refilter); });
    if (text) text.addEventListener("input", refilter);
    button.addEventListener("click", function () { showAll = true; apply(); });
    // A sort gives the new order: the rows shown are then the first matches in it.
    table.orPlace = function (order, split) {
      rows = order;
      table.orRows = order;
      apply(split);
    };
    apply();
  });
}

// Small tables sorted in place on a header click (the failed layouts): numbers by data-sort or text, text
// otherwise; a second click reverses.
export function initSimpleSort(root) {
  root.querySelectorAll("table[data-or-simple-sort]").forEach(function (table) {
    if (table.dataset.orSortReady) return;
    table.dataset.orSortReady = "1";
    table.querySelectorAll("thead th").forEach(function (th, index) {
      if (!th.querySelector("button")) return;
      th.addEventListener("click", function () {
        var down = th.getAttribute("aria-sort") === "ascending";
        var number = th.dataset.kind === "number";
        var key = function (row) {
          var c = row.cells[index], raw = c.hasAttribute("data-sort") ? c.getAttribute("data-sort") : c.textContent.trim();
          return number ? parseFloat(raw) : raw.toLowerCase();
        };
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (r, i) { return { r: r, k: key(r), i: i }; });
        rows.sort(function (a, b) {
          var d = a.k < b.k ? -1 : a.k > b.k ? 1 : 0;
          return (down ? -d : d) || a.i - b.i;
        });
        var fragment = document.createDocumentFragment();
        rows.forEach(function (x) { fragment.appendChild(x.r); });
        body.appendChild(fragment);
        table.querySelectorAll("thead th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", down ? "descending" : "ascending");
      });
    });
  });
}

// Sideways-scroll cues: a table wider than its box (a phone's best-layout, frameworks or compare table) says, above
// it, that it scrolls and which columns are out of view to the right, kept current as it scrolls, as its box or
// table changes size (a fold opened, the window turned) and as rows come; gone when nothing is out of view.
export let CUE_WRAPS = ".or-table-wrap, .md-typeset__scrollwrap";

export function initScrollCues(root) {
  root.querySelectorAll(CUE_WRAPS).forEach(scrollCue);
}
