"""Rules: the result recomputed from its evidence sidecar (per-step times of the measured run), when it has one.

A recipe whose bytes are the text an interrupted write replaced is held to the sidecar that write replaced,
embedded in the new one (generator/evidence.py, `describing`), exactly as it was checked before the write."""

from __future__ import annotations

import math

from generator import evidence, figures
from generator.check.context import RecipeContext


def sidecar(ctx: RecipeContext) -> None:
    try:
        found = evidence.load(ctx.loaded.path)
    except evidence.EvidenceError as exc:
        ctx.bad(str(exc), "result")
        return
    if found is None:
        return
    try:  # a write interrupted between its two renames: the recipe is still the one the old evidence describes
        which = evidence.describing(found.data, _recipe_bytes(ctx))
    except evidence.EvidenceError as exc:
        ctx.bad(f"{found.path.name}: {exc}", "result")
        return
    if which.data is not None:
        name = f"{found.path.name} (its previous evidence)" if which.interrupted else found.path.name
        _check_against(ctx, name, which.data)


def _recipe_bytes(ctx: RecipeContext) -> bytes | None:
    try:
        return ctx.loaded.path.read_bytes()
    except OSError:
        return None


def _check_against(ctx: RecipeContext, name: str, data: dict) -> None:
    r, res = ctx.recipe, ctx.recipe.result
    if data.get("recipe") != ctx.loaded.id:
        ctx.bad(f"{name} is the evidence of {data.get('recipe')!r}, not of {ctx.loaded.id!r}", "result")
    inputs = data.get("inputs") if isinstance(data.get("inputs"), dict) else {}
    stated = {"global_batch": (r.workload.global_batch, ("workload", "global_batch")),
              "row_tokens": (r.workload.row_tokens, ("workload", "row_tokens")),
              "gpu_count": (r.gpu.count, ("gpu", "count"))}
    for key, (value, where) in stated.items():
        if inputs.get(key) != value:
            ctx.bad(f"{name} was measured with {key} {inputs.get(key)}, the recipe states {value}", *where)
    window = data.get("window")
    if res.window is None or window != list(res.window):
        ctx.bad(f"{name} was measured over the window {window}, the recipe states {res.window}", "result", "window")
        return
    try:
        times = evidence.window_times(data, window)
        tps = figures.tokens_per_s_per_gpu(times, (0, len(times) - 1), r.workload.global_batch,
                                           r.workload.row_tokens, r.gpu.count)
    except ValueError as exc:
        ctx.bad(f"{name}: the result cannot be recomputed: {exc}", "result", "tokens_per_s_per_gpu")
        return
    if not figures.agrees(res.tokens_per_s_per_gpu, tps, "tokens_per_s_per_gpu"):
        tokens = figures.window_tokens(window, r.workload.global_batch, r.workload.row_tokens)
        ctx.bad(f"stated {res.tokens_per_s_per_gpu} but {name} gives {tokens:,} window tokens / "
                f"{math.fsum(times):.6g} s / {r.gpu.count} GPUs = {tps:.4f}",
                "result", "tokens_per_s_per_gpu")
    cv = figures.step_time_cv_percent(times)
    if res.step_time_cv_percent is not None and not figures.agrees(res.step_time_cv_percent, cv, "step_time_cv_percent"):
        ctx.bad(f"stated {res.step_time_cv_percent} but the step times in {name} give a CV of {cv:.4f}%",
                "result", "step_time_cv_percent")
    _partial_agrees(ctx, name, data)
    last = evidence.last_step(data)
    if res.steps_per_run is not None and last is not None:
        if res.partial is None and last + 1 != res.steps_per_run:
            ctx.bad(f"stated {res.steps_per_run} but {name} has steps up to {last}", "result", "steps_per_run")
        elif res.partial is not None and last + 1 > res.steps_per_run:
            ctx.bad(f"stated {res.steps_per_run} but the partial run in {name} shows step {last}", "result",
                    "steps_per_run")
    runs = data.get("runs") if isinstance(data.get("runs"), list) else []
    if res.runs is not None and len(runs) != res.runs:
        ctx.bad(f"stated {res.runs} but {name} records {len(runs)} run(s)", "result", "runs")
    _runs_agree(ctx, name, data, runs)
    median = data.get("median_run")
    wall = runs[median].get("wall_seconds") if isinstance(median, int) and 0 <= median < len(runs) else None
    if res.gpu_hours is not None and isinstance(wall, int | float) and wall > 0:
        hours = figures.gpu_hours(r.gpu.count, wall)
        if not figures.agrees(res.gpu_hours, hours, "gpu_hours"):
            ctx.bad(f"stated {res.gpu_hours} but {r.gpu.count} GPUs x {wall:.6g} s (the median run in {name}) = "
                    f"{hours:.6g} GPU-hours", "result", "gpu_hours")
    recorded = data.get("result") if isinstance(data.get("result"), dict) else {}
    if res.measured is not None and recorded.get("measured") != res.measured.isoformat():
        ctx.bad(f"stated {res.measured} but {name} was measured on {recorded.get('measured')}", "result", "measured")
    _loss_falls(ctx, name, data)


def _loss_falls(ctx: RecipeContext, name: str, data: dict) -> None:
    """A run of ours from initialisation (its evidence starts at step 0) trains at the schedule its recipe states:
    its last logged loss is at most figures.LOSS_FALL_RATIO of its step-0 loss. For runs measured from
    figures.LOSS_FALL_FROM on; earlier ones keep their notes saying under what schedule they ran."""
    measured = ctx.recipe.result.measured
    if measured is None or measured < figures.LOSS_FALL_FROM or data.get("source") != "launch":
        return
    steps = [s for s in data.get("steps", []) if isinstance(s, dict) and isinstance(s.get("loss"), int | float)]
    shown = data.get("shown")
    from_start = steps and steps[0].get("step") == 0 or isinstance(shown, list) and shown[:1] == [0]
    if len(steps) < 2 or not from_start:
        return
    # The first logged loss: step 0's, or the next where the log times step 0 with no line of its own (torchtitan)
    first, last = float(steps[0]["loss"]), float(steps[-1]["loss"])
    if not figures.loss_falls(first, last):
        ctx.bad(f"{name}: the run did not learn at its schedule: its last logged loss {last:.4f} (step "
                f"{steps[-1].get('step')}) is above {figures.LOSS_FALL_RATIO:g} x its first logged loss {first:.4f} "
                f"(step {steps[0].get('step')})", "workload", "schedule")


def _runs_agree(ctx: RecipeContext, name: str, data: dict, runs: list) -> None:
    """The median run is the median of the recorded runs, and the stated CV across runs is theirs."""
    rates = [r.get("tokens_per_s_per_gpu") for r in runs if isinstance(r, dict)]
    if len(rates) != len(runs) or not rates or not all(isinstance(v, int | float) and v > 0 for v in rates):
        return
    median = data.get("median_run")
    if isinstance(median, int) and 0 <= median < len(rates) and rates[median] != rates[figures.median_index(rates)]:
        ctx.bad(f"{name}: its median_run {median} ({rates[median]:.1f} tokens/s) is not the median of its runs "
                f"({rates[figures.median_index(rates)]:.1f})", "result", "tokens_per_s_per_gpu")
    stated = ctx.recipe.result.runs_cv_percent
    cv = figures.cv_percent(rates)
    if stated is not None and not figures.agrees(stated, cv, "runs_cv_percent"):
        ctx.bad(f"stated {stated} but the {len(rates)} runs in {name} give a CV of {cv:.4f}%", "result",
                "runs_cv_percent")


def _partial_agrees(ctx: RecipeContext, name: str, data: dict) -> None:
    """A run recorded as partial in the evidence is partial in the recipe, and the other way round."""
    recorded = data.get("partial")
    stated = ctx.recipe.result.partial
    if recorded and stated is None:
        ctx.bad(f"{name} records a partial run ({str(recorded)[:120]}): the recipe must say so in result.partial",
                "result")
    elif stated is not None and not recorded:
        ctx.bad(f"result.partial is stated but {name} records a complete run", "result", "partial")


RULES = (sidecar,)
