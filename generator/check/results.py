"""Rules: every stated figure of the result agrees with the figure recomputed from its inputs."""

from __future__ import annotations

from generator import figures
from generator.check.context import RecipeContext
from generator.models import Status


def usd_per_million_tokens(ctx: RecipeContext) -> None:
    r, res, derived = ctx.recipe, ctx.recipe.result, ctx.derived
    if res.usd_per_million_tokens is not None and derived.usd_per_million_tokens is not None:
        if not figures.agrees(res.usd_per_million_tokens, derived.usd_per_million_tokens):
            ctx.bad(f"stated {res.usd_per_million_tokens} but (${derived.instance_usd_per_hour}/h / "
                    f"{ctx.instance.gpu_count if ctx.instance else '?'}) / ({res.tokens_per_s_per_gpu} x 3600) x 1e6 = "
                    f"{derived.usd_per_million_tokens:.4f}", "result", "usd_per_million_tokens")
    elif res.usd_per_million_tokens is not None and r.gpu.instance is None:
        ctx.bad("a $/1M figure needs gpu.instance (its price)", "result", "usd_per_million_tokens")


def mfu(ctx: RecipeContext) -> None:
    res, derived = ctx.recipe.result, ctx.derived
    if res.mfu is not None and derived.mfu is not None and res.mfu_note is None:
        if not figures.agrees(res.mfu, derived.mfu):
            ctx.bad(f"stated {res.mfu} but 6 x {res.active_params.count:,} x {res.tokens_per_s_per_gpu} / "
                    f"{derived.peak_flops:.4g} = {derived.mfu:.5f}", "result", "mfu")


def published_model_tflops(ctx: RecipeContext) -> None:
    """Model TFLOP/s per GPU recomputed from the architecture (Megatron's convention); a difference over 0.5%
    needs its explanation on the recipe, not a looser bound."""
    r, res, arch, lay = ctx.recipe, ctx.recipe.result, ctx.arch, ctx.recipe.layout
    published = res.published_model_tflops_per_gpu
    if r.status is not Status.reported or published is None or arch is None:
        return
    tolerance = figures.PUBLISHED_TFLOPS_TOLERANCE
    ours = figures.model_tflops_per_gpu(arch, r.workload.row_tokens, res.tokens_per_s_per_gpu, mtp_layers=lay.mtp_layers)
    diff = figures.relative_difference(published, ours)
    if diff > tolerance and res.published_model_tflops_note is None:
        ctx.bad(f"published {published:g} TFLOP/s per GPU but model FLOPs per token "
                f"{figures.model_flops_per_token(arch, r.workload.row_tokens, lay.mtp_layers):.4g} x "
                f"{res.tokens_per_s_per_gpu:g} tokens/s = {ours:.1f} ({diff * 100:.2f}% apart, over "
                f"{tolerance * 100:g}%); explain it in result.published_model_tflops_note",
                "result", "published_model_tflops_per_gpu")
    convention = res.published_model_tflops_convention
    if convention is not None:
        # A stated convention is held to the same 0.5%: the explanation must reproduce the figure.
        theirs = figures.model_tflops_per_gpu(arch, r.workload.row_tokens, res.tokens_per_s_per_gpu,
                                              mtp_layers=lay.mtp_layers, sliding_windows=convention.sliding_windows,
                                              gated_experts=convention.gated_experts)
        off = figures.relative_difference(published, theirs)
        if off > tolerance:
            ctx.bad(f"under the stated convention (gated experts {convention.gated_experts}, sliding windows "
                    f"{convention.sliding_windows}) {res.tokens_per_s_per_gpu:g} tokens/s give {theirs:.1f} TFLOP/s, "
                    f"{off * 100:.2f}% from the published {published:g}", "result", "published_model_tflops_convention")


def window(ctx: RecipeContext) -> None:
    r, res = ctx.recipe, ctx.recipe.result
    if res.window is None:
        return
    first, last = res.window
    if last < first:
        ctx.bad(f"window [{first}, {last}] ends before it starts", "result", "window")
        return
    if res.steps_per_run is not None and last >= res.steps_per_run:
        ctx.bad(f"window ends at step {last}, beyond steps_per_run {res.steps_per_run} (steps 0-"
                f"{res.steps_per_run - 1})", "result", "window")
    if res.window_tokens is not None and ctx.derived.window_tokens != res.window_tokens:
        ctx.bad(f"stated {res.window_tokens:,} but {figures.window_steps(res.window)} steps x "
                f"{r.workload.global_batch} x {r.workload.row_tokens} = {ctx.derived.window_tokens:,}",
                "result", "window_tokens")


def dates(ctx: RecipeContext) -> None:
    r, res = ctx.recipe, ctx.recipe.result
    if res.measured is not None and res.measured > ctx.today:
        ctx.bad(f"measured date {res.measured} is in the future", "result", "measured")
    for i, test in enumerate(r.correctness.component_tests if r.correctness else []):
        if test.date > ctx.today:
            ctx.bad(f"test date {test.date} is in the future", "correctness", "component_tests", i, "date")


RULES = (usd_per_million_tokens, mfu, published_model_tflops, window, dates)
