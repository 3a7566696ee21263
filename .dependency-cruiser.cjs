/* The page script's layers (site_src/assets/js, ES modules loaded from main.js), checked by dependency-cruiser
   (package.json's devDependencies) in tests/site/test_js_layers.py:

     main                  the entry: set-up on every page view
     table, compare        the recipe tables (sort, filters, "Show all", CSV); ticks and the compare view
     rowwindow             a long table's window of rows near the viewport
     prices                own prices, the budget, repricing, the run planner
     rows, predicted       a table's rows: sizes, placing and putting away, spacers, sort keys and column ranks; the
                           run planner's predicted layouts and model family
     url, packed, dom, charts   leaves: URL state, packed rows, element making, the charts

   A module imports only modules of the layers below its own, so the modules never import each other in a circle
   (the rule no-circular says so on its own as well), nothing imports main.js, and every module is reached. */
"use strict";

const LAYERS = [
  ["url", "packed", "dom", "charts"],
  ["rows", "predicted"],
  ["prices"],
  ["rowwindow"],
  ["table", "compare"],
  ["main"],
];

const modules = (names) => `(^|/)(${names.join("|")})\\.js$`;

const upward = LAYERS.map((layer, i) => ({
  name: `layer-${layer.join("-")}`,
  comment: `${layer.join(", ")} may import only modules of the layers below: ${LAYERS.slice(0, i).flat().join(", ") || "none"}`,
  severity: "error",
  from: { path: modules(layer) },
  to: { path: modules(LAYERS.slice(i).flat()) },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "modules that import each other in a circle",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-orphans",
      comment: "a module nothing imports and that imports nothing: dead, or not yet wired into main.js",
      severity: "error",
      from: { orphan: true },
      to: {},
    },
    {
      name: "not-to-unresolvable",
      comment: "an import of a file that is not there",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "unknown-module",
      comment: "a module the layers above do not place (add it to LAYERS)",
      severity: "error",
      from: { pathNot: modules(LAYERS.flat()) },
      to: {},
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    moduleSystems: ["es6"],
  },
};
