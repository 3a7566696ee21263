/* Charts (Chart.js, vendored, loaded on the pages that have one): cost against speed with each like group's Pareto
   frontier, scaling, step times and loss, re-measurements; one colour and legend entry per like group. */

export let INK = "#3f51b5", MUTED = "#9fa8da", LOSS = "#e65100";

// A click on a point opens its recipe (points carry "href", relative to the page, from Python).
export function openPoint(event, elements, chart) {
  if (!elements.length) return;
  var el = elements[0];
  var p = chart.data.datasets[el.datasetIndex].data[el.index];
  if (p && p.href) location.href = p.href;
}

export function pointerOnPoints(event, elements) {
  if (event.native && event.native.target) event.native.target.style.cursor = elements.length ? "pointer" : "default";
}

// Points come with their like group (views.Like: "pre-training, FP8-CS"): one colour and one legend entry per
// group (a click on an entry hides or shows it), so that no reader ranks a LoRA point against a pre-training one.
// Okabe-Ito colours, told apart with colour-blindness; lighter ones on the dark scheme.
export let PALETTE = { light: ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#8a6d00", "#56b4e9", "#333333",
                              "#7b3294", "#1b7837", "#b2182b", "#2166ac", "#8c510a"],
                       dark: ["#56b4e9", "#ff9e4a", "#3fd9a6", "#f0a0d0", "#f0e442", "#9ecbff", "#e0e0e0",
                              "#c2a5cf", "#a6dba0", "#f4a582", "#92c5de", "#dfc27d"] };

export function palette() {
  var scheme = document.body && document.body.getAttribute("data-md-color-scheme");
  return scheme === "slate" ? PALETTE.dark : PALETTE.light;
}

export function groups(points) {
  var names = [], by = {};
  points.forEach(function (p) {
    var g = typeof p.group === "string" ? p.group : "recipes";
    if (!by[g]) { by[g] = []; names.push(g); }
    by[g].push(p);
  });
  return names.map(function (name, i) { return { name: name, points: by[name], color: palette()[i % palette().length] }; });
}

export function scatterConfig(points, xTitle, xLabel, frontiers) {
  var datasets = [];
  groups(points).forEach(function (g) {
    datasets.push({ label: g.name + " (" + g.points.length + ")", data: g.points, pointRadius: 5, pointHoverRadius: 7,
                    backgroundColor: g.color, borderColor: g.color, orGroup: g.name });
    if (frontiers) {
      var front = g.points.filter(function (p) { return p.front; }).sort(function (a, b) { return a.x - b.x; });
      datasets.push({ label: g.name + ": Pareto frontier", data: front, showLine: true, borderColor: g.color,
                      backgroundColor: "rgba(0,0,0,0)", pointRadius: 8, pointBorderWidth: 2, pointHitRadius: 0,
                      fill: false, orFront: true, orGroup: g.name });
    }
  });
  return {
    type: "scatter",
    data: { datasets: datasets },
    options: {
      animation: false,
      maintainAspectRatio: false,  // the box's height is set by fitPlot: the plot keeps its height beside the legend
      onClick: openPoint,
      onHover: pointerOnPoints,
      plugins: {
        legend: { display: true, position: "bottom", maxHeight: 4000, labels: { boxWidth: 12 } },
        tooltip: { callbacks: { label: function (ctx) {
          var p = ctx.raw;
          return p.label + ": " + p.y.toLocaleString("en-US") + " tokens/s/GPU, " + xLabel(p.x) +
            (p.group ? " (" + p.group + ")" : "");
        } } }
      },
      scales: {
        x: { title: { display: true, text: xTitle }, beginAtZero: true },
        y: { title: { display: true, text: "tokens/s per GPU" }, beginAtZero: true }
      }
    }
  };
}

// Cost against speed, each group's Pareto frontier (Python marks its points "front") drawn as a line through them.
export function costConfig(points) {
  return scatterConfig(points, "$ / 1M tokens", function (x) { return "$" + x.toFixed(2) + " / 1M"; }, true);
}

// Speed against GPU count (a log2 axis: counts double).
export function scalingConfig(points) {
  var config = scatterConfig(points, "GPUs", function (x) { return x + " GPUs"; });
  var xs = points.map(function (p) { return p.x; });
  var lo = Math.pow(2, Math.floor(Math.log2(Math.min.apply(null, xs))) - 1);
  var hi = Math.pow(2, Math.ceil(Math.log2(Math.max.apply(null, xs))) + 1);
  config.options.scales.x = { type: "logarithmic", min: lo, max: hi, title: { display: true, text: "GPUs (log scale)" },
    afterBuildTicks: function (axis) {
      var ticks = [];
      for (var v = lo; v <= hi; v *= 2) ticks.push({ value: v });
      axis.ticks = ticks;
    },
    ticks: { callback: function (v) { return v.toLocaleString("en-US"); } } };
  return config;
}

// Per-step time of the median run (the window's steps dark, warm-up light) and its loss on a second axis.
export function stepsConfig(points) {
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

// Tokens/s per GPU at each measurement on a time axis (days; no date adapter needed), oldest first. Points
// without a date fall back to their order.
export function historyConfig(points) {
  var DAY = 86400000;
  var dated = points.every(function (p) { return p.date && !isNaN(Date.parse(p.date)); });
  var data = points.map(function (p, i) {
    return { x: dated ? Date.parse(p.date) / DAY : i + 1, y: p.y, label: p.label };
  });
  return {
    type: "line",
    data: { datasets: [{ label: "tokens/s per GPU", data: data, borderColor: INK, backgroundColor: INK, pointRadius: 4 }] },
    options: {
      animation: false,
      plugins: { legend: { display: false },
                 tooltip: { callbacks: { title: function (items) { return items[0].raw.label; } } } },
      scales: {
        x: { type: "linear", title: { display: true, text: dated ? "date measured" : "measurement" },
             ticks: { precision: 0, callback: function (v) {
               return dated ? new Date(v * DAY).toISOString().slice(0, 10) : v; } } },
        y: { title: { display: true, text: "tokens/s per GPU" }, beginAtZero: true }
      }
    }
  };
}

export let CONFIGS = { cost: costConfig, scatter: costConfig, scaling: scalingConfig, steps: stepsConfig, history: historyConfig };

// Chart.js (200 KB) is fetched only by a page with a chart, after the page's own set-up: a page without one (the
// all-recipes table) parses no chart code before it paints. One fetch serves every page of an instant-navigation
// session; a page's canvases are drawn when it arrives.
var CHART_JS = new URL("../vendor/chart.umd.min.js", import.meta.url).href;
var chartLoaded = null;

export function loadChartJs() {
  if (typeof Chart !== "undefined") return Promise.resolve();
  if (!chartLoaded) {
    chartLoaded = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = CHART_JS;
      script.onload = function () { resolve(); };
      script.onerror = function () { chartLoaded = null; reject(new Error("Chart.js did not load: " + CHART_JS)); };
      document.head.appendChild(script);
    });
  }
  return chartLoaded;
}

// A scatter chart's legend has an entry per like group (65 on the H100 page): in a fixed aspect ratio, and with
// Chart.js' default cap of half the canvas for a legend, a phone showed the points on a line under a cut legend. The
// box gets the plot's height (from its width) plus what the legend and axes take once laid out at that width.
var PLOT_HEIGHT = { min: 220, max: 380 };

function plotHeight(box) {
  return Math.max(PLOT_HEIGHT.min, Math.min(PLOT_HEIGHT.max, (box.clientWidth || 600) * 0.55));
}

export function fitPlot(chart) {
  if (chart.options.maintainAspectRatio !== false) return;
  var box = chart.canvas.parentElement;
  var other = chart.height - (chart.chartArea.bottom - chart.chartArea.top);  // legend, axes' ticks and titles
  var height = Math.round(plotHeight(box) + other) + "px";
  if (box.style.height !== height) {
    box.style.height = height;
    chart.resize();
  }
}

function drawCharts(root) {
  root.querySelectorAll("canvas[data-or-chart]").forEach(function (canvas) {
    if (canvas.dataset.orChartReady) return;
    var source = document.getElementById(canvas.dataset.orChart);
    var config = CONFIGS[canvas.dataset.orChartKind || "cost"];
    if (!source || !config) return;
    canvas.dataset.orChartReady = "1";
    var made = config(JSON.parse(source.textContent));
    if (made.options.maintainAspectRatio === false) canvas.parentElement.style.height = "2400px";  // room to lay out
    fitPlot(new Chart(canvas, made));
    canvas.setAttribute("data-or-chart-drawn", "");  // what a test waits for before reading the chart
  });
}

export function initCharts(root) {
  if (!root.querySelector("canvas[data-or-chart]")) return;
  loadChartJs().then(function () { drawCharts(root); });
}
