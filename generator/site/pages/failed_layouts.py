"""The model page's "What failed, next to what worked" section: per GPU count, the fastest recipe that worked and
every failed layout the registry holds for that model (failed/<model slug>.yaml, generator/failed.py). Pure:
data in, a dict for templates/failed_layouts.md.j2 out; every number is formatted here, none computed."""

from __future__ import annotations

import math
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
        text += f" (stated anyway: {_stated(item)})"
    return text


def _stated(item: FailedLayout) -> str:
    """The figures a publication states for a layout it marks as failed; "" where it states none."""
    if item.stated is None:
        return ""
    return (f"MFU {fmt.number(item.stated.mfu_percent, 1)}%, {fmt.short(item.stated.tokens_per_s_per_gpu)} tokens/s "
            f"per GPU, {fmt.number(item.stated.memory_gb, 1)} GB")


def _where(item: FailedLayout) -> str:
    """Where the publication states it, as a reader finds it: the importer's locator (a figure's panel, row, trace
    and point; a table's row) where it wrote one, else the line (and column) of the document."""
    pub = item.publication
    return pub.locator or f"line {pub.line}" + (f", column {pub.column}" if pub.column else "")


def _line_col(item: FailedLayout) -> str:
    pub = item.publication
    return f"line {pub.line}" + (f", column {pub.column}" if pub.column else "")


BOTH = "crashed or out of memory"  # the publication's "crashed/oom": one of the two, not told apart


def outcome_kind(outcome: str) -> str:
    """What happened, as the publication tells it apart: out of memory, a crash, or (its "crashed/oom") either, not
    told apart. Nothing is inferred beyond the publication's words."""
    text = outcome.lower()
    oom = "oom" in text or "out of memory" in text
    crash = "crash" in text
    if oom and crash:
        return BOTH
    return "out of memory" if oom else "crashed" if crash else outcome


def _distance(item: FailedLayout, loaded: LoadedRecipe) -> float:
    """How far a recipe's layout is from a failed one: the sum of |log2| ratios of TP, PP, DP and micro-batch (one
    doubling of any is 1). Only recipes on the same GPU type and count are candidates (_Worked)."""
    return _apart(_failed_shape(item), _shape(loaded))


def _failed_shape(item: FailedLayout) -> tuple[float, ...]:
    lay = item.layout
    return lay.tp, lay.pp, lay.dp, lay.rows_per_microbatch


def _shape(loaded: LoadedRecipe) -> tuple[float, ...]:
    r = loaded.recipe
    return r.layout.tp, r.layout.pp, max(r.layout.dp, 1), r.layout.rows_per_microbatch or 1


def _apart(failed: tuple[float, ...], worked: tuple[float, ...]) -> float:
    return sum(abs(math.log2(a / b)) for a, b in zip(failed, worked, strict=True))


def _preferred(loaded: LoadedRecipe) -> tuple[float, str]:
    """Of recipes equally near, the faster (then the first id)."""
    return -loaded.recipe.result.tokens_per_s_per_gpu, loaded.id


class _Worked:
    """A group's recipes by GPU type and count and by layout shape, the preferred recipe of each shape: the committed
    registry has ~1,500 distinct failed layouts and ~350 recipes on a GPU type but only dozens of shapes, and a
    shape's recipes are all equally near any failed layout."""

    def __init__(self, group: list[LoadedRecipe]) -> None:
        self.shapes: dict[tuple[str, int], dict[tuple[float, ...], LoadedRecipe]] = {}
        for loaded in group:
            shapes = self.shapes.setdefault((loaded.recipe.gpu.type, loaded.recipe.gpu.count), {})
            shape = _shape(loaded)
            if shape not in shapes or _preferred(loaded) < _preferred(shapes[shape]):
                shapes[shape] = loaded

    def nearest(self, item: FailedLayout) -> LoadedRecipe | None:
        shapes = self.shapes.get((item.gpu.type, item.gpu.count))
        if not shapes:
            return None
        failed = _failed_shape(item)
        return min(shapes.items(), key=lambda kv: (_apart(failed, kv[0]), *_preferred(kv[1])))[1]


def nearest_worked(item: FailedLayout, group: list[LoadedRecipe]) -> LoadedRecipe | None:
    """The recipe on the same GPU type and count whose layout is nearest the failed one (_distance), the faster on a
    tie; None where no recipe worked on that many GPUs of that type (a layout on another count is not a neighbour:
    what fits in memory and how fast it runs change with the count)."""
    return _Worked(group).nearest(item)


def distinct_failures(data: FailedLayouts, group: list[LoadedRecipe], page: str) -> list[dict[str, Any]]:
    """Each failed layout once (the publication lists some more than once: "times" counts them), sorted by GPU type,
    count and layout, with its outcome kind and the nearest layout that worked."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    worked = _Worked(group)
    for item in data.layouts:
        lay = item.layout
        key = (item.gpu.type, item.gpu.count, lay.tp, lay.pp, lay.dp, lay.zero_stage, lay.rows_per_microbatch,
               lay.gradient_accumulation, lay.global_batch, lay.row_tokens, item.outcome)
        if key in seen:
            seen[key]["times"] += 1
            continue
        near = worked.nearest(item)
        seen[key] = {
            "gpus": f"{item.gpu.count} {item.gpu.type}", "count": item.gpu.count, "tp": lay.tp,
            "pp": lay.pp, "dp": lay.dp, "zero": lay.zero_stage, "micro": lay.rows_per_microbatch,
            "accumulation": lay.gradient_accumulation, "outcome": outcome_kind(item.outcome), "times": 1,
            "stated": _stated(item),
            "where": _where(item), "line_col": _line_col(item), "url": fmt.safe_url(item.publication.url),
            "near": None if near is None else {
                "href": views.href(page, views.recipe_src(near)), "label": near.recipe.layout.label,
                "gpus": f"{near.recipe.gpu.count} {near.recipe.gpu.type}",
                "tokens": fmt.short(near.recipe.result.tokens_per_s_per_gpu)}}
    return [seen[k] for k in sorted(seen, key=lambda k: (k[0].lower(), *k[1:10], k[10]))]


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
                         "line_col": _line_col(item), "url": fmt.safe_url(item.publication.url)} for item in bad],
        })
    distinct = distinct_failures(data, group, page)
    kinds = sorted({d["outcome"] for d in distinct})
    return {"rows": rows, "total": len(data.layouts), "distinct": distinct, "kinds": kinds, "untold": BOTH in kinds,
            "open": len(distinct) <= OPEN_UP_TO, "no_neighbour": sum(d["near"] is None for d in distinct)}


# A failures table of more rows than this is folded at first (on a phone the full list was 62,000 px tall).
OPEN_UP_TO = 30


def _stamp(root: Path) -> tuple[tuple[str, int, int], ...]:
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted((root / FOLDER).glob("*.yaml")))


class FailedLayoutsInvalid(ValueError):
    """A failed/*.yaml file that does not validate; str() is its problems, one located line each."""


def _load(root: Path, cache: dict[tuple[Any, ...], Any]) -> dict[str, FailedLayouts]:
    """failed/*.yaml by model, re-read when a file's stamp changes (`cache`: the serve-time state's, kept across
    mkdocs serve rebuilds). A file that does not validate stops the build with its problems: the page must not
    silently drop what failed."""
    key = (str(root), _stamp(root))
    if key not in cache:
        data, problems = load_all(root)
        if problems:
            raise FailedLayoutsInvalid("\n".join(str(p) for p in problems))
        cache.clear()  # only the files as they are now
        cache[key] = data
    return cache[key]


def for_model(root: Path, model: str, group: list[LoadedRecipe], page: str,
              cache: dict[tuple[Any, ...], Any] | None = None) -> dict[str, Any] | None:
    """The section for one model page (None: the model has no failed layouts)."""
    return section(_load(root, cache if cache is not None else {}).get(model), group, page)
