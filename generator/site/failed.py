"""The model page's "What failed, next to what worked" section: per GPU count, the fastest recipe that worked and
every failed layout the registry holds for that model (failed/<model slug>.yaml, generator/failed.py). Pure:
data in, a dict for templates/failed_layouts.md.j2 out; every number is formatted here, none computed."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from generator.failed import FOLDER, FailedLayout, FailedLayouts, load_all
from generator.load import LoadedRecipe
from generator.site import formatting as fmt
from generator.site import views


def _layout_text(item: FailedLayout) -> str:
    lay = item.layout
    text = (f"TP{lay.tp} PP{lay.pp} DP{lay.dp} ZeRO-{lay.zero_stage}, micro-batch {lay.rows_per_microbatch}, "
            f"gradient accumulation {lay.gradient_accumulation}")
    if item.stated is not None:
        text += (f" (stated anyway: MFU {fmt.number(item.stated.mfu_percent, 1)}%, "
                 f"{fmt.short(item.stated.tokens_per_s_per_gpu)} tokens/s per GPU, "
                 f"{fmt.number(item.stated.memory_gb, 1)} GB)")
    return text


def _where(item: FailedLayout) -> str:
    pub = item.publication
    return f"line {pub.line}" + (f", column {pub.column}" if pub.column else "")


def section(data: FailedLayouts | None, group: list[LoadedRecipe], page: str) -> dict[str, Any] | None:
    """Rows by GPU type and count (ascending): the fastest recipe that worked there (or none) and the failed
    layouts, each with where the publication states it. None when the model has no failed layouts."""
    if data is None or not data.layouts:
        return None
    failed: dict[tuple[str, int], list[FailedLayout]] = {}
    for item in data.layouts:
        failed.setdefault((item.gpu.type, item.gpu.count), []).append(item)
    worked: dict[tuple[str, int], list[LoadedRecipe]] = {}
    for loaded in group:
        worked.setdefault((loaded.recipe.gpu.type, loaded.recipe.gpu.count), []).append(loaded)
    rows = []
    for key in sorted(set(failed) | set(worked), key=lambda k: (k[0], k[1])):
        gpu_type, count = key
        ok = worked.get(key, [])
        best = max(ok, key=lambda x: x.recipe.result.tokens_per_s_per_gpu) if ok else None
        bad = failed.get(key, [])
        rows.append({
            "gpus": f"{count} {gpu_type}",
            "worked": len(ok),
            "failed": len(bad),
            "best": None if best is None else {
                "href": views.href(page, views.recipe_src(best)), "label": best.recipe.layout.label,
                "tokens": fmt.short(best.recipe.result.tokens_per_s_per_gpu),
                "micro": f"micro-batch {best.recipe.layout.rows_per_microbatch}"},
            "layouts": [{"layout": _layout_text(item), "outcome": item.outcome, "where": _where(item),
                       "url": fmt.safe_url(item.publication.url)} for item in bad],
        })
    return {"rows": rows, "total": len(data.layouts)}


def _stamp(root: Path) -> tuple[tuple[str, int, int], ...]:
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted((root / FOLDER).glob("*.yaml")))


@lru_cache(maxsize=4)
def _load(root: str, stamp: tuple[tuple[str, int, int], ...]) -> dict[str, FailedLayouts]:
    """failed/*.yaml by model, re-read when a file's stamp changes (mkdocs serve rebuilds). A file that does not
    validate stops the build with its problems: the page must not silently drop what failed."""
    data, problems = load_all(Path(root))
    if problems:
        raise ValueError("\n".join(str(p) for p in problems))
    return data


def for_model(root: Path, model: str, group: list[LoadedRecipe], page: str) -> dict[str, Any] | None:
    """The section for one model page (None: the model has no failed layouts)."""
    return section(_load(str(root), _stamp(root)).get(model), group, page)
