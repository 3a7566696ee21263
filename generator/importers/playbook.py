"""Hugging Face's Ultra-Scale Playbook sweep (assets/data/benchmarks/benchmarks_interactive.html of the Space) as
`reported` recipes, and its crashed / out-of-memory configurations as failed layouts.

The document is one Plotly figure: line 1 loads Plotly, line 2 holds the figure's JSON. Each (model, node count)
cell of the figure is two scatter traces over one shared hover-text array: a trace of circles (the runs that worked)
and a trace of crosses ("crashed/oom", the figure's legend). The 80B model's 1- and 2-node cells hold crosses only.
A hover text states the configuration (nodes, MBS, GradAcc, GBS, DP, PP, TP, ZeRO) and the figures (MFU %,
tok/s/gpu, tok/s, GPU memory), "nan" where the run has none. A row is located by its line and the 1-based column
where its hover text starts.

Which hover texts are the circles is read from the circles' own markers, not from the order of the text array
(Plotly shows a circle's hover as the array's entry at the circle's index, which is not that circle's run in 11 of
the 26 cells with circles): each circle's colour is its run's MFU over the model's best and its size is
5 + 10 x its run's total tok/s over the model's highest (`Marker`). Every circle is matched, in order, to the one
hover text with figures whose MFU and tok/s give its colour and size within the stated figures' rounding
(`match_circles`); the texts with figures that no circle matches are crashed runs.

Every entry of every cell's text array is a row. A configuration stated more than once in a cell is one row (the
first run that worked, else the first entry; `merge_repeats`); the others are skipped as repeats with their
column. A circle becomes a recipe; a cross (with or without figures) is a failed layout, reported as a skip with its
line, column and reason, and listed by `failed_layouts`.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from generator import failed, figures
from generator.catalog import Architecture, Catalog
from generator.importers import base
from generator.importers.base import Document, Parsed, Skip, Source, SourceError, WriteReport, derive_figures, number, quoted
from generator.positions import LineIndex, line_col
from generator.registry import load_catalog

REPOSITORY = "vinjn/nanotron-ultrascale-playbook"
PATH = "assets/data/benchmarks/benchmarks_interactive.html"
COMMIT = "924e4d0b88e065a9a5198d75b113da1cf3bd4473"
SPACE_URL = "https://huggingface.co/spaces/nanotron/ultrascale-playbook"
# The figure's original home: the playbook's Hugging Face Space at the revision whose file is the bytes read. The
# Space's history (its git commits, Thomas Wolf's initial commit of 2024-06-18 on) is readable in a GitHub copy of it,
# HISTORY_COPY: there the file's last change, Leandro von Werra's "yet-another-fix (#9)" of 2025-02-15, is a blob
# with the SHA-256 of the copy read (MIRROR_SHA256). The bytes read are a third party's GitHub copy of the Space's
# files (REPOSITORY, named as read_from).
SPACE_REVISION = "67f1072bdf476f9d05ef5bb66358c1027ae7163e"
HISTORY_COPY = "shivam-raval96/idyll-js"
ORIGINAL = Document(f"{SPACE_URL}/blob/{SPACE_REVISION}/{PATH}", SPACE_REVISION)
MIRROR_SHA256 = "22bcd7a43eb23aa3eab3523829eb86a995a34d58a4879051241cbf3ddc9f202b"
# nanotron's sweep script (the architectures) and its FLOP count, at the commit read.
NANOTRON_COMMIT = "2411b022a75fb7f7561a1bb4166706da5e1b76de"
NANOTRON_SCRIPT = f"https://github.com/huggingface/nanotron/blob/{NANOTRON_COMMIT}/scripts/scaling_benchmarks.py"
NANOTRON_FLOPS = f"https://github.com/huggingface/nanotron/blob/{NANOTRON_COMMIT}/src/nanotron/models/llama.py"

GPU_TYPE = "H100"
GPUS_PER_NODE = 8  # "1-64 nodes of 8xH100s" (the playbook's text)
SEQUENCE = 4096  # "a sequence length of 4,096" (the playbook's text); the hover text does not state it

# The figure's subplot titles (annotations over x, x2, x3, x4) -> catalog model.
MODELS = {"1B": "Playbook-Llama-1B", "3B": "Playbook-Llama-3B", "8B": "Playbook-Llama-8B",
          "80B": "Playbook-Llama-80B"}
CONFIG_KEYS = {"Nodes": "nodes", "MBS": "mbs", "GradAcc": "grad_acc", "GBS": "gbs", "DP": "dp", "PP": "pp",
               "TP": "tp", "ZeRO": "zero"}
FIGURE_KEYS = {"MFU": "mfu", "tok/s/gpu": "tokens_per_gpu", "tok/s": "tokens", "GPU memory": "memory"}
_NUMBER = re.compile(r"^(?P<value>nan|[0-9][0-9,]*(?:\.[0-9]+)?)\s*(?P<unit>%|GB)?$")
NEWPLOT = "Plotly.newPlot("

MEASURED = "measured"
MFU_PLACES = 1  # the hover text's MFU is in percent at one decimal
CRASHED = "crashed"


@dataclass(frozen=True)
class Config:
    """The configuration a hover text states."""

    model: str  # the figure's label: 1B, 3B, 8B, 80B
    nodes: int
    mbs: int
    grad_acc: int
    gbs: int
    dp: int
    pp: int
    tp: int
    zero: int

    @property
    def gpus(self) -> int:
        return self.nodes * GPUS_PER_NODE


@dataclass(frozen=True)
class Figures:
    """The figures a hover text states, as written (MFU in percent at one decimal; integers for tokens)."""

    mfu_percent: float
    tokens_per_s_per_gpu: int
    tokens_per_s: int
    memory_gb: float


@dataclass(frozen=True)
class Marker:
    """A circle as drawn: its colour (the run's MFU over the model's best) and size (5 + 10 x the run's total tok/s
    over the model's highest)."""

    colour: float
    size: float


@dataclass(frozen=True)
class Repeat:
    """Another entry of the same configuration in the same cell, merged into the row that stands for it."""

    column: int
    outcome: str
    figures: Figures | None


@dataclass(frozen=True)
class Row:
    """One entry of a cell's hover-text array."""

    line: int
    column: int  # 1-based column of the entry's opening quote on its line
    cell: int  # index of the circles' trace in the figure's data
    index: int  # position in the cell's text array
    outcome: str  # MEASURED (a circle) or CRASHED (a cross)
    config: Config
    figures: Figures | None  # None: the text says nan for every figure
    marker: Marker | None = None  # the circle this entry's run is drawn as (None: a cross)
    repeats: tuple[Repeat, ...] = ()  # the cell's other entries of this configuration, merged into this row

    @property
    def model(self) -> str:
        return MODELS[self.config.model]

    def key(self) -> str:
        """Stable file name: GPUs and every configuration field (one row per configuration and cell)."""
        c = self.config
        return f"pb-{c.gpus}gpu-dp{c.dp}-tp{c.tp}-pp{c.pp}-mbs{c.mbs}-ga{c.grad_acc}-zero{c.zero}"

    def where(self) -> str:
        return f"line {self.line}, column {self.column}"


class DocumentError(SourceError):
    """The document is not the figure this importer reads (with the line and column where it departs)."""


def _figure_data(text: str) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
    """The figure's traces, the offset where its data array starts, and its layout; DocumentError where the call's
    arguments are not a JSON array and object (a truncated page ends inside them)."""
    start = text.find(NEWPLOT)
    if start < 0:
        raise DocumentError("no Plotly.newPlot( call: not a Plotly figure")
    decoder = json.JSONDecoder()
    data_at = text.find("[", start)
    if data_at < 0:
        raise DocumentError("Plotly.newPlot( has no data array", *line_col(text, start))
    try:
        data, end = decoder.raw_decode(text, data_at)
        layout_at = text.find("{", end)
        if layout_at < 0:
            raise DocumentError("Plotly.newPlot('s data is followed by no layout object", *line_col(text, end))
        layout, _ = decoder.raw_decode(text, layout_at)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"the figure's JSON is cut short or broken ({exc.msg})", exc.lineno, exc.colno) from None
    except RecursionError:
        raise DocumentError("the figure's JSON is nested too deeply to read", *line_col(text, data_at)) from None
    if not isinstance(data, list) or not isinstance(layout, dict):
        raise DocumentError("Plotly.newPlot('s arguments are not a data array and a layout object",
                            *line_col(text, data_at))
    return data, data_at, layout


def _axis_models(layout: dict[str, Any]) -> dict[str, str]:
    """Subplot x axis (x, x2, ...) -> the model title written over it (annotations at x = 0.125, 0.375...)."""
    domains = {("x" if name == "xaxis" else "x" + name[5:]): axis["domain"]
               for name, axis in layout.items() if name.startswith("xaxis")}
    out: dict[str, str] = {}
    for note in layout.get("annotations", []):
        if note.get("xref") == "paper" and note.get("text") in MODELS:
            for axis, (lo, hi) in domains.items():
                # The model panels are the upper row (the lower row is the legend's).
                if lo < note["x"] < hi and layout["yaxis" + axis[1:]]["domain"][1] > 0.5:
                    out[axis] = note["text"]
    return out


def _text_offsets(text: str, data_at: int, count: int) -> list[list[int]]:
    """For each of the first `count` traces, the offset of each entry of its "text" array (the JSON as written)."""
    decoder = json.JSONDecoder()
    offsets: list[list[int]] = []
    at = data_at
    for _ in range(count):
        at = text.index('"text":[', at) + len('"text":[')
        entries = []
        while text[at] != "]":
            entries.append(at)
            _, at = decoder.raw_decode(text, at)
            if text[at] == ",":
                at += 1
        offsets.append(entries)
    return offsets


def _fields(hover: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in hover.split("<br>"):
        if ":" in part and not part.startswith("<b>"):
            name, value = part.split(":", 1)
            out[name.strip()] = value.strip()
    return out


def _number(value: str, where: str) -> float | None:
    match = _NUMBER.match(value)
    if match is None:
        raise DocumentError(f"{where}: {quoted(value)} is not a number")
    figure = match.group("value")
    return None if figure == "nan" else number(figure, f"{where}: figure")


def _row(hover: str, model: str, where: str) -> tuple[Config, Figures | None]:
    fields = _fields(hover)
    missing = [k for k in (*CONFIG_KEYS, *FIGURE_KEYS) if k not in fields]
    if missing:
        raise DocumentError(f"{where}: the hover text lacks {', '.join(missing)}")
    config_values: dict[str, int] = {}
    for name, key in CONFIG_KEYS.items():
        if not re.fullmatch(r"[0-9]+", fields[name]):
            raise DocumentError(f"{where}: {name} {quoted(fields[name])} is not a whole number")
        config_values[key] = int(number(fields[name], f"{where}: {name}", integer=True))
        if config_values[key] == 0 and key != "zero":  # ZeRO-0 is a stage; every other count is at least 1
            raise DocumentError(f"{where}: {name} 0 is not a count")
    values = {key: _number(fields[name], where) for name, key in FIGURE_KEYS.items()}
    config = Config(model=model, **config_values)
    if all(v is None for v in values.values()):
        return config, None
    if any(v is None for v in values.values()):
        raise DocumentError(f"{where}: some figures are nan and some are not")
    stated = Figures(mfu_percent=values["mfu"], tokens_per_s_per_gpu=int(values["tokens_per_gpu"]),
                     tokens_per_s=int(values["tokens"]), memory_gb=values["memory"])
    return config, stated


@dataclass
class Sweep:
    """Every row of the document (repeats merged), and how its traces were read."""

    rows: list[Row]  # one per configuration and cell, in document order
    merged: list[Row]  # the repeats merged into a row of `rows` (each also listed in that row's `repeats`)
    cells: int  # (model, nodes) cells: traces with a text array of their own
    repeated_traces: list[int]  # traces whose text array repeats their cell's (the crosses' traces)

    @property
    def entries(self) -> int:
        return len(self.rows) + len(self.merged)


@dataclass(frozen=True)
class Entry:
    """One hover text as written, before its outcome is known."""

    line: int
    column: int
    index: int
    config: Config
    figures: Figures | None


@dataclass(frozen=True)
class Cell:
    """A (model, nodes) cell: its circles' trace index and markers (empty: all crosses) and its entries."""

    trace: int
    model: str
    markers: list[Marker]
    entries: list[Entry]


# Marker sizes: 5 for a run with no throughput, 15 for the model's highest total tok/s (read off the figure: every
# model's largest circle is 15.0 and the sizes are affine in the hover texts' tok/s).
SIZE_FLOOR, SIZE_SPAN = 5.0, 10.0
MFU_ROUNDING = 0.05  # the hover text's MFU is in percent at one decimal
TOKENS_ROUNDING = 0.5  # its total tok/s is a whole number


@dataclass(frozen=True)
class Scale:
    """What a model's markers are relative to: its best MFU (percent) and its highest total tok/s, both as stated."""

    best_mfu_percent: float
    top_tokens_per_s: float

    def colour(self, f: Figures) -> float:
        return f.mfu_percent / self.best_mfu_percent

    def size(self, f: Figures) -> float:
        return SIZE_FLOOR + SIZE_SPAN * f.tokens_per_s / self.top_tokens_per_s

    @property
    def colour_bound(self) -> float:
        """How far a stated MFU's colour can be from the drawn one: the run's and the best MFU each rounded."""
        return 2 * MFU_ROUNDING / self.best_mfu_percent

    @property
    def size_bound(self) -> float:
        """How far a stated tok/s's size can be from the drawn one: the run's and the highest tok/s each rounded."""
        return SIZE_SPAN * 2 * TOKENS_ROUNDING / self.top_tokens_per_s

    def distance(self, marker: Marker, f: Figures) -> float:
        """The larger of the colour and size gaps, each over its bound: <= 1 is a match within rounding."""
        return max(abs(marker.colour - self.colour(f)) / self.colour_bound,
                   abs(marker.size - self.size(f)) / self.size_bound)


def model_scales(cells: list[Cell]) -> dict[str, Scale]:
    """Each model's best stated MFU and highest stated total tok/s over its hover texts with figures."""
    out: dict[str, Scale] = {}
    for model in {cell.model for cell in cells}:
        stated = [e.figures for cell in cells if cell.model == model for e in cell.entries if e.figures]
        if stated:
            out[model] = Scale(max(f.mfu_percent for f in stated), max(f.tokens_per_s for f in stated))
    return out


def match_circles(markers: list[Marker], candidates: list[Figures], scale: Scale) -> list[int]:
    """For each circle in drawing order, the index in `candidates` (the cell's texts with figures, in document
    order) of its run: the order-keeping assignment with the least total gap (both lists are in throughput order).
    ValueError when a circle's best candidate is beyond rounding."""
    n, m = len(markers), len(candidates)
    if n > m:
        raise ValueError(f"{n} circles but {m} hover texts with figures")
    inf = float("inf")
    cost = [[scale.distance(mk, f) ** 2 for f in candidates] for mk in markers]
    # best[k][j]: least cost of placing the first k circles on the first j candidates.
    best = [[0.0] * (m + 1)] + [[inf] * (m + 1) for _ in range(n)]
    for k in range(1, n + 1):
        for j in range(k, m + 1):
            best[k][j] = min(best[k][j - 1], best[k - 1][j - 1] + cost[k - 1][j - 1])
    chosen: list[int] = []
    k, j = n, m
    while k > 0:
        if j > k and best[k][j] == best[k][j - 1]:
            j -= 1
        else:
            chosen.append(j - 1)
            k, j = k - 1, j - 1
    chosen.reverse()
    for circle, index in enumerate(chosen):
        gap = scale.distance(markers[circle], candidates[index])
        if gap > 1:
            raise ValueError(f"circle {circle} (colour {markers[circle].colour:.4f}, size {markers[circle].size:.4f})"
                             f" matches no hover text within rounding (nearest: {gap:.1f} x the bound)")
    return chosen


def read_cells(text: str) -> tuple[list[Cell], list[int]]:
    """Every (model, nodes) cell of the figure with its entries as written, and the traces that repeat a cell."""
    data, data_at, layout = _figure_data(text)
    axis_models = _axis_models(layout)
    texted = [i for i, trace in enumerate(data) if trace.get("text")]
    if texted != list(range(len(texted))):
        raise DocumentError("the traces with hover text are not the figure's first traces")
    offsets = _text_offsets(text, data_at, len(texted))
    lines = LineIndex(text)
    cells: list[Cell] = []
    repeated: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for i in texted:
        try:
            trace = data[i]
            axis = trace.get("xaxis", "x")
            if axis not in axis_models:
                raise DocumentError(f"trace {i} is on axis {axis}, under no model title")
            key = (axis, json.dumps(trace["text"]))
            if key in seen:
                repeated.append(i)
                continue
            seen[key] = i
            circles = 0 if trace["marker"].get("symbol") == "x" else len(trace["x"])
            crosses = _crosses(data, i, trace, circles)
            if circles + crosses != len(trace["text"]):
                line, col = lines.line_col(offsets[i][0])
                raise DocumentError(f"line {line}, column {col}: cell of trace {i} has {circles} circles and {crosses} "
                                    f"crosses for {len(trace['text'])} texts")
            markers = ([Marker(float(c), float(z)) for c, z in zip(trace["marker"]["color"], trace["marker"]["size"],
                                                                   strict=True)] if circles else [])
            entries = []
            for n, hover in enumerate(trace["text"]):
                line, col = lines.line_col(offsets[i][n])
                config, stated = _row(hover, axis_models[axis], f"line {line}, column {col}")
                entries.append(Entry(line, col, n, config, stated))
            cells.append(Cell(i, axis_models[axis], markers, entries))
        except _LAYOUT_DEPARTURES as exc:
            if isinstance(exc, SourceError):
                raise
            where = lines.line_col(offsets[i][0]) if i < len(offsets) and offsets[i] else (None, None)
            raise DocumentError(f"trace {i} is not laid out as the playbook's traces are ({_departure(exc)})",
                                *where) from None
    return cells, repeated


def _crosses(data: list[dict[str, Any]], i: int, trace: dict[str, Any], circles: int) -> int:
    """Points of the cell's crosses: the trace itself when it is all crosses, else the next trace when it repeats
    this one's text array as crosses (a cell where every run has figures has none)."""
    if circles == 0:
        return len(trace["x"])
    nxt = data[i + 1] if i + 1 < len(data) else {}
    if nxt.get("marker", {}).get("symbol") == "x" and nxt.get("text") == trace["text"]:
        return len(nxt["x"])
    return 0


def cell_rows(cell: Cell, scale: Scale | None) -> list[Row]:
    """The cell's entries with their outcome: the texts its circles' markers match worked, the rest crashed."""
    with_figures = [e for e in cell.entries if e.figures is not None]
    drawn: dict[int, Marker] = {}
    if cell.markers:
        assert scale is not None
        try:
            chosen = match_circles(cell.markers, [e.figures for e in with_figures if e.figures], scale)
        except ValueError as exc:
            first = cell.entries[0]
            raise DocumentError(f"line {first.line}, column {first.column}: cell of trace {cell.trace}: {exc}") from None
        drawn = {with_figures[j].index: cell.markers[k] for k, j in enumerate(chosen)}
    return [Row(e.line, e.column, cell.trace, e.index, MEASURED if e.index in drawn else CRASHED, e.config, e.figures,
                drawn.get(e.index)) for e in cell.entries]


def merge_repeats(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """One row per configuration of a cell: its first run that worked, else its first entry, carrying the other
    entries as `repeats`; returns (rows in document order, the merged entries)."""
    groups: dict[Config, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.config, []).append(row)
    kept: dict[int, Row] = {}
    merged: list[Row] = []
    for group in groups.values():
        lead = next((r for r in group if r.outcome == MEASURED), group[0])
        others = [r for r in group if r is not lead]
        kept[lead.index] = replace(lead, repeats=tuple(Repeat(r.column, r.outcome, r.figures) for r in others))
        merged.extend(others)
    return [kept[i] for i in sorted(kept)], sorted(merged, key=lambda r: r.index)


# What reading a JSON structure of another shape raises: a missing key, a value of another type, a list of another
# length (zip(strict=True)), a string that is not where it should be (str.index).
_LAYOUT_DEPARTURES = (KeyError, TypeError, IndexError, AttributeError, ValueError, ZeroDivisionError)


def _departure(exc: Exception) -> str:
    return f"{type(exc).__name__}: {base.one_line(str(exc), 120)}"


def read_sweep(text: str) -> Sweep:
    """Every hover-text entry of the figure, in document order, with its outcome read from the circles' markers
    and repeats merged. Pure: no catalog, no files. DocumentError (located where it can be) for a page that is not
    the figure this importer reads."""
    try:
        return _read_sweep(text)
    except _LAYOUT_DEPARTURES as exc:
        if isinstance(exc, SourceError):
            raise
        raise DocumentError(f"the figure is not laid out as the playbook's ({_departure(exc)})") from None


def _read_sweep(text: str) -> Sweep:
    cells, repeated = read_cells(text)
    scales = model_scales(cells)
    rows: list[Row] = []
    merged: list[Row] = []
    for cell in cells:
        kept, folded = merge_repeats(cell_rows(cell, scales.get(cell.model)))
        rows.extend(kept)
        merged.extend(folded)
    return Sweep(rows, merged, len(cells), repeated)


# --- MFU under the playbook's count -----------------------------------------------------------------------


def vocab_matrices(row: Row, tied_embeddings: bool) -> int:
    """Logits products the playbook's MFU counts: once per vocabulary matrix the run holds; two when the embedding
    is untied, or tied but split over pipeline stages (the first and last stage each hold a copy), else one."""
    return 1 if tied_embeddings and row.config.pp == 1 else 2


def _layout_words(c: Config) -> str:
    return (f"{c.model}, {c.gpus} GPUs, DP{c.dp} TP{c.tp} PP{c.pp} ZeRO-{c.zero}, MBS {c.mbs}, GradAcc {c.grad_acc}")


def failure_reason(row: Row) -> str:
    base = f"failed layout ({_layout_words(row.config)}): drawn as a cross, the figure's 'crashed/oom'"
    if row.figures is None:
        return base + ", with no figures (nan)"
    f = row.figures
    return base + (f", though its text states MFU {f.mfu_percent:.1f}%, {f.tokens_per_s_per_gpu:,} tok/s/gpu and "
                   f"{f.memory_gb:g} GB (no circle's colour and size are these figures)")


def repeat_reason(row: Row, lead: Row) -> str:
    """Why a repeated entry is no row of its own: the same configuration earlier in the cell stands for it."""
    kind = "recipe" if lead.outcome == MEASURED else "failed layout"
    what = "with no figures (nan)" if row.figures is None else f"MFU {row.figures.mfu_percent:.1f}%"
    drawn = "a circle" if row.outcome == MEASURED else "not a circle"
    return (f"repeat ({_layout_words(row.config)}; {what}, {drawn}): the same configuration as column {lead.column} "
            f"of this cell, merged into its {kind}")


def gbs_contradiction(config: Config) -> bool:
    """The row's MBS x GradAcc x DP is not its stated GBS."""
    return config.mbs * config.grad_acc * config.dp != config.gbs


class Playbook(Source):
    """The Ultra-Scale Playbook's benchmark sweep."""

    name = "playbook"

    def parse(self, text: str) -> Parsed:
        sweep = read_sweep(text)
        parsed = Parsed(table_rows=sweep.entries)
        for row in sweep.rows:
            if row.outcome == MEASURED:
                parsed.rows.append(row)
            else:
                parsed.skips.append(Skip(row.line, f"column {row.column}: {failure_reason(row)}"))
        lead = {(r.cell, r.config): r for r in sweep.rows}
        for row in sweep.merged:
            parsed.skips.append(Skip(row.line, f"column {row.column}: {repeat_reason(row, lead[(row.cell, row.config)])}"))
        return parsed

    def admit(self, row: Row, catalog: Catalog) -> str | None:
        card = catalog.models.get(row.model)
        if card is None or card.architecture is None:
            return f"column {row.column}: {row.model} has no catalog card with its architecture"
        if GPU_TYPE not in catalog.gpus:
            return f"column {row.column}: {GPU_TYPE} not in the GPU catalog"
        return None

    def gpu_type(self, row: Row) -> str:
        return GPU_TYPE

    def build(self, row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        # `skipped` (the skips at the same line) is not used: every row of this document is on line 2, so those
        # are the other rows' failures, listed as failed layouts, not this row's.
        return build_recipe(row, catalog, document, superseded)


# What every recipe of the sweep records that the publication does not state.
INFERRED = [
    {"field": "workload.precision", "reason": "not stated by the publication or the sweep script (the precision is "
     "in nanotron's base config, not published with the sweep); recorded as BF16"},
    {"field": "layout.sequence_parallel", "reason": "not stated by the publication: on when TP > 1, the sweep "
     "script's default TP mode REDUCE_SCATTER (" + NANOTRON_SCRIPT + ")"},
]


def layout_label(config: Config) -> str:
    return f"TP{config.tp} PP{config.pp} DP{config.dp} ZeRO-{config.zero}"


def build_recipe(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]]) -> dict[str, Any]:
    c, f = row.config, row.figures
    assert f is not None
    card = catalog.models[row.model]
    arch = card.architecture
    assert arch is not None
    instance = catalog.instance_for(GPU_TYPE, GPUS_PER_NODE)
    label = layout_label(c)
    uneven = c.pp > 1 and arch.layers % c.pp != 0
    notes = [
        f"Reported by Hugging Face in the Ultra-Scale Playbook ({SPACE_URL}), the benchmark sweep's interactive "
        f"figure: the {c.model} model on {c.nodes} node{'s' if c.nodes > 1 else ''}, {row.where()} of the document "
        f"(entry {row.index} of its cell's hover texts).",
        f"Not re-measured here. Stated by the row: DP {c.dp}, TP {c.tp}, PP {c.pp}, ZeRO stage {c.zero}, MBS {c.mbs}, "
        f"GradAcc {c.grad_acc}, GBS {c.gbs} sequences; MFU {f.mfu_percent:.1f}%, {f.tokens_per_s_per_gpu:,} tok/s per "
        f"GPU, {f.tokens_per_s:,} tok/s, GPU memory {f.memory_gb:g} GB. The sequence length (4,096) and the 8 H100 "
        "per node are the playbook's text; the architecture is nanotron's sweep script (the model card).",
        "Settings the publication does not state are not invented: recompute is not stated (null); sequence "
        "parallelism (on when TP > 1: nanotron's REDUCE_SCATTER TP mode, the sweep script's default) and BF16 are "
        "listed as inferred.",
    ]
    if row.repeats:
        notes.append(repeats_note(row))
    stated_ga = c.grad_acc if gbs_contradiction(c) else None
    if stated_ga is not None:
        notes.append(f"The row states GradAcc {c.grad_acc} with MBS {c.mbs} and DP {c.dp}: {c.mbs * c.grad_acc * c.dp}"
                     f" sequences per step, not its GBS {c.gbs}; recorded as published (layout.gradient_accumulation "
                     "and publication.stated_gradient_accumulation).")
    if uneven:
        notes.append(f"{arch.layers} layers over PP {c.pp} do not divide evenly; nanotron's placement is not stated.")
    result = base.imported_result(card, float(f.tokens_per_s_per_gpu),
                             mfu_note(row, arch, catalog.gpus[GPU_TYPE].peak_flops.bf16),
                             params_stated_by=(NANOTRON_SCRIPT, NANOTRON_COMMIT), peak_memory=stated_memory(f))
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": GPU_TYPE, "memory_gb": catalog.gpus[GPU_TYPE].memory_gb, "count": c.gpus,
                "per_node": GPUS_PER_NODE, "instance": instance},
        "author": {"name": "Hugging Face (Ultra-Scale Playbook)", "url": SPACE_URL},
        "status": "reported",
        "stack": {"framework": "nanotron (the playbook's benchmark sweep; version not published)",
                  "source": "the playbook: 'In the Nanotron repository, you'll find several scripts you can use to "
                            "run all the experiments'"},
        "workload": {"row_tokens": SEQUENCE, "rows": "not stated by the publication (a throughput benchmark)",
                     "global_batch": c.gbs, "precision": "bf16"},
        "layout": {
            "label": label,
            "summary": f"{c.gpus} H100 ({c.nodes} x 8), {label}, micro-batch {c.mbs}, gradient accumulation "
                       f"{c.grad_acc}, global batch {c.gbs} x {SEQUENCE} tokens; peak GPU memory {f.memory_gb:g} GB; "
                       "as published.",
            "tp": c.tp, "pp": c.pp, "vpp": 1, "cp": 1, "ep": 1, "etp": 1, "dp": c.dp,
            "fsdp": c.zero >= 3, "gradient_accumulation": c.grad_acc, "sequence_parallel": c.tp > 1,
            "layer_split": None, "rows_per_microbatch": c.mbs,
            "recompute": None,
            "dispatcher": None, "mtp_layers": None,
            "pipeline_layout": (f"nanotron's own placement of {arch.layers} layers on {c.pp} stages (not stated by "
                                "the publication)") if uneven else None,
        },
        "result": result,
        "publication": {"url": document.url, "commit": document.commit, "line": row.line, "column": row.column,
                        **copy_read(document), "system": f"{c.nodes} x 8 H100 (Hugging Face science cluster)",
                        **({"stated_gradient_accumulation": stated_ga} if stated_ga is not None else {}),
                        "superseded": superseded},
        "run": _run(row),
        "notes": "\n\n".join(notes) + "\n",
        "inferred": INFERRED,
    }
    derive_figures(recipe, catalog)
    return recipe


# The hover text says "GPU memory: X GB" and no more: neither allocated nor reserved, nor 10^9 or 2^30 bytes.
STATED_MEMORY_SOURCE = "the playbook's 'GPU memory' (hover text; kind and unit as stated)"


def stated_memory(f: Figures) -> dict[str, Any]:
    """result.peak_memory: the row's GPU memory as stated (stated_gb), never as allocated or reserved."""
    return {"stated_gb": f.memory_gb, "source": STATED_MEMORY_SOURCE}


def repeats_note(row: Row) -> str:
    """The cell's other entries of this configuration, merged into this recipe (its figures are this entry's)."""
    said = []
    for r in row.repeats:
        if r.figures is None:
            said.append(f"column {r.column} with no figures (nan), drawn as a cross")
        else:
            drawn = "a circle" if r.outcome == MEASURED else "not a circle"
            said.append(f"column {r.column} with MFU {r.figures.mfu_percent:.1f}%, {r.figures.tokens_per_s_per_gpu:,} "
                        f"tok/s per GPU and {r.figures.memory_gb:g} GB ({drawn})")
    return (f"The sweep states this configuration {len(row.repeats) + 1} times in this cell; the figures here are its "
            f"first run drawn as a circle (column {row.column}); the others: " + "; ".join(said) + ". A configuration "
            "that ran is not listed as a failed layout.")


def playbook_mfu(row: Row, arch: Architecture, peak: float, tokens_per_s_per_gpu: float | None = None) -> float:
    """MFU under the playbook's count (figures.nanotron_model_flops_per_token) at `peak` (the H100's dense BF16),
    from the row's tok/s per GPU unless another figure is given."""
    assert row.figures is not None
    flops = figures.nanotron_model_flops_per_token(arch, SEQUENCE, vocab_matrices(row, arch.tied_embeddings))
    tokens = row.figures.tokens_per_s_per_gpu if tokens_per_s_per_gpu is None else tokens_per_s_per_gpu
    return figures.flops_utilisation(flops, tokens, peak)


def _agrees(row: Row, value: float) -> bool:
    """The published MFU (percent, one decimal) agrees with `value` at its stated precision."""
    assert row.figures is not None
    return figures.agrees(round(row.figures.mfu_percent / 100, 3), value, places=3)


def reproduces(row: Row, arch: Architecture, peak: float) -> bool:
    """The published MFU agrees with the playbook's count of the row's own tok/s per GPU."""
    return _agrees(row, playbook_mfu(row, arch, peak))


def from_total(row: Row) -> float:
    """tok/s per GPU from the row's stated total tok/s (finer than the per-GPU figure, which is a whole number)."""
    assert row.figures is not None
    return row.figures.tokens_per_s / row.config.gpus


# The attention the 12 80B rows whose MFU a GQA count reproduces would have: Llama-3-70B's 8 key-value heads.
GQA_KV_HEADS = 8


def gqa_mfu(row: Row, arch: Architecture, peak: float) -> float:
    """The playbook's count with GQA_KV_HEADS key-value heads in place of the card's."""
    kind = arch.attention["global"]
    gqa = arch.model_copy(update={"attention": {"global": kind.model_copy(update={"kv_heads": GQA_KV_HEADS})}})
    return playbook_mfu(row, gqa, peak)


def mfu_verdict(row: Row, arch: Architecture, peak: float) -> str:
    """How the published MFU is reproduced: 'count' (the row's tok/s per GPU), 'total' (its total tok/s), 'gqa'
    (a count with 8 key-value heads; a discrepancy with the card's architecture), 'rounding' (a gap within one unit of
    the stated MFU's last decimal: not a discrepancy), or 'unexplained'."""
    if reproduces(row, arch, peak):
        return "count"
    if _agrees(row, playbook_mfu(row, arch, peak, from_total(row))):
        return "total"
    if _agrees(row, gqa_mfu(row, arch, peak)):
        return "gqa"
    if rounding_gap(row, arch, peak) is not None:
        return "rounding"
    return "unexplained"


def rounding_gap(row: Row, arch: Architecture, peak: float) -> float | None:
    """The smaller gap (percent points) between the stated MFU and the count from either stated throughput, where it
    is within one unit of the stated MFU's last decimal (0.1 point; figures.within_last_unit), else None."""
    assert row.figures is not None
    stated = row.figures.mfu_percent
    gap = min(abs(stated - playbook_mfu(row, arch, peak) * 100),
              abs(stated - playbook_mfu(row, arch, peak, from_total(row)) * 100))
    return gap if figures.within_last_unit(stated, stated + gap, MFU_PLACES) else None


def mfu_note(row: Row, arch: Architecture, peak: float) -> str:
    assert row.figures is not None
    f = row.figures
    ours = playbook_mfu(row, arch, peak)
    k = vocab_matrices(row, arch.tied_embeddings)
    count = (f"nanotron's get_flops ({NANOTRON_FLOPS}: attention over the full {SEQUENCE} x {SEQUENCE} scores, no "
             f"causal halving) with the logits counted {'once' if k == 1 else 'twice'} (once per vocabulary "
             f"matrix the run holds)")
    six_n = "`mfu` is 6N over the same peak (attention not counted), hence lower."
    verdict = mfu_verdict(row, arch, peak)
    if verdict == "count":
        return (f"The playbook states MFU {f.mfu_percent:.1f}% under its own count, reproduced here: {count} x "
                f"{f.tokens_per_s_per_gpu:,} tok/s / {peak / 1e12:g} TFLOP/s = {ours * 100:.2f}%. {six_n}")
    if verdict == "total":
        total = from_total(row)
        return (f"The playbook states MFU {f.mfu_percent:.1f}% under its own count, reproduced from the row's total: "
                f"{count} x {f.tokens_per_s:,} tok/s / {row.config.gpus} GPUs ({total:,.2f} per GPU) / "
                f"{peak / 1e12:g} TFLOP/s = {playbook_mfu(row, arch, peak, total) * 100:.2f}% (from the whole-number "
                f"{f.tokens_per_s_per_gpu:,} tok/s per GPU: {ours * 100:.2f}%, the per-GPU figure's rounding). {six_n}")
    if verdict == "gqa":
        return (f"DISCREPANCY: the playbook states MFU {f.mfu_percent:.1f}%, but {count} x {f.tokens_per_s_per_gpu:,} "
                f"tok/s / {peak / 1e12:g} TFLOP/s = {ours * 100:.2f}%. The same count with {GQA_KV_HEADS} key-value "
                f"heads (GQA, Llama-3-70B's attention) gives {gqa_mfu(row, arch, peak) * 100:.2f}%, which agrees: "
                "this row's MFU, and perhaps its run, is of a GQA model, not the card's 64 key-value heads; the "
                f"hover text does not say which. {six_n}")
    if verdict == "rounding":
        gap = rounding_gap(row, arch, peak)
        assert gap is not None
        return (f"The playbook states MFU {f.mfu_percent:.1f}% under its own count; {count} x "
                f"{f.tokens_per_s_per_gpu:,} tok/s / {peak / 1e12:g} TFLOP/s = {ours * 100:.2f}% (from the total tok/s: "
                f"{playbook_mfu(row, arch, peak, from_total(row)) * 100:.2f}%): {gap:.2f} points apart, within one unit "
                "of the stated figure's last decimal (0.1 point, the bound this registry uses for a figure the "
                "publication computed from unrounded run data and publishes rounded, beside rounded throughputs). "
                f"Rounding, not a discrepancy. {six_n}")
    return (f"DISCREPANCY: the playbook states MFU {f.mfu_percent:.1f}%, but {count} x {f.tokens_per_s_per_gpu:,} tok/s "
            f"/ {peak / 1e12:g} TFLOP/s = {ours * 100:.2f}% (from the total tok/s: "
            f"{playbook_mfu(row, arch, peak, from_total(row)) * 100:.2f}%); the difference is beyond the stated "
            f"figure's rounding and is not explained. {six_n}")


def _run(row: Row) -> str:
    c = row.config
    return base.no_command_line(
        f"# Not published as a command line. Hugging Face ran this row with nanotron's sweep\n"
        f"# ({NANOTRON_SCRIPT}),\n"
        f"# which writes one config per run: dp {c.dp}, tp {c.tp}, pp {c.pp}, batch_accumulation_per_replica "
        f"{c.grad_acc},\n# micro_batch_size {c.mbs}, sequence_length {SEQUENCE}, zero_stage {c.zero}, on {c.nodes} "
        f"node(s) of 8 H100.\n")


def failed_layouts(sweep: Sweep) -> list[Row]:
    """The rows the figure draws as crashed / out of memory."""
    return [row for row in sweep.rows if row.outcome == CRASHED]


FAILED_OUTCOME = "crashed/oom"  # the figure's legend for its crosses, the publication's words
FAILED_HEADER = ("# Written by `python -m generator.importers.playbook FILE` from the Ultra-Scale Playbook's sweep: the\n"
                 "# configurations its figure draws as crashed / out of memory (schema: generator/failed.py).\n")


def copy_read(document: Document) -> dict[str, Any]:
    """publication.read_from where the document cited is the Space (the original home): the GitHub copy read."""
    if document.url != ORIGINAL.url:
        return {}
    mirror = Document.github(REPOSITORY, COMMIT, PATH)
    return {"read_from": {"url": mirror.url, "commit": COMMIT, "sha256": MIRROR_SHA256,
                          "note": f"A third party's GitHub copy of the Space's files "
                     f"({REPOSITORY}, its first commit), read byte for byte (SHA-256 {MIRROR_SHA256}); the Space's "
                     f"revision {SPACE_REVISION[:7]} holds the same bytes, as the copy of the Space's history at "
                     f"https://github.com/{HISTORY_COPY}/blob/{SPACE_REVISION}/{PATH} shows."}}


def locator(row: Row, entries: int) -> str:
    """Where a reader finds a row in the figure: its panel (the model's title over it), its node row (the label
    left of it), and its hover text where the figure's data holds it (trace `row.cell`, position `row.index` of that
    trace's text array: the figure's `data[cell].text[index]` in a browser's console). The text states the row's
    configuration (Nodes, MBS, GradAcc, GBS, DP, PP, TP, ZeRO), which the failed layout's fields repeat."""
    c = row.config
    return (f"the {c.model} panel, {c.nodes}-node row: hover text {row.index + 1} of {entries} "
            f"(data[{row.cell}].text[{row.index}])")


def failed_entry(row: Row, document: Document, entries: int) -> dict[str, Any]:
    c, f = row.config, row.figures
    return {
        "gpu": {"type": GPU_TYPE, "count": c.gpus, "per_node": GPUS_PER_NODE},
        "layout": {"dp": c.dp, "tp": c.tp, "pp": c.pp, "zero_stage": c.zero, "rows_per_microbatch": c.mbs,
                   "gradient_accumulation": c.grad_acc, "global_batch": c.gbs, "row_tokens": SEQUENCE},
        "outcome": FAILED_OUTCOME,
        "stated": None if f is None else {"mfu_percent": f.mfu_percent,
                                          "tokens_per_s_per_gpu": float(f.tokens_per_s_per_gpu),
                                          "memory_gb": f.memory_gb},
        "publication": {"url": document.url, "commit": document.commit, "line": row.line, "column": row.column,
                        "locator": locator(row, entries)},
    }


def failed_layout_files(sweep: Sweep, catalog: Catalog, document: Document) -> dict[str, str]:
    """failed/<model slug>.yaml (relative path) -> its text, one file per model with a catalog card."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    entries: dict[int, int] = {}  # a cell's (trace's) text entries, merged repeats included
    for row in (*sweep.rows, *sweep.merged):
        entries[row.cell] = entries.get(row.cell, 0) + 1
    for row in failed_layouts(sweep):
        by_model.setdefault(row.model, []).append(failed_entry(row, document, entries[row.cell]))
    read_from = copy_read(document).get("read_from")
    copy = {"read_from": base.record_copy(read_from, document)} if read_from else {}
    return {f"{failed.FOLDER}/{catalog.model_slugs[model]}.yaml":
            base.render({"model": model, "layouts": entries, **copy}, FAILED_HEADER)
            for model, entries in by_model.items() if model in catalog.model_slugs}


def write_failed_layouts(root: Path, file: Path, document: Document) -> WriteReport:
    """Write failed/*.yaml under root from the document at `file` (equal bytes are left untouched)."""
    text = base.read_document(file)
    files = failed_layout_files(read_sweep(text), load_catalog(root), base.copy_read(document, file))
    return base.write([(root / rel, text) for rel, text in sorted(files.items())], dry_run=False)


def main(argv: list[str] | None = None) -> int:
    """python -m generator.importers.playbook FILE: the failed layouts (the recipes come from
    `python -m generator import playbook FILE ...`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m generator.importers.playbook")
    parser.add_argument("file", type=Path, help="benchmarks_interactive.html at commit " + COMMIT)
    args = parser.parse_args(argv)
    try:
        report = write_failed_layouts(Path.cwd(), args.file, ORIGINAL)
    except SourceError as exc:
        print(exc.at(args.file), file=sys.stderr)
        return 1
    for path in report.created + report.updated:
        print(f"wrote {path.relative_to(Path.cwd())}")
    print(f"{len(report.created)} new, {len(report.updated)} updated, {len(report.unchanged)} unchanged")
    return 0


SOURCE = Playbook()

if __name__ == "__main__":
    raise SystemExit(main())
