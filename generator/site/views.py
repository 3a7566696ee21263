"""What each page shows, as plain values: figures from generator.figures, text from .formatting.

Templates receive these dicts and only lay them out; nothing here touches HTML except the notes,
which markdown-it-py renders with raw HTML off.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup
from pydantic import BaseModel

from generator import figures
from generator.catalog import Catalog
from generator.frameworks import framework_name
from generator.load import LoadedRecipe
from generator.models import ENV_NAME_PATTERN, Recipe, Recompute
from generator.site import formatting as fmt

ORIGIN_MEASURED = "measured here"  # measured or verified: figures from our own runs
ORIGIN_PUBLISHED = "published"  # reported: figures taken from a publication

STATUS_MEANING = {
    "verified": "measured, and its correctness evidence (component tests and/or a convergence check) passes",
    "measured": "measured on real hardware; no passing correctness evidence yet, or the figure is not yet one a "
                "verified recipe may rest on (fewer than 3 runs, a partial run, or noisy step times)",
    "reported": "figures taken from a publication, not re-measured here",
}


def page_url(src: str) -> str:
    """Site URL (directory URLs) of a docs path: 'recipes/a/b/c.md' -> 'recipes/a/b/c/', 'index.md' -> ''."""
    if not src.endswith(".md"):
        return src
    stem = src[:-3]
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def href(from_src: str, to_src: str, anchor: str = "") -> str:
    """Relative link between two docs paths, as the browser resolves it under directory URLs."""
    base = page_url(from_src)
    base_dir = base if base.endswith("/") or not base else posixpath.dirname(base) + "/"
    target = page_url(to_src)
    rel = posixpath.relpath(target or ".", base_dir or ".")
    if target.endswith("/") or not target:
        rel = rel.rstrip("/") + "/" if rel != "." else "./"
    return rel + anchor


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def recipe_src(loaded: LoadedRecipe) -> str:
    return f"recipes/{loaded.id}.md"


def yaml_src(loaded: LoadedRecipe) -> str:
    return f"recipes/{loaded.id}.yaml"


def evidence_src(loaded: LoadedRecipe) -> str:
    return f"recipes/{loaded.id}.evidence.json"


def evidence_display(loaded: LoadedRecipe) -> str:
    """The evidence file's path as problems name it (beside the recipe's display path)."""
    return posixpath.join(posixpath.dirname(loaded.display), posixpath.basename(evidence_src(loaded)))


def model_slug(catalog: Catalog, model: str) -> str:
    return catalog.model_slugs.get(model) or slug(model)


def model_src(catalog: Catalog, model: str) -> str:
    return f"models/{model_slug(catalog, model)}.md"


def gpu_src(gpu_type: str) -> str:
    return f"gpus/{slug(gpu_type)}.md"


_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def notes_html(text: str | None) -> str | None:
    """Notes are Markdown; raw HTML is escaped, and markdown-it refuses javascript:/data: links."""
    if not text:
        return None
    return fmt.fence_safe(_MD.render(text))


@dataclass(frozen=True)
class Figures:
    """A recipe's figures as every page shows them, computed once per render (render_site) and passed to each page
    that shows the recipe: generator.figures' results (derive, comparable_mfu, published_beside) and the shown
    choice between a recomputed and a stated figure."""

    tokens_per_s: float
    usd: float | None
    mfu: float | None
    cv: float | None
    derived: figures.Derived
    comparable: figures.ComparableMfu
    published: figures.PublishedBeside | None
    mfu_peak: str | None = None  # the precision whose peak `mfu` is against, where it is not BF16 by default


FiguresById = Mapping[str, Figures]  # each recipe's Figures by its id: what a page of many recipes is passed


def is_reported(loaded: LoadedRecipe) -> bool:
    return loaded.recipe.status.value == "reported"


def recipe_figures(loaded: LoadedRecipe, catalog: Catalog) -> Figures:
    r = loaded.recipe
    derived = figures.derive(r, catalog)
    # Shown figures are recomputed from the catalog where it can; the stated value otherwise.
    usd = derived.usd_per_million_tokens if derived.usd_per_million_tokens is not None else r.result.usd_per_million_tokens
    recomputed = derived.mfu is not None and not r.result.mfu_note
    mfu = derived.mfu if recomputed else r.result.mfu
    # Reported rows are held against their precision's peak (figures.peak_for): the site says which one.
    peak = derived.peak_precision if recomputed and r.status.value == "reported" else None
    return Figures(r.result.tokens_per_s_per_gpu, usd, mfu, r.result.step_time_cv_percent, derived,
                   figures.comparable_mfu(r, catalog), figures.published_beside(r, catalog), peak)


def figures_by_id(recipes: list[LoadedRecipe], catalog: Catalog) -> dict[str, Figures]:
    """Each recipe's Figures by its id, for a caller without a render (render_site keeps its own, memoised)."""
    return {loaded.id: recipe_figures(loaded, catalog) for loaded in recipes}


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


# "worst ... 1.62e-2 against a bound of 4.07e-2": the number a component test is judged by, where its detail
# states one (the detail is free text; without such a phrase the summary names the test's GPU and date).
_BOUND = re.compile(r"(\d[\d.,]*(?:e-?\d+)?)\s+against a bound of\s+(\d[\d.,]*(?:e-?\d+)?)")


def status_line(loaded: LoadedRecipe) -> str:
    """The badge's date: when the recipe was last verified (its newest component test), measured, or where it was
    published."""
    r = loaded.recipe
    corr = r.correctness
    if r.status.value == "verified" and corr is not None and corr.component_tests:
        return f"verified {fmt.date(max(t.date for t in corr.component_tests))}"
    if r.result.measured is not None:
        return f"measured {fmt.date(r.result.measured)}"
    pub = r.publication
    if pub is not None and pub.release:
        return f"published in release {pub.release}"
    if pub is not None:  # a publication without releases (MLPerf's rounds name themselves in the author)
        return f"published by {r.author.name}"
    return r.status.value


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


def evidence_summary(loaded: LoadedRecipe) -> list[dict[str, str]]:
    """One line per component test and the convergence check: its name, pass/fail and its key number."""
    corr = loaded.recipe.correctness
    if corr is None:
        return []
    out = []
    for t in corr.component_tests:
        bound = _BOUND.search(t.detail or "")
        key = (f"worst error {bound.group(1)} against a bound of {bound.group(2)}" if bound
               else f"{t.gpu}, {fmt.date(t.date)}")
        out.append({"name": t.test, "result": t.result.value, "key": key, "href": f"#component-test-{len(out) + 1}"})
    if corr.convergence is not None:
        c = corr.convergence
        out.append({"name": f"Convergence check, {fmt.plural(c.steps, 'step')}", "result": c.result.value,
                    "key": f"loss correlation {fmt.stated(c.correlation)}, final loss difference "
                           f"{fmt.stated(c.final_loss_difference)}, {fmt.plural(c.pointwise_failures, 'pointwise failure')}",
                    "href": "#convergence"})
    qt = corr.quality_target
    if qt is not None:
        out.append({"name": "Quality target", "result": "reached" if qt.runs_reached == qt.runs else "partly",
                    "key": quality_target_text(loaded) + "; the submitter's runs, not re-run here",
                    "href": "#quality-target"})
    return out


def quality_target_text(loaded: LoadedRecipe) -> str:
    """'eval loss <= 0.925 reached in 10 of 10 runs: 0.92494 (median run)', or "" without a quality target."""
    corr = loaded.recipe.correctness
    qt = corr.quality_target if corr is not None else None
    if qt is None:
        return ""
    return fmt.quality_target(qt.metric, qt.direction, qt.target, qt.runs_reached, qt.runs, qt.reached)


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


def _yesno(value: bool) -> str:
    return "yes" if value else "no"


def _recompute_text(rc: Recompute | None) -> str:
    if rc is None:
        return "not stated"
    text = rc.granularity.value
    if rc.method is not None:
        text += f", {rc.method.value}"
    if rc.num_layers is not None:
        text += f", {fmt.plural(rc.num_layers, 'layer')}"
    if rc.modules:
        text += f" ({', '.join(rc.modules)})"
    return text


def layout_rows(loaded: LoadedRecipe, catalog: Catalog) -> list[tuple[str, str]]:
    lay = loaded.recipe.layout
    rows = [("Label", lay.label), ("Tensor parallel (TP)", str(lay.tp)), ("Pipeline parallel (PP)", str(lay.pp)),
            ("Virtual pipeline chunks (VPP)", str(lay.vpp)), ("Context parallel (CP)", str(lay.cp)),
            ("Expert parallel (EP)", str(lay.ep)), ("Expert tensor parallel (ETP)", str(lay.etp)),
            ("Data parallel (DP)", str(lay.dp)), ("Sequence parallel", _yesno(lay.sequence_parallel)),
            ("FSDP", _yesno(lay.fsdp)), ("Rows per micro-batch", str(lay.rows_per_microbatch))]
    if lay.gradient_accumulation is not None:
        rows.append(("Gradient accumulation", str(lay.gradient_accumulation)))
    if lay.max_tokens_per_gpu is not None:
        rows.append(("Max tokens per GPU", fmt.integer(lay.max_tokens_per_gpu)))
    rows.append(("Recompute", _recompute_text(lay.recompute)))
    if lay.offload is not None:
        rows.append(("Optimizer offload", f"{fmt.percent(lay.offload.optimizer_fraction, 0)} of the optimizer state "
                     f"on the CPU; copies {'overlapped' if lay.offload.overlap_d2h_h2d else 'not overlapped'}"))
    card = catalog.models.get(loaded.recipe.model)
    moe = card is not None and card.architecture is not None and card.architecture.moe is not None
    # A mixture-of-experts recipe that names no dispatcher has not stated it; only a dense model has none.
    rows.append(("MoE dispatcher", lay.dispatcher.value if lay.dispatcher
                 else "not stated" if moe else "none (dense model)"))
    if lay.highlights:
        rows.append(("Highlights", lay.highlights))
    return rows


def _field_rows(model: Any, labels: dict[str, str] | None = None) -> list[tuple[str, str]]:
    rows = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if value is None or isinstance(value, (list, dict)) or isinstance(value, BaseModel):
            continue
        if isinstance(value, bool):
            value = _yesno(value)
        elif isinstance(value, int):
            value = fmt.integer(value)
        elif isinstance(value, float):
            value = fmt.stated(value)
        label = (labels or {}).get(name, name.replace("_", " ").capitalize())
        rows.append((label, str(getattr(value, "value", value))))
    return rows


def workload_rows(loaded: LoadedRecipe) -> dict[str, list[tuple[str, str]] | None]:
    w = loaded.recipe.workload
    out = {"workload": [("Rows", w.rows), ("Tokens per row", fmt.integer(w.row_tokens)),
                        ("Global batch (rows)", fmt.integer(w.global_batch)), ("Precision", w.precision.value)],
           "dataset": None, "build": None}
    # Every recipe page says its training kind, an unstated one as unstated (never read as pre-training).
    out["workload"].append(("Training", TRAINING_TEXT[w.training.value] if w.training is not None
                            else TRAINING_NOT_STATED))
    if w.schedule is not None:
        out["workload"].append(("Learning-rate schedule", schedule_text(loaded)))
    if w.dataset is not None:
        out["dataset"] = _field_rows(w.dataset, {"rows_sha256": "Rows SHA-256"})
        if w.dataset.build is not None:
            out["build"] = _field_rows(w.dataset.build, {"parquet_sha256": "Parquet SHA-256",
                                                         "row_tokens": "Tokens per row"})
    return out


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
    rows.append(("Profiler on", _yesno(res.profiler)))
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


IMPLEMENTATION_TEXT = {"other": "another implementation (another framework, from the same initial weights and rows)",
                       "same": "the same framework with its speed features off"}


def _convergence_rows(c: Any) -> list[tuple[str, str]]:
    rows = [("Result", c.result.value), ("Steps", fmt.integer(c.steps)), ("Correlation", fmt.stated(c.correlation)),
            ("Final loss difference", fmt.stated(c.final_loss_difference)),
            ("Pointwise failures", fmt.integer(c.pointwise_failures))]
    if c.reference:
        rows.append(("Reference arm", c.reference))
    # what the check compared against: a framework against itself says less than two implementations agreeing
    rows.append(("Compared against", IMPLEMENTATION_TEXT[c.implementation.value] if c.implementation else "not stated"))
    return rows + ([("Note", c.note)] if c.note else [])


def peak_memory_text(loaded: LoadedRecipe) -> str | None:
    """'27.70 GiB allocated, 30.10 GiB reserved of the GPU's 80 GB' (what each figure is, where it comes from)."""
    peak = loaded.recipe.result.peak_memory
    if peak is None:
        return None
    parts = [f"{fmt.number(v, 2)} GiB {label}" for v, label in ((peak.allocated_gib, "allocated"),
                                                                 (peak.reserved_gib, "reserved")) if v is not None]
    return f"{', '.join(parts) or 'not stated'} of the GPU's {loaded.recipe.gpu.memory_gb} GB ({peak.source})"


# The all-recipes filter's bands of peak memory per GPU (reserved, else allocated), in GiB: how close a run came to
# the card's memory, from a run's own figure; "not stated" where the recipe has none.
PEAK_MEMORY_BANDS = ("up to 40 GiB", "40-80 GiB", "80-140 GiB", "over 140 GiB", "not stated")


def peak_memory_band(loaded: LoadedRecipe) -> str:
    peak = loaded.recipe.result.peak_memory
    value = (peak.reserved_gib or peak.allocated_gib) if peak is not None else None
    if value is None:
        return PEAK_MEMORY_BANDS[-1]
    return next(band for band, top in zip(PEAK_MEMORY_BANDS, (40, 80, 140, float("inf")), strict=False) if value <= top)


def peak_memory_cell(loaded: LoadedRecipe) -> str:
    """A table's peak memory cell: '27.7 GiB' reserved (allocated where only that is stated), or 'not stated'."""
    peak = loaded.recipe.result.peak_memory
    value = (peak.reserved_gib or peak.allocated_gib) if peak is not None else None
    return f"{fmt.number(value, 1)} GiB" if value is not None else "not stated"


def schedule_text(loaded: LoadedRecipe) -> str | None:
    """The learning-rate schedule the recipe states, in one line."""
    sch = loaded.recipe.workload.schedule
    if sch is None:
        return None
    text = f"peak {sch.peak_lr:g}, {fmt.plural(sch.warmup_steps, 'warm-up step')}, {sch.decay.value}"
    text += f" decay to {sch.min_lr:g}" if sch.decay.value != "constant" else ""
    return text + (f"; {sch.optimizer}" if sch.optimizer else "")


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


def table_row(loaded: LoadedRecipe, f: Figures, catalog: Catalog, page: str) -> dict[str, Any]:
    """One recipe in an index table: display text plus the raw numbers tablesort and the filters read."""
    r = loaded.recipe
    pub = r.publication
    return {
        "href": href(page, recipe_src(loaded)),
        "id": loaded.id,
        "name": loaded.id.split("/")[-1],
        "short_name": compact_name(loaded),
        "model": r.model,
        "model_href": href(page, model_src(catalog, r.model)),
        "gpu_type": r.gpu.type,
        "gpu_href": href(page, gpu_src(r.gpu.type)),
        "gpu_count": str(r.gpu.count),
        "gpus": f"{r.gpu.count} x {r.gpu.type}",
        "label": r.layout.label,
        "status": r.status.value,
        "origin": ORIGIN_PUBLISHED if is_reported(loaded) else ORIGIN_MEASURED,
        "source_href": fmt.safe_url(pub.url) if pub else None,
        "release": (pub.release or "") if pub else "",
        # Sort keys: numbers as text, "" where the value is unknown (sorted last either way; site_src/assets/js).
        "release_sort": ".".join(f"{n:04d}" for n in _release_order(pub.release)) if pub and pub.release else "",
        "gpu_sort": f"{r.gpu.type.lower()} {r.gpu.count:06d}",
        "framework": framework_name(r.stack.framework),
        "precision": r.workload.precision.value,
        "training": r.workload.training.value if r.workload.training else "not stated",
        "peak_memory": peak_memory_band(loaded),
        "training_short": training_kind(loaded).removeprefix("training kind "),
        "precision_name": fmt.peak_name(r.workload.precision.value),
        "mfu_peak": f.derived.peak_precision or "",
        "tokens": fmt.short(f.tokens_per_s),
        "tokens_sort": repr(f.tokens_per_s),
        "ttt": is_time_to_train(loaded),
        "throughput": throughput_kind(loaded),
        "usd": fmt.usd_short(f.usd),
        "usd_sort": repr(f.usd) if f.usd is not None else "",
        "mfu": fmt.mfu_cell(f.mfu, f.mfu_peak),
        "mfu_sort": repr(f.mfu) if f.mfu is not None else "",
        "cv": fmt.percent_value(f.cv, 1),
        "cv_sort": repr(f.cv) if f.cv is not None else "",
        "seq": fmt.sequence(r.workload.row_tokens),
        "seq_sort": str(r.workload.row_tokens),
        "global_batch": str(r.workload.global_batch) if r.workload.global_batch else "not stated",
        **params_cell(loaded, catalog),
        "evidence": evidence_kind(loaded),
        "measured": fmt.date(r.result.measured),
        "measured_sort": r.result.measured.isoformat() if r.result.measured else "",
    }


def params_cell(loaded: LoadedRecipe, catalog: Catalog) -> dict[str, str]:
    """Model size as the tables show it: active parameters per token (N), and for a mixture of experts the total
    (the catalog's total_params) beside it, '3.3B of 30.5B', so that "30B" is never read as a dense 30B."""
    active = loaded.recipe.result.active_params.count
    card = catalog.models.get(loaded.recipe.model)
    total = card.total_params if card is not None else None
    text = fmt.params(active) if not total or total == active else f"{fmt.params(active)} of {fmt.params(total)}"
    return {"params": text, "params_sort": str(active), "params_size": fmt.params(active),
            "params_total": fmt.params(total) if total else fmt.params(active)}


EVIDENCE_NONE = "none published"
EVIDENCE_QUALITY_TARGET = "quality target"


def evidence_kind(loaded: LoadedRecipe) -> str:
    """What correctness evidence a recipe carries, as a table cell and filter: 'convergence', 'component tests',
    'convergence + tests', 'quality target' (a benchmark's target the publication's own runs reached), or 'none
    published'; a check that did not pass, or a target not every counted run reached, says so."""
    corr = loaded.recipe.correctness
    parts = []
    if corr is not None and corr.convergence is not None:
        parts.append("convergence" + ("" if corr.convergence.result.value == "pass" else " (fail)"))
    if corr is not None and corr.component_tests:
        failed = any(t.result.value != "pass" for t in corr.component_tests)
        parts.append(("tests" if parts else "component tests") + (" (fail)" if failed else ""))
    qt = corr.quality_target if corr is not None else None
    if qt is not None:
        parts.append(EVIDENCE_QUALITY_TARGET + ("" if qt.runs_reached == qt.runs else
                                                f" ({qt.runs_reached} of {qt.runs} runs)"))
    return " + ".join(parts) or EVIDENCE_NONE


TRAINING_NAMES = {"pre-training": "pre-training", "sft": "SFT", "lora": "LoRA"}
TRAINING_NOT_STATED = ("not stated: the recipe does not say whether it pre-trains or fine-tunes, so it is ranked "
                       "with neither")
TRAINING_TEXT = {"pre-training": "pre-training: every weight trained from the start (6N FLOPs a token)",
                 "sft": "SFT: supervised fine-tuning of every weight (FLOPs per token as pre-training)",
                 "lora": "LoRA: adapters on a frozen base, no weight gradients for it (MFU counts 4N, not 6N)"}


KIND_NOT_STATED = "training kind not stated"


def training_kind(loaded: LoadedRecipe) -> str:
    """'LoRA', 'SFT' or 'pre-training' (workload.training). Their tokens/s are not a layout choice against each
    other's."""
    training = loaded.recipe.workload.training
    return TRAINING_NAMES[training.value] if training is not None else KIND_NOT_STATED


# The order like groups are listed in: pre-training first (what most questions are about), then what does not say,
# then fine-tuning.
_KIND_ORDER = {"pre-training": 0, KIND_NOT_STATED: 1, "SFT": 2, "LoRA": 3}

# What a recipe's tokens/s per GPU measures. A steady-state rate is taken over a window of training steps; a
# time-to-train figure (result.time_to_train, MLPerf's) is every sample's tokens over the whole run, start-up and the
# evaluations on the way included, so it reads lower than the same layout's step rate and never ranks against one.
THROUGHPUT_STEADY = "steady-state"
THROUGHPUT_TIME_TO_TRAIN = "time to train, evaluation included"
THROUGHPUT_TIME_TO_TRAIN_NO_EVAL = "time to train, evaluation excluded"
# The short label a table puts beside a time-to-train figure, its title, and the table's legend for it.
TTT_LABEL = "TTT"
TTT_TITLE = "time-to-train throughput, not a steady-state step rate"
TTT_MEANING = ("time-to-train throughput: every sample's tokens over the whole run (MLPerf's run_start to "
               "run_stop, evaluation included); ranked only with other time-to-train figures, never with a "
               "steady-state step rate")


def throughput_kind(loaded: LoadedRecipe) -> str:
    """THROUGHPUT_STEADY, or a time to train with or without its evaluations (result.time_to_train)."""
    tt = loaded.recipe.result.time_to_train
    if tt is None:
        return THROUGHPUT_STEADY
    return THROUGHPUT_TIME_TO_TRAIN if tt.evaluation_included else THROUGHPUT_TIME_TO_TRAIN_NO_EVAL


def is_time_to_train(loaded: LoadedRecipe) -> bool:
    return loaded.recipe.result.time_to_train is not None


@dataclass(frozen=True, order=True)
class Like:
    """What makes two recipes' figures comparable: one training kind, one precision and one kind of throughput
    (steady-state or time to train). Every view that ranks or compares (best lines, frontiers, the planner, charts)
    ranks within one Like and names it."""

    kind: str  # training_kind(): "pre-training", "SFT", "LoRA" or "training kind not stated"
    precision: str  # workload.precision's value: "bf16", "fp8-cs", ...
    throughput: str = THROUGHPUT_STEADY  # throughput_kind()

    @property
    def text(self) -> str:
        return f"{self.kind}, {fmt.peak_name(self.precision)}, {self.throughput}"

    @property
    def time_to_train(self) -> bool:
        return self.throughput != THROUGHPUT_STEADY

    @property
    def order(self) -> tuple[int, str, bool, str]:
        # steady-state first within a training kind and precision: a time-to-train line follows its steady twin
        return (_KIND_ORDER.get(self.kind, 9), self.precision, self.time_to_train, self.throughput)


def like(loaded: LoadedRecipe) -> Like:
    return Like(training_kind(loaded), loaded.recipe.workload.precision.value, throughput_kind(loaded))


def by_like(recipes: list[LoadedRecipe]) -> list[tuple[Like, list[LoadedRecipe]]]:
    """Recipes in like groups, pre-training first (Like.order); each group keeps the order given."""
    groups: dict[Like, list[LoadedRecipe]] = {}
    for loaded in recipes:
        groups.setdefault(like(loaded), []).append(loaded)
    return sorted(groups.items(), key=lambda kv: kv[0].order)


def best_layouts(pairs: list[tuple[LoadedRecipe, dict[str, Any]]], by: str) -> list[dict[str, Any]]:
    """The fastest recipe (tokens/s per GPU) for each GPU count, per `by` ("gpu_type" on a model page, "model" on a
    GPU page), sequence length and like group (training kind, precision, throughput kind: none of those is a layout
    choice): the rows a page leads with. `pairs` come fastest first (render._Render.rows), so the first of each key
    is its best; `tried` counts the key's recipes."""
    best: dict[tuple[str, int, Like, int], dict[str, Any]] = {}
    for loaded, row in pairs:
        r = loaded.recipe
        key = (row[by], r.gpu.count, like(loaded), r.workload.row_tokens)
        if key in best:
            best[key]["tried"] += 1
            continue
        group = key[2]
        best[key] = {"what": row[by], "what_href": row["gpu_href" if by == "gpu_type" else "model_href"],
                     "gpu_count": r.gpu.count, "precision": fmt.peak_name(group.precision),
                     "sequence": fmt.integer(key[3]), "kind": group.kind.removeprefix("training kind "),
                     "throughput": group.throughput, "ttt": group.time_to_train,
                     "href": row["href"], "id": row["id"],
                     "name": row["short_name"], "label": row["label"], "tokens": row["tokens"], "mfu": row["mfu"],
                     "tried": 1}
    return [best[k] for k in sorted(best, key=lambda k: (k[0].lower(), k[1], k[2].order, k[3]))]


def compact_name(loaded: LoadedRecipe) -> str:
    """A recipe's name without what its row's other columns already say (GPU type, GPU count, "dgx"):
    'mb-25.09-dgx-gb200-256gpu-fp8-cs-tokendrop' -> 'mb-25.09-fp8-cs-tokendrop'. The full id is the link's title."""
    r = loaded.recipe
    said = {"dgx", slug(r.gpu.type), f"{r.gpu.count}gpu"}
    words = [w for w in loaded.id.split("/")[-1].split("-") if w.lower() not in said]
    return "-".join(words) or loaded.id.split("/")[-1]


def gpu_prices(catalog: Catalog, gpu_types: list[str]) -> list[dict[str, Any]]:
    """One $/GPU-hour input per GPU type on the page, pre-filled from the catalog's instance for that type (the
    cheapest per GPU where there are several) with its source and date; empty where the catalog has no price."""
    out = []
    for gpu_type in sorted(set(gpu_types), key=_caseless):
        offers = sorted(((i.usd_per_hour / i.gpu_count, name, i) for name, i in catalog.instances.items()
                         if i.gpu_type == gpu_type), key=lambda o: (o[0], o[1]))
        entry: dict[str, Any] = {"gpu_type": gpu_type, "value": "", "text": "", "shown": "", "instance": None}
        if offers:
            per_gpu, name, inst = offers[0]
            url, rest = fmt.split_source(inst.source)
            # `value` is what the page computes with (the served figures'); `text` is what a price field shows: the
            # price per GPU to the decimals of the instance's stated price ($27.44705 for 8: 3.43088, not 3.43088125)
            entry.update(value=repr(per_gpu), text=fmt.price_text(per_gpu, inst.usd_per_hour), shown=fmt.usd(per_gpu),
                         instance=name, provider=inst.provider, source_url=url, date=fmt.date(inst.date))
        out.append(entry)
    return out


def gpu_price_text(catalog: Catalog, gpu_type: str) -> str:
    """A GPU page's price line: the catalog's cheapest on-demand price per GPU-hour (gpu_prices) with its instance,
    or why the catalog has none (the GPU's `unpriced`), so that a missing $ / 1M reads as a fact, not a gap."""
    entry = gpu_prices(catalog, [gpu_type])[0]
    if entry["instance"]:
        return (f"{entry['shown']} per GPU-hour ({entry['instance']}, {entry['provider']}, read {entry['date']}); "
                "its recipes' $ / 1M tokens are at their own instance's price")
    spec = catalog.gpus.get(gpu_type)
    reason = spec.unpriced if spec is not None and spec.unpriced else "the catalog states no reason"
    return f"none: {reason}. Its recipes have no $ / 1M tokens until you enter a price of your own"


def compare_src(loaded: LoadedRecipe) -> str:
    """The recipe's side-by-side record, fetched by the compare view (compare.md) for the recipes ticked."""
    return f"recipes/{loaded.id}.compare.json"


# What must be equal for two columns of the compare view to be like with like (design.md's data rules): the GPU
# count, tokens per row, training kind, precision and kind of throughput. (field, the label the view names it by)
LIKE_FIELDS = (("gpu_count", "GPU count"), ("row_tokens", "tokens per row"), ("kind", "training kind"),
               ("precision", "precision"), ("throughput", "kind of throughput"))
def like_fields(loaded: LoadedRecipe) -> dict[str, dict[str, Any]]:
    """A recipe's LIKE_FIELDS, each as the value the compare view matches on and the text it shows."""
    r = loaded.recipe
    group = like(loaded)
    return {"gpu_count": {"value": r.gpu.count, "text": fmt.integer(r.gpu.count)},
            "row_tokens": {"value": r.workload.row_tokens, "text": fmt.integer(r.workload.row_tokens)},
            "kind": {"value": group.kind, "text": group.kind.removeprefix("training kind ")},
            "precision": {"value": group.precision, "text": fmt.peak_name(group.precision)},
            "throughput": {"value": group.throughput, "text": group.throughput}}


def like_src(loaded: LoadedRecipe) -> str:
    """The side-by-side twins of a recipe's folder (its model and GPU type): recipes/<model>/<gpu>.like.json, beside
    the folder (no recipe's own file can take that name)."""
    model_dir, gpu_dir = loaded.id.split("/")[:2]
    return f"recipes/{model_dir}/{gpu_dir}.like.json"


# How many recipes of each like key a folder's twins keep: one more than the compare view's other columns (a column
# already shown is never offered), compare.js MAX_COMPARE.
TWINS_PER_KEY = 4


def like_twins(recipes: list[LoadedRecipe]) -> dict[str, Any]:
    """What the compare view offers in place of a column that is not like with like: the fastest TWINS_PER_KEY
    recipes of one folder (a model on a GPU type) for each GPU count, tokens per row, training kind, precision and
    kind of throughput, fastest first."""
    fastest = sorted(recipes, key=lambda x: (-x.recipe.result.tokens_per_s_per_gpu, x.id))
    kept: dict[tuple[int, int, Like], int] = {}
    out = []
    for loaded in fastest:
        r = loaded.recipe
        key = (r.gpu.count, r.workload.row_tokens, like(loaded))
        kept[key] = kept.get(key, 0) + 1
        if kept[key] > TWINS_PER_KEY:
            continue
        out.append({"id": loaded.id, "name": compact_name(loaded), "href": page_url(recipe_src(loaded)),
                    "gpus": f"{r.gpu.count} x {r.gpu.type}", "label": r.layout.label,
                    "tokens": fmt.short(r.result.tokens_per_s_per_gpu), "like": like_fields(loaded)})
    first = recipes[0].recipe
    return {"model": first.model, "gpu_type": first.gpu.type, "recipes": out}


def compare_record(loaded: LoadedRecipe, f: Figures, catalog: Catalog) -> dict[str, Any]:
    """What the compare view lays side by side, every value already text (formatted here, computed by figures)."""
    r = loaded.recipe
    evidence = [(e["name"], f"{e['result']}: {e['key']}") for e in evidence_summary(loaded)]
    if r.correctness is not None:
        evidence.insert(0, ("Correctness", r.correctness.result.value))
    fields = like_fields(loaded)
    # What decides between layouts comes first (the compare view shows it, and folds every later section): what
    # makes two columns like with like (LIKE_FIELDS), then the layout and its figures.
    sections = [
        ("Decides", [("GPU count", fields["gpu_count"]["text"]), ("Tokens per row", fields["row_tokens"]["text"]),
                     ("Training", fields["kind"]["text"]), ("Precision", fields["precision"]["text"]),
                     ("Throughput", fields["throughput"]["text"]), ("Layout", r.layout.label),
                     ("Tokens/s per GPU", fmt.short(f.tokens_per_s)),
                     ("$ / 1M tokens", fmt.usd_short(f.usd)),
                     ("MFU", fmt.mfu_cell(f.mfu, f.mfu_peak)), ("Memory per GPU", f"{r.gpu.memory_gb} GB"),
                     ("Evidence", evidence_kind(loaded))]),
        ("Recipe", [("Model", r.model), ("GPUs", fmt.gpus(r.gpu.count, r.gpu.type, r.gpu.memory_gb, r.gpu.per_node,
                                                          r.gpu.instance)),
                    ("Status", f"{r.status.value} ({status_line(loaded)})"), ("Author", r.author.name)]),
        ("Figures", [("Step-time CV", fmt.percent_value(f.cv)), ("GPU-hours", fmt.hours(r.result.gpu_hours)),
                     ("Peak memory per GPU", peak_memory_cell(loaded))]),
        ("Layout", layout_rows(loaded, catalog)),
        ("Stack", _field_rows(r.stack, fmt.STACK_LABELS)),
        ("Workload", workload_rows(loaded)["workload"]),
        ("Evidence", evidence or [("Correctness", "none")]),
    ]
    return {"id": loaded.id, "title": f"{fmt.title(r.model, r.gpu.type)} · {r.layout.label}",
            "href": page_url(recipe_src(loaded)), "gpu_type": r.gpu.type, "tokens": f.tokens_per_s,
            "model": r.model, "like": fields, "like_src": like_src(loaded),
            "sections": [[name, [[label, text] for label, text in rows]] for name, rows in sections]}


def plan_rows(recipes: list[LoadedRecipe], page: str) -> list[dict[str, Any]]:
    """What the run planner (site_src/assets/js) needs of each recipe of a page: its GPUs, tokens/s per GPU and like
    group. The planner keeps the recipes of the chosen GPU type that need no more GPUs than one has, and costs each
    with figures.py's formulas at one's price and token count, best first within each like group."""
    out = []
    for group, members in by_like(recipes):
        for loaded in members:
            r = loaded.recipe
            out.append({"id": loaded.id, "href": href(page, recipe_src(loaded)), "name": compact_name(loaded),
                        "label": fmt.plain_title(r.layout.label), "gpu_type": r.gpu.type, "count": r.gpu.count,
                        "tokens": r.result.tokens_per_s_per_gpu, "group": group.text,
                        "kind": group.kind.removeprefix("training kind ")})
    return out


def _caseless(value: str) -> tuple[str, str]:
    """Alphabetical regardless of case, then by case: values that differ only in case ("PyTorch", "Pytorch") keep one
    order in every build (a set's order, which str.lower alone left them in, changes with each process's hash seed)."""
    return value.lower(), value


def filter_options(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def values(key: str, numeric: bool = False) -> list[str]:
        found = {row[key] for row in rows}
        return sorted(found, key=(lambda v: (int(v), v)) if numeric else _caseless)

    return [{"key": "model", "label": "Model", "options": values("model")},
            {"key": "gpu_type", "label": "GPU type", "options": values("gpu_type")},
            {"key": "gpu_count", "label": "GPU count", "options": values("gpu_count", numeric=True)},
            {"key": "status", "label": "Status", "options": values("status")},
            {"key": "origin", "label": "Figures", "options": values("origin")},
            {"key": "framework", "label": "Framework", "options": values("framework")},
            {"key": "training", "label": "Training", "options": values("training")},
            {"key": "precision", "label": "Precision", "options": values("precision")},
            {"key": "seq", "label": "Sequence", "options": sorted({row["seq"] for row in rows},
                                                                  key=lambda v: (int(v.rstrip("k").replace(",", "")), v))},
            {"key": "global_batch", "label": "Global batch", "options": sorted(
                {row["global_batch"] for row in rows},
                key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))},
            {"key": "params_size", "label": "Active params", "options": _by_size({row["params_size"] for row in rows})},
            {"key": "params_total", "label": "Total params", "options": _by_size({row["params_total"] for row in rows})},
            {"key": "evidence", "label": "Evidence", "options": values("evidence")},
            {"key": "peak_memory", "label": "Peak memory", "options": sorted(
                {row["peak_memory"] for row in rows}, key=lambda v: PEAK_MEMORY_BANDS.index(v))}]


def _by_size(texts: set[str]) -> list[str]:
    return sorted(texts, key=lambda v: (float(v[:-1].replace(",", "")) * (1e9 if v.endswith("B") else 1e6), v))


def _point_label(loaded: LoadedRecipe) -> str:
    r = loaded.recipe
    # Only the id's name and catalog keys: no contributor text goes into a page's scripts, even as inert JSON.
    return fmt.plain_title(f"{loaded.id.split('/')[-1]} ({r.gpu.count} x {r.gpu.type})")


def chart_points(recipes: list[LoadedRecipe], figures_of: FiguresById, page: str = "") -> list[dict[str, Any]]:
    """$/1M tokens (x) against tokens/s per GPU (y) for the recipes with a price, each with its page's link, its like
    group ("pre-training, FP8-CS": points of one colour) and whether it is on its group's Pareto frontier (no other
    recipe of the same training kind and precision both cheaper-or-equal and faster-or-equal, one strictly): a LoRA
    point never hides a pre-training one."""
    out = []
    for loaded in sorted(recipes, key=lambda x: like(x).order):  # the scaling chart's group order: the same colours
        f = figures_of[loaded.id]
        if f.usd is not None:
            out.append({"x": round(f.usd, 4), "y": round(f.tokens_per_s, 2), "label": _point_label(loaded),
                        "href": href(page, recipe_src(loaded)) if page else "", "group": like(loaded).text})
    best_y: dict[str, float] = {}
    for point in sorted(out, key=lambda p: (p["x"], -p["y"])):
        point["front"] = point["y"] > best_y.get(point["group"], float("-inf"))
        best_y[point["group"]] = max(best_y.get(point["group"], float("-inf")), point["y"])
    return out


def scaling_points(recipes: list[LoadedRecipe], figures_of: FiguresById, page: str,
                   by_model: bool = False) -> list[dict[str, Any]]:
    """Tokens/s per GPU (y) against the GPU count (x), each point a link to its recipe, in its like group; on a GPU
    page (`by_model`) the group names the model too, so that scaling reads per model and precision (a 125M model's
    tokens/s is no point on a 405B model's curve). Groups come in a stable order: model, then like order."""
    def group(loaded: LoadedRecipe) -> str:
        return f"{loaded.recipe.model}: {like(loaded).text}" if by_model else like(loaded).text

    ordered = sorted(recipes, key=lambda x: ((x.recipe.model.lower() if by_model else ""), like(x).order))
    return [{"x": loaded.recipe.gpu.count, "y": round(figures_of[loaded.id].tokens_per_s, 2),
             "label": _point_label(loaded), "href": href(page, recipe_src(loaded)), "group": group(loaded)}
            for loaded in ordered]


# A recipe id inside free text: model/gpu/name, optionally as recipes/<id>.yaml.
_RECIPE_ID = re.compile(r"(?:recipes/)?([a-z0-9][a-z0-9.-]*/[a-z0-9][a-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9._-]*?)"
                        r"(?:\.ya?ml)?(?![\w./-])")


def named_reference(loaded: LoadedRecipe, by_id: dict[str, LoadedRecipe]) -> LoadedRecipe | None:
    """The recipe `correctness.reference` names, where it names one in the registry by its id (model/gpu/name)."""
    corr = loaded.recipe.correctness
    if corr is None or not corr.reference:
        return None
    for match in _RECIPE_ID.finditer(corr.reference):
        found = by_id.get(match.group(1))
        if found is not None and found.id != loaded.id:
            return found
    return None


def speedup_text(reference: LoadedRecipe, loaded: LoadedRecipe) -> str:
    before = reference.recipe.result.tokens_per_s_per_gpu
    after = loaded.recipe.result.tokens_per_s_per_gpu
    return fmt.speedup(before, after, figures.speedup(before, after))


def reference_rows(recipes: list[LoadedRecipe], by_id: dict[str, LoadedRecipe], page: str) -> list[dict[str, str]]:
    """Each recipe against the recipe it names as its reference, with the speed-up."""
    out = []
    for loaded in sorted(recipes, key=lambda x: x.id):
        ref = named_reference(loaded, by_id)
        if ref is not None:
            out.append({"name": loaded.id.split("/")[-1], "href": href(page, recipe_src(loaded)),
                        "label": loaded.recipe.layout.label, "ref_name": ref.id.split("/")[-1],
                        "ref_href": href(page, recipe_src(ref)), "ref_label": ref.recipe.layout.label,
                        "speedup": speedup_text(ref, loaded)})
    return out


def _release_order(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", release)) or (0,)


def _qualifier(loaded: LoadedRecipe) -> str:
    """What tells a row apart beyond its system, GPUs and precision: the name's other words ('tokendrop', 'mtp')."""
    r = loaded.recipe
    pub = r.publication
    if pub is None:
        return ""
    known = {"mb", f"{r.gpu.count}gpu", *slug(r.gpu.type).split("-"), *slug(pub.system or "").split("-"),
             *slug(r.workload.precision.value).split("-")}
    name = loaded.id.split("/")[-1]
    if pub.release:
        name = name.replace(pub.release, " ")
    return " ".join(w for w in slug(name).split("-") if w not in known and not w.isdigit())


def release_matrix(recipes: list[LoadedRecipe], page: str) -> dict[str, Any] | None:
    """Published layouts of one model across releases (columns) and systems (rows), with the change per release."""
    # A release that names no version ("unstated") has no place in the order; a row is one publisher's line of one
    # like group (a change between two publishers' figures, or between LoRA and pre-training, says nothing).
    published = [x for x in recipes if x.recipe.publication is not None and x.recipe.publication.release
                 and re.search(r"\d", x.recipe.publication.release)]
    if not published:
        return None
    releases = sorted({x.recipe.publication.release for x in published}, key=_release_order)  # type: ignore[union-attr]
    groups: dict[tuple[str, int, str, str, str], dict[str, list[LoadedRecipe]]] = {}
    for loaded in published:
        r = loaded.recipe
        pub = r.publication
        kind = like(loaded).kind
        qualifier = ", ".join(q for q in (_qualifier(loaded), "" if kind == "pre-training" else kind) if q)
        key = (r.gpu.type, r.gpu.count, pub.system or r.author.name, r.workload.precision.value, qualifier)
        groups.setdefault(key, {}).setdefault(pub.release, []).append(loaded)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0].lower(), k[1], k[3], k[4])):
        gpu_type, count, system, precision, qualifier = key
        cells, previous = [], None
        for release in releases:
            found = sorted(groups[key].get(release, []), key=lambda x: x.id)
            entries = [{"href": href(page, recipe_src(x)), "tokens": fmt.short(x.recipe.result.tokens_per_s_per_gpu),
                        "label": x.recipe.layout.label} for x in found]
            change = None
            if len(found) == 1 and previous is not None:
                change = fmt.signed_percent(figures.speedup(previous.recipe.result.tokens_per_s_per_gpu,
                                                            found[0].recipe.result.tokens_per_s_per_gpu))
            if len(found) == 1:
                previous = found[0]
            elif found:
                previous = None  # two rows in one cell: no single figure to compare the next release with
            cells.append({"entries": entries, "change": change})
        rows.append({"gpus": f"{count} x {gpu_type}", "system": system, "precision": precision,
                     "qualifier": qualifier, "cells": cells})
    return {"releases": releases, "rows": rows}


def mfu_formula(loaded: LoadedRecipe, f: Figures) -> str:
    """How the site's MFU of a recipe is computed (figures.mfu), with its numbers: '6 x N (1.2B) x tokens/s per GPU
    / BF16 peak (989 TFLOP/s)'; 4N for a frozen base; the stated figure where the site does not recompute it."""
    r = loaded.recipe
    if f.mfu is None:
        return fmt.DASH
    if f.derived.mfu is None or r.result.mfu_note:
        return "as stated by the recipe" + (f": {r.result.mfu_note}" if r.result.mfu_note else "")
    flops = "4" if figures.frozen_base(r) else "6"
    peak = fmt.peak_name(f.derived.peak_precision or "bf16")
    return (f"{flops} x N ({fmt.params(r.result.active_params.count)}) x tokens/s per GPU / {peak} peak "
            f"({fmt.number(f.derived.peak_flops / 1e12, 0)} TFLOP/s)")


def convergence_summary(loaded: LoadedRecipe) -> str:
    """A recipe's convergence check in one line, or the publication's quality target reached (a benchmark's
    convergence criterion, the submitter's runs), or that it has neither."""
    corr = loaded.recipe.correctness
    c = corr.convergence if corr is not None else None
    if c is None:
        qt = corr.quality_target if corr is not None else None
        if qt is not None:
            return (f"quality target reached in {qt.runs_reached} of {fmt.plural(qt.runs, 'run')} (the submitter's; "
                    "no convergence check published)")
        return "none published" if is_reported(loaded) else "none yet"
    return (f"{c.result.value}: {fmt.plural(c.steps, 'step')}, loss correlation {fmt.stated(c.correlation)}, final "
            f"loss difference {fmt.stated(c.final_loss_difference)}")


def runs_text(loaded: LoadedRecipe) -> str:
    """How many runs a recipe's tokens/s per GPU comes from: 'median of 3 runs', '1 run', or that the publication
    does not say (one figure as stated)."""
    res = loaded.recipe.result
    runs = len(res.time_to_train.runs_ms) if res.time_to_train is not None else res.runs
    if runs is None:
        return "not stated (one published figure)"
    return "1 run" if runs == 1 else f"median of {fmt.plural(runs, 'run')}"


_REFERENCE_ARM = re.compile(r"\breference arm:\s*", re.IGNORECASE)


def _reference_arm(note: str) -> str | None:
    """The reference arm a convergence note names ('candidate arm: ...; reference arm: X; ...' -> X): up to the
    first ';' outside brackets."""
    found = _REFERENCE_ARM.search(note)
    if found is None:
        return None
    depth = 0
    for i, ch in enumerate(note[found.end():]):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == ";" and depth <= 0:
            return note[found.end():found.end() + i].strip()
    return note[found.end():].strip()


def convergence_against(loaded: LoadedRecipe) -> str:
    """What a recipe's convergence evidence compared against: its convergence check's reference arm (and the recipe
    it names as its reference), or the publication's quality target, or that there was nothing to compare."""
    corr = loaded.recipe.correctness
    if corr is None:
        return "nothing: no convergence check"
    parts = []
    c = corr.convergence
    if c is not None:
        arm = _reference_arm(c.note or "")
        parts.append(f"reference arm: {arm}" if arm else (c.note or "its reference arm (not described)"))
        if corr.reference:
            parts.append(f"the reference: {corr.reference}")
    qt = corr.quality_target
    if qt is not None:
        parts.append(f"the benchmark's quality target, {qt.metric} {qt.direction} {fmt.stated(qt.target)} (median run "
                     f"{fmt.stated(qt.reached)})")
    return "; ".join(parts) if parts else "nothing: no convergence check"


@dataclass(frozen=True)
class FrameworkGroup:
    """Recipes of one model on one GPU type, of one training kind, precision and sequence length, from two or more
    frameworks: the fastest recipe of each framework, side by side."""

    gpu_type: str
    like: Like
    row_tokens: int
    rows: tuple[LoadedRecipe, ...]  # one per framework, fastest first

    @property
    def title(self) -> str:
        return f"{self.gpu_type}, {self.like.text}, sequence {fmt.sequence(self.row_tokens)}"


def framework_groups(recipes: list[LoadedRecipe]) -> list[FrameworkGroup]:
    """Every like line of a model's recipes (GPU type, training kind, precision, sequence) that two or more
    frameworks (generator.frameworks.framework_name of stack.framework) have recipes on."""
    lines: dict[tuple[str, Like, int], dict[str, LoadedRecipe]] = {}
    for loaded in recipes:
        r = loaded.recipe
        key = (r.gpu.type, like(loaded), r.workload.row_tokens)
        name = framework_name(r.stack.framework)
        best = lines.setdefault(key, {}).get(name)
        if best is None or (r.result.tokens_per_s_per_gpu, best.id) > (best.recipe.result.tokens_per_s_per_gpu, loaded.id):
            lines[key][name] = loaded
    out = []
    for (gpu_type, group, tokens), by_framework in lines.items():
        if len(by_framework) >= 2:
            rows = sorted(by_framework.values(), key=lambda x: (-x.recipe.result.tokens_per_s_per_gpu, x.id))
            out.append(FrameworkGroup(gpu_type, group, tokens, tuple(rows)))
    return sorted(out, key=lambda g: (g.gpu_type.lower(), g.like.order, g.row_tokens))


def framework_rows(group: FrameworkGroup, figures_of: FiguresById, page: str,
                   has_evidence: Callable[[LoadedRecipe], bool]) -> list[dict[str, Any]]:
    """A side-by-side group's rows as text, each linking to its recipe and, where it has one, its evidence file."""
    out = []
    for loaded in group.rows:
        r = loaded.recipe
        f = figures_of[loaded.id]
        out.append({"framework": framework_name(r.stack.framework), "stack": r.stack.framework, "id": loaded.id,
                    "name": compact_name(loaded), "href": href(page, recipe_src(loaded)),
                    "evidence_href": href(page, evidence_src(loaded)) if has_evidence(loaded) else None,
                    "status": r.status.value, "gpus": f"{r.gpu.count} x {r.gpu.type}", "label": r.layout.label,
                    "tokens": fmt.short(f.tokens_per_s), "tokens_value": f.tokens_per_s,
                    "mfu": fmt.mfu_cell(f.mfu, f.mfu_peak), "mfu_value": f.mfu,
                    "mfu_formula": mfu_formula(loaded, f), "usd": fmt.usd_short(f.usd), "usd_value": f.usd,
                    "runs": runs_text(loaded), "convergence": convergence_summary(loaded),
                    "against": convergence_against(loaded), "memory": peak_memory_cell(loaded)})
    return out
