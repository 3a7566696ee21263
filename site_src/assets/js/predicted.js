/* The run planner's predicted part and its model family: the layout advisor's PREDICTED layouts for the page's model
   family (generator/site/predicted.py's planner data, in script[data-or-plan-predicted]) on the planned GPU type,
   in a table of their own beside the measured recipes, never among them. The costs come from prices.js's
   formulas, through the `cost` function it passes (this module sits below it). Imports only dom.js. */
import { cell } from "./dom.js";

function predictedData(box) {
  if (box.orPredicted !== undefined) return box.orPredicted;
  var source = box.parentNode.querySelector("script[data-or-plan-predicted]");
  try { box.orPredicted = source ? JSON.parse(source.textContent) : null; } catch (e) { box.orPredicted = null; }
  return box.orPredicted;
}

// The largest count the site predicted at or below the planned one (the advisor's answers are per GPU count).
export function predictedCount(counts, planned) {
  var best = null;
  counts.forEach(function (c) { if (c <= planned && (best === null || c > best)) best = c; });
  return best;
}

// Ties to even, as the model page's Python formatting rounds the same figures (998.5 reads 998 on both; the default
// half-up read 999 here).
function range(v, digits) {
  var f = function (x) {
    return x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits, roundingMode: "halfEven" });
  };
  return f(v.predicted) + " (" + f(v.low) + "\u2013" + f(v.high) + ")";
}

function note(box, text) {
  var p = cell("p", text, "or-predicted-note");
  p.setAttribute("data-or-plan-predicted-note", "");
  box.appendChild(p);
}

// plan: {gpu, count}; budget: tokens or null; cost(tokensPerS, count) -> {hours, usd (or null), days} by prices.js.
export function renderPredicted(box, plan, budget, cost, compactText) {
  if (!box) return;
  box.textContent = "";
  var data = predictedData(box);
  if (!data || !plan.gpu || !plan.count) return;
  var badge = cell("p", "", "or-predicted-head");
  badge.appendChild(cell("span", "PREDICTED", "or-predicted-badge"));
  badge.appendChild(document.createTextNode(" Layouts nobody measured, apart from the measured recipes: the layout advisor's, for " +
    (data.family || "this model") + "."));
  box.appendChild(badge);
  if (data.refusal) { note(box, "The advisor predicts nothing for this model: " + data.refusal); return; }
  var byCount = data.gpus[plan.gpu];
  if (!byCount) {
    note(box, "No predicted layouts of " + data.family + " on " + plan.gpu + " on this site (no measured recipe of the family on it, " +
      "or too few rows of this GPU type to calibrate on).");
    return;
  }
  var counts = Object.keys(byCount).map(Number);
  var count = predictedCount(counts, plan.count);
  if (count === null) {
    note(box, "The site predicts " + data.family + " on " + plan.gpu + " at " + counts.join(", ") + " GPUs; none at or below " + plan.count + ".");
    return;
  }
  var rows = byCount[String(count)];
  var wrap = document.createElement("div");
  wrap.className = "or-table-wrap";
  // A keyboard can scroll it where it is wider than its box (axe-core: scrollable-region-focusable).
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", "Predicted layouts");
  var table = document.createElement("table");
  table.className = "or-predicted-table";
  table.setAttribute("data-or-plan-predicted-table", plan.gpu + " " + count);
  table.appendChild(cell("caption", "PREDICTED, not measured: " + data.family + " on " + count + " x " + plan.gpu +
    (count !== plan.count ? " (the nearest count at or below your " + plan.count + " the site predicts)" : "")));
  var heads = ["Layout", "Peak GB per GPU (range)", "Fits", "Tokens/s per GPU (range)"];
  if (budget) heads = heads.concat(["GPU-hours (range)", "Cost (range)", "Days (range)"]);
  heads.push("Nearest measured");
  var head = table.createTHead().insertRow();
  heads.forEach(function (h) { var th = cell("th", h); th.scope = "col"; head.appendChild(th); });
  var body = table.createTBody();
  rows.forEach(function (r) {
    var tr = body.insertRow();
    tr.setAttribute("data-or-predicted-row", "");
    var layout = cell("td", " " + r.label, "or-layout");
    layout.insertBefore(cell("span", "PREDICTED", "or-predicted-badge"), layout.firstChild);
    layout.setAttribute("data-or-predicted", "layout");
    tr.appendChild(layout);
    [["memory", range(r.memory, 1)], ["fits", (r.fits ? "yes" : "no") + " (" + r.card_gb + " GB)"], ["tokens", range(r.tokens, 0)]]
      .forEach(function (c) { var td = cell("td", c[1]); td.setAttribute("data-or-predicted", c[0]); tr.appendChild(td); });
    if (budget) {
      // The high tokens/s gives the low GPU-hours, cost and days.
      var mid = cost(r.tokens.predicted, count), fast = cost(r.tokens.high, count), slow = cost(r.tokens.low, count);
      var span = function (key, unit) {
        if (mid[key] === null) return "\u2013";
        return compactText(mid[key], unit) + " (" + compactText(fast[key], unit) + "\u2013" + compactText(slow[key], unit) + ")";
      };
      [["hours", span("hours")], ["cost", span("usd", "$")], ["days", span("days")]].forEach(function (c) {
        var td = cell("td", c[1], "or-num");
        td.setAttribute("data-or-predicted", c[0]);
        tr.appendChild(td);
      });
    }
    var near = document.createElement("td");
    near.setAttribute("data-or-predicted", "nearest");
    r.nearest.forEach(function (n, i) {
      if (i) near.appendChild(document.createTextNode(", "));
      var a = cell("a", n.name);
      a.href = n.href;
      a.title = n.id;
      near.appendChild(a);
    });
    if (!r.nearest.length) near.textContent = "none";
    tr.appendChild(near);
  });
  wrap.appendChild(table);
  box.appendChild(wrap);
}

// The planner's model family: another family's page, with the plan (the URL's keys) kept.
export function initPlanFamily(root) {
  var select = root.querySelector("select[data-or-plan-family]");
  if (!select || select.orWired) return;
  select.orWired = true;
  select.addEventListener("change", function () {
    if (select.value) window.location.assign(select.value + window.location.search);
  });
}
