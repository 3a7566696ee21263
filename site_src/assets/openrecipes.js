/* OpenRecipes: sortable and filterable recipe tables, per-model charts (no library but Chart.js).
   Runs on every page view, including Material's instant navigation (document$). */
(function () {
  "use strict";

  // Shareable state: filters (the select's key, "text" for the text: not "q", which opens Material's search over
  // the table), sort ("sort", "dir") and, on other items,
  // prices and budget live in the page's query string, rewritten in place (replaceState) on every change, so a
  // reload or a shared link restores the view.
  function params() { return new URLSearchParams(location.search); }

  // Every value a URL (or this browser's storage) brings is bounded and checked before use; a bad one is ignored as
  // if absent, never an error: a price is a number of dollars per GPU-hour in (0, MAX_PRICE], a token count in
  // (0, MAX_TOKENS], a GPU count an integer in [1, MAX_GPUS], a sort key a column name, a text filter at most
  // MAX_TEXT characters.
  var MAX_PRICE = 1000, MAX_TOKENS = 1e16, MAX_GPUS = 100000, MAX_TEXT = 200;
  var NAME = /^[a-z_]{1,32}$/;

  function validPrice(value) {
    var n = typeof value === "number" ? value : (/^\s*[0-9]*\.?[0-9]+\s*$/.test(String(value)) ? parseFloat(value) : NaN);
    return isFinite(n) && n > 0 && n <= MAX_PRICE ? n : undefined;
  }

  function validCount(value) {
    if (!/^\s*[0-9]{1,6}\s*$/.test(String(value || ""))) return undefined;
    var n = parseInt(value, 10);
    return n >= 1 && n <= MAX_GPUS ? n : undefined;
  }

  function setParams(changes) {
    var p = params();
    Object.keys(changes).forEach(function (k) {
      if (changes[k] === null || changes[k] === "") p.delete(k); else p.set(k, changes[k]);
    });
    var query = p.toString();
    history.replaceState(history.state, "", location.pathname + (query ? "?" + query : "") + location.hash);
  }

  // CSV of the rows in view: text cells neutralised as recipes.csv's are (generator.site.formatting.csv_text:
  // a leading = + - @ tab or CR gets a single quote), figures as the page's sort keys (Python's repr of the
  // value generator/figures computed), unknown figures empty.
  var FORMULA = /^[=+\-@\t\r]/;

  function csvText(value) {
    return FORMULA.test(value) ? "'" + value : value;
  }

  // Between double quotes wherever a cell holds a character a spreadsheet may split on (its guessed or its locale's
  // separator: , ; tab |) or a quote or line end (formatting.csv_cell): "a;=cmd()" opened with ";" stays one cell.
  function csvCell(value) {
    return /[",;\t|\r\n]/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
  }

  var CSV_COLUMNS = [
    ["id", function (row) { return csvText(row.dataset.orRecipe || ""); }],
    ["model", function (row) { return csvText(row.dataset.model || ""); }],
    ["gpu_type", function (row) { return csvText(row.dataset.gpu_type || ""); }],
    ["gpu_count", function (row) { return row.dataset.gpu_count || ""; }],
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
    ["tokens_per_s_per_gpu", function (row) { return figure(row, "tokens"); }],
    ["usd_per_million_tokens", function (row) { return figure(row, "usd"); }],
    ["mfu", function (row) { return figure(row, "mfu"); }],
    ["mfu_peak", function (row) {
      return row.hasAttribute("data-mfu_peak") ? csvText(row.dataset.mfu_peak) : (figure(row, "mfu") ? "bf16" : "");
    }],
    ["step_time_cv_percent", function (row) { return figure(row, "cv"); }],
    ["measured", function (row) { return row.dataset.measured || ""; }]
  ];

  function figure(row, col) {
    var cell = row.querySelector('[data-or-col="' + col + '"]');
    return cell ? cell.getAttribute("data-sort") || "" : "";
  }

  function tableCsv(table) {
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var index = {};
    heads.forEach(function (th, i) { if (th.dataset.orSort) index[th.dataset.orSort] = i; });
    var lines = [CSV_COLUMNS.map(function (c) { return c[0]; }).join(",")];
    flushPrices(table);
    var ordered = table.orRows || Array.prototype.slice.call(table.tBodies[0].rows);
    ordered.forEach(function (row) {
      if (row.orMatch === false) return;  // filtered out (a row only waiting for "Show all" is in view)
      var cells = { layout: row.cells[index.layout], measured: row.cells[index.measured] };
      lines.push(CSV_COLUMNS.map(function (c) { return csvCell(c[1](row, cells)); }).join(","));
    });
    return lines.join("\n") + "\n";
  }

  function initCsv(root) {
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

  window.OpenRecipes = { csvText: csvText, csvCell: csvCell, tableCsv: tableCsv };

  // Every table's rows, in its order (table.orRows): the rows in the body and those served inert in a
  // <template data-or-rows> (past the first 500: _macros.j2). Rows out of view wait, hidden, in a second body that is
  // itself hidden (table.orStash): still in the document, so that every row's hooks (data-or-recipe, ...) can be
  // read there. Above DETACH rows they leave the document instead (table.orRows still lists them; "Show all" puts
  // every row in view): at 10,000 rows in the document, hidden or not, a keystroke or a reprice cost 100-500 ms of
  // style and DOM work in Chromium, against 5-70 ms with them out of it; at the committed registry's 2,218 rows,
  // filter keystroke median 34 / max 60 ms and price key median 58 / max 94 ms in it, 14 / 38 and 17 / 35 out of it
  // (benchmarks/site_scale.py --committed). A table without filters shows every row up to BIG rows, else its first LIVE.
  var BIG = 1000, LIVE = 500, DETACH = BIG;  // BIG and LIVE: generator/site/render.py's ALL_ROWS_UP_TO, LIVE_ROWS

  // Rows leaving the view: hidden, into the stash or out of the document.
  function putAway(table, list) {
    var fragment = document.createDocumentFragment();
    list.forEach(function (row) { row.hidden = true; if (table.orDetach) { if (row.parentNode) row.parentNode.removeChild(row); } else fragment.appendChild(row); });
    if (!table.orDetach) table.orStash.appendChild(fragment);
  }

  function initRows(root) {
    root.querySelectorAll("table.or-sortable").forEach(function (table) {
      if (table.orRows) return;
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var inert = body.querySelector("template[data-or-rows]");
      if (inert) {
        rows = rows.concat(Array.prototype.slice.call(inert.content.children));
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
        var shown = order.length <= BIG || table.orShowAll ? order : order.slice(0, LIVE);
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
  // "Show all" puts every row in, in the table's order, and later sorts keep them all.
  function offerAll(root, table) {
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
      note.textContent = "All " + table.orRows.length.toLocaleString("en-US") + " recipes shown.";
    });
    note.appendChild(document.createTextNode(" "));
    note.appendChild(button);
  }

  // Sorting. The served order is kept on load (the header it follows carries aria-sort); the first click on a
  // header sorts best-first (data-or-best: "desc" for tokens/s and MFU, "asc" for $ and CV), a second click
  // reverses; rows without a value (data-sort="") stay last in both directions. One header is marked at a time.
  // Listeners on the table hear "or:sorted" after each sort (the filters re-show their rows).
  function sortKey(cell, kind) {
    if (!cell) return null;
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (raw === "" || raw === "\u2013") return null;
    if (kind === "number") {
      var n = parseFloat(raw);
      return isNaN(n) ? null : n;
    }
    return raw.toLowerCase();
  }

  // A row's sort key for a header, read once (a reprice forgets the keys of the columns it changes: PRICED).
  function rowKey(row, th, index) {
    var keys = row.orKeys || (row.orKeys = {});
    var column = th.dataset.orSort;
    var key = keys[column];
    if (key === undefined) key = keys[column] = sortKey(row.cells[index], th.dataset.orKind || "text");
    return key;
  }

  // The columns whose keys a price or a budget changes (the cells repriceUsd and repriceTrain write).
  var PRICED = ["usd", "train"];

  function forgetPriced(table, row) {
    for (var i = 0; i < PRICED.length; i++) {
      if (row.orKeys) row.orKeys[PRICED[i]] = undefined;
      if (table.orRanks) table.orRanks[PRICED[i]] = null;
    }
  }

  // A column's rank for each row (indexed by row.orIdx): equal keys share a rank, the smallest key is 0, an
  // unknown key is -1. Worked out once a column (a reprice forgets the priced columns'), so that a click sorts
  // numbers in a typed array: calling a comparator ~130,000 times on row objects took most of a sort's script
  // time at 10,000 rows (benchmarks/site_scale.py).
  function columnRanks(table, th, index) {
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
  function warmKeys(table) {
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

  // A stable sort of the table's rows on a column (ties keep their current order), unknown keys last in both
  // directions: each row's rank folded with its current place into one number, sorted natively.
  function sortRows(table, th, direction, split) {
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

  function nextDirection(th) {
    var best = th.dataset.orBest === "desc" ? "descending" : "ascending";
    var current = th.getAttribute("aria-sort");
    if (!current) return best;
    return current === "descending" ? "ascending" : "descending";
  }

  function initSort(root) {
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
  // frame it causes and offers "Show all" for the rest (added CHUNK rows a frame). The count names every match;
  // filters and sorts act on all rows. The rows shown are the table body's, in the table's order (table.orRows);
  // the others wait in its hidden second body, so a keystroke or a sort moves at most 2 x LIMIT rows.
  var CHUNK = 200, LIMIT = 60;

  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function initFilters(root) {
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
        row.orText = row.textContent.toLowerCase();
        row.orValues = keys.map(function (k) { return row.getAttribute("data-" + k); });
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
      var showAll = false, pending = [], frame = 0;
      var more = document.createElement("p");
      more.className = "or-more";
      more.hidden = true;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "md-button";
      button.setAttribute("data-or-show-all", "");
      more.appendChild(button);
      (table.closest(".or-table-wrap") || table).insertAdjacentElement("afterend", more);

      // Rows into view at the end of the body.
      function show(list) {
        var fragment = document.createDocumentFragment();
        list.forEach(function (row) { row.hidden = false; fragment.appendChild(row); });
        body.appendChild(fragment);
      }

      // Rows into view at the top of the body, in order (the rows leaving it have left). A row already in its
      // place stays there: a row moved is styled and laid out again, so a keystroke that keeps the first rows
      // costs no row work. The others go in by runs, each run one fragment.
      function showFirst(list) {
        var at = body.firstElementChild, run = null;
        for (var i = 0; i < list.length; i++) {
          var row = list[i];
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

      function fill() {
        frame = 0;
        var chunk = pending.splice(0, CHUNK);
        chunk.forEach(function (row) { priceRow(table, row); });  // a row out of the document may be behind
        show(chunk);
        if (pending.length) frame = requestAnimationFrame(fill);
        else table.removeAttribute("data-or-filling");
      }

      // How many rows, from the top of the body, the window may show: the rows that start above its bottom, in the
      // layout of the last frame (read before any change here: no forced layout), and a margin for rows of other
      // heights; where the body ends above the bottom, as many more as fit at its shortest row. null: not known.
      var rowHeight = 0;
      function slotsInView() {
        var bottom = window.innerHeight, shown = body.rows, i = 0, box = null;
        for (; i < shown.length; i++) {
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

      // The body becomes the first LIMIT matches (then, with "Show all", the rest, CHUNK a frame). With `split`,
      // only the rows the window may show go in before the frame this change paints; the rest of the first LIMIT
      // go in by a task after that frame (a sort or a keystroke replaces up to LIMIT rows, and styling and laying
      // out the rows nobody sees yet was most of its frame at 10,000 rows: benchmarks/site_scale.py).
      // data-or-filling is on the table until every row is in.
      var rest = 0;
      function place(target, split) {
        if (rest) clearTimeout(rest);
        rest = 0;
        var first = target.slice(0, LIMIT);
        var now = split ? slotsInView() : null;
        // The rows shown now that are not among the matches in view go to the stash (a row among them stays: it
        // may be in its place already).
        for (var i = 0; i < target.length; i++) target[i].orInView = true;
        var leaving = Array.prototype.filter.call(body.rows, function (r) { return !r.orInView; });
        for (i = 0; i < target.length; i++) target[i].orInView = false;
        if (leaving.length) putAway(table, leaving);
        if (now !== null && now < first.length) {
          var head = first.slice(0, now);
          head.forEach(function (row) { priceRow(table, row); });
          showFirst(head);
          pending = [];
          table.setAttribute("data-or-filling", "");
          // After the frame that paints this: a task queued from the frame's own callbacks.
          frame = requestAnimationFrame(function () {
            frame = 0;
            rest = setTimeout(function () { rest = 0; place(target, false); }, 0);
          });
          return;
        }
        first.forEach(function (row) { priceRow(table, row); });
        showFirst(first);
        pending = target.slice(LIMIT);
        if (pending.length) {
          table.setAttribute("data-or-filling", "");
          // From the frame after this one: a frame requested now would render with this change.
          frame = requestAnimationFrame(function () { frame = requestAnimationFrame(fill); });
        } else {
          table.removeAttribute("data-or-filling");
        }
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

  var INK = "#3f51b5", MUTED = "#9fa8da", LOSS = "#e65100";

  // A click on a point opens its recipe (points carry "href", relative to the page, from Python).
  function openPoint(event, elements, chart) {
    if (!elements.length) return;
    var el = elements[0];
    var p = chart.data.datasets[el.datasetIndex].data[el.index];
    if (p && p.href) location.href = p.href;
  }

  function pointerOnPoints(event, elements) {
    if (event.native && event.native.target) event.native.target.style.cursor = elements.length ? "pointer" : "default";
  }

  // Points come with their like group (views.Like: "pre-training, FP8-CS"): one colour and one legend entry per
  // group (a click on an entry hides or shows it), so that no reader ranks a LoRA point against a pre-training one.
  // Okabe-Ito colours, told apart with colour-blindness; lighter ones on the dark scheme.
  var PALETTE = { light: ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#8a6d00", "#56b4e9", "#333333"],
                  dark: ["#56b4e9", "#ff9e4a", "#3fd9a6", "#f0a0d0", "#f0e442", "#9ecbff", "#e0e0e0"] };

  function palette() {
    var scheme = document.body && document.body.getAttribute("data-md-color-scheme");
    return scheme === "slate" ? PALETTE.dark : PALETTE.light;
  }

  function groups(points) {
    var names = [], by = {};
    points.forEach(function (p) {
      var g = typeof p.group === "string" ? p.group : "recipes";
      if (!by[g]) { by[g] = []; names.push(g); }
      by[g].push(p);
    });
    return names.map(function (name, i) { return { name: name, points: by[name], color: palette()[i % 7] }; });
  }

  function scatterConfig(points, xTitle, xLabel, frontiers) {
    var datasets = [];
    groups(points).forEach(function (g) {
      datasets.push({ label: g.name + " (" + g.points.length + ")", data: g.points, pointRadius: 5, pointHoverRadius: 7,
                      backgroundColor: g.color, borderColor: g.color, orGroup: g.name });
      if (frontiers) {
        var front = g.points.filter(function (p) { return p.front; }).sort(function (a, b) { return a.x - b.x; });
        datasets.push({ label: g.name + ": Pareto frontier", data: front, showLine: true, borderColor: g.color,
                        backgroundColor: "rgba(0,0,0,0)", pointRadius: 8, pointBorderWidth: 2, pointHitRadius: 0,
                        fill: false, orFront: true, orGroup: g.name });
      }
    });
    return {
      type: "scatter",
      data: { datasets: datasets },
      options: {
        animation: false,
        onClick: openPoint,
        onHover: pointerOnPoints,
        plugins: {
          legend: { display: true, position: "bottom", labels: { boxWidth: 12 } },
          tooltip: { callbacks: { label: function (ctx) {
            var p = ctx.raw;
            return p.label + ": " + p.y.toLocaleString("en-US") + " tokens/s/GPU, " + xLabel(p.x) +
              (p.group ? " (" + p.group + ")" : "");
          } } }
        },
        scales: {
          x: { title: { display: true, text: xTitle }, beginAtZero: true },
          y: { title: { display: true, text: "tokens/s per GPU" }, beginAtZero: true }
        }
      }
    };
  }

  // Cost against speed, each group's Pareto frontier (Python marks its points "front") drawn as a line through them.
  function costConfig(points) {
    return scatterConfig(points, "$ / 1M tokens", function (x) { return "$" + x.toFixed(2) + " / 1M"; }, true);
  }

  // Speed against GPU count (a log2 axis: counts double).
  function scalingConfig(points) {
    var config = scatterConfig(points, "GPUs", function (x) { return x + " GPUs"; });
    var xs = points.map(function (p) { return p.x; });
    var lo = Math.pow(2, Math.floor(Math.log2(Math.min.apply(null, xs))) - 1);
    var hi = Math.pow(2, Math.ceil(Math.log2(Math.max.apply(null, xs))) + 1);
    config.options.scales.x = { type: "logarithmic", min: lo, max: hi, title: { display: true, text: "GPUs (log scale)" },
      afterBuildTicks: function (axis) {
        var ticks = [];
        for (var v = lo; v <= hi; v *= 2) ticks.push({ value: v });
        axis.ticks = ticks;
      },
      ticks: { callback: function (v) { return v.toLocaleString("en-US"); } } };
    return config;
  }

  // Per-step time of the median run (the window's steps dark, warm-up light) and its loss on a second axis.
  function stepsConfig(points) {
    var pick = function (inWindow) {
      return points.map(function (p) { return { x: p.x, y: p["in"] === inWindow ? p.time : null }; });
    };
    var loss = points.filter(function (p) { return p.loss !== null; }).map(function (p) { return { x: p.x, y: p.loss }; });
    return {
      type: "line",
      data: { datasets: [
        { label: "step time (s), in the window", data: pick(true), borderColor: INK, backgroundColor: INK, yAxisID: "y" },
        { label: "step time (s), outside it", data: pick(false), borderColor: MUTED, backgroundColor: MUTED, yAxisID: "y" },
        { label: "loss", data: loss, borderColor: LOSS, backgroundColor: LOSS, borderDash: [4, 3], yAxisID: "loss" }
      ] },
      options: {
        animation: false, spanGaps: false, parsing: true,
        scales: {
          x: { type: "linear", title: { display: true, text: "step" }, ticks: { precision: 0 } },
          y: { title: { display: true, text: "seconds" }, beginAtZero: true },
          loss: { position: "right", title: { display: true, text: "loss" }, grid: { drawOnChartArea: false } }
        }
      }
    };
  }

  // Tokens/s per GPU at each measurement on a time axis (days; no date adapter needed), oldest first. Points
  // without a date fall back to their order.
  function historyConfig(points) {
    var DAY = 86400000;
    var dated = points.every(function (p) { return p.date && !isNaN(Date.parse(p.date)); });
    var data = points.map(function (p, i) {
      return { x: dated ? Date.parse(p.date) / DAY : i + 1, y: p.y, label: p.label };
    });
    return {
      type: "line",
      data: { datasets: [{ label: "tokens/s per GPU", data: data, borderColor: INK, backgroundColor: INK, pointRadius: 4 }] },
      options: {
        animation: false,
        plugins: { legend: { display: false },
                   tooltip: { callbacks: { title: function (items) { return items[0].raw.label; } } } },
        scales: {
          x: { type: "linear", title: { display: true, text: dated ? "date measured" : "measurement" },
               ticks: { precision: 0, callback: function (v) {
                 return dated ? new Date(v * DAY).toISOString().slice(0, 10) : v; } } },
          y: { title: { display: true, text: "tokens/s per GPU" }, beginAtZero: true }
        }
      }
    };
  }

  var CONFIGS = { cost: costConfig, scatter: costConfig, scaling: scalingConfig, steps: stepsConfig, history: historyConfig };

  function initCharts(root) {
    if (typeof Chart === "undefined") return;
    root.querySelectorAll("canvas[data-or-chart]").forEach(function (canvas) {
      if (canvas.dataset.orChartReady) return;
      var source = document.getElementById(canvas.dataset.orChart);
      var config = CONFIGS[canvas.dataset.orChartKind || "cost"];
      if (!source || !config) return;
      canvas.dataset.orChartReady = "1";
      new Chart(canvas, config(JSON.parse(source.textContent)));
    });
  }

  // Your own prices and a token budget. A price typed for a GPU type (kept in localStorage and the URL as
  // "p.<type>") reprices every recipe of that type on the page; a budget ("budget", e.g. 1T) adds GPU-hours, dollars
  // and wall-clock days to each row. The formulas are generator/figures.py's, in the same order of operations, so
  // the browser's numbers equal Python's (tests/site/test_site_v2_browser.py compares every recipe):
  //   usd_per_million_tokens(usd_per_hour, instance_gpus, tokens_per_s)
  //       = (usd_per_hour / instance_gpus) / (tokens_per_s * SECONDS_PER_HOUR) * 1e6   (here: a GPU-hour, 1 GPU)
  //   gpu_hours_for_tokens(tokens, tps) = tokens / tps / SECONDS_PER_HOUR
  //   training_usd(gpu_hours, usd_per_gpu_hour) = gpu_hours * usd_per_gpu_hour
  //   wall_clock_days(gpu_hours, gpu_count) = gpu_hours / gpu_count / 24
  var SECONDS_PER_HOUR = 3600.0;
  var STORE = "openrecipes.prices.v1";

  function usdPerMillion(usdPerHour, instanceGpus, tokensPerS) {
    return (usdPerHour / instanceGpus) / (tokensPerS * SECONDS_PER_HOUR) * 1e6;
  }
  function gpuHoursForTokens(tokens, tps) { return tokens / tps / SECONDS_PER_HOUR; }
  function trainingUsd(gpuHours, usdPerGpuHour) { return gpuHours * usdPerGpuHour; }
  function wallClockDays(gpuHours, gpuCount) { return gpuHours / gpuCount / 24.0; }

  // formatting.usd_short: cents, or three decimals below ten cents.
  // One formatter per precision, made once: toLocaleString builds one per call, most of a reprice's time at
  // 10,000 rows. Same digits (toLocaleString is Intl.NumberFormat).
  var CENTS = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  var MILLS = new Intl.NumberFormat("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
  var DAYS = [new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }),
              new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 })];
  function usdShort(value) {
    return "$" + (Math.abs(value) < 0.1 ? MILLS : CENTS).format(value);
  }
  function compact(value, unit) {
    var steps = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < steps.length; i++) {
      if (Math.abs(value) >= steps[i][0]) return (unit === "$" ? "$" : "") + (value / steps[i][0]).toPrecision(3) + steps[i][1];
    }
    return (unit === "$" ? "$" : "") + value.toPrecision(3);
  }

  var SUFFIX = { k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12, p: 1e15 };
  function parseTokens(text) {
    if (typeof text !== "string" || text.length > 32) return null;
    var m = /^\s*([0-9][0-9,]*\.?[0-9]*(?:e[+-]?[0-9]+)?)\s*([kmbgtp]?)\s*$/i.exec(text || "");
    if (!m) return null;
    var n = parseFloat(m[1].replace(/,/g, "")) * (m[2] ? SUFFIX[m[2].toLowerCase()] : 1);
    return isFinite(n) && n > 0 && n <= MAX_TOKENS ? n : null;
  }

  // This browser's prices: only those typed on a page (savePrice), each checked again when read (an older version
  // stored what a URL brought, 1e308 among them).
  function storedPrices() {
    var out = {}, raw;
    try { raw = JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (e) { return out; }
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) return out;
    Object.keys(raw).forEach(function (k) {
      var n = validPrice(raw[k]);
      if (n !== undefined && k.length <= 64) out[k] = n;
    });
    return out;
  }
  function savePrices(prices) {
    try { localStorage.setItem(STORE, JSON.stringify(prices)); } catch (e) { /* private mode: the URL keeps them */ }
  }

  // A price typed for one GPU type (undefined: the catalog's again) goes into this browser's store; nothing the URL
  // brings is stored.
  function savePrice(type, value) {
    var stored = storedPrices();
    if (value === undefined) delete stored[type]; else stored[type] = value;
    savePrices(stored);
  }

  // User prices: the URL's first (a shared link), then this browser's. A bad URL price is ignored.
  function userPrices() {
    var prices = storedPrices(), p = params();
    p.forEach(function (value, key) {
      if (key.indexOf("p.") === 0 && key.length <= 66) {
        var n = validPrice(value);
        if (n !== undefined) prices[key.slice(2)] = n;
      }
    });
    return prices;
  }

  function served(cell) {
    if (!cell.orServed) cell.orServed = { text: cell.textContent, sort: cell.getAttribute("data-sort") || "" };
    return cell.orServed;
  }

  // A row's figure cells and numbers, read once (a reprice at 10,000 rows must not query each row again).
  function rowFigures(row) {
    if (!row.orFig) {
      var tokens = row.querySelector('[data-or-col="tokens"]');
      row.orFig = { tokens: parseFloat(tokens.getAttribute("data-sort")), usd: row.querySelector('[data-or-col="usd"]'),
                    train: row.querySelector('[data-or-col="train"]'), count: parseInt(row.dataset.gpu_count, 10),
                    type: row.dataset.gpu_type };
    }
    return row.orFig;
  }

  function repriceUsd(cell, type, own, tokens) {
    if (own !== undefined) {
      var usd = usdPerMillion(own, 1, tokens);
      served(cell);
      cell.setAttribute("data-sort", String(usd));
      cell.textContent = usdShort(usd);
      cell.classList.add("or-own-price");
      cell.title = "at your $" + own + " per " + type + " GPU-hour";
    } else if (cell.orServed) {
      cell.setAttribute("data-sort", cell.orServed.sort);
      cell.textContent = cell.orServed.text;
      cell.classList.remove("or-own-price");
      cell.removeAttribute("title");
      cell.orServed = null;
    }
  }

  function repriceTrain(train, fig, price, budget) {
    if (!budget) {
      if (train.orBudget) {
        train.textContent = "";
        train.setAttribute("data-sort", "");
        train.orBudget = null;
      }
      return;
    }
    var hours = gpuHoursForTokens(budget, fig.tokens);
    var days = wallClockDays(hours, fig.count);
    var dollars = price !== undefined ? trainingUsd(hours, price) : null;
    train.orBudget = budget;
    train.setAttribute("data-gpu-hours", String(hours));
    train.setAttribute("data-days", String(days));
    train.setAttribute("data-usd", dollars === null ? "" : String(dollars));
    train.setAttribute("data-sort", dollars === null ? "" : String(dollars));
    train.textContent = compact(hours) + " GPU-h \u00b7 " + (dollars === null ? "\u2013" : compact(dollars, "$")) +
      " \u00b7 " + DAYS[days < 10 ? 1 : 0].format(days) + " d";
  }

  // Every row of every recipe table: the rows in view first (the table's order), so that they are right in the
  // frame this change paints. A row whose price and budget are unchanged since its last reprice is skipped.
  // The prices in force ({prices, defaults, budget}), set by reprice(); a row is brought up to them once.
  var priced = null;

  function priceRow(table, row) {
    if (!priced) return;
    var fig = rowFigures(row), own = priced.prices[fig.type], budget = priced.budget;
    var price = own !== undefined ? own : priced.defaults[fig.type];
    if (row.orPriced === price && row.orOwn === own && row.orBudget === budget) return;
    row.orPriced = price;
    row.orOwn = own;
    row.orBudget = budget;
    forgetPriced(table, row);
    repriceUsd(fig.usd, fig.type, own, fig.tokens);
    if (fig.train) repriceTrain(fig.train, fig, price, budget);
  }

  // A table above DETACH rows reprices the rows out of view after the frame that shows the new figures, 2,000
  // a task (they are out of the document: nothing reads them there); a sort or a CSV brings them up first.
  function flushPrices(table) {
    if (!table.orStale) return;
    table.orStale = false;
    table.orRows.forEach(function (row) { priceRow(table, row); });
  }

  function repriceLater(table) {
    table.orStale = true;
    var rows = table.orRows, at = 0, token = {};
    table.orStaleToken = token;
    function step() {
      if (table.orStaleToken !== token || !table.orStale) return;
      for (var end = Math.min(at + 2000, rows.length); at < end; at++) priceRow(table, rows[at]);
      if (at < rows.length) setTimeout(step, 0);
      else { table.orStale = false; warmKeys(table); }
    }
    requestAnimationFrame(function () { setTimeout(step, 0); });
  }

  function reprice(root, prices, defaults, budget) {
    priced = { prices: prices, defaults: defaults, budget: budget };
    root.querySelectorAll("table.or-sortable").forEach(function (table) {
      if (budget) table.setAttribute("data-or-budget-on", ""); else table.removeAttribute("data-or-budget-on");
      // The rows in view first (the frame shows them), then the others (hidden, cheap to write).
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) { priceRow(table, row); });
      if (table.orDetach) repriceLater(table);
      else { (table.orRows || []).forEach(function (row) { priceRow(table, row); }); warmKeys(table); }
    });
    repricePage(root, prices);
    root.querySelectorAll("[data-or-cheapest]").forEach(function (cell) { repriceCheapest(cell, prices); });
  }

  // A recipe page's $ / 1M figures, in the tiles and the body alike (each carries data-or-col="usd"): at a price of
  // one's own for the page's GPU type, every one of them says the same repriced figure.
  function repricePage(root, prices) {
    var tiles = root.querySelector("[data-or-repriced]");
    if (!tiles) return;
    var type = tiles.dataset.gpu_type, own = prices[type], tokens = parseFloat(tiles.dataset.orTokens);
    root.querySelectorAll('.md-content [data-or-col="usd"]').forEach(function (el) {
      if (el.closest("tr[data-or-recipe], [data-or-planner], [data-or-compare-view]")) return;
      if (el.orServed === undefined) el.orServed = el.textContent;
      if (own === undefined || !(tokens > 0)) {
        el.textContent = el.orServed;
        el.classList.remove("or-own-price");
        el.removeAttribute("title");
        return;
      }
      var usd = usdPerMillion(own, 1, tokens);
      el.textContent = el.closest("[data-or-repriced]") ? usdShort(usd) : "$" + CENTS.format(usd) + " at your price";
      el.classList.add("or-own-price");
      el.title = "at your $" + own + " per " + type + " GPU-hour";
    });
  }

  // The home page's lowest $ / 1M tokens per model. At a price of one's own, a GPU type's fastest recipe is its
  // cheapest ($ / 1M is the price over tokens/s); at the served figures each recipe has its own catalog instance.
  // So Python lists, per GPU type, its fastest recipe and its cheapest served one (render._cheapest_candidates),
  // and the lowest at the prices in force is the model's cheapest; ties go to the first listed.
  function repriceCheapest(cell, prices) {
    var candidates = cell.orCandidates;
    if (!candidates) {
      try { candidates = JSON.parse(cell.getAttribute("data-or-cheapest")); } catch (e) { return; }
      cell.orCandidates = candidates;
    }
    var best = null, bestUsd = null, bestOwn = false;
    candidates.forEach(function (t) {
      var own = prices[t.gpu_type];
      var c = own !== undefined ? t.fastest : t.served;
      if (!c) return;
      var usd = own !== undefined ? usdPerMillion(own, 1, c.tokens) : c.usd;
      if (bestUsd === null || usd < bestUsd) { best = c; bestUsd = usd; bestOwn = own !== undefined; }
    });
    var link = cell.querySelector("a"), on = cell.nextElementSibling;
    if (!best) {
      cell.textContent = "\u2013";
      if (on) on.textContent = "";
      cell.removeAttribute("data-sort");
      return;
    }
    if (!link) {
      cell.textContent = "";
      link = document.createElement("a");
      cell.appendChild(link);
    }
    link.href = best.href;
    link.title = best.id;
    link.textContent = usdShort(bestUsd);
    cell.setAttribute("data-sort", String(bestUsd));
    cell.setAttribute("data-or-cheapest-id", best.id);
    cell.classList.toggle("or-own-price", bestOwn);
    if (on) {
      on.textContent = "";
      var small = document.createElement("small");
      small.textContent = best.gpus + ", " + best.label;
      on.appendChild(small);
    }
  }

  // The run planner's state: GPU type ("plan.gpu", one of the select's options), count ("plan.n"), the price of
  // that type (its "p.<type>") and the token budget ("budget"). From the URL, checked; never stored.
  function planState(root) {
    var p = params(), select = root.querySelector('select[data-or-plan="gpu"]');
    var gpu = p.get("plan.gpu") || "";
    var known = select ? Array.prototype.some.call(select.options, function (o) { return o.value === gpu && gpu; }) : false;
    return { gpu: known || (!select && gpu.length <= 64) ? gpu : "", count: validCount(p.get("plan.n")) };
  }

  function planDefault(root, gpu) {
    var option = root.querySelector('select[data-or-plan="gpu"] option[value="' + (gpu || "").replace(/["\\\n\r]/g, "") + '"]');
    return option ? validPrice(option.getAttribute("data-or-default")) : undefined;
  }

  function planCell(tag, text, col) {
    var el = cell(tag, text);
    if (col) el.setAttribute("data-or-col", col);
    return el;
  }

  // Every recipe of the page's model that fits the plan (its GPU type, no more GPUs than planned), with the
  // GPU-hours, dollars and days for the budget (figures.py's formulas), cheapest first within each like group.
  function renderPlanner(root, plan, prices, budget) {
    root.querySelectorAll("[data-or-planner]").forEach(function (box) {
      var source = box.parentNode.querySelector("script[data-or-plan-data]");
      var rows = box.orPlan;
      if (!rows) {
        try { rows = box.orPlan = JSON.parse(source.textContent); } catch (e) { return; }
      }
      box.textContent = "";
      if (!plan.gpu || !plan.count || !budget) {
        var empty = cell("p", "Choose a GPU type, a count and a token budget to plan a run.");
        empty.setAttribute("data-or-plan-empty", "");
        box.appendChild(empty);
        return;
      }
      var price = prices[plan.gpu] !== undefined ? prices[plan.gpu] : planDefault(document, plan.gpu);
      var fits = rows.filter(function (r) { return r.gpu_type === plan.gpu && r.count <= plan.count; });
      var summary = compact(budget) + " tokens on " + plan.count + " x " + plan.gpu +
        (price !== undefined ? " at $" + price + " per GPU-hour" : " (no price: enter one)") + ": " +
        fits.length + (fits.length === 1 ? " recipe fits" : " recipes fit") + ".";
      box.appendChild(cell("p", summary, "or-plan__summary"));
      var names = [], by = {};
      fits.forEach(function (r) {
        if (!by[r.group]) { by[r.group] = []; names.push(r.group); }
        by[r.group].push(r);
      });
      names.forEach(function (name) {
        var list = by[name].map(function (r) {
          var hours = gpuHoursForTokens(budget, r.tokens);
          return { r: r, hours: hours, days: wallClockDays(hours, r.count),
                   usd: price !== undefined ? trainingUsd(hours, price) : null };
        }).sort(function (a, b) { return a.hours - b.hours || (a.r.id < b.r.id ? -1 : 1); });
        var wrap = document.createElement("div");
        wrap.className = "or-table-wrap";
        var table = document.createElement("table");
        table.className = "or-plan";
        table.setAttribute("data-or-plan-group", name);
        table.appendChild(cell("caption", name));
        var head = table.createTHead().insertRow();
        ["Recipe", "GPUs", "Layout", "Tokens/s per GPU", "GPU-hours", "Cost", "Days"].forEach(function (h, i) {
          var th = cell("th", h, i >= 3 ? "or-num" : "");
          th.scope = "col";
          head.appendChild(th);
        });
        var body = table.createTBody();
        list.forEach(function (x) {
          var tr = body.insertRow();
          tr.setAttribute("data-or-recipe", x.r.id);
          var name = document.createElement("td");
          name.className = "or-name";
          var a = document.createElement("a");
          a.href = x.r.href;
          a.title = x.r.id;
          a.textContent = x.r.name;
          name.appendChild(a);
          tr.appendChild(name);
          tr.appendChild(cell("td", x.r.count + " x " + x.r.gpu_type));
          tr.appendChild(cell("td", x.r.label, "or-layout"));
          tr.appendChild(cell("td", Math.round(x.r.tokens).toLocaleString("en-US"), "or-num"));
          var hours = planCell("td", compact(x.hours), "hours");
          hours.setAttribute("data-sort", String(x.hours));
          var usd = planCell("td", x.usd === null ? "\u2013" : compact(x.usd, "$"), "cost");
          usd.setAttribute("data-sort", x.usd === null ? "" : String(x.usd));
          var days = planCell("td", DAYS[x.days < 10 ? 1 : 0].format(x.days), "days");
          days.setAttribute("data-sort", String(x.days));
          [hours, usd, days].forEach(function (c) { c.classList.add("or-num"); tr.appendChild(c); });
        });
        wrap.appendChild(table);
        box.appendChild(wrap);
      });
    });
  }

  // The planner's and the prices' URL keys: carried into every link to another page of the site (a budget or a
  // plan set on one page applies on the next), never stored.
  var CARRIED = /^(p\.|budget$|plan\.gpu$|plan\.n$)/;

  function carriedQuery() {
    var out = new URLSearchParams();
    params().forEach(function (value, key) { if (CARRIED.test(key)) out.set(key, value); });
    return out;
  }

  document.addEventListener("click", function (event) {
    var a = event.target && event.target.closest ? event.target.closest("a[href]") : null;
    if (!a || a.target || a.hasAttribute("download") || a.origin !== location.origin) return;
    if (a.pathname === location.pathname || /\.(json|csv|yaml)$/.test(a.pathname)) return;
    var carried = carriedQuery();
    if (!carried.toString()) return;
    var url = new URL(a.href);
    carried.forEach(function (value, key) { if (!url.searchParams.has(key)) url.searchParams.set(key, value); });
    a.href = url.toString();
  }, true);

  function initDecide(root) {
    var prices = userPrices();
    var defaults = {};
    var inputs = Array.prototype.slice.call(root.querySelectorAll("input[data-or-price]"));
    inputs.forEach(function (input) {
      var type = input.dataset.orPrice;
      var d = validPrice(input.dataset.orDefault);
      if (d !== undefined) defaults[type] = d;
      if (prices[type] !== undefined) input.value = String(prices[type]);
    });
    var budgetInput = root.querySelector("input[data-or-budget]");
    var budgetText = params().get("budget") || "";
    if (!parseTokens(budgetText)) budgetText = "";
    if (budgetInput) budgetInput.value = budgetText;
    var plan = planState(root);
    var gpuSelect = root.querySelector('select[data-or-plan="gpu"]');
    var countInput = root.querySelector('input[data-or-plan="count"]');
    var priceInput = root.querySelector('input[data-or-plan="price"]');
    function showPlanPrice() {
      if (!priceInput) return;
      priceInput.value = plan.gpu && prices[plan.gpu] !== undefined ? String(prices[plan.gpu]) : "";
      var d = planDefault(root, plan.gpu);
      priceInput.placeholder = d !== undefined ? String(d) + " (catalog)" : "price";
    }
    if (gpuSelect) gpuSelect.value = plan.gpu;
    if (countInput) countInput.value = plan.count ? String(plan.count) : "";
    showPlanPrice();
    var panel = root.querySelector("[data-or-decide]");
    if (panel && (budgetText || plan.gpu || inputs.some(function (i) { return prices[i.dataset.orPrice] !== undefined; }))) {
      panel.open = true;
    }

    // `typed`: the price inputs the user changed (only those are stored in this browser).
    function update(typed) {
      var changes = {};
      inputs.forEach(function (input) {
        var type = input.dataset.orPrice, n = validPrice(input.value);
        // A price equal to the catalog's is no price of your own: the served figures stay.
        if (typed.indexOf(input) !== -1) {
          if (n !== undefined && n !== defaults[type]) prices[type] = n; else delete prices[type];
          savePrice(type, prices[type]);
        }
        changes["p." + type] = prices[type] !== undefined ? String(prices[type]) : null;
      });
      if (typed.indexOf(priceInput) !== -1 && plan.gpu) {
        var own = validPrice(priceInput.value);
        if (own !== undefined && own !== planDefault(root, plan.gpu)) prices[plan.gpu] = own; else delete prices[plan.gpu];
        savePrice(plan.gpu, prices[plan.gpu]);
        changes["p." + plan.gpu] = prices[plan.gpu] !== undefined ? String(prices[plan.gpu]) : null;
        inputs.forEach(function (input) {
          if (input.dataset.orPrice === plan.gpu) input.value = prices[plan.gpu] !== undefined ? String(prices[plan.gpu]) : input.dataset.orDefault;
        });
      }
      var text = budgetInput ? budgetInput.value.trim() : "";
      changes.budget = parseTokens(text) ? text : null;
      if (gpuSelect) plan.gpu = gpuSelect.value;
      if (countInput) plan.count = validCount(countInput.value);
      changes["plan.gpu"] = plan.gpu || null;
      changes["plan.n"] = plan.count ? String(plan.count) : null;
      if (typed.indexOf(gpuSelect) !== -1) showPlanPrice();
      setParams(changes);
      reprice(document, prices, defaults, parseTokens(text));
      renderPlanner(document, plan, prices, parseTokens(text));
      document.querySelectorAll("table.or-sortable").forEach(function (t) { t.dispatchEvent(new CustomEvent("or:repriced")); });
    }

    inputs.forEach(function (input) { input.addEventListener("input", function () { update([input]); }); });
    [budgetInput, countInput, priceInput].forEach(function (el) {
      if (el) el.addEventListener("input", function () { update([el]); });
    });
    if (gpuSelect) gpuSelect.addEventListener("change", function () { update([gpuSelect]); });
    var reset = root.querySelector("[data-or-reset-prices]");
    if (reset) reset.addEventListener("click", function () {
      inputs.forEach(function (input) { input.value = input.dataset.orDefault; });
      if (priceInput) priceInput.value = "";
      update(inputs.concat(priceInput ? [priceInput] : []));
    });
    // The prices in force in the URL: a shared link shows what this page shows.
    var own = {};
    Object.keys(prices).forEach(function (k) { own["p." + k] = String(prices[k]); });
    setParams(own);
    reprice(root, prices, defaults, parseTokens(budgetText));
    renderPlanner(root, plan, prices, parseTokens(budgetText));
  }

  window.OpenRecipes.parseTokens = parseTokens;

  // Compare: tick 2-4 recipes in any table ("compare" in the URL keeps the ticks), then open the compare page
  // ("ids" in its URL), which fetches each recipe's record (recipes/<id>.compare.json, text formatted by Python)
  // and lays them side by side, marking every row whose values differ. Only textContent is written.
  var MAX_COMPARE = 4;
  var RECIPE_ID = /^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

  function idList(text) {
    return (text || "").split(",").filter(function (id) { return RECIPE_ID.test(id) && id.indexOf("..") === -1; })
      .filter(function (id, i, all) { return all.indexOf(id) === i; }).slice(0, MAX_COMPARE);
  }

  function initPicks(root) {
    var table = root.querySelector("table.or-sortable[data-or-compare-href]");
    if (!table || table.dataset.orPickReady) return;
    table.dataset.orPickReady = "1";
    var chosen = idList(params().get("compare"));
    // Every row's box, in the document or not (a large table keeps rows out of view out of it).
    var boxes = [];
    root.querySelectorAll("table.or-sortable").forEach(function (t) {
      (t.orRows || []).forEach(function (row) {
        var box = row.querySelector("input[data-or-compare]");
        if (box) boxes.push(box);
      });
    });
    var bar = document.createElement("div");
    bar.className = "or-compare-bar";
    bar.setAttribute("role", "region");
    bar.setAttribute("aria-label", "Recipes to compare");
    var label = document.createElement("span");
    var link = document.createElement("a");
    link.className = "md-button md-button--primary or-small-button";
    link.setAttribute("data-or-compare-open", "");
    link.textContent = "Compare side by side";
    var clear = document.createElement("button");
    clear.type = "button";
    clear.className = "md-button or-small-button";
    clear.textContent = "Clear";
    bar.appendChild(label);
    bar.appendChild(link);
    bar.appendChild(clear);
    document.body.appendChild(bar);

    function show() {
      boxes.forEach(function (box) {
        box.checked = chosen.indexOf(box.dataset.orCompare) !== -1;
        box.disabled = !box.checked && chosen.length >= MAX_COMPARE;
      });
      bar.hidden = chosen.length === 0;
      label.textContent = chosen.length + " of " + MAX_COMPARE + " chosen" + (chosen.length < 2 ? ": tick one more" : "");
      link.hidden = chosen.length < 2;
      link.href = table.dataset.orCompareHref + "?ids=" + encodeURIComponent(chosen.join(","));
      setParams({ compare: chosen.join(",") });
    }
    boxes.forEach(function (box) {
      box.addEventListener("change", function () {
        var id = box.dataset.orCompare;
        chosen = chosen.filter(function (c) { return c !== id; });
        if (box.checked && chosen.length < MAX_COMPARE) chosen.push(id);
        show();
      });
    });
    clear.addEventListener("click", function () { chosen = []; show(); });
    show();
  }

  function cell(tag, text, cls) {
    var el = document.createElement(tag);
    el.textContent = text;
    if (cls) el.className = cls;
    return el;
  }

  function initCompareView(root) {
    var view = root.querySelector("[data-or-compare-view]");
    if (!view || view.dataset.orReady) return;
    view.dataset.orReady = "1";
    var ids = idList(params().get("ids"));
    if (ids.length < 2) return;
    var base = view.dataset.orRoot || "../";
    var prices = userPrices();
    Promise.all(ids.map(function (id) {
      return fetch(base + "recipes/" + id + ".compare.json").then(function (r) {
        if (!r.ok) throw new Error(id + ": " + r.status);
        return r.json();
      });
    })).then(function (records) {
      view.textContent = "";
      var table = document.createElement("table");
      table.className = "or-compare";
      table.id = "or-compare-table";
      var head = table.createTHead().insertRow();
      head.appendChild(cell("th", "Field"));
      records.forEach(function (rec) {
        var th = document.createElement("th");
        th.setAttribute("data-or-compare-col", rec.id);
        var a = document.createElement("a");
        a.href = base + rec.href;
        a.textContent = rec.title;
        th.appendChild(a);
        th.appendChild(cell("small", rec.id, "or-compare__id"));
        head.appendChild(th);
      });
      var body = table.createTBody();
      var differing = 0, deciding = 0, folded = 0;
      records[0].sections.forEach(function (section, si) {
        // Labels in the order the records give them, each section's union.
        var labels = [];
        records.forEach(function (rec) {
          (rec.sections[si] ? rec.sections[si][1] : []).forEach(function (pair) {
            if (labels.indexOf(pair[0]) === -1) labels.push(pair[0]);
          });
        });
        var sep = body.insertRow();
        sep.className = "or-compare__section";
        if (si > 0) { sep.classList.add("or-compare__more"); sep.hidden = true; }
        var th = cell("th", section[0]);
        th.colSpan = records.length + 1;
        th.scope = "colgroup";
        sep.appendChild(th);
        labels.forEach(function (label) {
          var usdRow = label === "$ / 1M tokens";
          var values = records.map(function (rec) {
            var found = (rec.sections[si] ? rec.sections[si][1] : []).filter(function (p) { return p[0] === label; })[0];
            // At a price of one's own for the recipe's GPU type, its $ / 1M is repriced here as everywhere else.
            var own = usdRow ? prices[rec.gpu_type] : undefined;
            if (own !== undefined && rec.tokens > 0) return usdShort(usdPerMillion(own, 1, rec.tokens)) + " at your price";
            return found ? found[1] : "\u2013";
          });
          var differs = values.some(function (v) { return v !== values[0]; });
          var row = body.insertRow();
          row.setAttribute("data-or-field", section[0] + ": " + label);
          if (differs) { row.className = "or-diff"; differing++; if (si === 0) deciding++; }
          if (si > 0) { row.classList.add("or-compare__more"); row.hidden = true; folded++; }
          var rowHead = cell("th", label);
          rowHead.scope = "row";
          if (differs) rowHead.appendChild(cell("span", " (differs)", "or-diff__mark"));
          row.appendChild(rowHead);
          values.forEach(function (v) {
            var td = cell("td", v);
            if (usdRow) td.setAttribute("data-or-col", "usd");
            row.appendChild(td);
          });
        });
      });
      // What decides first (layout, training, precision, tokens/s, $, MFU, memory, evidence); the other sections fold
      // under one button, with how many of their fields differ.
      view.appendChild(cell("p", records.length + " recipes; " + deciding + " of the deciding fields differ (marked); " +
        (differing - deciding) + " of the other " + folded + " fields differ.", "or-compare__count"));
      var wrap = document.createElement("div");
      wrap.className = "or-table-wrap";
      wrap.appendChild(table);
      view.appendChild(wrap);
      var more = document.createElement("button");
      more.type = "button";
      more.className = "md-button or-small-button";
      more.setAttribute("data-or-compare-more", "");
      more.setAttribute("aria-expanded", "false");
      more.textContent = "Show the other " + folded + " fields";
      more.addEventListener("click", function () {
        var open = more.getAttribute("aria-expanded") !== "true";
        table.querySelectorAll("tr.or-compare__more").forEach(function (r) { r.hidden = !open; });
        more.setAttribute("aria-expanded", open ? "true" : "false");
        more.textContent = (open ? "Hide" : "Show") + " the other " + folded + " fields";
      });
      view.appendChild(more);
    }).catch(function (err) {
      view.textContent = "";
      view.appendChild(cell("p", "Could not load a recipe to compare (" + err.message + ")."));
    });
  }

  // A link into a folded section (the evidence summary's, a search result's) opens the folds around its target.
  function openFoldsFor(hash) {
    if (!hash || hash.length < 2) return;
    var target = document.getElementById(decodeURIComponent(hash.slice(1)));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  }

  window.addEventListener("hashchange", function () { openFoldsFor(location.hash); });

  // Material's search is a role="dialog" without a name (axe-core: aria-dialog-name); a table wrapper Material makes
  // scrollable gets a tab stop, so that a keyboard can scroll it (scrollable-region-focusable).
  function accessibility(root) {
    var search = root.querySelector(".md-search[role=dialog]");
    if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
    requestAnimationFrame(function () {
      root.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrap) {
        if (wrap.scrollWidth > wrap.clientWidth && !wrap.hasAttribute("tabindex")) {
          wrap.setAttribute("tabindex", "0");
          wrap.setAttribute("role", "region");
          wrap.setAttribute("aria-label", "Scrollable table");
        }
      });
    });
  }

  // Small tables sorted in place on a header click (the failed layouts): numbers by data-sort or text, text
  // otherwise; a second click reverses.
  function initSimpleSort(root) {
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

  function init() {
    accessibility(document);
    openFoldsFor(location.hash);
    initRows(document);
    initFilters(document);
    initDecide(document);
    initSort(document);
    initCsv(document);
    initPicks(document);
    initCompareView(document);
    initCharts(document);
    initSimpleSort(document);
  }

  if (typeof document$ !== "undefined" && document$.subscribe) {
    document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
