"""Rules: what each status promises (reported, measured, verified)."""

from __future__ import annotations

from generator.check.context import RecipeContext
from generator.models import Outcome, OverallOutcome, Status

MEASURED_FIELDS = ("measured", "steps_per_run", "window", "window_tokens", "runs", "step_time_cv_percent")


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
            ctx.bad(f"a {r.status.value} recipe needs result.{name}", "result", name)
    if r.status is Status.measured and r.correctness is not None and r.correctness.result is OverallOutcome.passed:
        ctx.bad("the correctness evidence passes: the status should be verified", "status")


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


RULES = (reported, measured, verified)
