/* Prices and the run planner: generator/figures.py's formulas repeated, own prices (typed ones kept in this
   browser, URL ones only used), the token budget, repricing of tables, tiles, recipe bodies and the home page's
   best lines, and the planner's per-recipe cost, GPU-hours and days. */
import { params, MAX_TOKENS, validPrice, validCount, setParams } from "./url.js";
import { forgetPriced, isSpacer, warmKeys } from "./rows.js";
import { cell } from "./dom.js";
import { build, built, rowAttr } from "./packed.js";
import { renderPredicted } from "./predicted.js";

// Your own prices and a token budget. A price typed for a GPU type (kept in localStorage and the URL as
// "p.<type>") reprices every recipe of that type on the page; a budget ("budget", e.g. 1T) adds GPU-hours, dollars
// and wall-clock days to each row. The formulas are generator/figures.py's, in the same order of operations, so
// the browser's numbers equal Python's (tests/site/test_site_v2_browser.py compares every recipe):
//   usd_per_million_tokens(usd_per_hour, instance_gpus, tokens_per_s)
//       = (usd_per_hour / instance_gpus) / (tokens_per_s * SECONDS_PER_HOUR) * 1e6   (here: a GPU-hour, 1 GPU)
//   gpu_hours_for_tokens(tokens, tps) = tokens / tps / SECONDS_PER_HOUR
//   training_usd(gpu_hours, usd_per_gpu_hour) = gpu_hours * usd_per_gpu_hour
//   wall_clock_days(gpu_hours, gpu_count) = gpu_hours / gpu_count / 24
export let SECONDS_PER_HOUR = 3600.0;
export let STORE = "openrecipes.prices.v1";

export function usdPerMillion(usdPerHour, instanceGpus, tokensPerS) {
  return (usdPerHour / instanceGpus) / (tokensPerS * SECONDS_PER_HOUR) * 1e6;
}
export function gpuHoursForTokens(tokens, tps) { return tokens / tps / SECONDS_PER_HOUR; }
export function trainingUsd(gpuHours, usdPerGpuHour) { return gpuHours * usdPerGpuHour; }
export function wallClockDays(gpuHours, gpuCount) { return gpuHours / gpuCount / 24.0; }

// formatting.usd_short: cents, or three decimals below ten cents.
// One formatter per precision, made once: toLocaleString builds one per call, most of a reprice's time at
// 10,000 rows. Same digits (toLocaleString is Intl.NumberFormat).
export let CENTS = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
export let MILLS = new Intl.NumberFormat("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
export let DAYS = [new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }),
            new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 })];
export function usdShort(value) {
  return "$" + (Math.abs(value) < 0.1 ? MILLS : CENTS).format(value);
}
export function compact(value, unit) {
  var steps = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
  for (var i = 0; i < steps.length; i++) {
    if (Math.abs(value) >= steps[i][0]) return (unit === "$" ? "$" : "") + (value / steps[i][0]).toPrecision(3) + steps[i][1];
  }
  return (unit === "$" ? "$" : "") + value.toPrecision(3);
}

export let SUFFIX = { k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12, p: 1e15 };
export function parseTokens(text) {
  if (typeof text !== "string" || text.length > 32) return null;
  var m = /^\s*([0-9][0-9,]*\.?[0-9]*(?:e[+-]?[0-9]+)?)\s*([kmbgtp]?)\s*$/i.exec(text || "");
  if (!m) return null;
  var n = parseFloat(m[1].replace(/,/g, "")) * (m[2] ? SUFFIX[m[2].toLowerCase()] : 1);
  return isFinite(n) && n > 0 && n <= MAX_TOKENS ? n : null;
}

// This browser's prices: only those typed on a page (savePrice), each checked again when read (an older version
// stored what a URL brought, 1e308 among them).
export function storedPrices() {
  var out = {}, raw;
  try { raw = JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (e) { return out; }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return out;
  Object.keys(raw).forEach(function (k) {
    var n = validPrice(raw[k]);
    if (n !== undefined && k.length <= 64) out[k] = n;
  });
  return out;
}
export function savePrices(prices) {
  try { localStorage.setItem(STORE, JSON.stringify(prices)); } catch (e) { /* private mode: the URL keeps them */ }
}

// A price typed for one GPU type (undefined: the catalog's again) goes into this browser's store; nothing the URL
// brings is stored.
export function savePrice(type, value) {
  var stored = storedPrices();
  if (value === undefined) delete stored[type]; else stored[type] = value;
  savePrices(stored);
}

// User prices: the URL's first (a shared link), then this browser's. A bad URL price is ignored.
export function userPrices() {
  var prices = storedPrices(), p = params();
  p.forEach(function (value, key) {
    if (key.indexOf("p.") === 0 && key.length <= 66) {
      var n = validPrice(value);
      if (n !== undefined) prices[key.slice(2)] = n;
    }
  });
  return prices;
}

export function served(cell) {
  if (!cell.orServed) cell.orServed = { text: cell.textContent, sort: cell.getAttribute("data-sort") || "" };
  return cell.orServed;
}

// A row's figure cells and numbers, read once (a reprice at 10,000 rows must not query each row again).
export function rowFigures(row) {
  if (!row.orFig) {
    built(row);  // packed.js: its cells, if it was not built yet
    var tokens = row.querySelector('[data-or-col="tokens"]');
    row.orFig = { tokens: parseFloat(tokens.getAttribute("data-sort")), usd: row.querySelector('[data-or-col="usd"]'),
                  train: row.querySelector('[data-or-col="train"]'), count: parseInt(row.dataset.gpu_count, 10),
                  type: row.dataset.gpu_type };
  }
  return row.orFig;
}

export function repriceUsd(cell, type, own, tokens) {
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

export function repriceTrain(train, fig, price, budget) {
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
export let priced = null;

export function priceRow(table, row) {
  if (!priced) return;
  var type = row.orPacked ? (row.orType || (row.orType = rowAttr(row, "data-gpu_type"))) : rowFigures(row).type;
  var own = priced.prices[type], budget = priced.budget;
  var price = own !== undefined ? own : priced.defaults[type];
  if (row.orPriced === price && row.orOwn === own && row.orBudget === budget) return;
  row.orPriced = price;
  row.orOwn = own;
  row.orBudget = budget;
  forgetPriced(table, row);
  // A row not built yet (packed.js) still holds its served figures, right at the catalog prices without a budget.
  if (row.orPacked && own === undefined && !budget) return;
  var fig = rowFigures(row);
  repriceUsd(fig.usd, fig.type, own, fig.tokens);
  if (fig.train) repriceTrain(fig.train, fig, price, budget);
}

// A table above DETACH rows reprices the rows out of view after the frame that shows the new figures, REPRICE_SLICE
// a task (they are out of the document: nothing reads them there); a sort or a CSV brings them up first.
export function flushPrices(table) {
  if (!table.orStale) return;
  table.orStale = false;
  buildRewritten(table.orRows);
  table.orRows.forEach(function (row) { priceRow(table, row); });
}

// Rows repriced a task. A row not built yet (packed.js) whose figures a price of one's own or a budget rewrites
// is built first, the rows of a slice together (one parse, not one a row).
export let REPRICE_SLICE = 200;

export function buildRewritten(rows) {
  if (priced && (priced.budget || Object.keys(priced.prices).length)) build(rows);
}

export function repriceLater(table) {
  table.orStale = true;
  var rows = table.orRows, at = 0, token = {};
  table.orStaleToken = token;
  function step() {
    if (table.orStaleToken !== token || !table.orStale) return;
    var end = Math.min(at + REPRICE_SLICE, rows.length);
    buildRewritten(rows.slice(at, end));
    for (; at < end; at++) priceRow(table, rows[at]);
    if (at < rows.length) setTimeout(step, 0);
    else { table.orStale = false; warmKeys(table); }
  }
  requestAnimationFrame(function () { setTimeout(step, 0); });
}

export function reprice(root, prices, defaults, budget) {
  priced = { prices: prices, defaults: defaults, budget: budget };
  root.querySelectorAll("table.or-sortable").forEach(function (table) {
    if (budget) table.setAttribute("data-or-budget-on", ""); else table.removeAttribute("data-or-budget-on");
    // The rows in view first (the frame shows them), then the others (hidden, cheap to write).
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) { if (!isSpacer(row)) priceRow(table, row); });
    if (table.orDetach) repriceLater(table);
    else { (table.orRows || []).forEach(function (row) { priceRow(table, row); }); warmKeys(table); }
  });
  repricePage(root, prices);
  root.querySelectorAll("[data-or-cheapest]").forEach(function (cell) { repriceCheapest(cell, prices); });
}

// A recipe page's $ / 1M figures, in the tiles and the body alike (each carries data-or-col="usd"): at a price of
// one's own for the page's GPU type, every one of them says the same repriced figure.
export function repricePage(root, prices) {
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
// So Python lists, per GPU type, its fastest recipe and its cheapest served one (generator/site/pages/home.py's _cheapest_candidates),
// and the lowest at the prices in force is the model's cheapest; ties go to the first listed.
export function repriceCheapest(cell, prices) {
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
export function planState(root) {
  var p = params(), select = root.querySelector('select[data-or-plan="gpu"]');
  var gpu = p.get("plan.gpu") || "";
  var known = select ? Array.prototype.some.call(select.options, function (o) { return o.value === gpu && gpu; }) : false;
  return { gpu: known || (!select && gpu.length <= 64) ? gpu : "", count: validCount(p.get("plan.n")) };
}

function planOption(root, gpu) {
  return root.querySelector('select[data-or-plan="gpu"] option[value="' + (gpu || "").replace(/["\\\n\r]/g, "") + '"]');
}

export function planDefault(root, gpu) {
  var option = planOption(root, gpu);
  return option ? validPrice(option.getAttribute("data-or-default")) : undefined;
}

// The catalog price as a price field shows it (views.gpu_prices' text: to its stated decimals, not 3.43088125).
export function planDefaultText(root, gpu) {
  var option = planOption(root, gpu);
  return option ? option.getAttribute("data-or-default-text") || "" : "";
}

// A typed price that is the catalog's, as computed or as the field shows it: no price of one's own.
function isDefault(n, exact, text, typed) {
  return n === exact || (text !== "" && text !== undefined && typed.trim() === text);
}

export function planCell(tag, text, col) {
  var el = cell(tag, text);
  if (col) el.setAttribute("data-or-col", col);
  return el;
}

// Every recipe of the page's model that fits the plan (its GPU type, no more GPUs than planned), with the
// GPU-hours, dollars and days for the budget (figures.py's formulas), cheapest first within each like group.
export function renderPlanner(root, plan, prices, budget) {
  root.querySelectorAll("[data-or-planner]").forEach(function (box) {
    var source = box.parentNode.querySelector("script[data-or-plan-data]");
    var rows = box.orPlan;
    if (!rows) {
      try { rows = box.orPlan = JSON.parse(source.textContent); } catch (e) { return; }
    }
    box.textContent = "";
    var price = prices[plan.gpu] !== undefined ? prices[plan.gpu] : planDefault(document, plan.gpu);
    // The advisor's predicted layouts, in a box of their own after the measured recipes (predicted.js).
    renderPredicted(box.parentNode.querySelector("[data-or-planner-predicted]"), plan, budget, function (tps, count) {
      var hours = gpuHoursForTokens(budget, tps);
      return { hours: hours, usd: price !== undefined ? trainingUsd(hours, price) : null, days: wallClockDays(hours, count) };
    }, compact);
    if (!plan.gpu || !plan.count || !budget) {
      var empty = cell("p", "Choose a GPU type, a count and a token budget to plan a run.");
      empty.setAttribute("data-or-plan-empty", "");
      box.appendChild(empty);
      return;
    }
    var fits = rows.filter(function (r) { return r.gpu_type === plan.gpu && r.count <= plan.count; });
    var summary = compact(budget) + " tokens on " + plan.count + " x " + plan.gpu +
      (price !== undefined ? " at $" + CENTS.format(price) + " per GPU-hour" : " (no price: enter one)") + ": " +
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

export function initDecide(root) {
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
    var d = planDefaultText(root, plan.gpu);
    priceInput.placeholder = d ? d + " (catalog)" : "price";
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
        if (n !== undefined && !isDefault(n, defaults[type], input.dataset.orDefaultText, input.value)) prices[type] = n;
        else delete prices[type];
        savePrice(type, prices[type]);
      }
      changes["p." + type] = prices[type] !== undefined ? String(prices[type]) : null;
    });
    if (typed.indexOf(priceInput) !== -1 && plan.gpu) {
      var own = validPrice(priceInput.value);
      if (own !== undefined && !isDefault(own, planDefault(root, plan.gpu), planDefaultText(root, plan.gpu), priceInput.value)) {
        prices[plan.gpu] = own;
      } else delete prices[plan.gpu];
      savePrice(plan.gpu, prices[plan.gpu]);
      changes["p." + plan.gpu] = prices[plan.gpu] !== undefined ? String(prices[plan.gpu]) : null;
      inputs.forEach(function (input) {
        if (input.dataset.orPrice === plan.gpu) input.value = prices[plan.gpu] !== undefined ? String(prices[plan.gpu]) : input.dataset.orDefaultText;
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
    inputs.forEach(function (input) { input.value = input.dataset.orDefaultText; });
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
