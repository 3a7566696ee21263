/* CSV cells as the site's exports write them (generator/site/formatting.py: csv_text, csv_cell): no DOM, so the
   tests run it in Node beside the Python it mirrors.

   A text cell is neutralised wherever a spreadsheet could start a cell in it: at its start and after every
   separator or line end inside it (, ; | tab CR LF: a reader splitting on ";" sees our quotes mid-field, as plain
   characters), a formula character (= + - @ tab CR) after any spaces or double quotes gets a single quote put
   before them (OWASP, "CSV Injection"). Figures are written as numbers, never neutralised. */
export let FORMULA_AT_THE_START = /^(?=[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\v\f"]*[=+\-@\t\r])/;
export let FORMULA_AFTER_A_BREAK =
  /([,;|\t\r\n])(?=[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\v\f"]*[=+\-@\t\r])/g;

export function csvText(value) {
  var text = String(value);
  var inner = text.replace(FORMULA_AFTER_A_BREAK, "$1'");
  return FORMULA_AT_THE_START.test(text) ? "'" + inner : inner;
}

// Between double quotes wherever a cell holds a character a spreadsheet may split on (its guessed or its locale's
// separator: , ; tab |) or a quote or line end (formatting.csv_cell).
export function csvCell(value) {
  return /[",;\t|\r\n]/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
}
