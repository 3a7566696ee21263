"""What several page kinds show of a recipe, as plain values: its pages' paths and links, its Figures (computed
once per render), its status, like group, kind of throughput, evidence and peak memory as text, and its layout,
workload and stack rows (the recipe and compare pages share them). Figures come from generator.figures, text from
.formatting; what one page kind alone shows is in generator.site.pages.<kind>.

Templates receive these values and only lay them out; nothing here touches HTML.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from generator import figures
from generator.catalog import Catalog
from generator.load import LoadedRecipe
from generator.models import Convergence, Recompute
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


IMPLEMENTATION_TEXT = {"other": "another implementation (another framework, from the same initial weights and rows)",
                       "same": "the same framework with its speed features off"}


def convergence_failure(c: Convergence) -> str:
    """'; failed because ...' for a failing convergence check that records why (its figures may all look in bounds,
    e.g. a floor rule failed), else ''."""
    return f"; failed because {c.failed_because}" if c.failed_because else ""


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
        key = (f"loss correlation {fmt.stated(c.correlation)}, final loss difference "
               f"{fmt.stated(c.final_loss_difference)}, {fmt.plural(c.pointwise_failures, 'pointwise failure')}")
        if c.reference:
            key += f"; against {c.reference}"
        key += convergence_failure(c)
        out.append({"name": f"Convergence check, {fmt.plural(c.steps, 'step')}", "result": c.result.value,
                    "key": key, "href": "#convergence"})
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


def yes_no(value: bool) -> str:
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
            ("Data parallel (DP)", str(lay.dp)), ("Sequence parallel", yes_no(lay.sequence_parallel)),
            ("FSDP", yes_no(lay.fsdp)), ("Rows per micro-batch", str(lay.rows_per_microbatch))]
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


def model_field_rows(model: Any, labels: dict[str, str] | None = None) -> list[tuple[str, str]]:
    rows = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if value is None or isinstance(value, (list, dict)) or isinstance(value, BaseModel):
            continue
        if isinstance(value, bool):
            value = yes_no(value)
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
        out["dataset"] = model_field_rows(w.dataset, {"rows_sha256": "Rows SHA-256"})
        if w.dataset.build is not None:
            out["build"] = model_field_rows(w.dataset.build, {"parquet_sha256": "Parquet SHA-256",
                                                         "row_tokens": "Tokens per row"})
    return out


def peak_memory_text(loaded: LoadedRecipe) -> str | None:
    """'27.70 GiB allocated, 30.10 GiB reserved of the GPU's 80 GB' (what each figure is, where it comes from); a
    publication's figure whose kind it does not state reads as such: '11.9 GB as published (allocated or reserved
    not stated) of the GPU's 80 GB'."""
    peak = loaded.recipe.result.peak_memory
    if peak is None:
        return None
    parts = [f"{fmt.number(v, 2)} GiB {label}" for v, label in ((peak.allocated_gib, "allocated"),
                                                                 (peak.reserved_gib, "reserved")) if v is not None]
    if peak.stated_gb is not None:
        parts.append(f"{peak.stated_gb:g} GB as published ({STATED_KIND})")
    return f"{', '.join(parts) or 'not stated'} of the GPU's {loaded.recipe.gpu.memory_gb} GB ({peak.source})"


# What a stated_gb figure does not say (PeakMemory.stated_gb): shown beside it wherever it appears (the recipe page;
# the tables and the filter's bands, shorter).
STATED_KIND = "allocated or reserved not stated"
STATED_SHORT = "as published, kind not stated"
# The all-recipes filter's bands of peak memory per GPU: how close a run came to the card's memory. A band says which
# figure it reads: reserved GiB (else allocated), or, where a recipe has neither, the publication's stated GB figure
# of unstated kind (PeakMemory.stated_gb), in bands of their own; "not stated" where the recipe has none.
_BAND_TOPS = (40, 80, 140, float("inf"))
_BAND_RANGES = ("up to 40", "40-80", "80-140", "over 140")
MEASURED_BANDS = tuple(f"{r} GiB (reserved, else allocated)" for r in _BAND_RANGES)
STATED_BANDS = tuple(f"{r} GB ({STATED_SHORT})" for r in _BAND_RANGES)
PEAK_MEMORY_BANDS = (*MEASURED_BANDS, *STATED_BANDS, "not stated")


def peak_memory_figure(loaded: LoadedRecipe) -> tuple[float, bool] | None:
    """The figure a table shows and the filter bands: reserved GiB, else allocated (True: of a stated kind), else the
    publication's stated GB of unstated kind (False); None where the recipe states none."""
    peak = loaded.recipe.result.peak_memory
    if peak is None:
        return None
    known = peak.reserved_gib or peak.allocated_gib
    if known is not None:
        return known, True
    stated = getattr(peak, "stated_gb", None)
    return (stated, False) if stated is not None else None


def peak_memory_band(loaded: LoadedRecipe) -> str:
    figure = peak_memory_figure(loaded)
    if figure is None:
        return PEAK_MEMORY_BANDS[-1]
    value, known = figure
    bands = MEASURED_BANDS if known else STATED_BANDS
    return next(band for band, top in zip(bands, _BAND_TOPS, strict=True) if value <= top)


def peak_memory_cell(loaded: LoadedRecipe) -> str:
    """A table's peak memory cell: '27.7 GiB' reserved (allocated where only that is stated), '11.9 GB (as
    published, kind not stated)' where a publication states a figure of unstated kind, or 'not stated'."""
    figure = peak_memory_figure(loaded)
    if figure is None:
        return "not stated"
    value, known = figure
    return f"{fmt.number(value, 1)} GiB" if known else f"{value:g} GB ({STATED_SHORT})"


def schedule_text(loaded: LoadedRecipe) -> str | None:
    """The learning-rate schedule the recipe states, in one line."""
    sch = loaded.recipe.workload.schedule
    if sch is None:
        return None
    text = f"peak {sch.peak_lr:g}, {fmt.plural(sch.warmup_steps, 'warm-up step')}, {sch.decay.value}"
    text += f" decay to {sch.min_lr:g}" if sch.decay.value != "constant" else ""
    return text + (f"; {sch.optimizer}" if sch.optimizer else "")


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
    for gpu_type in sorted(set(gpu_types), key=caseless):
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


def like_src(loaded: LoadedRecipe) -> str:
    """The side-by-side twins of a recipe's folder (its model and GPU type): recipes/<model>/<gpu>.like.json, beside
    the folder (no recipe's own file can take that name)."""
    model_dir, gpu_dir = loaded.id.split("/")[:2]
    return f"recipes/{model_dir}/{gpu_dir}.like.json"


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


def release_order(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", release)) or (0,)


def caseless(value: str) -> tuple[str, str]:
    """Alphabetical regardless of case, then by case: values that differ only in case ("PyTorch", "Pytorch") keep one
    order in every build (a set's order, which str.lower alone left them in, changes with each process's hash seed)."""
    return value.lower(), value
