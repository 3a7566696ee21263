"""The recipe page (recipes/<id>.md): its lead (status, headline tiles, evidence), card, result, layout, stage,
workload and correctness tables, evidence plots and YAML source; and the YAML it serves beside it."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

import jinja2
import yaml
from markdown_it import MarkdownIt
from markupsafe import Markup

from generator import figures
from generator.catalog import Catalog
from generator.load import LoadedRecipe
from generator.models import ENV_NAME_PATTERN, Recipe
from generator.registry import Registry
from generator.site import evidence_view, views
from generator.site import formatting as fmt
from generator.site.page import Page, SiteRun, as_direct, json_script, markdown_page
from generator.site.pages.compare import compare_record
from generator.site.views import (
    Figures,
    is_reported,
    is_time_to_train,
    model_field_rows,
    peak_memory_text,
    quality_target_text,
    schedule_text,
    throughput_kind,
    yes_no,
)

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def notes_html(text: str | None) -> str | None:
    """Notes are Markdown; raw HTML is escaped, and markdown-it refuses javascript:/data: links."""
    if not text:
        return None
    return fmt.fence_safe(_MD.render(text))


def card(loaded: LoadedRecipe, f: Figures) -> dict[str, Any]:
    """The card: title, then (label, value) rows in card.txt's order, then the run command."""
    r = loaded.recipe
    rows: list[dict[str, Any]] = []

    def add(label: str, text: str | None, **extra: Any) -> None:
        if text is not None:
            rows.append({"label": label, "text": text, "link": None, "cite": None, "col": None, **extra})

    add("Author", r.author.name, cite=fmt.safe_url(r.author.url))
    add("GPUs", fmt.gpus(r.gpu.count, r.gpu.type, r.gpu.memory_gb, r.gpu.per_node, r.gpu.instance))
    add("Layout", r.layout.summary)
    # a time to train says so where its figure is (a steady-state figure, the reference's among them, reads as before)
    add("Tokens/s per GPU", fmt.tokens_per_s(f.tokens_per_s)
        + (f" ({throughput_kind(loaded)})" if is_time_to_train(loaded) else ""))
    add("$ / 1M tokens", fmt.usd(f.usd) if f.usd is not None else None, col="usd")
    add("MFU", fmt.mfu(f.mfu, r.result.active_params.count, r.result.mfu_note, f.mfu_peak, figures.frozen_base(r))
        if f.mfu is not None else None)
    add("Step-time CV", fmt.percent_value(f.cv) if f.cv is not None else None)
    add("Peak memory per GPU", peak_memory_text(loaded))
    add("Learning rate", schedule_text(loaded))
    corr = r.correctness
    if corr is not None and corr.convergence is not None:
        c = corr.convergence
        add("Convergence check", fmt.convergence(c.correlation, c.final_loss_difference, c.pointwise_failures, c.steps))
    for t in corr.component_tests if corr else []:
        add("Component test", fmt.component_test(t.test, t.gpu, t.date, t.shape, t.detail, t.note))
    if corr is not None and corr.quality_target is not None:
        add("Quality target", quality_target_text(loaded) + "; the submitter's runs, not re-run here")
    add("Measured", fmt.date(r.result.measured) if r.result.measured else None)
    if r.publication is not None:
        add("Published", r.publication.url, link=fmt.safe_url(r.publication.url))
    add("GPU-hours", fmt.hours(r.result.gpu_hours) if r.result.gpu_hours is not None else None)
    ds = r.workload.dataset
    add("Rows", fmt.rows(ds.build.name if ds and ds.build else None, ds.name if ds else None,
                         ds.rows_sha256 if ds else None, r.workload.rows))
    # A value the source does not state, and how it was inferred: on the card, beside the figures it shapes.
    for inferred in r.inferred:
        add("Inferred", f"{inferred.field}: {inferred.reason}")
    return {"title": fmt.title(r.model, r.gpu.type), "rows": rows, "run": r.run.rstrip("\n")}


def headline_tiles(loaded: LoadedRecipe, f: Figures) -> list[dict[str, str]]:
    """The recipe page's headline figures, at the tables' precision (the card below keeps every decimal)."""
    r = loaded.recipe
    tt = r.result.time_to_train
    return [
        {"key": "tokens", "label": "Tokens/s per GPU" + (", time to train" if tt else ""),
         "value": fmt.short(f.tokens_per_s)},
        {"key": "usd", "label": "$ / 1M tokens", "value": fmt.usd_short(f.usd)},
        {"key": "mfu", "label": "MFU" + (f" ({fmt.peak_name(f.mfu_peak)} peak)" if f.mfu_peak else ""),
         "value": fmt.percent(f.mfu)},
        {"key": "gpu_hours", "label": "GPU-hours", "value": fmt.hours(r.result.gpu_hours)},
        # a time to train has no step times: its median run's time is the figure in their place
        {"key": "ttt", "label": "Time to train, median run", "value": fmt.minutes(tt.median_ms)} if tt else
        {"key": "cv", "label": "Step-time CV", "value": fmt.percent_value(f.cv, 1)},
    ]


def evidence_missing(loaded: LoadedRecipe) -> str | None:
    """What correctness evidence a recipe lacks, said plainly under its headline figures; None where it has both a
    convergence check and component tests."""
    r = loaded.recipe
    corr = r.correctness
    has_convergence = corr is not None and corr.convergence is not None
    has_tests = corr is not None and bool(corr.component_tests)
    if has_convergence and has_tests:
        return None
    missing = [name for name, has in (("no convergence check", has_convergence), ("no component tests", has_tests))
               if not has]
    if is_reported(loaded) and corr is not None and corr.quality_target is not None:
        return ("Figures as published, not re-measured here. Published with them as correctness evidence: the "
                "benchmark's quality target, reached by the submitter's own runs (below); "
                + " and ".join(missing) + ".")
    if is_reported(loaded):
        return ("Figures as published, not re-measured here. No correctness evidence was published with them: "
                + " and ".join(missing) + ".")
    return "Correctness evidence: " + " and ".join(missing) + " yet."


@dataclass(frozen=True)
class VirtualStage:
    """One virtual pipeline stage (a model chunk): its decoder layers and what else it holds."""

    layers: int
    holds: tuple[str, ...] = ()  # "embedding", "MTP", "loss": where a placement states them


# A placement stated in layout.pipeline_layout, one virtual stage after another in schedule order. The importers'
# bracket notation, "[embedding + 4 decoder] [4 decoder] x 14 [1 decoder + mtp + loss]" (Megatron-Bridge's
# pipeline_model_parallel_layout), or a count list, "over 16 virtual stages ...: 7 layers, then 8, ..., 8, then 7"
# (torchtitan's generate_split_points). Used only when the counts add up to the model's layers over PP x VPP.
_BRACKET = re.compile(r"\[([^\]]*)\](?:\s*x\s*(\d+))?")


_BRACKET_DECODERS = re.compile(r"(\d+) decoder")


_COUNT_LIST = re.compile(r"virtual stages[^:]*:\s*(\d+) layers, then ((?:\d+, )*\d+), then (\d+)")


_HOLDS = (("embedding", "embedding"), ("mtp", "MTP"), ("loss", "loss"))


# MLPerf's asymmetric split (ASYM_PP_EMBED / ASYM_PP_LOSS), as the importer words it: "(126 + 2) / (8 x 8) = 2 per
# virtual stage, the first holding 1 decoder layer(s) and the embedding, the last 1 and the loss".
_EVEN_BUT_ENDS = re.compile(r"/ \((\d+) x (\d+)\) = (\d+) per virtual stage, the first holding (\d+) decoder layer\(s\)"
                            r" and the embedding, the last (\d+) and the loss")


def _stated_virtual_stages(text: str) -> list[VirtualStage] | None:
    brackets = _BRACKET.findall(text)
    if brackets:
        out: list[VirtualStage] = []
        for body, times in brackets:
            decoders = _BRACKET_DECODERS.search(body)
            if decoders is None:
                return None
            holds = tuple(name for word, name in _HOLDS if re.search(rf"\b{word}\b", body))
            out += [VirtualStage(int(decoders.group(1)), holds)] * int(times or 1)
        return out
    counts = _COUNT_LIST.search(text)
    if counts:
        middle = [int(n) for n in counts.group(2).split(", ")]
        return [VirtualStage(n) for n in (int(counts.group(1)), *middle, int(counts.group(3)))]
    ends = _EVEN_BUT_ENDS.search(" ".join(text.split()))
    if ends:
        stages, per, first, last = int(ends.group(1)) * int(ends.group(2)), *map(int, ends.group(3, 4, 5))
        return ([VirtualStage(first, ("embedding",))] + [VirtualStage(per)] * (stages - 2)
                + [VirtualStage(last, ("loss",))])
    return None


def _rule_virtual_stages(layers: int, pp: int, vpp: int, first: int | None,
                         last: int | None) -> list[VirtualStage] | None:
    """The even split, or layer_split's first and last with the middle shared evenly, each stage's layers in vpp
    equal chunks; Megatron's interleaved schedule places chunk c of stage s at virtual stage c x pp + s
    (megatron.core get_transformer_layer_offset)."""
    if first is not None and last is not None and pp >= 2:
        middle = pp - 2
        rest = layers - first - last
        if middle and rest % middle:
            return None
        counts = [first] + ([rest // middle] * middle if middle else []) + [last]
    else:
        counts = [layers // pp] * pp
    if sum(counts) != layers or any(n % vpp for n in counts):
        return None
    return [VirtualStage(n // vpp) for _ in range(vpp) for n in counts]


def _accounted_virtual_stages(layers: int, pp: int, vpp: int, first: int, last: int) -> list[VirtualStage] | None:
    """Megatron's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split: the embedding and
    the loss each take one layer's place, (L + 2) / (PP x VPP) per virtual stage, one fewer on the very first and the
    very last (megatron.core transformer_block.get_num_layers_to_build). A layer split whose first and last stage
    do not divide by VPP can only be this: Megatron refuses uneven chunks otherwise."""
    virtual = pp * vpp
    if vpp == 1 or (layers + 2) % virtual:
        return None
    chunk = (layers + 2) // virtual
    if first != chunk * vpp - 1 or last != chunk * vpp - 1:
        return None
    return ([VirtualStage(chunk - 1, ("embedding",))] + [VirtualStage(chunk)] * (virtual - 2)
            + [VirtualStage(chunk - 1, ("loss",))])


def virtual_stages(loaded: LoadedRecipe, catalog: Catalog) -> tuple[list[VirtualStage], str] | None:
    """The decoder layers of every virtual stage in schedule order (PP x VPP of them; PP when VPP is 1) and where
    that placement comes from; None where the recipe's layout does not determine it (no table rather than a guess).

    The one place a recipe's layer placement is worked out: a placement stated in pipeline_layout, else the even or
    layer_split rule, else Megatron's embedding/loss accounting that the layer split implies."""
    lay = loaded.recipe.layout
    card = catalog.models.get(loaded.recipe.model)
    layers = card.architecture.layers if card and card.architecture else None
    if layers is None:
        return None
    vpp = max(lay.vpp, 1)
    split = lay.layer_split
    found: tuple[list[VirtualStage] | None, str] = (None, "")
    if lay.pipeline_layout is not None:
        found = (_stated_virtual_stages(lay.pipeline_layout), "the placement the recipe's pipeline layout states")
    if found[0] is None:
        found = (_rule_virtual_stages(layers, lay.pp, vpp, split.first if split else None,
                                      split.last if split else None), "")
    if found[0] is None and split is not None:
        found = (_accounted_virtual_stages(layers, lay.pp, vpp, split.first, split.last),
                 "the embedding and the loss each take one layer's place (Megatron's "
                 "account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split), so the first "
                 "chunk of the first stage and the last chunk of the last stage hold one layer fewer")
    stages, source = found
    if stages is None or len(stages) != lay.pp * vpp or sum(s.layers for s in stages) != layers:
        return None
    return stages, source


def pipeline_stages(loaded: LoadedRecipe, catalog: Catalog) -> list[dict[str, str]]:
    """Decoder layers per pipeline stage, as virtual_stages places them.

    With VPP > 1 the stages interleave as Megatron's interleaved schedule places them: virtual stage v is chunk
    v // PP of stage v % PP, so stage s holds chunk s of every virtual pipeline and its layers are not contiguous.
    Each row also carries `holds` (the embedding, MTP or loss where the placement states them) and `placement`
    (where an uneven placement comes from; empty for the even or layer_split rule)."""
    found = virtual_stages(loaded, catalog)
    if found is None:
        return []
    stages, source = found
    if len({s.layers for s in stages}) == 1:
        source = ""  # equal chunks need no explanation
    pp = loaded.recipe.layout.pp
    spans: list[list[tuple[int, int]]] = [[] for _ in range(pp)]
    holds: list[list[str]] = [[] for _ in range(pp)]
    start = 0
    for v, chunk in enumerate(stages):
        if chunk.layers:
            spans[v % pp].append((start, start + chunk.layers - 1))
        holds[v % pp] += [h for h in chunk.holds if h not in holds[v % pp]]
        start += chunk.layers
    return [{"stage": str(i), "layers": ", ".join(f"{a}{fmt.DASH}{b}" for a, b in spans[i]),
             "count": fmt.integer(sum(b - a + 1 for a, b in spans[i])), "holds": ", ".join(holds[i]),
             "placement": source}
            for i in range(pp)]


def comparable_mfu_rows(recipe: Recipe, f: Figures) -> list[tuple[str, str]]:
    """figures.comparable_mfu on the recipe page, each figure with its convention: 6N over the dense BF16 peak (rows
    of any precision compare), and Megatron's count with the causal attention term over the row's peak and BF16's."""
    c = f.comparable
    six_n = "4N (frozen base)" if figures.frozen_base(recipe) else "6N"
    rows = []
    if c.six_n_bf16 is not None:
        rows.append(("MFU over the BF16 peak", f"{fmt.percent(c.six_n_bf16, 2)}: {six_n} FLOPs a token over the GPU's "
                     "dense BF16 peak, whatever the precision, so that rows of any precision compare"))
    if c.megatron is not None and c.megatron_bf16 is not None and c.attention_share is not None:
        key = f.derived.peak_precision  # figures.peak_for's, as derive states it
        rows.append(("MFU with causal attention", f"{fmt.percent(c.megatron, 2)} of the {fmt.peak_name(key or 'bf16')} "
                     f"peak, {fmt.percent(c.megatron_bf16, 2)} of the BF16 peak: Megatron's FLOP count (every matrix "
                     f"product and the causal attention term, {fmt.percent(c.attention_share, 1)} on top of 6N; the "
                     "input embedding lookup not counted)" + (", scaled as 4N is to 6N" if figures.frozen_base(recipe)
                                                               else "")))
    return rows


def published_count_name(loaded: LoadedRecipe) -> str:
    """The FLOP count a publication's Model TFLOP/s is held to (check, 0.5%): Megatron's, or the convention recorded
    that reproduces it, or none found (published_figures_disagree)."""
    res = loaded.recipe.result
    if res.published_figures_disagree:
        return "a count that no convention tried reproduces: see the discrepancy"
    c = res.published_model_tflops_convention
    if c is None:
        return "Megatron's count: every matrix product, causal attention"
    if c.six_n_params is not None:
        return (f"llm-foundry's count: 6 x {fmt.integer(c.six_n_params)} parameters + 12 x layers x hidden x sequence, "
                "attention over every key")
    if c.hybrid_count is not None:
        return "Megatron-Bridge's count of the hybrid blocks"
    said = ["Megatron's count"]
    if not c.causal_attention:
        said.append("attention over every key, no causal halving")
    if not c.gated_experts:
        said.append("experts counted as two matrices")
    if not c.sliding_windows:
        said.append("sliding windows counted as global attention")
    if c.attention_head_dim is not None:
        said.append(f"attention at head dimension {c.attention_head_dim}")
    if c.frozen_base:
        said.append("2/3 of it for a frozen base")
    return said[0] + (" with " + ", ".join(said[1:]) if len(said) > 1 else "")


def published_beside_text(loaded: LoadedRecipe, f: Figures) -> str | None:
    """'Published: 617.8 TFLOP/s per GPU, 62.47% of the BF16 peak (989 TFLOP/s), by its count of 5.78e10 FLOPs a token
    (...). Ours: 52.04% by 6N, 4.82e10 FLOPs a token. ...' (figures.published_beside), or None where no TFLOP/s is
    published."""
    b = f.published
    if b is None:
        return None
    six_n = "4N (frozen base)" if figures.frozen_base(loaded.recipe) else "6N"
    peak = (f", {fmt.percent(b.published_mfu, 2)} of the {fmt.peak_name(b.peak_precision or 'bf16')} peak "
            f"({fmt.number(b.peak_flops / 1e12, 0)} TFLOP/s)") if b.published_mfu is not None and b.peak_flops else ""
    ours = f"Ours: {fmt.percent(b.ours_mfu, 2)} by {six_n}" if b.ours_mfu is not None else f"Ours: by {six_n}"
    text = (f"Published: {fmt.stated(b.published_tflops_per_gpu)} TFLOP/s per GPU{peak}, by its count of "
            f"{fmt.flops(b.published_flops_per_token)} FLOPs a token ({published_count_name(loaded)}). {ours}, "
            f"{fmt.flops(b.ours_flops_per_token)} FLOPs a token.")
    if not loaded.recipe.result.published_figures_disagree:
        text += (f" Both at {fmt.stated(loaded.recipe.result.tokens_per_s_per_gpu)} tokens/s per GPU: they differ by "
                 "their FLOP counts, not by the run.")
    return text


def result_rows(loaded: LoadedRecipe, f: Figures, catalog: Catalog) -> list[tuple[str, str]]:
    """The result table: stated and recomputed figures side by side, and what each rests on."""
    r = loaded.recipe
    res = r.result
    rows: list[tuple[str, Any]] = [("Tokens/s per GPU", fmt.tokens_per_s(res.tokens_per_s_per_gpu))]
    # Each $ / 1M figure in its own element (data-or-col="usd"): a price of one's own reprices it as it does the
    # tiles and the tables (site_src/assets/js), so that no page shows two prices for one recipe.
    if res.usd_per_million_tokens is not None:
        rows.append(("$ / 1M tokens (stated)", usd_figure(fmt.usd(res.usd_per_million_tokens))))
    if f.derived.usd_per_million_tokens is not None:
        rows.append(("$ / 1M tokens (recomputed)", usd_figure(fmt.usd(f.derived.usd_per_million_tokens))
                     + Markup.escape(f" at {fmt.usd(f.derived.instance_usd_per_hour)}/h for {r.gpu.instance}")))
    if res.mfu is not None:
        rows.append(("MFU (stated)", fmt.percent(res.mfu, 2)))
    if f.derived.mfu is not None:
        peak = fmt.peak_name(f.derived.peak_precision or "bf16")
        rows.append(("MFU (recomputed)", f"{fmt.percent(f.derived.mfu, 2)} of the {peak} peak, "
                     f"{fmt.number(f.derived.peak_flops / 1e12, 0)} TFLOP/s"
                     + (", 4N FLOPs a token (frozen base)" if figures.frozen_base(r) else "")))
    beside = published_beside_text(loaded, f)
    if beside is not None:
        rows.append(("The publication's MFU beside ours", beside))
    if res.mfu_note:
        rows.append(("MFU note", res.mfu_note))
    if r.status.value != "reported":  # how close a run of ours comes to what the card's matrix products reach
        share = figures.ceiling_share(r, catalog)
        gpu = catalog.gpus.get(r.gpu.type)
        if share is not None and gpu is not None and gpu.measured_ceiling is not None:
            rows.append(("Share of the measured ceiling", f"{fmt.percent(share[0], 1)} of the {fmt.peak_name(share[2])} "
                         f"matrix-product rate measured on this card, {fmt.number(share[1] / 1e12, 1)} TFLOP/s "
                         f"({fmt.date(gpu.measured_ceiling.date)}, {gpu.measured_ceiling.source})"))
    rows += comparable_mfu_rows(r, f)
    if res.window is not None:
        rows.append(("Window", f"steps {res.window[0]}{fmt.DASH}{res.window[1]} (0-based, inclusive)"))
    if f.derived.window_tokens is not None:
        rows.append(("Window tokens", fmt.integer(f.derived.window_tokens)))
    for name, label in (("steps_per_run", "Steps per run"), ("runs", "Runs")):
        value = getattr(res, name)
        if value is not None:
            rows.append((label, fmt.integer(value)))
    if res.partial:  # figures of a run that did not complete (crashed, interrupted, an excerpt): never verified
        rows.append(("Partial run", res.partial))
    rows.append(("Profiler on", yes_no(res.profiler)))
    if res.peak_memory is not None:
        rows.append(("Peak memory per GPU", peak_memory_text(loaded)))
    if res.gpu_hours_note:
        rows.append(("GPU-hours count", res.gpu_hours_note))
    if res.published_model_tflops_per_gpu is not None:
        rows.append(("Published model TFLOP/s per GPU", fmt.stated(res.published_model_tflops_per_gpu)))
        if res.published_figures_disagree:
            rows.append(("Discrepancy", _discrepancy(loaded, catalog)))
        if res.published_model_tflops_note:
            rows.append(("Published model TFLOP/s note", res.published_model_tflops_note))
    if res.active_params.source:
        rows.append(("N source", res.active_params.source))
    return rows


def usd_figure(text: str) -> Markup:
    """A served $ / 1M figure as the element site_src/assets/js reprices."""
    return Markup('<span data-or-col="usd">{}</span>').format(text)


def _discrepancy(loaded: LoadedRecipe, catalog: Catalog) -> str:
    """The recorded disagreement of a publication's own figures, recomputed: what its tokens/s give."""
    r = loaded.recipe
    res = r.result
    card = catalog.models.get(r.model)
    text = "the publication's Model TFLOP/s and tokens/s disagree beyond 0.5% (no convention found reproduces them)"
    if card is None or card.architecture is None or res.published_model_tflops_per_gpu is None:
        return text
    ours = figures.model_tflops_per_gpu(card.architecture, r.workload.row_tokens, res.tokens_per_s_per_gpu,
                                        mtp_layers=r.layout.mtp_layers)
    off = figures.relative_difference(res.published_model_tflops_per_gpu, ours)
    return (f"{text}: published {fmt.stated(res.published_model_tflops_per_gpu)}, its "
            f"{fmt.stated(res.tokens_per_s_per_gpu)} tokens/s give {ours:.1f} by the registry's count "
            f"({off * 100:.2f}% apart); the note says what was tried")


def correctness(loaded: LoadedRecipe) -> dict[str, Any] | None:
    corr = loaded.recipe.correctness
    if corr is None:
        return None
    tests = [{"title": t.test, "rows": [("Result", t.result.value), ("GPU", t.gpu), ("Date", fmt.date(t.date)),
                                          ("Shape", t.shape)] + ([("Detail", t.detail)] if t.detail else [])
              + ([("Note", t.note)] if t.note else [])} for t in corr.component_tests]
    summary = [("Result", corr.result.value)]
    for label, value in (("Summary", corr.summary), ("Reference recipe", corr.reference),
                         ("Configuration review", corr.configuration.value if corr.configuration else None),
                         ("Rules", corr.rules)):
        if value:
            summary.append((label, value))
    conv = _convergence_rows(corr.convergence) if corr.convergence is not None else None
    also = [_convergence_rows(c) for c in corr.convergence_also]
    target = None
    if corr.quality_target is not None:
        qt = corr.quality_target
        target = [("Metric", qt.metric), ("Target", f"{qt.direction} {fmt.stated(qt.target)}"),
                  ("Reached", f"in {qt.runs_reached} of {fmt.plural(qt.runs, 'counted run')}"),
                  ("Median run's value", fmt.stated(qt.reached)), ("Whose runs", "the submitter's, not re-run here"),
                  ("Source", qt.source)]
    return {"summary": summary, "tests": tests, "convergence": conv, "convergence_also": also, "quality_target": target}


def _convergence_rows(c: Any) -> list[tuple[str, str]]:
    rows = [("Result", c.result.value), ("Steps", fmt.integer(c.steps)), ("Correlation", fmt.stated(c.correlation)),
            ("Final loss difference", fmt.stated(c.final_loss_difference)),
            ("Pointwise failures", fmt.integer(c.pointwise_failures))]
    if c.failed_because:
        rows.append(("Failed because", c.failed_because))
    if c.reference:
        rows.append(("Reference arm", c.reference))
    # what the check compared against: a framework against itself says less than two implementations agreeing
    rows.append(("Compared against", views.IMPLEMENTATION_TEXT[c.implementation.value] if c.implementation else "not stated"))
    return rows + ([("Note", c.note)] if c.note else [])


def time_to_train(loaded: LoadedRecipe) -> dict[str, Any] | None:
    """The recipe page's time-to-train block (result.time_to_train): what its tokens/s per GPU is, each run with its
    time, samples and throughput (figures.run_tokens_per_s_per_gpu), the median run and the benchmark's score."""
    r = loaded.recipe
    tt = r.result.time_to_train
    if tt is None:
        return None
    median = figures.median_index(tt.runs_ms)
    runs = [{"run": str(i + 1), "time": fmt.minutes(ms), "ms": fmt.integer(ms), "samples": fmt.integer(samples),
             "tokens": fmt.short(figures.run_tokens_per_s_per_gpu(samples, r.workload.row_tokens, ms, r.gpu.count)),
             "median": i == median}
            for i, (ms, samples) in enumerate(zip(tt.runs_ms, tt.samples, strict=True))]
    summary = [("Throughput", throughput_kind(loaded)),
               ("Runs", fmt.integer(len(tt.runs_ms)) + (f", {fmt.plural(tt.failed_runs, 'failed run')} not counted"
                                                         if tt.failed_runs else "")),
               ("Median run", f"run {median + 1}: {fmt.minutes(tt.median_ms)} ({fmt.integer(round(tt.median_ms))} ms)"),
               ("Score", f"{fmt.minutes(tt.score_ms, 3)}, the mean without the fastest and the slowest run (MLPerf's "
                         "score; its RCP normalisation not applied)" if tt.score_ms is not None
                else "none: fewer than 3 runs"),
               ("Evaluation", "included in every run's time" if tt.evaluation_included else "excluded")]
    span = ("run_start to run_stop, start-up and the evaluations on the way included" if tt.evaluation_included
            else "run_start to run_stop, its evaluations excluded")
    convention = (f"Tokens/s per GPU here is the median run's samples x {fmt.integer(r.workload.row_tokens)} tokens / "
                  f"its run time / {fmt.plural(r.gpu.count, 'GPU')}; a run's time is {span}. That is a time-to-train "
                  "throughput, lower than a steady-state step rate of the same layout: the site ranks it only with "
                  "other time-to-train figures. The median run is the lower median of the run times (the registry's "
                  "convention for a figure from several runs).")
    return {"summary": summary, "runs": runs, "convention": convention}


# The names `export` may take. The recipe model refuses any other (a check problem); the site tests them again so
# that a page can never turn a name into a command, whatever reached the renderer.
_ENV_NAME = re.compile(ENV_NAME_PATTERN.removeprefix("^").removesuffix("$"))


def env_script(loaded: LoadedRecipe) -> str:
    """The copyable `export` block: each value shell-quoted (shlex.quote: single quotes, so `$(...)`, backquotes and
    `;` stay text), each name a shell identifier or not rendered at all."""
    env = loaded.recipe.env
    lines = [f"export {name}={shlex.quote(value)}" for name, value in env.items() if _ENV_NAME.fullmatch(name)]
    left_out = len(env) - len(lines)
    if left_out:  # the name itself is never echoed: it is the unsafe part
        lines.append(f"# {left_out} variable(s) left out: a name that is not a shell identifier")
    return "\n".join(lines)


def render_card(env: jinja2.Environment, loaded: LoadedRecipe, registry: Registry, lead: Markup | None = None,
                f: Figures | None = None) -> str:
    """The card alone, as HTML (the golden test reads this). `lead` (the recipe page's status, headline tiles and
    evidence summary) goes under its title; it holds no element the card's text is read from. `f`: the recipe's
    figures where the render has them (computed here otherwise)."""
    extra = {"lead": lead} if lead is not None else {}
    f = f if f is not None else views.recipe_figures(loaded, registry.catalog)
    return env.get_template("card.html.j2").render(card=card(loaded, f), **extra)


def _lead(env: jinja2.Environment, loaded: LoadedRecipe, f: Figures, registry: Registry) -> Markup:
    cat = registry.catalog
    r = loaded.recipe
    src = views.recipe_src(loaded)
    lead = {"status": r.status.value, "status_meaning": views.STATUS_MEANING[r.status.value],
            "status_line": views.status_line(loaded), "id": loaded.id, "model": r.model,
            "model_href": views.href(src, views.model_src(cat, r.model)), "gpu_type": r.gpu.type,
            "gpu_href": views.href(src, views.gpu_src(r.gpu.type)), "tiles": headline_tiles(loaded, f),
            "evidence": views.evidence_summary(loaded), "evidence_missing": evidence_missing(loaded),
            "tokens_raw": repr(r.result.tokens_per_s_per_gpu)}
    return Markup(env.get_template("recipe_lead.html.j2").render(lead=lead))


def _published(loaded: LoadedRecipe) -> dict[str, str] | None:
    pub = loaded.recipe.publication
    url = fmt.safe_url(pub.url) if pub else None
    if pub is None or url is None or not views.is_reported(loaded):
        return None
    where = [part for part in (f"release {pub.release}" if pub.release else None, pub.system,
                               f"line {pub.line}" if pub.line else None) if part]
    return {"url": url, "name": url.rstrip("/").rsplit("/", 1)[-1] or url, "where": ", ".join(where)}


def _reference(loaded: LoadedRecipe, by_id: dict[str, LoadedRecipe], src: str) -> dict[str, str] | None:
    ref = views.named_reference(loaded, by_id)
    if ref is None:
        return None
    return {"href": views.href(src, views.recipe_src(ref)), "name": ref.id.split("/")[-1],
            "label": ref.recipe.layout.label, "speedup": views.speedup_text(ref, loaded)}


def _evidence_ctx(ev: evidence_view.Evidence | None, loaded: LoadedRecipe, src: str) -> dict[str, Any] | None:
    if ev is None or not ev.text or ev.problems:
        return None
    steps = evidence_view.steps_chart(ev)
    chart_id = "chart-steps-" + views.slug(loaded.id)
    return {
        "steps": {"id": chart_id, "json": json_script(steps)} if steps else None,
        "history": {"id": "chart-history-" + views.slug(loaded.id), "json": json_script(ev.history_points)}
        if len(ev.history_points) >= 2 else None,
        "history_rows": ev.history, "runs": ev.runs, "source": ev.source,
        "window": f"steps {ev.window[0]}{fmt.DASH}{ev.window[1]}" if ev.window else None,
        "href": views.href(src, views.evidence_src(loaded)), "name": views.evidence_src(loaded).rsplit("/", 1)[-1],
    }


def recipe_text(loaded: LoadedRecipe) -> str:
    """The recipe's YAML as the site shows and serves it: the file's text as loaded (read once per build), or the
    data dumped where a recipe was made without a file."""
    return loaded.text or yaml.safe_dump(loaded.data, sort_keys=False, allow_unicode=True)


def page(run: SiteRun, loaded: LoadedRecipe) -> Page:
    """The recipe's page, its context built here from the figures and evidence the render read once."""
    env, registry, f = run.env, run.registry, run.figures[loaded.id]
    cat = registry.catalog
    r = loaded.recipe
    src = views.recipe_src(loaded)
    source = recipe_text(loaded)
    ctx = {
        "published": _published(loaded),
        "reference": _reference(loaded, run.by_id, src),
        "evidence": _evidence_ctx(run.evidence[loaded.id], loaded, src),
        "superseded": [{"url": fmt.safe_url(s.url), "text": s.url, "commit": s.commit or fmt.DASH,
                        "line": str(s.line) if s.line else fmt.DASH, "tokens": fmt.tokens_per_s(s.tokens_per_s_per_gpu),
                        "tflops": fmt.stated(s.published_model_tflops_per_gpu)
                        if s.published_model_tflops_per_gpu is not None else fmt.DASH}
                       for s in (r.publication.superseded if r.publication else [])],
        "card_html": Markup(render_card(env, loaded, registry, _lead(env, loaded, f, registry), f)),
        "status": r.status.value,
        "status_meaning": views.STATUS_MEANING[r.status.value],
        "model": r.model,
        "model_href": views.href(src, views.model_src(cat, r.model)),
        "gpu_type": r.gpu.type,
        "gpu_href": views.href(src, views.gpu_src(r.gpu.type)),
        "all_href": views.href(src, "recipes.md"),
        "methodology_href": views.href(src, "methodology.md"),
        "env_script": env_script(loaded),
        "results": result_rows(loaded, f, cat),
        "time_to_train": time_to_train(loaded),
        "layout": views.layout_rows(loaded, cat),
        "stages": pipeline_stages(loaded, cat),
        "vpp": r.layout.vpp,
        "stack": model_field_rows(r.stack, fmt.STACK_LABELS),
        "workload": views.workload_rows(loaded),
        "correctness": correctness(loaded),
        "patches": [{"file": p.file, "sha256": p.sha256, "description": p.description} for p in r.patches],
        "publication": model_field_rows(r.publication) if r.publication else None,
        "notes_html": Markup(notes_html(r.notes)) if r.notes else None,
        "source": source.rstrip("\n"),
        "yaml_href": views.href(src, views.yaml_src(loaded)),
        "yaml_name": loaded.id.split("/")[-1] + ".yaml",
    }
    title = f"{fmt.title(r.model, r.gpu.type)} · {r.layout.label}"
    # No sidebar navigation (recipe pages are not in it; the tabs navigate); the table of contents stays.
    return Page(markdown_page(title, env.get_template("recipe.md.j2").render(**ctx), hide=["navigation"]),
                fmt.plain_title(title))


def files(run: SiteRun, loaded: LoadedRecipe) -> dict[str, Page]:
    """The recipe's page and the files beside it: its YAML, its compare record and, where it reads, its evidence."""
    key = run.keys[loaded.id]
    out = {views.recipe_src(loaded): run.memo.get(("page", key), lambda: as_direct(page(run, loaded))),
           views.yaml_src(loaded): Page(recipe_text(loaded)),
           views.compare_src(loaded): run.memo.get(("compare", key), lambda: Page(json.dumps(
               compare_record(loaded, run.figures[loaded.id], run.registry.catalog), indent=None,
               ensure_ascii=False) + "\n"))}
    if run.has_evidence(loaded):
        out[views.evidence_src(loaded)] = Page(run.evidence[loaded.id].text)  # type: ignore[union-attr]
    return out
