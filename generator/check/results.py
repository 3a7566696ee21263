"""Rules: every stated figure of the result is written to its required precision (figures.PRECISIONS) and agrees
with the figure recomputed from its inputs at that precision; the result's figures do not contradict each other."""

from __future__ import annotations

from generator import figures
from generator.check.context import RecipeContext
from generator.models import FlopsConvention, Status


def _places_text(places: int) -> str:
    return f"{places} decimal place{'' if places == 1 else 's'}"


def stated_figure(ctx: RecipeContext, figure: str, computed: float | None = None, formula: str = "") -> bool:
    """One stated result figure: written to at least its required precision and, where `computed` is known (by
    `formula`), agreeing with it at that precision. Returns whether it holds (True when not stated)."""
    stated = getattr(ctx.recipe.result, figure)
    if stated is None:
        return True
    written = ctx.written("result", figure)
    text = written if written is not None else repr(stated)
    spec = figures.PRECISIONS[figure]
    required = spec.required_decimals(stated, computed)
    recomputed = f"{formula} = {computed:.{required + 2}f}" if computed is not None else ""
    coarse = figures.coarser_than_required(figure, written, stated, computed)
    if coarse is not None:
        places = figures.written_decimals(text)
        shown = _places_text(places if places is not None else figures.decimals(stated))
        ctx.bad(f"stated {text} is written to {shown}; {spec.label} must be stated to at least "
                f"{spec.describe(coarse)}" + (f": {recomputed}" if recomputed else ""), "result", figure)
        return False
    if computed is not None and not figures.agrees(stated, computed, figure, figures.written_decimals(text)):
        ctx.bad(f"stated {text} but {recomputed}", "result", figure)
        return False
    return True


def stated_precision(ctx: RecipeContext) -> None:
    """Figures recomputed only from evidence (check/sidecar.py) or not at all: their precision as written."""
    for figure in ("tokens_per_s_per_gpu", "step_time_cv_percent", "gpu_hours"):
        stated_figure(ctx, figure)


def usd_per_million_tokens(ctx: RecipeContext) -> None:
    r, res, derived = ctx.recipe, ctx.recipe.result, ctx.derived
    if res.usd_per_million_tokens is not None and derived.usd_per_million_tokens is not None:
        stated_figure(ctx, "usd_per_million_tokens", derived.usd_per_million_tokens,
                      f"(${derived.instance_usd_per_hour}/h / {ctx.instance.gpu_count if ctx.instance else '?'}) / "
                      f"({res.tokens_per_s_per_gpu} x 3600) x 1e6")
    elif res.usd_per_million_tokens is not None and r.gpu.instance is None:
        ctx.bad("a $/1M figure needs gpu.instance (its price)", "result", "usd_per_million_tokens")


def mfu(ctx: RecipeContext) -> None:
    """MFU is 6N (4N for a frozen base) over the peak the methodology names, whatever `mfu_note` says: a note
    explains, never exempts."""
    res, derived = ctx.recipe.result, ctx.derived
    if res.mfu is not None and derived.mfu is not None:
        flops_per_param = "4" if figures.frozen_base(ctx.recipe) else "6"
        stated_figure(ctx, "mfu", derived.mfu,
                      f"{flops_per_param} x {res.active_params.count:,} x {res.tokens_per_s_per_gpu} / {derived.peak_flops:.4g}")


def precision_peak(ctx: RecipeContext) -> None:
    """A precision whose dense peak the GPU does not have in the catalog: the GPU cannot run it, and the MFU of a
    reported row would be checked against nothing."""
    r = ctx.recipe
    key = figures.PRECISION_PEAK[r.workload.precision.value]
    if ctx.gpu is not None and getattr(ctx.gpu.peak_flops, key) is None:
        ctx.bad(f"{r.gpu.type} has no dense {key.upper()} peak in catalog/gpus.yaml, so it cannot run "
                f"{r.workload.precision.value} and an MFU would be checked against nothing", "workload", "precision")


def _convention_text(convention: FlopsConvention | None) -> str:
    if convention is None:
        return "by Megatron's count of model FLOPs per token"
    if convention.six_n_params is not None:
        return (f"under the stated convention (llm-foundry's 6 x {convention.six_n_params:,} parameters plus full "
                "attention)")
    return (f"under the stated convention (gated experts {convention.gated_experts}, sliding windows "
            f"{convention.sliding_windows}" + (", frozen base: 2/3" if convention.frozen_base else "")
            + (f", head dimension {convention.attention_head_dim}" if convention.attention_head_dim else "")
            + ("" if convention.causal_attention else ", attention not causal")
            + (f", {convention.hybrid_count}'s hybrid count" if convention.hybrid_count else "") + ")")


def _published_tflops(ctx: RecipeContext, tokens_per_s: float, convention: FlopsConvention | None) -> float:
    """Model TFLOP/s per GPU for `tokens_per_s`: Megatron's count, or the one `convention` states."""
    r = ctx.recipe
    assert ctx.arch is not None
    if convention is None:
        return figures.model_tflops_per_gpu(ctx.arch, r.workload.row_tokens, tokens_per_s,
                                            mtp_layers=r.layout.mtp_layers)
    if convention.six_n_params is not None:
        return figures.six_n_model_tflops_per_gpu(ctx.arch, r.workload.row_tokens, tokens_per_s,
                                                  convention.six_n_params)
    return figures.model_tflops_per_gpu(ctx.arch, r.workload.row_tokens, tokens_per_s, mtp_layers=r.layout.mtp_layers,
                                        sliding_windows=convention.sliding_windows,
                                        gated_experts=convention.gated_experts, frozen_base=convention.frozen_base,
                                        head_dim=convention.attention_head_dim, causal=convention.causal_attention,
                                        hybrid_count=convention.hybrid_count)


def published_model_tflops(ctx: RecipeContext) -> None:
    """A published Model TFLOP/s per GPU agrees within 0.5% with the count of its tokens/s: Megatron's, or the one
    `published_model_tflops_convention` states (which then needs its explanation in the note). The note explains;
    it never exempts."""
    r, res = ctx.recipe, ctx.recipe.result
    published, convention = res.published_model_tflops_per_gpu, res.published_model_tflops_convention
    if published is None:
        for name in ("published_model_tflops_note", "published_model_tflops_convention"):
            if getattr(res, name) is not None:
                ctx.bad(f"{name} explains a published Model TFLOP/s the recipe does not state", "result", name)
        return
    if r.status is not Status.reported:
        ctx.bad(f"a {r.status.value} recipe was measured here and its figures are ours: a published Model TFLOP/s "
                "belongs to a reported recipe (remove it, or use status reported with its publication)",
                "result", "published_model_tflops_per_gpu")
        return
    if ctx.arch is None:
        return
    tolerance = figures.PUBLISHED_TFLOPS_TOLERANCE
    ours = _published_tflops(ctx, res.tokens_per_s_per_gpu, None)
    diff = figures.relative_difference(published, ours)
    megatron = (f"published {published:g} TFLOP/s per GPU but model FLOPs per token "
                f"{figures.model_flops_per_token(ctx.arch, r.workload.row_tokens, r.layout.mtp_layers):.4g} x "
                f"{res.tokens_per_s_per_gpu:g} tokens/s = {ours:.1f} ({diff * 100:.2f}% apart, over "
                f"{tolerance * 100:g}%)")
    if res.published_figures_disagree:
        _recorded_discrepancy(ctx, published, _published_tflops(ctx, res.tokens_per_s_per_gpu, convention))
        return
    if convention is None:
        if diff > tolerance:
            ctx.bad(f"{megatron}; a note does not change the count: state the convention that reproduces it in "
                    "result.published_model_tflops_convention, or record the discrepancy with "
                    "result.published_figures_disagree: true and its note", "result", "published_model_tflops_per_gpu")
        return
    theirs = _published_tflops(ctx, res.tokens_per_s_per_gpu, convention)
    # llm-foundry prints its Model TFLOP truncated (int()): held to 0.5% outside [published, published + 1).
    off = (figures.truncated_relative_difference(int(published), theirs) if convention.six_n_params is not None
           else figures.relative_difference(published, theirs))
    if off > tolerance:
        ctx.bad(f"{_convention_text(convention)} {res.tokens_per_s_per_gpu:g} tokens/s give {theirs:.1f} TFLOP/s, "
                f"{off * 100:.2f}% from the published {published:g}", "result", "published_model_tflops_convention")
    elif diff > tolerance and res.published_model_tflops_note is None:
        ctx.bad(f"{megatron}; the stated convention reproduces it, and needs its source in "
                "result.published_model_tflops_note", "result", "published_model_tflops_per_gpu")


def _recorded_discrepancy(ctx: RecipeContext, published: float, ours: float) -> None:
    """published_figures_disagree: true holds only where the figures do disagree, and says why in the note."""
    res = ctx.recipe.result
    off = figures.relative_difference(published, ours)
    if off <= figures.PUBLISHED_TFLOPS_TOLERANCE:
        ctx.bad(f"published_figures_disagree is true but the published {published:g} TFLOP/s agrees with "
                f"{res.tokens_per_s_per_gpu:g} tokens/s ({ours:.1f}, {off * 100:.2f}% apart): remove the flag",
                "result", "published_figures_disagree")
    elif res.published_model_tflops_note is None:
        ctx.bad("published_figures_disagree needs result.published_model_tflops_note: what was tried and found",
                "result", "published_figures_disagree")


def superseded_model_tflops(ctx: RecipeContext) -> None:
    """Each superseded publication's own tokens/s and Model TFLOP/s agree by the same count, or the row says
    exactly that they do not (`figures_disagree`, the earlier document's error)."""
    r = ctx.recipe
    if r.publication is None or ctx.arch is None:
        return
    tolerance = figures.PUBLISHED_TFLOPS_TOLERANCE
    for i, row in enumerate(r.publication.superseded):
        where = ("publication", "superseded", i)
        if row.published_model_tflops_per_gpu is None:
            if row.figures_disagree:
                ctx.bad("figures_disagree without a published Model TFLOP/s to disagree with", *where,
                        "figures_disagree")
            continue
        theirs = _published_tflops(ctx, row.tokens_per_s_per_gpu, r.result.published_model_tflops_convention)
        diff = figures.relative_difference(row.published_model_tflops_per_gpu, theirs)
        if diff > tolerance and not row.figures_disagree:
            ctx.bad(f"that document's {row.tokens_per_s_per_gpu:g} tokens/s give {theirs:.1f} TFLOP/s "
                    f"{_convention_text(r.result.published_model_tflops_convention)}, {diff * 100:.2f}% from its "
                    f"{row.published_model_tflops_per_gpu:g}; if the document is wrong, record it with "
                    "figures_disagree: true", *where, "published_model_tflops_per_gpu")
        elif diff <= tolerance and row.figures_disagree:
            ctx.bad(f"figures_disagree, but {row.tokens_per_s_per_gpu:g} tokens/s give {theirs:.1f} TFLOP/s, within "
                    f"{tolerance * 100:g}% of its {row.published_model_tflops_per_gpu:g}", *where, "figures_disagree")


def window(ctx: RecipeContext) -> None:
    r, res = ctx.recipe, ctx.recipe.result
    if res.window is None:
        if res.window_tokens is not None:
            ctx.bad("window_tokens counts the tokens of a window the recipe does not state: add result.window (its "
                    "first and last step) or remove window_tokens", "result", "window_tokens")
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


def gpu_hours(ctx: RecipeContext) -> None:
    """The run's GPU-hours cannot be fewer than its measured window alone takes at the stated tokens/s."""
    r, res, tokens = ctx.recipe, ctx.recipe.result, ctx.derived.window_tokens
    if res.gpu_hours is None or tokens is None:
        return
    least = figures.window_gpu_hours(tokens, res.tokens_per_s_per_gpu, r.gpu.count)
    written = ctx.written("result", "gpu_hours") or repr(res.gpu_hours)
    places = figures.written_decimals(written) or figures.decimals(res.gpu_hours)
    if res.gpu_hours + 0.5 * 10 ** (-places) < least:  # fewer even before the stated figure's rounding
        seconds = tokens / (res.tokens_per_s_per_gpu * r.gpu.count)
        ctx.bad(f"stated {written} GPU-hours, fewer than the measured window alone: {tokens:,} window tokens / "
                f"({res.tokens_per_s_per_gpu} tokens/s x {r.gpu.count} GPUs) = {seconds:,.1f} s on {r.gpu.count} "
                f"GPUs = {least:.4f} GPU-hours", "result", "gpu_hours")


def dates(ctx: RecipeContext) -> None:
    r, res = ctx.recipe, ctx.recipe.result
    if res.measured is not None and res.measured > ctx.today:
        ctx.bad(f"measured date {res.measured} is in the future", "result", "measured")
    for i, test in enumerate(r.correctness.component_tests if r.correctness else []):
        if test.date > ctx.today:
            ctx.bad(f"test date {test.date} is in the future", "correctness", "component_tests", i, "date")


def time_to_train(ctx: RecipeContext) -> None:
    """A time-to-train figure (MLPerf's): tokens/s per GPU is the median run's samples x row tokens / run time / GPUs,
    the median is the median run's time and the score the runs' olympic mean; all recomputed from the runs listed."""
    r = ctx.recipe
    tt = r.result.time_to_train
    if tt is None:
        return
    where = ("result", "time_to_train")
    if len(tt.samples) != len(tt.runs_ms):
        ctx.bad(f"{len(tt.samples)} sample counts for {len(tt.runs_ms)} runs", *where, "samples")
        return
    if r.result.runs is not None and r.result.runs != len(tt.runs_ms):
        ctx.bad(f"result.runs is {r.result.runs} but time_to_train lists {len(tt.runs_ms)} runs", "result", "runs")
    median = tt.runs_ms[figures.median_index(tt.runs_ms)]
    if tt.median_ms != median:
        ctx.bad(f"stated {tt.median_ms:g} but the median run of runs_ms takes {median} ms", *where, "median_ms")
    score = figures.olympic_mean(tt.runs_ms)
    half_unit = 0.5 * 10 ** -figures.TIME_TO_TRAIN_SCORE_DECIMALS  # the score as stated, rounded
    if (score is None) != (tt.score_ms is None) or (score is not None and tt.score_ms is not None
                                                      and abs(score - tt.score_ms) > half_unit + 1e-6):
        ctx.bad(f"stated {tt.score_ms} but the mean without the fastest and slowest run is "
                f"{'none (fewer than 3 runs)' if score is None else f'{score:.2f}'}", *where, "score_ms")
    computed = figures.time_to_train_tokens_per_s_per_gpu(tt.samples, tt.runs_ms, r.workload.row_tokens, r.gpu.count)
    stated_figure(ctx, "tokens_per_s_per_gpu", computed,
                  f"median run's samples x {r.workload.row_tokens} / run time / {r.gpu.count} GPUs")


def runs_spread(ctx: RecipeContext) -> None:
    """Several runs never give the same tokens/s to every digit: a CV of exactly 0 across them is one run counted
    several times (the runner refuses such runs; issue 41)."""
    res = ctx.recipe.result
    if res.runs is not None and res.runs > 1 and res.runs_cv_percent == 0:
        ctx.bad(f"a CV of exactly 0 across {res.runs} runs: one run given {res.runs} times, not {res.runs} runs",
                "result", "runs_cv_percent")


def peak_memory(ctx: RecipeContext) -> None:
    """result.peak_memory states a figure, no allocated peak above the reserved one (the caching allocator reserves
    every byte it hands out), and none above the card's memory: gpu.memory_gb read in the figure's own unit, the
    looser reading (an 80 GB card holds 80 GiB of HBM; a stated GB of unstated unit is at most that)."""
    peak = ctx.recipe.result.peak_memory
    if peak is None:
        return
    stated = {"allocated_gib": peak.allocated_gib, "reserved_gib": peak.reserved_gib, "stated_gb": peak.stated_gb}
    if all(v is None for v in stated.values()):
        ctx.bad("peak memory states no figure (allocated_gib, reserved_gib or stated_gb): leave it null",
                "result", "peak_memory")
        return
    if peak.allocated_gib is not None and peak.reserved_gib is not None and peak.allocated_gib > peak.reserved_gib:
        ctx.bad(f"allocated {peak.allocated_gib:g} GiB above reserved {peak.reserved_gib:g} GiB: the allocator "
                "reserves every byte it hands out", "result", "peak_memory", "allocated_gib")
    card = ctx.recipe.gpu.memory_gb
    for name, value in stated.items():
        if value is not None and value > card:
            ctx.bad(f"{value:g} per GPU is more than the {card} GB card holds", "result", "peak_memory", name)


RULES = (stated_precision, usd_per_million_tokens, mfu, precision_peak, published_model_tflops,
         superseded_model_tflops, window, gpu_hours, dates, time_to_train, runs_spread, peak_memory)
