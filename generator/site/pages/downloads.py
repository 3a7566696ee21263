"""The downloads (downloads/): recipes.json, recipes.csv, frameworks.csv and recipe.schema.json."""

from __future__ import annotations

import json

from generator import figures
from generator.frameworks import framework_name
from generator.load import LoadedRecipe
from generator.models import Recipe
from generator.site import formatting as fmt
from generator.site import views
from generator.site.page import DOWNLOADS, Page, SiteRun, group_by
from generator.site.pages.model import framework_groups, framework_rows
from generator.site.pages.schema import parsed_schema
from generator.site.views import Figures


def download_links(page: str) -> list[dict[str, str]]:
    """The downloads as the home and all-recipes pages list them: name, link from `page`, what it holds."""
    return [{"name": name, "href": views.href(page, f"{DOWNLOADS}/{name}"), "what": what} for name, what in (
        ("recipes.json", "every recipe with its derived figures"),
        ("recipes.csv", "one row per recipe, the table's figures (in a text cell, a =, +, -, @, tab or carriage "
                        "return at its start or after a , ; | tab or line end gets a ' before it, so that no "
                        "spreadsheet runs it as a formula whatever separator it splits on; figures are numbers)"),
        ("frameworks.csv", "frameworks side by side: per model, GPU type, training kind, precision and sequence that "
                           "two or more frameworks share, each framework's fastest recipe with its figures, MFU "
                           "formula, convergence result and evidence file"),
        ("recipe.schema.json", "the recipe's JSON Schema (2020-12)"))]


# precision, training and mfu_peak say what an MFU is against: the precision's peak for reported rows, 4N for LoRA;
# throughput what tokens/s per GPU is (views.throughput_kind: steady-state, or a time to train with its evaluations);
# the last three are figures.comparable_mfu's: 6N over the dense BF16 peak, Megatron's count (with the causal
# attention term) over the row's peak and over BF16.
CSV_COLUMNS = ["id", "model", "gpu_type", "gpu_count", "instance", "status", "framework", "framework_stated", "layout",
               "precision",
               "training", "tokens_per_s_per_gpu", "throughput", "usd_per_million_tokens", "mfu", "mfu_peak",
               "step_time_cv_percent", "measured", "mfu_6n_bf16", "mfu_megatron", "mfu_megatron_bf16",
               "flops_per_token_6n", "published_tflops_per_gpu", "published_flops_per_token", "published_mfu",
               "peak_memory_allocated_gib", "peak_memory_reserved_gib", "peak_memory_stated_gb"]


def _json_record(loaded: LoadedRecipe, f: Figures) -> str:
    """One recipe of recipes.json, as json.dumps(indent=1) writes it two levels down ({"recipes": [here]})."""
    d = f.derived
    b = f.published
    record = {"id": loaded.id, "path": loaded.display, "recipe": loaded.data, "derived": {
        "usd_per_million_tokens": d.usd_per_million_tokens, "mfu": d.mfu, "window_tokens": d.window_tokens,
        "peak_flops": d.peak_flops, "peak_precision": d.peak_precision,
        "instance_usd_per_hour": d.instance_usd_per_hour,
        **({"published_flops_per_token": b.published_flops_per_token, "published_mfu": b.published_mfu,
            "flops_per_token_6n": b.ours_flops_per_token} if b is not None else {})}}
    return "  " + json.dumps(record, indent=1, default=str).replace("\n", "\n  ")


def _csv_record(loaded: LoadedRecipe, f: Figures) -> str:
    r = loaded.recipe
    c = f.comparable
    # Text cells neutralised against formula injection (fmt.csv_text) and quoted where they hold any separator
    # (fmt.csv_line), figures and the GPU count left as numbers.
    text = [fmt.csv_text(cell) for cell in (loaded.id, r.model, r.gpu.type)]
    return fmt.csv_line([
        *text, str(r.gpu.count), fmt.csv_text(r.gpu.instance or ""), fmt.csv_text(r.status.value),
        fmt.csv_text(framework_name(r.stack.framework)), fmt.csv_text(r.stack.framework), fmt.csv_text(r.layout.label),
        r.workload.precision.value, r.workload.training.value if r.workload.training else "",
        fmt.csv_number(f.tokens_per_s), views.throughput_kind(loaded), fmt.csv_number(f.usd), fmt.csv_number(f.mfu),
        f.derived.peak_precision or "", fmt.csv_number(f.cv),
        fmt.csv_text(fmt.date(r.result.measured)) if r.result.measured else "",
        *(fmt.csv_number(x) for x in (c.six_n_bf16, c.megatron, c.megatron_bf16)),
        *_published_cells(r, f),
        # stated_gb: a publication's figure in its own GB, allocated or reserved not stated (PeakMemory.stated_gb)
        *(fmt.csv_number(getattr(r.result.peak_memory, k, None)) for k in ("allocated_gib", "reserved_gib",
                                                                            "stated_gb"))])


def _published_cells(recipe: Recipe, f: Figures) -> list[str]:
    """recipes.csv's FLOP counts a token (6N, 4N on a frozen base) and, where the publication states Model TFLOP/s
    per GPU, its figure, the count it implies and its MFU over the same peak as `mfu` (figures.published_beside)."""
    six_n = 6.0 * recipe.result.active_params.count * (figures.FROZEN_BASE_FRACTION if figures.frozen_base(recipe)
                                                         else 1.0)
    b = f.published
    if b is None:
        return [fmt.csv_number(six_n), "", "", ""]
    return [fmt.csv_number(six_n), *(fmt.csv_number(x) for x in (b.published_tflops_per_gpu,
                                                                 b.published_flops_per_token, b.published_mfu))]


FRAMEWORK_COLUMNS = ["model", "gpu_type", "training", "precision", "throughput", "sequence", "framework",
                     "framework_stated", "id", "status", "tokens_per_s_per_gpu", "runs", "mfu", "mfu_formula",
                     "usd_per_million_tokens", "peak_memory", "convergence", "convergence_against", "evidence"]


def _frameworks_csv(run: SiteRun) -> str:
    """downloads/frameworks.csv: the model pages' side-by-side tables, one line per framework's recipe."""
    lines = [fmt.csv_line(FRAMEWORK_COLUMNS)]
    for model, group in group_by(run.registry.recipes, lambda x: x.recipe.model).items():
        for side in framework_groups(group):
            for row in framework_rows(side, run.figures, "index.md", run.has_evidence):
                lines.append(fmt.csv_line([
                    fmt.csv_text(model), fmt.csv_text(side.gpu_type), fmt.csv_text(side.like.kind),
                    side.like.precision, side.like.throughput, str(side.row_tokens), fmt.csv_text(row["framework"]),
                    fmt.csv_text(row["stack"]), fmt.csv_text(row["id"]),
                    row["status"], fmt.csv_number(row["tokens_value"]), fmt.csv_text(row["runs"]),
                    fmt.csv_number(row["mfu_value"]), fmt.csv_text(row["mfu_formula"]), fmt.csv_number(row["usd_value"]),
                    fmt.csv_text(row["memory"]), fmt.csv_text(row["convergence"]), fmt.csv_text(row["against"]),
                    fmt.csv_text(f"recipes/{row['id']}.evidence.json") if row["evidence_href"] else ""]))
    return "".join(lines)


def files(run: SiteRun) -> dict[str, Page]:
    """downloads/: each recipe's JSON record and CSV line memoised under its key."""
    registry = run.registry
    ordered = sorted(registry.recipes, key=lambda x: x.id)
    records = [run.memo.get(("json", run.keys[x.id]), lambda x=x: _json_record(x, run.figures[x.id])) for x in ordered]
    # What json.dumps({"recipes": [...]}, indent=1) writes, assembled from the memoised records.
    recipes_json = '{\n "recipes": [\n' + ",\n".join(records) + "\n ]\n}\n" if records else '{\n "recipes": []\n}\n'
    rows = [run.memo.get(("csv", run.keys[x.id]), lambda x=x: _csv_record(x, run.figures[x.id])) for x in ordered]
    return {
        f"{DOWNLOADS}/recipes.json": Page(recipes_json),
        f"{DOWNLOADS}/recipes.csv": Page(fmt.csv_line(CSV_COLUMNS) + "".join(rows)),
        f"{DOWNLOADS}/frameworks.csv": Page(_frameworks_csv(run)),
        f"{DOWNLOADS}/recipe.schema.json": Page(json.dumps(parsed_schema(registry, run.memo), indent=1,
                                                           default=str) + "\n"),
    }
