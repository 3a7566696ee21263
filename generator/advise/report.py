"""The advisor's answers and validation as text and as JSON (the one place they are formatted)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from generator.advise.advisor import PREDICTED, Answer, Layout
from generator.advise.validate import GOALS, LOWER_IS_BETTER, TOKENS_MISS

JSON_KEYS = ("layout", "memory_gb_per_gpu", "fits", "tokens_per_s_per_gpu", "nearest", "basis")


def _r(value: float, places: int = 1) -> float:
    return round(float(value), places)


def layout_json(lay: Layout, basis: str) -> dict[str, object]:
    out: dict[str, object] = {
        "layout": lay.plan.as_dict(),
        "memory_gb_per_gpu": {PREDICTED: _r(lay.memory.peak_gb), "low": _r(lay.memory.low_gb),
                              "high": _r(lay.memory.high_gb)},
        "fits": lay.fits,
        "tokens_per_s_per_gpu": {PREDICTED: _r(lay.tokens[0]), "low": _r(lay.tokens[1]), "high": _r(lay.tokens[2])},
        "nearest": [rid for rid, _, _ in lay.nearest],
        "basis": basis,
    }
    if lay.cost is not None:
        out["cost"] = {k: _r(v, 2) for k, v in lay.cost.items()}
    return out


def answer_json(a: Answer) -> list[dict[str, object]]:
    return [layout_json(lay, a.basis) for lay in a.layouts]


def _tps(value: float) -> str:
    return f"{value:,.0f}"


def answer_text(a: Answer) -> str:
    q = a.question
    lines = [f"{a.model} on {q.gpus} x {q.gpu} ({a.card_memory_gb:g} GB), sequence {a.seq}, {q.precision}, "
             f"{q.training}: layouts ranked by PREDICTED tokens/s per GPU (none of these figures is measured)", ""]
    header = f"{'#':>2}  {'layout':<58} {'memory GB/GPU (range)':<22} {'fits':<4}  tokens/s/GPU (range)"
    lines.append(header)
    for i, lay in enumerate(a.layouts, 1):
        mem = f"{lay.memory.peak_gb:.1f} ({lay.memory.low_gb:.1f}-{lay.memory.high_gb:.1f})"
        tps = f"{_tps(lay.tokens[0])} ({_tps(lay.tokens[1])}-{_tps(lay.tokens[2])})"
        lines.append(f"{i:>2}  {lay.plan.label():<58} {mem:<22} {'yes' if lay.fits else 'NO':<4}  {tps}")
        for rid, measured, ours in lay.nearest:
            stands = lay.tokens[0] / measured - 1 if measured else 0.0
            lines.append(f"      nearest measured: {rid}: {_tps(measured)} tokens/s per GPU measured (this layout's "
                         f"prediction {stands:+.0%} from it; the model predicts {_tps(ours)} for that recipe)")
        if lay.cost is not None:
            c = lay.cost
            money = (f", ${c['usd_predicted']:,.0f} (${c['usd_high']:,.0f}-${c['usd_low']:,.0f}) at "
                     f"${c['usd_per_gpu_hour']:.2f} per GPU-hour" if "usd_predicted" in c else "")
            lines.append(f"      {q.tokens:.3g} tokens: {c['gpu_hours_predicted']:,.0f} GPU-hours, "
                         f"{c['days_predicted']:.1f} days ({c['days_high']:.1f}-{c['days_low']:.1f}){money} "
                         f"({PREDICTED})")
    if not any(lay.fits for lay in a.layouts):
        lines.append("")
        lines.append("No layout is predicted to fit: these are the ones predicted to need the least memory.")
    lines += ["", "Basis: " + a.basis]
    if a.price_source:
        lines.append(f"Price: ${a.usd_per_gpu_hour:.2f} per GPU-hour ({a.price_source}).")
    return "\n".join(lines)


# --- validation -------------------------------------------------------------------------------------------------

METRICS = (("oom_accuracy", "fit/OOM accuracy", ">="), ("memory_mape", "peak memory, median abs. % error", "<="),
           ("tokens_mape", "tokens/s, median abs. % error", "<="),
           ("rank_spearman", "rank correlation in a group (median)", ">="))


# Whether a goal is met, as the terminal's table says it (a miss stands out) and as the methodology page's does.
_MET_TEXT = {True: "yes", False: "NO", None: "-"}
_MET_MARKDOWN = {True: "yes", False: "no", None: "-"}


def _fmt(name: str, value: object) -> str:
    if value is None:
        return "-"
    assert isinstance(value, float | int)
    return f"{value:.1%}" if name in LOWER_IS_BETTER else f"{value:.3f}"


@dataclass(frozen=True)
class FrameworkMisses:
    """The tokens/s rows of one framework, held out: how far off, and which way."""

    framework: str
    rows: int
    median_error: float
    over_goal: int
    too_fast: int  # of over_goal: predicted faster than stated
    too_slow: int


def tokens_by_framework(rows: list[dict[str, Any]]) -> list[FrameworkMisses]:
    """Per framework (most rows first): the held-out tokens/s rows, their median error, and the rows over the goal
    split by the prediction's direction."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["tokens_per_s_per_gpu"]["error"] is not None:
            by[r["framework"]].append(r)
    out = []
    for framework, members in by.items():
        # The row's own verdict (its error before the JSON's rounding), not the rounded error against the goal.
        over = [r for r in members if any(m.startswith(TOKENS_MISS) for m in r["misses"])]
        fast = sum(r["tokens_per_s_per_gpu"]["predicted"] > r["tokens_per_s_per_gpu"]["stated"] for r in over)
        errors = [r["tokens_per_s_per_gpu"]["error"] for r in members]
        out.append(FrameworkMisses(framework, len(members), float(np.median(errors)), len(over), fast,
                                   len(over) - fast))
    return sorted(out, key=lambda f: (-f.rows, f.framework))


@dataclass(frozen=True)
class TwinSpread:
    """Pairs of held-out rows that differ only in ZeRO stage and that the model predicts within TWIN_PREDICTED of
    each other: how far apart the source states them (its own spread, which no layout term can follow)."""

    pairs: int
    median_gap: float  # median of faster / slower - 1, as stated
    over_goal: int  # pairs stated further apart than the tokens/s goal


TWIN_PREDICTED = 0.05


def _twin_key(r: dict[str, Any]) -> tuple[object, ...]:
    layout = {k: v for k, v in r["layout"].items() if k not in ("zero", "fsdp")}
    return (r["model"], r["gpu"], r["gpus"], tuple(sorted(layout.items())))


def zero_twins(rows: list[dict[str, Any]]) -> TwinSpread:
    groups: dict[tuple[object, ...], dict[int, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["tokens_per_s_per_gpu"]["predicted"] is not None:
            groups[_twin_key(r)][r["layout"]["zero"]] = r
    gaps = []
    for twins in groups.values():
        if len(twins) != 2:
            continue
        a, b = (t["tokens_per_s_per_gpu"] for t in twins.values())
        if max(a["predicted"], b["predicted"]) / min(a["predicted"], b["predicted"]) - 1 > TWIN_PREDICTED:
            continue
        gaps.append(max(a["stated"], b["stated"]) / min(a["stated"], b["stated"]) - 1)
    if not gaps:
        return TwinSpread(0, 0.0, 0)
    return TwinSpread(len(gaps), float(np.median(gaps)), sum(g > GOALS["tokens_mape"] for g in gaps))


def _tokens_miss_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"{'tokens/s by framework':<28} {'rows':>5} {'median':>8} {'over goal':>10} {'too fast':>9} {'too slow':>9}"]
    for f in tokens_by_framework(rows):
        lines.append(f"{f.framework:<28} {f.rows:>5} {f.median_error:>8.1%} {f.over_goal:>10} {f.too_fast:>9} "
                     f"{f.too_slow:>9}")
    twins = zero_twins(rows)
    lines.append(f"Layouts stated twice, at two ZeRO stages, that the model predicts within {TWIN_PREDICTED:.0%} of "
                 f"each other: {twins.pairs} pairs; the source states them a median {twins.median_gap:.1%} apart, "
                 f"{twins.over_goal} of them further apart than the tokens/s goal.")
    return lines


def _goal_rows(result: dict[str, object]) -> list[tuple[str, str, str, str, int, bool | None]]:
    """Each goal of a validation, as both tables show it: (label, sense, target, result, rows or groups, met)."""
    out = []
    for name, label, sense in METRICS:
        metric = result[name]
        assert isinstance(metric, dict)
        out.append((label, sense, _fmt(name, GOALS[name]), _fmt(name, metric["value"]), metric["n"], metric["met"]))
    return out


def _model_cells(result: dict[str, object], model: str) -> list[str]:
    """A held-out model's result on each goal, in METRICS' order."""
    cells = []
    for name, _, _ in METRICS:
        metric = result[name]
        assert isinstance(metric, dict)
        cells.append(_fmt(name, metric["by_model"].get(model)))
    return cells


def validation_text(result: dict[str, object]) -> str:
    rows = result["rows"]
    assert isinstance(rows, list)
    lines = ["The layout advisor, leave one model out (fitted without the model, predicting its rows). PREDICTED "
             "figures against what the registry states.", ""]
    lines.append(f"{'goal':<40} {'target':>8} {'result':>8}  {'n':>5}  met")
    for label, sense, target, value, n, met in _goal_rows(result):
        lines.append(f"{label:<40} {sense + ' ' + target:>8} {value:>8}  {n:>5}  {_MET_TEXT[met]}")
    models = sorted({r["model"] for r in rows})
    lines += ["", f"{'held-out model':<28} {'rows':>5} {'fit/OOM':>8} {'memory':>8} {'tokens/s':>9} {'rank':>6}"]
    counts = Counter(r["model"] for r in rows)
    for model in models:
        cells = _model_cells(result, model)
        lines.append(f"{model:<28} {counts[model]:>5} {cells[0]:>8} {cells[1]:>8} {cells[2]:>9} {cells[3]:>6}")
    misses = [r for r in rows if r["misses"]]
    kinds: dict[str, Counter[str]] = {}
    for r in misses:
        for m in r["misses"]:
            kind = m.split(" off by")[0] + " off by more than the goal" if " off by" in m else m
            kinds.setdefault(kind, Counter())[r["model"]] += 1
    lines += ["", f"Rows that miss a goal: {len(misses)} of {len(rows)} held-out rows (a row can miss several)"]
    for kind, by_model in sorted(kinds.items(), key=lambda kv: -sum(kv[1].values())):
        detail = ", ".join(f"{model} {n}" for model, n in by_model.most_common())
        lines.append(f"  {kind}: {sum(by_model.values())} ({detail})")
    lines += ["", *_tokens_miss_lines(rows)]
    return "\n".join(lines)


def validation_markdown(result: dict[str, object]) -> str:
    """The validation's two tables (goals, then each held-out model) as Markdown, for the methodology page."""
    rows = result["rows"]
    assert isinstance(rows, list)
    lines = ["| Goal (leave one model out) | Target | Result | Rows or groups | Met |", "| --- | --- | --- | --- | --- |"]
    for label, sense, target, value, n, met in _goal_rows(result):
        lines.append(f"| {label} | {sense} {target} | {value} | {n:,} | {_MET_MARKDOWN[met]} |")
    lines += ["", "| Held-out model | Rows | Fit/OOM | Memory | Tokens/s | Rank |", "| --- | --- | --- | --- | --- | --- |"]
    counts = Counter(r["model"] for r in rows)
    for model in sorted(counts):
        lines.append(f"| {model} | {counts[model]:,} | " + " | ".join(_model_cells(result, model)) + " |")
    lines += ["", "| Tokens/s, by framework | Rows | Median error | Over the goal | Predicted too fast | Predicted too slow |",
              "| --- | --- | --- | --- | --- | --- |"]
    for f in tokens_by_framework(rows):
        lines.append(f"| {f.framework} | {f.rows:,} | {f.median_error:.1%} | {f.over_goal:,} | {f.too_fast:,} | "
                     f"{f.too_slow:,} |")
    twins = zero_twins(rows)
    lines += ["", f"Layouts stated twice, at two ZeRO stages, that the model predicts within {TWIN_PREDICTED:.0%} of "
                  f"each other: {twins.pairs:,} pairs; their sources state them a median {twins.median_gap:.1%} apart, "
                  f"{twins.over_goal:,} of them further apart than the tokens/s goal."]
    return "\n".join(lines)
