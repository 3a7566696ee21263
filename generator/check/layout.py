"""Rules: the parallel layout fits the GPUs, the batch and the model's layers."""

from __future__ import annotations

from generator.check.context import RecipeContext


def gpu_grid(ctx: RecipeContext) -> None:
    r, lay = ctx.recipe, ctx.recipe.layout
    if r.gpu.count % r.gpu.per_node:
        ctx.bad(f"per_node {r.gpu.per_node} does not divide count {r.gpu.count}", "gpu", "per_node")
    product = lay.tp * lay.pp * lay.cp * lay.dp
    if product != r.gpu.count:
        ctx.bad(f"tp x pp x cp x dp = {lay.tp} x {lay.pp} x {lay.cp} x {lay.dp} = {product}, "
                f"but gpu.count is {r.gpu.count}", "layout", "dp")


def expert_grid(ctx: RecipeContext) -> None:
    # Experts reuse the dense ranks (Megatron's MoE rule): EP x ETP must divide TP x CP x DP.
    lay = ctx.recipe.layout
    if (lay.tp * lay.cp * lay.dp) % (lay.ep * lay.etp):
        ctx.bad(f"ep x etp = {lay.ep * lay.etp} must divide tp x cp x dp = {lay.tp * lay.cp * lay.dp}", "layout", "ep")


def sequence_parallel(ctx: RecipeContext) -> None:
    lay = ctx.recipe.layout
    if lay.sequence_parallel and lay.tp == 1:
        ctx.bad("sequence parallel needs tp > 1", "layout", "sequence_parallel")


def global_batch(ctx: RecipeContext) -> None:
    r, lay = ctx.recipe, ctx.recipe.layout
    if r.workload.global_batch % (lay.rows_per_microbatch * lay.dp):
        ctx.bad(f"global batch {r.workload.global_batch} is not a multiple of micro-batch x dp = "
                f"{lay.rows_per_microbatch * lay.dp}", "workload", "global_batch")


def pipeline_stages(ctx: RecipeContext) -> None:
    lay, arch = ctx.recipe.layout, ctx.arch
    if lay.layer_split is not None:
        if lay.pp < 2:
            ctx.bad("a layer split needs pp >= 2", "layout", "layer_split")
        elif arch is not None:
            rest = arch.layers - lay.layer_split.first - lay.layer_split.last
            middle = lay.pp - 2
            if rest < 0 or (middle == 0 and rest != 0) or (middle > 0 and (rest % middle or rest // middle == 0)):
                ctx.bad(f"split {lay.layer_split.first}/.../{lay.layer_split.last} over {lay.pp} stages does not "
                        f"sum to {arch.layers} layers with an even, non-empty middle", "layout", "layer_split")
    elif arch is not None and lay.pipeline_layout is None and arch.layers % (lay.pp * lay.vpp):
        ctx.bad(f"{arch.layers} layers do not divide evenly over pp x vpp = {lay.pp * lay.vpp}", "layout", "pp")


RULES = (gpu_grid, expert_grid, sequence_parallel, global_batch, pipeline_stages)
