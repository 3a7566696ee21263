"""A parsed log and a recipe -> the recipe's figures, through generator.figures only (the change gate is
generator.figures.change_tolerance_percent, applied in runner/remeasure.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import figures
from generator.catalog import Catalog
from generator.evidence import EvidenceRecord, RunRecord, StepLine
from generator.models import Recipe
from runner.logs import LogError, ParsedLog, check_steps, cv_basis, plausible_date
from runner.logs.base import MAX_RESTARTS_NAMED

RATE_AGREEMENT = 0.02  # the log's own tokens/s per GPU against the recipe's workload: beyond 2% the two disagree


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
    interval: int = 1  # steps one log line stands for within the window (Megatron's --log-interval, torchtitan's log_freq)
    partial: str | None = None  # why the run is incomplete, when accepted with allow_partial=True
    drift_percent: float = 0.0  # last third of the window's step times against the first third

    @property
    def cv_basis(self) -> str:
        """For the evidence: "per-step", or "interval-average (k=10)" when the CV is over interval averages."""
        return cv_basis(self.interval)


def incomplete(recipe: Recipe, log: ParsedLog, exit_code: int | None = None) -> str | None:
    """Why this log is not a complete run of the recipe, as far as the log shows it (a failure line, a non-zero
    exit, a log that does not show the run from step 0 or to the end its lines state, fewer steps than
    steps_per_run), or None. Never more than the log shows: a log that just ends is not called a run that stopped."""
    if log.failure is not None:  # the log's name, not its folder: the reason is committed with the recipe
        return f"the run failed: {log.name}:{log.failure_line}: {log.failure.split(': ', 1)[1]}"
    if exit_code not in (None, 0):
        return f"the run exited with status {exit_code}"
    shown = log.shown
    if shown is None:
        return None
    if shown[0] > 0:
        return excerpt(log)
    wanted, stated, count = recipe.result.steps_per_run, log.total_steps, shown[1] + 1
    if wanted is not None and count < wanted:
        if stated == count:
            return (f"too few steps: {log.name} shows {log.shown_text()}, the whole run its lines state ({stated:,} "
                    f"steps), but the recipe's steps_per_run is {wanted:,}")
        states = f" (its lines state a run of {stated:,})" if stated is not None else ""
        return (f"too few steps: {log.name} shows {log.shown_text()} but the recipe's steps_per_run is {wanted:,}"
                f"{states}; the log ends there, with no failure line{_cut(log)}")
    return excerpt(log)


def _cut(log: ParsedLog) -> str:
    """What a partial reason adds for a log whose last line was cut short and left out."""
    return f"; its last line, {log.cut}, was cut short and left out" if log.cut is not None else ""


def one_run(log: ParsedLog) -> None:
    """One log, one run: a log holding a restart or a second run is refused, naming the lines."""
    if not log.restarts:
        return
    named = "; ".join(f"{Path(log.source).name} {r}" for r in log.restarts[:MAX_RESTARTS_NAMED])
    more = f" (and {len(log.restarts) - MAX_RESTARTS_NAMED} more)" if len(log.restarts) > MAX_RESTARTS_NAMED else ""
    raise LogError(
        f"{log.source}: one log, one run: this log holds more than one run: {named}{more}. Pass --log-run N to "
        "measure its Nth run alone (the log split where it starts again), or split the file yourself"
    )


def stated_workload(recipe: Recipe, catalog: Catalog, log: ParsedLog) -> None:
    """A log that states another global batch, sequence length, GPU count or model than the recipe's is a run of
    another recipe: refused naming both values (there is no flag to accept it: such a run is a new recipe)."""
    wl = recipe.workload
    another = "this log is not a run of this recipe (a run of another workload is another recipe: python -m generator new)"
    for attribute, what, field_, wanted in (("global_batch", "global batch size", "workload.global_batch", wl.global_batch),
                                            ("seq_length", "sequence length", "workload.row_tokens", wl.row_tokens),
                                            ("world_size", "GPU count (world size)", "gpu.count", recipe.gpu.count)):
        stated = getattr(log, attribute)
        if stated is not None and stated != wanted:
            raise LogError(f"{log.source}:{log.stated_at.get(attribute, 0)}: the log's {what} is {stated} but the "
                           f"recipe's {field_} is {wanted}: {another}")
    card = catalog.models.get(recipe.model)
    if log.model_params is not None and card is not None and not figures.stated_params_agree(log.model_params, card):
        total = card.total_params or card.active_params.count
        raise LogError(f"{log.source}:{log.stated_at['model_params']}: the log's model has {log.model_params:,} "
                       f"parameters but the recipe's model {recipe.model} has {total:,} (beyond "
                       f"{figures.STATED_PARAMS_TOLERANCE:.0%}, an untied output layer allowed for): {another}")


def excerpt(log: ParsedLog) -> str | None:
    """Why the log is an excerpt, or None: it does not show the run from step 0, or it ends, with no failure line,
    before the steps its lines state ("iteration 200/40000"). Its first-to-last timestamp is not the run's wall time."""
    shown = log.shown
    if shown is None:
        return None
    stated = f"; its lines state a run of {log.total_steps:,} steps" if log.total_steps is not None else ""
    if shown[0] > 0:
        return (f"an excerpt: {log.name} shows {log.shown_text()}, not the run from step 0 (its start, its wall time "
                f"and its steps before are not in the log{stated})")
    if log.failure is None and log.total_steps is not None and log.total_steps > shown[1] + 1:
        return (f"an excerpt: {log.name} shows {log.shown_text()} of a run of {log.total_steps:,} steps (as its lines "
                f"state), not the run to its end (its end and its wall time are not in the log){_cut(log)}")
    return None


def _rate_check(log: ParsedLog, window: tuple[int, int], tps: float) -> list[str]:
    """The log's own tokens/s per GPU (NeMo, torchtitan) against the figure from the recipe's workload."""
    rates = [s.rate for s in log.steps if window[0] <= s.step <= window[1] and s.rate is not None]
    if not rates:
        return []
    logged = sum(rates) / len(rates)
    if abs(tps / logged - 1.0) <= RATE_AGREEMENT:
        return []
    return [
        f"{log.name}: the log's own tokens/s per GPU averages {logged:,.0f} over the window, the recipe's workload "
        f"(global_batch x row_tokens / gpu.count) gives {tps:,.0f}: is this log a run of this recipe?"
    ]


def run_figures(
    recipe: Recipe,
    catalog: Catalog,
    log: ParsedLog,
    wall_seconds: float | None = None,
    *,
    allow_partial: bool = False,
    exit_code: int | None = None,
) -> RunFigures:
    """Figures of one run over the recipe's window; raises LogError when the log cannot give them. A crashed or
    short run (see :func:`incomplete`) is refused unless allow_partial, which records the reason in `partial`."""
    if recipe.result.window is None:
        raise LogError("the recipe has no result.window: set the first and last step to measure over, e.g. [5, 19]")
    window = (recipe.result.window[0], recipe.result.window[1])
    one_run(log)
    stated_workload(recipe, catalog, log)
    partial = incomplete(recipe, log, exit_code)
    if partial is not None and not allow_partial:
        raise LogError(f"{partial}; nothing written (a run accepted as partial needs --accept-partial)")
    check_steps(log, window)
    wl = recipe.workload
    warnings = list(log.warnings)
    by_step = {s.step: s for s in log.steps}
    if all(by_step[i].loss is None for i in range(window[0], window[1] + 1)):
        warnings.append(f"{log.name}: no line of the window [{window[0]}, {window[1]}] prints a loss: nothing in the "
                        "log shows the run trained (every iteration skipped, or a pipeline stage that computes none)")
    times = [by_step[i].time_s if i in by_step else 0.0 for i in range(window[1] + 1)]
    expected = figures.step_tokens(wl.global_batch, wl.row_tokens)
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
    drift = figures.step_time_drift_percent(times[window[0] : window[1] + 1])
    if abs(drift) > figures.STEP_TIME_DRIFT_PERCENT:
        warnings.append(f"{Path(log.source).name}: the step times drift {drift:+.1f}% over the window (its last third "
                        f"against its first; beyond {figures.STEP_TIME_DRIFT_PERCENT:g}%): the figure depends on "
                        "where the window lies")
    warnings.extend(_rate_check(log, window, tps))
    spans = [by_step[i].span for i in range(window[0], window[1] + 1)]
    interval = max(b - a + 1 for a, b in spans)
    instance = catalog.instances.get(recipe.gpu.instance) if recipe.gpu.instance else None
    # $ per 1M and MFU from tokens/s as the recipe will state it: check recomputes them from the written figure, and
    # one from the unrounded rate can round the other way (0.43745053 -> 0.4375 where the stated 22,443.8 gives 0.4374)
    stated_tps = figures.stated("tokens_per_s_per_gpu", tps)
    usd = figures.usd_per_million_tokens(instance.usd_per_hour, instance.gpu_count, stated_tps) if instance else None
    if recipe.gpu.instance and instance is None:
        warnings.append(f"instance {recipe.gpu.instance!r} is not in catalog/instances.yaml: no $ per 1M tokens")
    peak, _ = figures.peak_for(recipe, catalog)
    mfu = figures.mfu(recipe.result.active_params.count, stated_tps, peak, figures.frozen_base(recipe)) if peak else None
    if mfu is not None and mfu > figures.MFU_BOUND:
        raise LogError(
            f"{log.source}: an MFU of {mfu:.4f} ({tps:,.1f} tokens/s/GPU, N = {recipe.result.active_params.count:,}) is "
            f"above {figures.MFU_BOUND:g} of the GPU's dense peak, more than a training step reaches: the recipe's "
            "workload (global_batch, row_tokens), gpu.count or active_params does not describe this log's run"
        )
    return RunFigures(
        tokens_per_s_per_gpu=tps,
        step_time_cv_percent=cv,
        usd_per_million_tokens=usd,
        mfu=mfu,
        window=window,
        window_tokens=figures.window_tokens(window, wl.global_batch, wl.row_tokens),
        steps=max(by_step) + 1,
        # an excerpt's first-to-last timestamp is not the run's wall time: no GPU-hours from it
        wall_seconds=wall_seconds if wall_seconds is not None else (None if excerpt(log) else log.wall_seconds),
        log=log,
        warnings=warnings,
        interval=interval,
        partial=partial,
        drift_percent=drift,
    )


def undated(logs: list[ParsedLog]) -> str:
    """Why a measurement from these logs has no date."""
    names = ", ".join(log.name for log in logs)
    return f"{names}: the log prints no date; pass --measured YYYY-MM-DD (the day the run was made)"


def measured_date(
    logs: list[ParsedLog], launched: dt.date | None = None, given: dt.date | None = None, today: dt.date | None = None,
    required: bool = True,
) -> dt.date | None:
    """The date a measurement is recorded under: the logs' own (their last timestamp), else the launch date of a
    run the runner launched, else the date given with --measured; LogError when the date is not plausible (before
    2019 or after today), or when none is known and it is required (else None: the figures can still be shown)."""
    stated = max((log.measured for log in logs if log.measured is not None), default=None)
    if stated is not None and given is not None and given != stated:
        raise LogError(f"--measured {given.isoformat()} but the log is dated {stated.isoformat()}")
    chosen = stated or launched or given
    if chosen is None:
        if not required:
            return None
        raise LogError(undated(logs))
    return plausible_date(chosen, today, logs[0].source if stated and logs else "the measurement")


@dataclass
class Measurement:
    median: RunFigures
    runs: list[RunFigures]
    runs_cv_percent: float
    measured: dt.date | None  # None: no date known (the figures are shown, nothing is written)
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
            "steps_per_run": m.steps if m.partial is None else None,
            "window": list(m.window),
            "window_tokens": m.window_tokens,
            "runs": len(self.runs),
        }
        if len(self.runs) > 1:  # one run has no spread to state
            out["runs_cv_percent"] = self.runs_cv_percent
        if self.gpu_hours is not None:
            out["gpu_hours"] = self.gpu_hours
        peak = self.peak_memory()
        if peak is not None:
            out["peak_memory"] = peak
        if out["steps_per_run"] is None:  # a partial run keeps the recipe's steps_per_run: it did not run them all
            del out["steps_per_run"]
        if out["measured"] is None:  # no date known: never written (runner/remeasure.py refuses the write)
            del out["measured"]
        return out

    def peak_memory(self) -> dict[str, float] | None:
        """The largest peak memory per GPU any run's summary line states (allocated and reserved, GiB), or None."""
        stated = [r.log.stated_peak_memory for r in self.runs if r.log.stated_peak_memory]
        if not stated:
            return None
        return {key: round(max(p[key] for p in stated if key in p), 2)
                for key in ("allocated_gib", "reserved_gib") if any(key in p for p in stated)}

    def evidence_fields(self) -> dict[str, Any]:
        """What the evidence sidecar records about how the figures were made (cv_basis, partial)."""
        out: dict[str, Any] = {"cv_basis": self.median.cv_basis}
        reasons = [r.partial for r in self.runs if r.partial]
        if reasons:
            out["partial"] = "; ".join(reasons)
        return out


SAME_RUN_MIN_LINES = 2  # shared step lines that must all agree before two logs are called one run


def same_run(a: ParsedLog, b: ParsedLog) -> int:
    """How many step lines two logs share with the same step time to the digit, when all they share agree (and they
    share at least SAME_RUN_MIN_LINES): one run given twice, however its timestamps were shifted or a loss edited.
    0 when they are two runs."""
    mine = {s.span: s.time_s for s in a.steps}
    theirs = {s.span: s.time_s for s in b.steps}
    shared = mine.keys() & theirs.keys()
    same = len(shared) >= SAME_RUN_MIN_LINES and all(mine[k] == theirs[k] for k in shared)
    return len(shared) if same else 0


def distinct_runs(runs: list[RunFigures]) -> None:
    """Runs counted as several must be several: LogError for two whose step times are one run's, or for runs whose
    tokens/s agree to the last digit (a CV of exactly 0 across them)."""
    for i, later in enumerate(runs):
        for earlier in runs[:i]:
            lines = same_run(earlier.log, later.log)
            if lines:
                raise LogError(f"{later.log.source}: the {lines} step lines it shares with {earlier.log.name} print the "
                               "same step times to the digit: one run given twice (its timestamps shifted or a figure "
                               "edited), not two runs; nothing written")
    rates = [r.tokens_per_s_per_gpu for r in runs]
    if len(runs) > 1 and figures.cv_percent(rates) == 0.0:
        raise LogError(f"{', '.join(r.log.name for r in runs)}: the {len(runs)} runs give the same tokens/s per GPU "
                       f"({rates[0]:,.4f}) to the last digit, a CV of exactly 0 across runs: copies of one run, not "
                       f"{len(runs)} runs; nothing written")


def combine(recipe: Recipe, runs: list[RunFigures], measured: dt.date | None) -> Measurement:
    """The median run (MLPerf-style, lower median for an even count) and the CV across runs; runs that are one run
    are refused (distinct_runs)."""
    distinct_runs(runs)
    rates = [r.tokens_per_s_per_gpu for r in runs]
    median = runs[figures.median_index(rates)]
    hours = figures.gpu_hours(recipe.gpu.count, median.wall_seconds) if median.wall_seconds else None
    return Measurement(median, runs, figures.cv_percent(rates), measured, hours)



# --- the evidence record: the measurement in the evidence format's terms (generator/evidence.py) -------------


def step_lines(log: ParsedLog) -> tuple[StepLine, ...]:
    """The log's step lines as the evidence records them, from its per-step records (an interval line's steps each
    carry its average and its span): one entry per line, the interval's last step as `step`."""
    by_step = {s.step: s for s in log.steps}
    out: list[StepLine] = []
    done: set[tuple[int, int]] = set()
    for s in log.steps:
        first, last = s.span
        if (first, last) in done:
            continue
        done.add((first, last))
        end = by_step.get(last, s)
        out.append(StepLine(last, end.time_s, end.loss, end.tokens, end.line, first if first != last else None))
    return tuple(out)


def run_record(run: RunFigures) -> RunRecord:
    return RunRecord(Path(run.log.source).name, run.tokens_per_s_per_gpu, run.step_time_cv_percent, run.steps,
                     run.log.shown or None, run.wall_seconds, run.partial, run.drift_percent)


@dataclass(frozen=True)
class RunContext:
    """What the evidence records besides the runs: where they came from and what the runner saw around them."""

    recipe_id: str
    source: str  # "launch" (run here) or "from-log" (a run made elsewhere)
    command: str | None
    result: dict[str, Any]  # the result fields as written (rounded), `measured` a date
    environment: dict[str, Any]
    stack_differences: list[str]
    log_tail: list[str]
    extra: dict[str, Any]


def evidence_record(m: Measurement, context: RunContext) -> EvidenceRecord:
    """The measurement as the evidence format takes it: the median run's log lines and every run's figures."""
    median = m.median
    return EvidenceRecord(
        recipe_id=context.recipe_id, source=context.source, command=context.command, format=median.log.format,
        window=median.window, shown=median.log.shown or None, interval=median.interval,
        steps=step_lines(median.log), runs=tuple(run_record(r) for r in m.runs), median_run=m.runs.index(median),
        runs_cv_percent=m.runs_cv_percent, result=context.result, environment=context.environment,
        stack_differences=tuple(context.stack_differences), log_tail=tuple(context.log_tail), extra=context.extra,
    )
