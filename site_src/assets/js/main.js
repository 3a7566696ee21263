/* OpenRecipes' page script: sortable and filterable recipe tables, prices and the run planner, compare,
   charts, URL state; one ES module per concern (site_src/assets/js/), no bundler, no library but Chart.js.
   Runs on every page view, including Material's instant navigation (document$). */
import { csvCell, csvText, initCsv, initFilters, initRows, initScrollCues, initSimpleSort, initSort, tableCsv } from "./table.js";
import { initCharts } from "./charts.js";
import { initDecide, parseTokens } from "./prices.js";
import { initPlanFamily } from "./predicted.js";
import { initCompareView, initPicks } from "./compare.js";
import { revealRow, shownRows } from "./rowwindow.js";

// A link into a folded section (the evidence summary's, a search result's) opens the folds around its target.
export function openFoldsFor(hash) {
  if (!hash || hash.length < 2) return;
  var target = document.getElementById(decodeURIComponent(hash.slice(1)));
  for (var node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
  }
}

window.addEventListener("hashchange", function () { openFoldsFor(location.hash); });

// Material's search is a role="dialog" without a name (axe-core: aria-dialog-name); a table wrapper Material makes
// scrollable gets a tab stop, so that a keyboard can scroll it (scrollable-region-focusable).
export function accessibility(root) {
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

// Each set-up step timed as a User Timing measure ("or:rows", ...): benchmarks/site_scale.py reads them to say where
// the time before a shared link's first paint goes.
function step(name, run) {
  var start = performance.now();
  run(document);
  if (performance.measure) performance.measure("or:" + name, { start: start });
}

function init() {
  accessibility(document);
  openFoldsFor(location.hash);
  step("rows", initRows);
  step("filters", initFilters);
  step("decide", initDecide);
  step("plan-family", initPlanFamily);
  step("sort", initSort);
  step("csv", initCsv);
  step("picks", initPicks);
  step("compare", initCompareView);
  step("charts", initCharts);
  step("simple-sort", initSimpleSort);
  step("scroll-cues", initScrollCues);
  // The URL's view is applied: the table may paint (generator/site/direct.py's VIEW_PENDING hid it where the page
  // had a query string; should a step above throw, its 8 s timer shows the table).
  var html = document.documentElement;
  if (html.classList.contains("or-view-pending")) html.classList.remove("or-view-pending");
  // Every table's filters, sort and prices listen from here on (a page swapped in by instant navigation shows its
  // table before this runs): what a script or a test may wait for.
  document.querySelectorAll("table.or-sortable").forEach(function (table) { table.setAttribute("data-or-ready", ""); });
}

if (typeof document$ !== "undefined" && document$.subscribe) {
  document$.subscribe(init);
} else if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", init);
} else {
  init();
}

// The browser tests' hooks into the CSV and token parsing (tests/site), the rows a table shows in its order, in its
// window or out of it (read-only: rowwindow.js keeps only the rows near the viewport in the document), and a row
// scrolled into view by its recipe id (as a reader scrolls to it).
window.OpenRecipes = {
  csvText: csvText, csvCell: csvCell, tableCsv: tableCsv, parseTokens: parseTokens,
  shownRows: function (id) { var t = document.getElementById(id); return t ? shownRows(t) : []; },
  revealRow: function (id, recipe) { var t = document.getElementById(id); return t ? revealRow(t, recipe) : false; }
};
