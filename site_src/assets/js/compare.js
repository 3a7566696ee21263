/* Compare: ticks in any table ("compare" in the URL), and the compare page laying the recipes side by side,
   what decides first, the rest folded; own prices apply. */
import { params, setParams } from "./url.js";
import { usdPerMillion, usdShort, userPrices } from "./prices.js";
import { cell } from "./dom.js";

// Compare: tick 2-4 recipes in any table ("compare" in the URL keeps the ticks), then open the compare page
// ("ids" in its URL), which fetches each recipe's record (recipes/<id>.compare.json, text formatted by Python)
// and lays them side by side, marking every row whose values differ. Only textContent is written.
export let MAX_COMPARE = 4;
export let RECIPE_ID = /^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function idList(text) {
  return (text || "").split(",").filter(function (id) { return RECIPE_ID.test(id) && id.indexOf("..") === -1; })
    .filter(function (id, i, all) { return all.indexOf(id) === i; }).slice(0, MAX_COMPARE);
}

export function initPicks(root) {
  var table = root.querySelector("table.or-sortable[data-or-compare-href]");
  if (!table || table.dataset.orPickReady) return;
  table.dataset.orPickReady = "1";
  var chosen = idList(params().get("compare"));
  // Every built row's box, in the document or not (a large table keeps rows out of view out of it); a row built
  // later (packed.js) gets its tick as it is built (table.orBuilt). One listener a table hears every box's change.
  var tables = Array.prototype.slice.call(root.querySelectorAll("table.or-sortable"));
  function boxOf(row) {
    if (row.orBox === undefined) row.orBox = row.querySelector("input[data-or-compare]");
    return row.orBox;
  }
  function tick(box) {
    box.checked = chosen.indexOf(box.dataset.orCompare) !== -1;
    box.disabled = !box.checked && chosen.length >= MAX_COMPARE;
  }
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
    tables.forEach(function (t) {
      (t.orRows || []).forEach(function (row) {
        if (row.orPacked) return;
        var box = boxOf(row);
        if (box) tick(box);
      });
    });
    bar.hidden = chosen.length === 0;
    label.textContent = chosen.length + " of " + MAX_COMPARE + " chosen" + (chosen.length < 2 ? ": tick one more" : "");
    link.hidden = chosen.length < 2;
    link.href = table.dataset.orCompareHref + "?ids=" + encodeURIComponent(chosen.join(","));
    setParams({ compare: chosen.join(",") });
  }
  tables.forEach(function (t) {
    t.orBuilt = function (row) { var box = boxOf(row); if (box) tick(box); };
    t.addEventListener("change", function (event) {
      var box = event.target;
      if (!box.matches || !box.matches("input[data-or-compare]")) return;
      var id = box.dataset.orCompare;
      chosen = chosen.filter(function (c) { return c !== id; });
      if (box.checked && chosen.length < MAX_COMPARE) chosen.push(id);
      show();
    });
  });
  clear.addEventListener("click", function () { chosen = []; show(); });
  show();
}

export function initCompareView(root) {
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
