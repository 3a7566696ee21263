"""A parsed log and a recipe -> the recipe's figures, through generator.figures only; and the change gate."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from generator import figures
from generator.catalog import Catalog
from generator.models import Recipe
from runner.logs import LogError, ParsedLog, check_steps


@dataclass
class RunFigures:
    tokens_per_s_per_gpu: float
    step_time_cv_percent: float
    usd_per_million_tokens: float | None
    mfu: float | None
    window: tuple[int, int]
    window_tokens: int
    steps: int
    wall_seconds: float | None
    log: ParsedLog
    warnings: list[str] = field(default_factory=list)


def run_figures(recipe: Recipe, catalog: Catalog, log: ParsedLog, wall_seconds: float | None = None) -> RunFigures:
    """Figures of one run over the recipe's window; raises LogError when the log cannot give them."""
    if recipe.result.window is None:
        raise LogError("the recipe has no result.window: set the first and last step to measure over, e.g. [5, 19]")
    window = (recipe.result.window[0], recipe.result.window[1])
    check_steps(log, window)
    wl = recipe.workload
    warnings = []
    if log.global_batch is not None and log.global_batch != wl.global_batch:
        raise LogError(
            f"{log.source}: the log's global batch size is {log.global_batch} but the recipe's workload.global_batch is "
            f"{wl.global_batch}: this log is not a run of this recipe"
        )
    by_step = {s.step: s for s in log.steps}
    times = [by_step[i].time_s if i in by_step else 0.0 for i in range(window[1] + 1)]
    expected = figures.window_tokens((0, 0), wl.global_batch, wl.row_tokens)  # one step's tokens
    odd = [i for i in range(window[0], window[1] + 1) if by_step[i].tokens not in (None, expected)]
    if odd:
        s = by_step[odd[0]]
        off = figures.relative_difference(expected, s.tokens) if s.tokens is not None else 0.0
        if off > 0.01:
            warnings.append(
                f"step {s.step} trained on {s.tokens:,} tokens by the log, not global_batch x row_tokens = {expected:,}; "
                "the figures count the recipe's tokens"
            )
    tps = figures.tokens_per_s_per_gpu(times, window, wl.global_batch, wl.row_tokens, recipe.gpu.count)
    cv = figures.step_time_cv_percent(times, window)
    instance = catalog.instances.get(recipe.gpu.instance) if recipe.gpu.instance else None
    usd = figures.usd_per_million_tokens(instance.usd_per_hour, instance.gpu_count, tps) if instance else None
    if recipe.gpu.instance and instance is None:
        warnings.append(f"instance {recipe.gpu.instance!r} is not in catalog/instances.yaml: no $ per 1M tokens")
    peak, _ = figures.peak_for(recipe, catalog)
    mfu = figures.mfu(recipe.result.active_params.count, tps, peak) if peak else None
    return RunFigures(
        tokens_per_s_per_gpu=tps,
        step_time_cv_percent=cv,
        usd_per_million_tokens=usd,
        mfu=mfu,
        window=window,
        window_tokens=figures.window_tokens(window, wl.global_batch, wl.row_tokens),
        steps=max(by_step) + 1,
        wall_seconds=wall_seconds if wall_seconds is not None else log.wall_seconds,
        log=log,
        warnings=warnings,
    )


@dataclass
class Measurement:
    median: RunFigures
    runs: list[RunFigures]
    runs_cv_percent: float
    measured: dt.date
    gpu_hours: float | None

    def result_fields(self) -> dict[str, Any]:
        """The recipe's result fields this measurement sets (unrounded)."""
        m = self.median
        out: dict[str, Any] = {
            "tokens_per_s_per_gpu": m.tokens_per_s_per_gpu,
            "usd_per_million_tokens": m.usd_per_million_tokens,
            "step_time_cv_percent": m.step_time_cv_percent,
            "mfu": m.mfu,
            "measured": self.measured,
            "steps_per_run": m.steps,
            "window": list(m.window),
            "window_tokens": m.window_tokens,
            "runs": len(self.runs),
        }
        if self.gpu_hours is not None:
            out["gpu_hours"] = self.gpu_hours
        return out


def combine(recipe: Recipe, runs: list[RunFigures], measured: dt.date) -> Measurement:
    """The median run (MLPerf-style, lower median for an even count) and the CV across runs."""
    rates = [r.tokens_per_s_per_gpu for r in runs]
    median = runs[figures.median_index(rates)]
    hours = figures.gpu_hours(recipe.gpu.count, median.wall_seconds) if median.wall_seconds else None
    return Measurement(median, runs, figures.cv_percent(rates), measured, hours)


@dataclass
class Gate:
    recorded: float | None
    new: float
    tolerance_percent: float
    change_percent: float | None

    @property
    def outside(self) -> bool:
        return self.change_percent is not None and abs(self.change_percent) > self.tolerance_percent

    def describe(self) -> str:
        if self.recorded is None or self.change_percent is None:
            return f"new figure {self.new:.1f} tokens/s/GPU (nothing recorded before)"
        kind = "improvement" if self.change_percent > 0 else "regression"
        verdict = f"an {kind}" if kind == "improvement" else f"a {kind}"
        state = f"{verdict}, outside" if self.outside else "within"
        return (
            f"{self.new:.1f} tokens/s/GPU against the recorded {self.recorded:.1f} ({self.change_percent:+.2f}%): "
            f"{state} the tolerance of +/-{self.tolerance_percent:.2f}% (the larger of 5% and 3 x the recorded "
            "step-time CV)"
        )


def gate(recipe: Recipe, new_tps: float) -> Gate:
    # A recipe never measured (result.measured null) holds a placeholder figure: nothing to compare with.
    recorded = recipe.result.tokens_per_s_per_gpu if recipe.result.measured is not None else None
    cv = recipe.result.step_time_cv_percent or 0.0
    tolerance = max(5.0, 3.0 * cv)
    change = (new_tps / recorded - 1.0) * 100.0 if recorded else None
    return Gate(recorded, new_tps, tolerance, change)
