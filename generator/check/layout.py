"""Rules: the parallel layout fits the GPUs, the batch, the rows and the model's layers and experts, and its label
names this layout. Each rule flags two statements of one recipe that cannot both be true."""

from __future__ import annotations

import re
from collections.abc import Iterator

from generator.check.context import RecipeContext
from generator.models import RecomputeGranularity


def gpu_grid(ctx: RecipeContext) -> None:
    r, lay = ctx.recipe, ctx.recipe.layout
    if r.gpu.count % r.gpu.per_node:
        ctx.bad(f"per_node {r.gpu.per_node} does not divide count {r.gpu.count}", "gpu", "per_node")
    product = lay.tp * lay.pp * lay.cp * lay.dp
    if product != r.gpu.count:
        ctx.bad(f"tp x pp x cp x dp = {lay.tp} x {lay.pp} x {lay.cp} x {lay.dp} = {product}, "
                f"but gpu.count is {r.gpu.count}", "layout", "dp")


def context_parallel_rows(ctx: RecipeContext) -> None:
    """Context parallelism splits every row into cp equal parts, one a rank."""
    lay, row = ctx.recipe.layout, ctx.recipe.workload.row_tokens
    if lay.cp > 1 and row % lay.cp:
        ctx.bad(f"cp {lay.cp} does not divide a row's {row} tokens: context parallelism splits each row into cp "
                "equal parts", "layout", "cp")


def token_cap_holds_a_row(ctx: RecipeContext) -> None:
    """A dynamic-batching cap of tokens per GPU holds at least one row's part on a GPU (row_tokens / cp): a smaller
    cap could place no row."""
    lay, row = ctx.recipe.layout, ctx.recipe.workload.row_tokens
    cap = lay.max_tokens_per_gpu
    if cap is None or cap * lay.cp >= row:
        return
    held = f"{cap} x cp {lay.cp} = {cap * lay.cp} tokens" if lay.cp > 1 else f"{cap} tokens"
    ctx.bad(f"max_tokens_per_gpu holds {held}, less than one row of {row}: dynamic batching could place no row",
            "layout", "max_tokens_per_gpu")


def expert_grid(ctx: RecipeContext) -> None:
    # Experts reuse the dense ranks (Megatron's MoE rule): EP x ETP must divide TP x CP x DP.
    lay = ctx.recipe.layout
    if (lay.tp * lay.cp * lay.dp) % (lay.ep * lay.etp):
        ctx.bad(f"ep x etp = {lay.ep * lay.etp} must divide tp x cp x dp = {lay.tp * lay.cp * lay.dp}", "layout", "ep")


def experts_on_dense_model(ctx: RecipeContext) -> None:
    """EP, expert TP and a token dispatcher only exist for routed experts; the catalog says the model has none."""
    r, lay, arch = ctx.recipe, ctx.recipe.layout, ctx.arch
    if arch is None or arch.moe is not None:
        return
    dense = f"{r.model} is a dense model (no moe in its catalog architecture)"
    if lay.ep > 1:
        ctx.bad(f"ep {lay.ep} but {dense}: expert parallelism needs experts", "layout", "ep")
    if lay.etp > 1:
        ctx.bad(f"etp {lay.etp} but {dense}: expert tensor parallelism needs experts", "layout", "etp")
    if lay.dispatcher is not None:
        ctx.bad(f"dispatcher {lay.dispatcher.value} but {dense}: a token dispatcher routes tokens to experts",
                "layout", "dispatcher")


def experts_per_rank(ctx: RecipeContext) -> None:
    # Each expert-parallel rank holds experts / EP whole experts (Megatron's MoE layer asserts the division).
    lay, arch = ctx.recipe.layout, ctx.arch
    if arch is not None and arch.moe is not None and arch.moe.experts % lay.ep:
        ctx.bad(f"ep {lay.ep} does not divide the model's {arch.moe.experts} routed experts", "layout", "ep")


def virtual_pipeline(ctx: RecipeContext) -> None:
    # Virtual stages interleave chunks of several pipeline stages: with one stage there is nothing to interleave.
    lay = ctx.recipe.layout
    if lay.vpp > 1 and lay.pp == 1:
        ctx.bad(f"vpp {lay.vpp} needs pp > 1 (virtual pipeline stages interleave pipeline stages; pp is 1)",
                "layout", "vpp")


def sequence_parallel(ctx: RecipeContext) -> None:
    lay = ctx.recipe.layout
    if lay.sequence_parallel and lay.tp == 1:
        ctx.bad("sequence parallel needs tp > 1", "layout", "sequence_parallel")


def recompute_settings(ctx: RecipeContext) -> None:
    """A full-recompute method or layer count under another granularity, or recomputed modules outside selective
    recompute, describe a recompute the granularity says is not done (Megatron refuses both combinations)."""
    rec = ctx.recipe.layout.recompute
    if rec is None:  # not stated: nothing to contradict
        return
    granularity = rec.granularity.value
    if rec.granularity is not RecomputeGranularity.full:
        if rec.method is not None:
            ctx.bad(f"method {rec.method.value} is a full-recompute method, but granularity is {granularity}",
                    "layout", "recompute", "method")
        if rec.num_layers is not None:
            ctx.bad(f"num_layers {rec.num_layers} counts fully recomputed layers, but granularity is {granularity}",
                    "layout", "recompute", "num_layers")
    if rec.modules is not None and rec.granularity is not RecomputeGranularity.selective:
        ctx.bad(f"modules are recomputed under selective recompute, but granularity is {granularity}",
                "layout", "recompute", "modules")


def _stated_by_publication(ctx: RecipeContext) -> int | None:
    pub = ctx.recipe.publication
    return pub.stated_gradient_accumulation if pub is not None else None


def global_batch(ctx: RecipeContext) -> None:
    """global batch = micro-batch x dp x gradient accumulation; without a stated accumulation, a whole number of
    micro-batches per replica. A publication's own contradiction passes only as its recorded statement."""
    r, lay = ctx.recipe, ctx.recipe.layout
    per_pass = lay.rows_per_microbatch * lay.dp
    gbs, ga = r.workload.global_batch, lay.gradient_accumulation
    if ga is not None and ga * per_pass != gbs:
        if _stated_by_publication(ctx) is None:  # else publication_gradient_accumulation judges the statement
            ctx.bad(f"gradient accumulation {ga} x micro-batch {lay.rows_per_microbatch} x dp {lay.dp} = "
                    f"{ga * per_pass} rows, but global_batch is {gbs} (where a publication states this itself, "
                    "record its figure as publication.stated_gradient_accumulation)", "layout", "gradient_accumulation")
    elif gbs % per_pass:
        ctx.bad(f"global batch {gbs} is not a multiple of micro-batch x dp = {per_pass}", "workload", "global_batch")


def publication_gradient_accumulation(ctx: RecipeContext) -> None:
    """The recorded statement excuses exactly the layout's contradiction: it must be the layout's figure, and the
    figure must contradict the batch (else there is nothing to excuse). One problem either way, here."""
    r, lay = ctx.recipe, ctx.recipe.layout
    stated = _stated_by_publication(ctx)
    if stated is None:
        return
    where = ("publication", "stated_gradient_accumulation")
    if lay.gradient_accumulation != stated:
        ctx.bad(f"the publication's stated gradient accumulation {stated} is not layout.gradient_accumulation "
                f"({lay.gradient_accumulation})", *where)
    elif stated * lay.rows_per_microbatch * lay.dp == r.workload.global_batch:
        ctx.bad(f"gradient accumulation {stated} agrees with global_batch / (micro-batch x dp); record the "
                "publication's statement only where it contradicts the row", *where)


def dataset_row_tokens(ctx: RecipeContext) -> None:
    workload = ctx.recipe.workload
    build = workload.dataset.build if workload.dataset is not None else None
    if build is not None and build.row_tokens is not None and build.row_tokens != workload.row_tokens:
        ctx.bad(f"the built rows hold {build.row_tokens} tokens, but workload.row_tokens is {workload.row_tokens}",
                "workload", "dataset", "build", "row_tokens")


# A label's machine-readable statements: a degree ("TP4", "tp = 4", "TP2xPP4") or a switch ("SP", "FSDP", "no SP").
# A key counts only as its own word (ETP is not TP, FSDP is not DP); "x" may join degrees as in TP2xPP4.
_KEY_START = r"(?:(?<![A-Za-z0-9])|(?<=\d[xX]))"
LABEL_DEGREES = {"TP": "tp", "PP": "pp", "VPP": "vpp", "VP": "vpp", "CP": "cp", "DP": "dp", "EP": "ep",
                 "ETP": "etp", "MBS": "rows_per_microbatch", "GA": "gradient_accumulation", "GBS": "global_batch"}
LABEL_SWITCHES = {"SP": "sequence_parallel", "FSDP": "fsdp"}
_DEGREE_RE = re.compile(_KEY_START + r"(" + "|".join(sorted(LABEL_DEGREES, key=len, reverse=True)) +
                        r")\s*[=:]?\s*(\d+)(?![\d.])", re.IGNORECASE)
_SWITCH_RE = re.compile(r"(?<![A-Za-z0-9])(?:(no|non|without|w/o)[\s-]+)?(SP|FSDP)\d*(?![A-Za-z0-9])",
                        re.IGNORECASE)


def label_statements(label: str) -> Iterator[tuple[str, str, int | bool]]:
    """(token as written, layout field, value) for each degree or switch the label states."""
    for match in _DEGREE_RE.finditer(label):
        yield match.group(0), LABEL_DEGREES[match.group(1).upper()], int(match.group(2))
    for match in _SWITCH_RE.finditer(label):
        yield match.group(0), LABEL_SWITCHES[match.group(2).upper()], match.group(1) is None


def _layout_value(ctx: RecipeContext, name: str) -> int | bool | None:
    r, lay = ctx.recipe, ctx.recipe.layout
    if name == "global_batch":
        return r.workload.global_batch
    if name == "gradient_accumulation" and lay.gradient_accumulation is None:
        # Not stated: the accumulation the batch implies (global batch / (micro-batch x dp)).
        per_pass = lay.rows_per_microbatch * lay.dp
        return r.workload.global_batch // per_pass if r.workload.global_batch % per_pass == 0 else None
    return getattr(lay, name)


def label_names_this_layout(ctx: RecipeContext) -> None:
    """Each degree or switch the label states is the layout's; a label that states none of them says nothing to
    contradict. All of one label's mismatches are one problem: the label names one other layout."""
    said, actual_values = [], []
    for token, name, value in label_statements(ctx.recipe.layout.label):
        actual = _layout_value(ctx, name)
        if actual is not None and actual != value:
            field = f"workload.{name}" if name == "global_batch" else f"layout.{name}"
            said.append(repr(token))
            actual_values.append(f"{field} is {str(actual).lower() if isinstance(actual, bool) else actual}")
    if said:
        ctx.bad(f"the label says {', '.join(said)}, but {', '.join(actual_values)}", "layout", "label")


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
    elif lay.vpp > 1 and lay.pp == 1:
        return  # virtual_pipeline reports the layout; dividing the layers over it would repeat that
    elif arch is not None and lay.pipeline_layout is None and arch.layers % (lay.pp * lay.vpp):
        ctx.bad(f"{arch.layers} layers do not divide evenly over pp x vpp = {lay.pp * lay.vpp}", "layout", "pp")


def virtual_chunks(ctx: RecipeContext) -> None:
    """With a layer split and VPP > 1, each stage's layers fall into vpp equal chunks (Megatron refuses uneven
    ones: "number of layers at first stage ... must be divisible by virtual pipeline parallel degree"); a placement
    that is not that is stated in pipeline_layout."""
    lay, arch = ctx.recipe.layout, ctx.arch
    split = lay.layer_split
    if split is None or lay.vpp == 1 or lay.pp < 2 or lay.pipeline_layout is not None:
        return
    stages = {"first": split.first, "last": split.last}
    if arch is not None and lay.pp > 2 and (arch.layers - split.first - split.last) % (lay.pp - 2) == 0:
        stages["middle"] = (arch.layers - split.first - split.last) // (lay.pp - 2)
    uneven = [f"{layers} layers on the {stage} stage" for stage, layers in stages.items() if layers % lay.vpp]
    if uneven:
        ctx.bad(f"{', '.join(uneven)} do not split into vpp {lay.vpp} equal chunks; state an uneven placement in "
                "pipeline_layout", "layout", "layer_split")


RULES = (gpu_grid, context_parallel_rows, token_cap_holds_a_row, expert_grid, experts_on_dense_model, experts_per_rank,
         virtual_pipeline, sequence_parallel,
         recompute_settings, global_batch, publication_gradient_accumulation, dataset_row_tokens,
         label_names_this_layout, pipeline_stages, virtual_chunks)
