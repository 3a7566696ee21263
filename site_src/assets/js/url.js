/* URL state: the page's query string (read, bounded and checked; rewritten in place), and the plan and prices
   carried into every link to another page of the site. Nothing here stores anything. */

// Shareable state: filters (the select's key, "text" for the text: not "q", which opens Material's search over
// the table), sort ("sort", "dir") and, on other items,
// prices and budget live in the page's query string, rewritten in place (replaceState) on every change, so a
// reload or a shared link restores the view.
export function params() { return new URLSearchParams(location.search); }

// Every value a URL (or this browser's storage) brings is bounded and checked before use; a bad one is ignored as
// if absent, never an error: a price is a number of dollars per GPU-hour in (0, MAX_PRICE], a token count in
// (0, MAX_TOKENS], a GPU count an integer in [1, MAX_GPUS], a sort key a column name, a text filter at most
// MAX_TEXT characters.
export let MAX_PRICE = 1000, MAX_TOKENS = 1e16, MAX_GPUS = 100000, MAX_TEXT = 200;
export let NAME = /^[a-z_]{1,32}$/;

export function validPrice(value) {
  var n = typeof value === "number" ? value : (/^\s*[0-9]*\.?[0-9]+\s*$/.test(String(value)) ? parseFloat(value) : NaN);
  return isFinite(n) && n > 0 && n <= MAX_PRICE ? n : undefined;
}

export function validCount(value) {
  if (!/^\s*[0-9]{1,6}\s*$/.test(String(value || ""))) return undefined;
  var n = parseInt(value, 10);
  return n >= 1 && n <= MAX_GPUS ? n : undefined;
}

export function setParams(changes) {
  var p = params();
  Object.keys(changes).forEach(function (k) {
    if (changes[k] === null || changes[k] === "") p.delete(k); else p.set(k, changes[k]);
  });
  var query = p.toString();
  history.replaceState(history.state, "", location.pathname + (query ? "?" + query : "") + location.hash);
}

// The planner's and the prices' URL keys: carried into every link to another page of the site (a budget or a
// plan set on one page applies on the next), never stored.
export let CARRIED = /^(p\.|budget$|plan\.gpu$|plan\.n$)/;

export function carriedQuery() {
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
