/* OpenRecipes: sortable and filterable recipe tables, per-model charts.
   Runs on every page view, including Material's instant navigation (document$). */
(function () {
  "use strict";

  function initSort(root) {
    root.querySelectorAll("table.or-sortable").forEach(function (table) {
      if (table.dataset.orSortReady) return;
      table.dataset.orSortReady = "1";
      new Tablesort(table, { descending: true });
    });
  }

  function initFilters(root) {
    root.querySelectorAll("[data-or-filters]").forEach(function (box) {
      if (box.dataset.orFilterReady) return;
      box.dataset.orFilterReady = "1";
      var table = document.getElementById(box.dataset.orFilters);
      if (!table) return;
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      // Lower-cased row text once, so a keystroke only compares strings.
      var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
      var selects = Array.prototype.slice.call(box.querySelectorAll("select[data-or-filter]"));
      var text = box.querySelector("[data-or-filter-text]");
      var count = box.querySelector("[data-or-count]");
      function apply() {
        var wanted = selects.map(function (s) { return [s.dataset.orFilter, s.value]; })
          .filter(function (kv) { return kv[1] !== ""; });
        var needle = text ? text.value.trim().toLowerCase() : "";
        var shown = 0;
        for (var i = 0; i < rows.length; i++) {
          var row = rows[i];
          var ok = needle === "" || texts[i].indexOf(needle) !== -1;
          for (var j = 0; ok && j < wanted.length; j++) {
            ok = row.getAttribute("data-" + wanted[j][0]) === wanted[j][1];
          }
          row.hidden = !ok;
          if (ok) shown++;
        }
        if (count) count.textContent = shown + " of " + rows.length + " recipes";
      }
      selects.forEach(function (s) { s.addEventListener("change", apply); });
      if (text) text.addEventListener("input", apply);
      apply();
    });
  }

  var INK = "#3f51b5", MUTED = "#9fa8da", LOSS = "#e65100";

  function scatterConfig(points) {
    return {
      type: "scatter",
      data: { datasets: [{ label: "recipes", data: points, pointRadius: 5, backgroundColor: INK }] },
      options: {
        animation: false,
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: function (ctx) {
            var p = ctx.raw;
            return p.label + ": " + p.y.toLocaleString("en-US") + " tokens/s/GPU, $" + p.x.toFixed(2) + " / 1M";
          } } }
        },
        scales: {
          x: { title: { display: true, text: "$ / 1M tokens" }, beginAtZero: true },
          y: { title: { display: true, text: "tokens/s per GPU" }, beginAtZero: true }
        }
      }
    };
  }

  // Per-step time of the median run (the window's steps dark, warm-up light) and its loss on a second axis.
  function stepsConfig(points) {
    var pick = function (inWindow) {
      return points.map(function (p) { return { x: p.x, y: p["in"] === inWindow ? p.time : null }; });
    };
    var loss = points.filter(function (p) { return p.loss !== null; }).map(function (p) { return { x: p.x, y: p.loss }; });
    return {
      type: "line",
      data: { datasets: [
        { label: "step time (s), in the window", data: pick(true), borderColor: INK, backgroundColor: INK, yAxisID: "y" },
        { label: "step time (s), outside it", data: pick(false), borderColor: MUTED, backgroundColor: MUTED, yAxisID: "y" },
        { label: "loss", data: loss, borderColor: LOSS, backgroundColor: LOSS, borderDash: [4, 3], yAxisID: "loss" }
      ] },
      options: {
        animation: false, spanGaps: false, parsing: true,
        scales: {
          x: { type: "linear", title: { display: true, text: "step" }, ticks: { precision: 0 } },
          y: { title: { display: true, text: "seconds" }, beginAtZero: true },
          loss: { position: "right", title: { display: true, text: "loss" }, grid: { drawOnChartArea: false } }
        }
      }
    };
  }

  // Tokens/s per GPU at each measurement, oldest first.
  function historyConfig(points) {
    return {
      type: "line",
      data: {
        labels: points.map(function (p) { return p.label; }),
        datasets: [{ label: "tokens/s per GPU", data: points.map(function (p) { return p.y; }), borderColor: INK,
                     backgroundColor: INK, pointRadius: 4 }]
      },
      options: {
        animation: false,
        plugins: { legend: { display: false } },
        scales: { x: { title: { display: true, text: "measured" } },
                  y: { title: { display: true, text: "tokens/s per GPU" }, beginAtZero: true } }
      }
    };
  }

  var CONFIGS = { scatter: scatterConfig, steps: stepsConfig, history: historyConfig };

  function initCharts(root) {
    if (typeof Chart === "undefined") return;
    root.querySelectorAll("canvas[data-or-chart]").forEach(function (canvas) {
      if (canvas.dataset.orChartReady) return;
      var source = document.getElementById(canvas.dataset.orChart);
      var config = CONFIGS[canvas.dataset.orChartKind || "scatter"];
      if (!source || !config) return;
      canvas.dataset.orChartReady = "1";
      new Chart(canvas, config(JSON.parse(source.textContent)));
    });
  }

  function init() {
    initSort(document);
    initFilters(document);
    initCharts(document);
  }

  if (typeof document$ !== "undefined" && document$.subscribe) {
    document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
