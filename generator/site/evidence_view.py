"""The runner's evidence sidecar (`<name>.evidence.json`, its format in generator/evidence.py) as a recipe page
shows it.

`python -m generator check` validates the file against the recipe; here it is only read, defensively: anything
that is not the expected shape is left out of the plots (and a malformed file is reported, not fatal), so a bad
file never breaks the site. Numbers only reach the page as JSON for the charts and as formatted text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from generator import evidence as sidecar
from generator.load import LoadedRecipe
from generator.site import formatting as fmt

SOURCE_LABEL = {"recipe": "the recipe before its first re-measurement", "evidence": "an earlier re-measurement",
                "launch": "run here by the runner", "from-log": "parsed from a log of a run made elsewhere"}


@dataclass(frozen=True)
class Evidence:
    text: str  # the file as committed, offered for download
    steps: list[dict[str, Any]]  # {"step", "time", "loss"} of the median run
    window: tuple[int, int] | None
    history: list[dict[str, str]]  # table rows, oldest first, the current result last
    history_points: list[dict[str, Any]]  # {"label", "y"} for the re-measurement chart
    runs: list[dict[str, str]]
    source: str
    problems: list[str] = field(default_factory=list)


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _window(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                           for v in value):
        return value[0], value[1]
    return None


def _history_row(entry: dict[str, Any], source: str) -> dict[str, str] | None:
    tps = _number(entry.get("tokens_per_s_per_gpu"))
    measured = entry.get("measured")
    if tps is None or not isinstance(measured, str) or not measured:
        return None  # a placeholder result (never measured) is not a measurement
    cv = _number(entry.get("step_time_cv_percent"))
    window = _window(entry.get("window"))
    return {"measured": measured, "tokens": fmt.tokens_per_s(tps), "tokens_value": str(tps),
            "cv": fmt.percent_value(cv), "window": f"{window[0]}{fmt.DASH}{window[1]}" if window else fmt.DASH,
            "source": SOURCE_LABEL.get(source, source)}


def read(loaded: LoadedRecipe) -> Evidence | None:
    """The recipe's evidence, or None when it has no evidence file."""
    try:
        found = sidecar.load(loaded.path)
    except sidecar.EvidenceError as exc:
        return Evidence("", [], None, [], [], [], "", [str(exc)])
    if found is None:
        return None
    text, data = found.text, found.data
    steps = []
    for s in data.get("steps") if isinstance(data.get("steps"), list) else []:
        if isinstance(s, dict) and isinstance(s.get("step"), int) and _number(s.get("time_s")) is not None:
            steps.append({"step": s["step"], "time": _number(s["time_s"]), "loss": _number(s.get("loss"))})
    steps.sort(key=lambda s: s["step"])
    history: list[dict[str, str]] = []
    for entry in data.get("history") if isinstance(data.get("history"), list) else []:
        if isinstance(entry, dict):
            row = _history_row(entry, str(entry.get("source", "")))
            if row is not None:
                history.append(row)
    source = str(data.get("source", ""))
    current = _history_row(data["result"], source) if isinstance(data.get("result"), dict) else None
    if current is not None:
        history.append({**current, "source": f"{current['source']} (this result)"})
    # "date" places each measurement on a time axis (site_src/assets/js); a row without a date stays on its label.
    points = [{"label": f"{i + 1}: {row['measured']}", "y": float(row["tokens_value"]),
               "date": row["measured"] if _ISO_DATE.match(str(row["measured"])) else None}
              for i, row in enumerate(history)]
    runs = []
    median = data.get("median_run")
    for i, run in enumerate(data.get("runs") if isinstance(data.get("runs"), list) else []):
        if not isinstance(run, dict):
            continue
        tps, cv, wall = (_number(run.get(k)) for k in ("tokens_per_s_per_gpu", "step_time_cv_percent", "wall_seconds"))
        runs.append({"run": str(i + 1) + (" (median)" if i == median else ""),
                     "tokens": fmt.tokens_per_s(tps) if tps is not None else fmt.DASH, "cv": fmt.percent_value(cv),
                     "steps": str(run.get("steps")) if isinstance(run.get("steps"), int) else fmt.DASH,
                     "wall": fmt.number(wall, 1) if wall is not None else fmt.DASH})
    return Evidence(text, steps, _window(data.get("window")), history, points, runs,
                    SOURCE_LABEL.get(source, source))


def steps_chart(ev: Evidence) -> list[dict[str, Any]]:
    """Per-step points for the chart: time in and out of the window, and the loss."""
    first, last = ev.window if ev.window else (0, -1)
    return [{"x": s["step"], "time": s["time"], "loss": s["loss"], "in": first <= s["step"] <= last} for s in ev.steps]
