"""The evidence sidecar ``<name>.evidence.json`` beside a recipe.

It holds what the result is computed from (per-step times and losses of the median run, the window and the
workload figures the formulas take), so ``generator.figures.tokens_per_s_per_gpu(steps.time_s, window,
global_batch, row_tokens, gpu_count)`` gives the recipe's tokens/s again; ``python -m generator check``
does that recomputation (and the CV, steps, runs, GPU-hours and date) for every recipe with a sidecar. It
also holds the captured environment; the command; the log's tail; and ``history``, every earlier result,
oldest first, for the site's plot of re-measurements. Raw logs stay out of git (``.openrecipes-runs/``);
only this summary is committed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from generator.check import EVIDENCE_SCHEMA as SCHEMA
from generator.check import evidence_path
from generator.models import Recipe

HISTORY_FIELDS = (
    "tokens_per_s_per_gpu", "usd_per_million_tokens", "step_time_cv_percent", "mfu", "measured", "steps_per_run",
    "window", "window_tokens", "runs", "gpu_hours",
)


def path_for(recipe_path: Path) -> Path:
    return evidence_path(recipe_path)  # one name, shared with generator check and the site


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def previous_result(recipe: Recipe) -> dict[str, Any]:
    data = recipe.result.model_dump(mode="json")
    return {k: data.get(k) for k in HISTORY_FIELDS}


def read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def build(
    recipe: Recipe,
    recipe_id: str,
    result: dict[str, Any],
    measurement: Any,
    source: str,
    command: str | None,
    environment: dict[str, Any],
    stack_differences: list[str],
    log_tail: list[str],
    existing: dict[str, Any] | None,
) -> dict[str, Any]:
    """The new evidence; the result it replaces goes to the end of history."""
    history = list(existing.get("history", [])) if existing else []
    before = dict(existing["result"]) if existing and isinstance(existing.get("result"), dict) else previous_result(recipe)
    before["source"] = "evidence" if existing else "recipe"
    history.append(before)
    median = measurement.median
    return _json_safe({
        "schema": SCHEMA,
        "recipe": recipe_id,
        "source": source,  # "launch" (run here) or "from-log" (a run made elsewhere)
        "format": median.log.format,
        "command": command,
        "inputs": {
            "global_batch": recipe.workload.global_batch,
            "row_tokens": recipe.workload.row_tokens,
            "gpu_count": recipe.gpu.count,
            "gpu_type": recipe.gpu.type,
            "instance": recipe.gpu.instance,
            "active_params": recipe.result.active_params.count,
        },
        "window": list(median.window),
        "steps": [
            {"step": s.step, "time_s": s.time_s, "loss": s.loss, "tokens": s.tokens} for s in median.log.steps
        ],
        "runs": [
            {
                "tokens_per_s_per_gpu": r.tokens_per_s_per_gpu,
                "step_time_cv_percent": r.step_time_cv_percent,
                "steps": r.steps,
                "wall_seconds": r.wall_seconds,
                "log": Path(r.log.source).name,
            }
            for r in measurement.runs
        ],
        "median_run": measurement.runs.index(median),
        "runs_cv_percent": measurement.runs_cv_percent,
        "result": {k: result.get(k) for k in HISTORY_FIELDS},
        "environment": environment,
        "stack_differences": stack_differences,
        "log_tail": log_tail,
        "history": history,
    })


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n"
