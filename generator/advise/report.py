"""The advisor's answers and validation as text and as JSON (the one place they are formatted)."""

from __future__ import annotations

from collections import Counter

from generator.advise.advisor import PREDICTED, Answer, Layout
from generator.advise.validate import GOALS, LOWER_IS_BETTER

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
    return "\n".join(lines)
