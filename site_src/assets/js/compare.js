/* Compare: ticks in any table ("compare" in the URL), and the compare page laying the recipes side by side,
   what decides first, the rest folded; own prices apply. */
import { params, setParams } from "./url.js";
import { usdPerMillion, usdShort, userPrices } from "./prices.js";
import { cell, scrollCue } from "./dom.js";

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
    // What decides first (GPU count, tokens per row, training, precision, throughput, layout, tokens/s, $, MFU,
    // memory, evidence); the other sections fold under one button, with how many of their fields differ.
    view.appendChild(cell("p", records.length + " recipes; " + deciding + " of the deciding fields differ (marked); " +
      (differing - deciding) + " of the other " + folded + " fields differ.", "or-compare__count"));
    var unlike = unlikeNote(records, base);
    if (unlike) view.appendChild(unlike);
    var wrap = document.createElement("div");
    wrap.className = "or-table-wrap";
    wrap.appendChild(table);
    // On a phone each recipe column takes a share of a width the CSS sets from their count (two fit side by side).
    table.style.setProperty("--or-cols", String(records.length));
    view.appendChild(wrap);
    scrollCue(wrap);
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

// The fields that make two columns like with like (views.LIKE_FIELDS, in its order): [key, the name the note uses].
export let LIKE_FIELDS = [["gpu_count", "GPU count"], ["row_tokens", "tokens per row"], ["kind", "training kind"],
  ["precision", "precision"], ["throughput", "kind of throughput"]];
export let KIND_NOT_STATED = "training kind not stated";

function likeValue(rec, key) { return rec.like && rec.like[key] ? rec.like[key].value : undefined; }
function likeText(rec, key) { return rec.like && rec.like[key] ? rec.like[key].text : "\u2013"; }

// The like fields in which `rec` differs from `anchor`.
export function unlikeFields(anchor, rec) {
  return LIKE_FIELDS.filter(function (f) { return likeValue(anchor, f[0]) !== likeValue(rec, f[0]); });
}

// Whether two training kinds may stand in for each other: the same, or one not stated and the other a full
// training (pre-training or SFT; a LoRA run's tokens/s is not one).
function kindNear(a, b) {
  return a === b || ((a === KIND_NOT_STATED || b === KIND_NOT_STATED) && a !== "LoRA" && b !== "LoRA");
}

// Of a folder's twins (views.like_twins: the fastest recipe per GPU count, tokens per row, training kind, precision
// and throughput of one model on one GPU type), the nearest to `anchor` that is none of `shown` (ids): its precision
// and kind of throughput (never near: another number), its training kind (or kindNear), then the GPU count and
// tokens per row nearest by ratio, the same kind before a near one, then the faster (twins come fastest first).
// null where none has the precision and kind of throughput.
export function nearestTwin(anchor, twins, shown) {
  function ratio(a, b) { return Math.abs(Math.log2(a / b)); }
  var best = null, bestKey = null;
  twins.forEach(function (t) {
    if ((shown || []).indexOf(t.id) !== -1) return;
    if (likeValue(t, "precision") !== likeValue(anchor, "precision")) return;
    if (likeValue(t, "throughput") !== likeValue(anchor, "throughput")) return;
    var kind = likeValue(t, "kind"), want = likeValue(anchor, "kind");
    if (!kindNear(kind, want)) return;
    var key = [ratio(likeValue(t, "gpu_count"), likeValue(anchor, "gpu_count")) +
               ratio(likeValue(t, "row_tokens"), likeValue(anchor, "row_tokens")), kind === want ? 0 : 1];
    if (bestKey === null || key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) {
      best = t; bestKey = key;
    }
  });
  return best;
}

function joinAnd(items) {
  return items.length < 2 ? items.join("") : items.slice(0, -1).join(", ") + " and " + items[items.length - 1];
}

// When the columns differ in a like field, a note above the table says so (which fields, each column's value) and,
// for every column unlike the first, offers its model's nearest like-with-like recipe on its GPU type (fetched from
// its folder's twins), with a link that compares it in that column's place. null when all are like with like.
export function unlikeNote(records, base) {
  var anchor = records[0];
  var fields = LIKE_FIELDS.filter(function (f) {
    return records.some(function (rec) { return likeValue(rec, f[0]) !== likeValue(anchor, f[0]); });
  });
  if (!fields.length) return null;
  var note = document.createElement("div");
  note.className = "or-compare__unlike admonition warning";
  note.setAttribute("data-or-compare-unlike", fields.map(function (f) { return f[0]; }).join(" "));
  note.appendChild(cell("p", "Not like with like", "admonition-title"));
  note.appendChild(cell("p", "These columns differ in " + joinAnd(fields.map(function (f) {
    return f[1] + " (" + records.map(function (rec) { return likeText(rec, f[0]); }).join("; ") + ")";
  })) + ": their tokens/s per GPU, $ / 1M tokens and MFU do not compare directly. Against the first column:"));
  var list = document.createElement("ul");
  note.appendChild(list);
  records.forEach(function (rec, i) {
    if (i === 0) return;
    var differ = unlikeFields(anchor, rec);
    if (!differ.length) return;
    var item = document.createElement("li");
    item.setAttribute("data-or-compare-offer", rec.id);
    item.appendChild(cell("span", rec.id + " differs in " + joinAnd(differ.map(function (f) { return f[1]; })) +
      ". "));
    list.appendChild(item);
    fetch(base + rec.like_src).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.json();
    }).then(function (folder) {
      var shown = records.map(function (r) { return r.id; });
      var twin = nearestTwin(anchor, folder.recipes, shown.filter(function (id) { return id !== rec.id; }));
      var where = folder.model + " on " + folder.gpu_type;
      if (!twin || twin.id === rec.id) {
        item.appendChild(cell("span", twin ? "It is already the nearest " + where + " recipe to the first column." :
          "No other " + where + " recipe has the first column's precision, kind of throughput and training kind.",
          "or-compare__nearest"));
        item.dataset.orNearest = twin ? rec.id : "";
        return;
      }
      var still = unlikeFields(anchor, twin).map(function (f) { return f[1]; });
      item.dataset.orNearest = twin.id;
      item.appendChild(cell("span", (still.length ? "Nearest " : "Like with like: ") + where + " recipe, "));
      var a = document.createElement("a");
      a.href = base + twin.href;
      a.textContent = twin.name;
      a.title = twin.id;
      item.appendChild(a);
      item.appendChild(cell("span", " (" + twin.gpus + ", " + likeText(twin, "row_tokens") + " tokens per row, " +
        likeValue(twin, "kind") + ", " + likeText(twin, "precision") + "; " + twin.tokens + " tokens/s per GPU)" +
        (still.length ? "; still differs in " + joinAnd(still) + (likeValue(anchor, "kind") === KIND_NOT_STATED &&
          still.indexOf("training kind") !== -1 ? " (the first column does not state its training kind)" : "") : "") +
        ". "));
      var swap = document.createElement("a");
      swap.setAttribute("data-or-compare-swap", twin.id);
      swap.href = "?" + swapQuery(records, i, twin.id);
      swap.textContent = "Compare it instead";
      item.appendChild(swap);
    }).catch(function () {
      item.appendChild(cell("span", "(its folder's recipes could not be loaded)", "or-compare__nearest"));
    });
  });
  return note;
}

// This page's query with the column `index`'s recipe replaced by `id` (every other key kept: prices, budget).
function swapQuery(records, index, id) {
  var p = params();
  p.set("ids", records.map(function (rec, i) { return i === index ? id : rec.id; }).join(","));
  return p.toString();
}
