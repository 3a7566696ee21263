"""Rules: what each status promises (reported, measured, verified)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator import figures
from generator.check.context import RecipeContext
from generator.models import Outcome, OverallOutcome, Recipe, Status

MEASURED_FIELDS = ("measured", "steps_per_run", "window", "window_tokens", "runs", "step_time_cv_percent")
# Text left to fill in (`python -m generator new` writes TODO wherever only the author knows the value).
PLACEHOLDER = re.compile(r"\b(TODO|FIXME|TBD)\b")


def _strings(value: Any, where: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string value of the document with its field path (mapping keys are names, not text)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*where, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*where, i))


def _may_hold_placeholder(text: str) -> bool:
    # substring tests first: the regex costs ~0.1-0.25 ms a recipe (a fifth of the rules' time in a cProfile), these ~0.02
    return ("TODO" in text or "FIXME" in text or "TBD" in text) and PLACEHOLDER.search(text) is not None


def placeholders(ctx: RecipeContext) -> None:
    """TODO, FIXME or TBD anywhere in a recipe's text: not publishable until filled in, whatever its status."""
    loaded = ctx.loaded
    if not loaded.double_quoted and not _may_hold_placeholder(loaded.text):
        return  # every value is spelled as written, so one scan of the file answers for all of them
    for where, value in _strings(loaded.data):
        found = PLACEHOLDER.search(value)
        if found:
            ctx.bad_in_text(PLACEHOLDER, f"placeholder {found.group(1)} left in the text: replace it with the recipe's "
                            "own value", *where)


def reported(ctx: RecipeContext) -> None:
    r = ctx.recipe
    if r.status is not Status.reported:
        return
    if r.publication is None:
        ctx.bad("a reported recipe needs `publication` (where its figures come from)", "status")
    if r.correctness is not None and r.correctness.result is OverallOutcome.passed:
        ctx.bad("a reported recipe carries no passing evidence of ours; use status verified", "status")


def measured(ctx: RecipeContext) -> None:
    r = ctx.recipe
    if r.status is Status.reported:
        return
    if r.publication is not None:
        ctx.bad(f"a {r.status.value} recipe was measured, not published: remove `publication` or use reported",
                "publication")
    for name in MEASURED_FIELDS:
        if getattr(r.result, name) is None:
            # measured: null is also how a scaffold (and the runner) marks tokens/s as a placeholder, not a figure.
            why = " (null: its figures are placeholders until measured, e.g. by python -m runner remeasure)" \
                if name == "measured" else ""
            ctx.bad(f"a {r.status.value} recipe needs result.{name}{why}", "result", name)
    if r.status is Status.measured and r.correctness is not None and r.correctness.result is OverallOutcome.passed \
            and not verified_blockers(r):
        ctx.bad("the correctness evidence passes and the figure is the median of enough quiet, complete runs: the "
                "status should be verified", "status")


def verified_blockers(r: Recipe) -> list[str]:
    """Why a recipe whose correctness passes may stay `measured`: its figure is one a verified recipe may not rest on
    without more (fewer runs than the rule asks, a partial run, step times noisier than NOISY_STEP_TIME_CV_PERCENT:
    a verified recipe must state that noise's cause, a measured one need not claim to know it)."""
    res = r.result
    out = []
    if res.measured is not None and res.measured >= figures.VERIFIED_MIN_RUNS_FROM \
            and (res.runs is None or res.runs < figures.VERIFIED_MIN_RUNS):
        out.append(f"{res.runs} run(s), fewer than {figures.VERIFIED_MIN_RUNS}")
    if getattr(res, "partial", None):
        out.append("a partial run")
    if res.step_time_cv_percent is not None and res.step_time_cv_percent > figures.NOISY_STEP_TIME_CV_PERCENT:
        out.append(f"a step-time CV above {figures.NOISY_STEP_TIME_CV_PERCENT:g}%")
    return out


def verified(ctx: RecipeContext) -> None:
    r, corr = ctx.recipe, ctx.recipe.correctness
    if r.status is not Status.verified:
        return
    if corr is None or corr.result is not OverallOutcome.passed:
        ctx.bad("a verified recipe needs correctness.result: pass", *(("correctness", "result") if corr else ("status",)))
        return
    if not corr.component_tests and corr.convergence is None:
        ctx.bad("a verified recipe needs component tests or a convergence check", "correctness")
        return
    for i, test in enumerate(corr.component_tests):
        if test.result is not Outcome.passed:
            ctx.bad("a verified recipe cannot have a failing component test", "correctness", "component_tests", i,
                    "result")
    if corr.convergence is not None and corr.convergence.result is not Outcome.passed:
        ctx.bad("a verified recipe cannot have a failing convergence check", "correctness", "convergence", "result")
    if corr.configuration is Outcome.failed:
        ctx.bad("a verified recipe cannot have a failing configuration review", "correctness", "configuration")


def component_test_gpus(ctx: RecipeContext) -> None:
    """A component test is evidence for this recipe only on its GPU type."""
    r = ctx.recipe
    for i, test in enumerate(r.correctness.component_tests if r.correctness else []):
        if test.gpu.strip().lower() != r.gpu.type.lower():
            ctx.bad(f"the test ran on {test.gpu!r}, the recipe runs on {r.gpu.type}: it is not evidence for this "
                    "recipe (run it on its GPU type)", "correctness", "component_tests", i, "gpu")


# A note that says the convergence check's candidate arm is the measured run itself ("candidate arm: the measured
# run", "the same run is the candidate arm of the convergence check").
_ARM_IS_THE_RUN = re.compile(r"candidate arm:?\s+(?:is\s+)?the (?:measured|same) run\b"
                             r"|\bthe (?:measured|same) run is the candidate arm\b", re.I)
# A step count a note gives for the run it compared: "--steps 100", "--train-iters 500", "100 steps", "all 99 steps".
_STEP_COUNT = re.compile(r"--[a-z_-]*(?:steps|iters|iterations)[ =](\d[\d,]*)|\b(\d[\d,]*) (?:steps|iterations)\b",
                         re.I)


def convergence_within_run(ctx: RecipeContext) -> None:
    """A convergence check compares at most the steps of the run it compared: more steps than the measured run has
    (result.steps_per_run) come from another, longer run, which its note names with its step count; a note that
    says the candidate arm is the measured run itself contradicts them."""
    r = ctx.recipe
    conv = r.correctness.convergence if r.correctness else None
    steps = r.result.steps_per_run
    if conv is None or steps is None or conv.steps <= steps:
        return
    where = ("correctness", "convergence", "steps")
    if any(_ARM_IS_THE_RUN.search(note or "") for note in (conv.note, r.result.gpu_hours_note)):
        ctx.bad(f"{conv.steps} steps compared, but the candidate arm is the measured run (so its notes say), which "
                f"has {steps} steps (result.steps_per_run)", *where)
        return
    counts = [int((a or b).replace(",", "")) for a, b in _STEP_COUNT.findall(conv.note or "")]
    if not any(count >= conv.steps for count in counts):
        ctx.bad(f"{conv.steps} steps compared, more than the measured run's {steps} (result.steps_per_run): say in "
                f"convergence.note which run of at least {conv.steps} steps was compared (e.g. its --steps)", *where)


# A component test's text that says it uses the measured run ("scaled to the measured run's pre-clip norms").
_USES_THE_RUN = re.compile(r"\bthe measured run\b", re.I)


def component_test_after_its_run(ctx: RecipeContext) -> None:
    """A component test that uses the measured run (its text says so) is dated on or after the measurement. (A test
    dated before or after a measurement it does not use is both usual: the reference recipe's tests came a day after
    its run, the engine's a day before.)"""
    r = ctx.recipe
    measured = r.result.measured
    if measured is None or r.correctness is None:
        return
    for i, test in enumerate(r.correctness.component_tests):
        text = " ".join(t for t in (test.test, test.shape, test.detail, test.note) if t)
        if test.date < measured and _USES_THE_RUN.search(text):
            ctx.bad(f"dated {test.date}, before the measurement it uses ({measured}, result.measured): its text says "
                    "it uses the measured run", "correctness", "component_tests", i, "date")


def convergence_statistics(ctx: RecipeContext) -> None:
    """A convergence check marked pass whose own record fails what pass means (runner/convergence.py): its statistics,
    or a reason for failing it states (convergence_also's checks too)."""
    corr = ctx.recipe.correctness
    conv = corr.convergence if corr else None
    checks = ([(("correctness", "convergence"), conv)] if conv is not None else []) + \
        [(("correctness", "convergence_also", i), c) for i, c in enumerate(corr.convergence_also if corr else [])]
    for at, check in checks:
        if check.result is Outcome.passed and check.failed_because is not None:
            ctx.bad("marked pass, but it states why it failed", *at, "failed_because")
    if conv is None or conv.result is not Outcome.passed:
        return
    where = ("correctness", "convergence")
    if conv.correlation < figures.CONVERGENCE_MIN_CORRELATION:
        ctx.bad(f"marked pass with a correlation of {conv.correlation}: a passing check needs at least "
                f"{figures.CONVERGENCE_MIN_CORRELATION}", *where, "correlation")
    if conv.pointwise_failures > conv.steps:
        ctx.bad(f"{conv.pointwise_failures} pointwise failures in {conv.steps} steps compared", *where,
                "pointwise_failures")
    elif conv.pointwise_failures > figures.CONVERGENCE_MAX_FAILING_FRACTION * conv.steps:
        ctx.bad(f"marked pass with {conv.pointwise_failures} of {conv.steps} points outside the pointwise tolerance: "
                f"a passing check allows at most {figures.CONVERGENCE_MAX_FAILING_FRACTION:.0%}", *where,
                "pointwise_failures")


def noisy_step_times(ctx: RecipeContext) -> None:
    """A verified recipe with a step-time CV above 5% says why (the figure is a median run's, but noisy)."""
    r, res = ctx.recipe, ctx.recipe.result
    cv = res.step_time_cv_percent
    if r.status is Status.verified and cv is not None and cv > figures.NOISY_STEP_TIME_CV_PERCENT \
            and res.step_time_cv_note is None:
        ctx.bad(f"a step-time CV of {cv}% (over {figures.NOISY_STEP_TIME_CV_PERCENT:g}%) on a verified recipe needs "
                "its reason in result.step_time_cv_note", "result", "step_time_cv_percent")


def partial_run(ctx: RecipeContext) -> None:
    """A partial run (crashed, interrupted or an excerpt) gives figures for its window, never a verified recipe."""
    r = ctx.recipe
    if r.result.partial is None:
        return
    if r.status is Status.verified:
        ctx.bad("a verified recipe cannot rest on a partial run (result.partial): measure a complete run, or use "
                "status measured", "result", "partial")
    elif r.status is Status.reported:
        ctx.bad("result.partial describes a run measured here; a reported recipe's figures are a publication's",
                "result", "partial")


def verified_runs(ctx: RecipeContext) -> None:
    """A verified figure is the median of at least VERIFIED_MIN_RUNS runs (from the rule's date of effect on)."""
    r, res = ctx.recipe, ctx.recipe.result
    if r.status is not Status.verified or res.measured is None or res.measured < figures.VERIFIED_MIN_RUNS_FROM:
        return
    if res.runs is None or res.runs < figures.VERIFIED_MIN_RUNS:
        ctx.bad(f"a verified recipe measured since {figures.VERIFIED_MIN_RUNS_FROM.isoformat()} states the median of at "
                f"least {figures.VERIFIED_MIN_RUNS} runs (result.runs is {res.runs}): one run may be a best case; "
                f"measure again with --runs {figures.VERIFIED_MIN_RUNS}, or use status measured", "result", "runs")
    elif res.runs_cv_percent is None:
        ctx.bad(f"a verified recipe of {res.runs} runs states the CV of tokens/s across them (result.runs_cv_percent)",
                "result", "runs")


def convergence_against_another(ctx: RecipeContext) -> None:
    """A recipe of ours measured since LOSS_FALL_FROM whose convergence evidence passes holds a check against another
    implementation: a framework compared with itself may be a further line, never the only one (issue 38)."""
    r = ctx.recipe
    corr = r.correctness
    if (r.status.value == "reported" or r.result.measured is None or r.result.measured < figures.LOSS_FALL_FROM
            or corr is None or corr.convergence is None):
        return
    checks = [corr.convergence, *corr.convergence_also]
    if not any(c.implementation is not None and c.implementation.value == "other" for c in checks):
        ctx.bad("every convergence check compares the framework with itself (or does not say what it compared "
                "against): a run of ours is checked against another implementation (implementation: other), the "
                "check against itself a further line", "correctness", "convergence")


RULES = (placeholders, reported, measured, verified, partial_run, verified_runs, component_test_gpus,
         component_test_after_its_run, convergence_statistics, convergence_within_run, convergence_against_another,
         noisy_step_times)
