/* The rows a long recipes table serves as compact JSON (generator/site/rowdata.py: each row a shape with slots and its
   values), built into <tr> elements only when they are needed.
   Building all of them at load was most of the time before a shared link's first paint: 1.9-2.0 s of 4.8 s at
   10,000 rows (main.js's User Timing steps, benchmarks/site_scale.py). Each packed row is now an empty <tr> (its place
   in table.orRows, so that every list of rows holds the same elements) that knows its shape and values; its text,
   attributes and sort keys are read from them (each shape parsed once), which is what filters and sorts need; its
   cells are built when it comes into view, when a price of one's own or a budget rewrites its figures, or when the
   CSV reads it. Not in idle time after load: building every row there, 200 a slice, delayed the first keystrokes
   by up to 640 ms under load (benchmarks/site_scale.py --keystrokes-only, load average 12-18). */

var SLOT = /\u0001(\d+)\u0002/g;
var ENTITY = /&(?:#(\d+);|#x([0-9a-fA-F]+);|(amp|lt|gt|quot|apos);)/g;
var NAMED = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" };

// A value as the template escaped it (markupsafe: & < > " ' as &amp; &lt; &gt; &#34; &#39;), as the page shows it.
export function unescapeHtml(text) {
  if (text.indexOf("&") === -1) return text;
  return text.replace(ENTITY, function (m, dec, hex, name) {
    return name ? NAMED[name] : String.fromCodePoint(dec ? parseInt(dec, 10) : parseInt(hex, 16));
  });
}

// Rows' HTML, as the row template escaped it (the only markup this script parses: tests/site/test_site_safety.py),
// parsed in a template: never styled or laid out until a row is shown.
function parse(markup) {
  var holder = document.createElement("template");
  holder.innerHTML = markup;
  return holder.content;
}

// A shape's string (an attribute, a text) split at its slots (\u0001i\u0002: the row's value i): literal text at even
// places, value numbers at odd ones.
export function parts(text) {
  var out = text.split(/\u0001(\d+)\u0002/);
  for (var i = 1; i < out.length; i += 2) out[i] = +out[i] + 1;  // a row's values start at 1 (0: its shape)
  return out;
}

// A shape, parsed once: the row's attributes, each cell's data-sort and text, and the row's text, each as parts.
export function readShape(shape) {
  var tr = parse(shape).firstElementChild, attrs = {};
  for (var i = 0; i < tr.attributes.length; i++) attrs[tr.attributes[i].name] = parts(tr.attributes[i].value);
  var cells = Array.prototype.map.call(tr.cells, function (cell) {
    return { sort: cell.hasAttribute("data-sort") ? parts(cell.getAttribute("data-sort")) : null,
             text: parts(cell.textContent) };
  });
  return { html: shape, attrs: attrs, cells: cells, text: parts(tr.textContent) };
}

// A shape's string (as parts) with a row's values in its slots, as the built row would read it.
export function fill(split, values) {
  var out = split[0];
  for (var i = 1; i < split.length; i += 2) out += unescapeHtml(values[split[i]]) + split[i + 1];
  return out;
}

// The packed rows of a template's JSON, as empty <tr> elements that know their shape and values.
export function packedRows(text, table) {
  var data = JSON.parse(text), shapes = data.shapes.map(readShape), rows = new Array(data.rows.length);
  for (var i = 0; i < rows.length; i++) {
    var tr = document.createElement("tr");
    tr.orPacked = { shape: shapes[data.rows[i][0]], values: data.rows[i], table: table };
    rows[i] = tr;
  }
  return rows;
}

// What filters and sorts read of a row, whether built or not: its text, an attribute, a cell's sort key or text.
export function rowText(row) {
  return row.orPacked ? fill(row.orPacked.shape.text, row.orPacked.values) : row.textContent;
}

export function rowAttr(row, name) {
  if (!row.orPacked) return row.getAttribute(name);
  var raw = row.orPacked.shape.attrs[name];
  return raw === undefined ? null : fill(raw, row.orPacked.values);
}

// A cell's sort key as text (its data-sort, else its trimmed text); null where the row has no such cell.
export function cellRaw(row, index) {
  if (!row.orPacked) {
    var cell = row.cells[index];
    if (!cell) return null;
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }
  var packed = row.orPacked.shape.cells[index];
  if (!packed) return null;
  return packed.sort !== null ? fill(packed.sort, row.orPacked.values) : fill(packed.text, row.orPacked.values).trim();
}

function html(packed) {
  var values = packed.values;
  return packed.shape.html.replace(SLOT, function (m, at) { return values[+at + 1]; });
}

// Rows built: each packed row's HTML parsed (one template for all of them), its attributes and cells moved into
// its own <tr>. A table's orBuilt (compare.js: the row's tick) hears of each.
export function build(rows) {
  var packed = rows.filter(function (row) { return row.orPacked; });
  if (!packed.length) return;
  // Walked by sibling, not indexed: the fragment's `children` is a live list whose cache each move below drops, so
  // `children[i]` counted from the first row again (10,000 rows: 8.5 s of Chromium's CPU, 1.0 s walked;
  // benchmarks/results/timings.md).
  var from = parse(packed.map(function (row) { return html(row.orPacked); }).join("")).firstElementChild;
  for (var i = 0; i < packed.length; i++, from = from.nextElementSibling) {
    var row = packed[i], table = row.orPacked.table;
    row.orPacked = null;
    for (var a = 0; a < from.attributes.length; a++) row.setAttribute(from.attributes[a].name, from.attributes[a].value);
    while (from.firstChild) row.appendChild(from.firstChild);
    if (table && table.orBuilt) table.orBuilt(row);
  }
}

export function built(row) {
  if (row.orPacked) build([row]);
  return row;
}
