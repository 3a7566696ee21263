/* Elements the page script makes (compare.js's view, prices.js's planner). Imports nothing. */

// An element with its text (never markup) and, optionally, its class.
export function cell(tag, text, cls) {
  var el = document.createElement(tag);
  el.textContent = text;
  if (cls) el.className = cls;
  return el;
}
