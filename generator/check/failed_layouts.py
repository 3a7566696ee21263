"""failed/<model slug>.yaml as check sees it: each file read and validated as the site reads it (generator/failed.py),
then what it refers to: its model and each GPU type in the catalog, the file named after its model, and each layout
filling its GPUs (DP x TP x PP = the GPU count, whole nodes). The global batch is the publication's statement (the
playbook states some that contradict DP x MBS x GradAcc) and is not judged here."""

from __future__ import annotations

from pathlib import Path

from generator import failed
from generator.catalog import Catalog
from generator.check import provenance
from generator.check.cache import CheckCache, input_digest
from generator.load import YamlDocument, field_name, file_kind_problem
from generator.problems import Problem
from generator.registry import display_path


def check(root: Path, catalog: Catalog, paths: list[Path], cache: CheckCache | None = None) -> list[Problem]:
    """Problems of the given failed-layouts files; with `cache`, a file whose bytes it knows is not read again."""
    problems: list[Problem] = []
    for path in paths:
        display = display_path(path, root)
        digest = _digest(path, root) if cache is not None else ""
        hit = cache.get(display, digest) if cache is not None and digest else None
        found = hit[1] if hit is not None else _check_file(root, catalog, path)
        if cache is not None and digest and hit is None:
            cache.put(display, digest, "", found)
        problems.extend(found)
    return problems


def _digest(path: Path, root: Path) -> str:
    """The file's content hash, and the stored copies it names (provenance); "" for what is never read (a fifo, a
    device) or cannot be read."""
    if file_kind_problem(path, failed.LAYOUT):
        return ""
    try:
        raw = path.read_bytes()
    except OSError:
        return ""
    return input_digest("failed layouts", [("file", raw), *provenance.copy_parts(root, raw)])


def _check_file(root: Path, catalog: Catalog, path: Path) -> list[Problem]:
    doc, data, found = failed.read(path, root)
    if doc is not None and data is not None:
        found = found + _references(path, doc, data, catalog) + _copy_read(root, doc, data)
    return found


def _copy_read(root: Path, doc: YamlDocument, data: failed.FailedLayouts) -> list[Problem]:
    """The copy every entry was read from, held to its stored copy as a recipe's is (provenance.copy_problem)."""
    found = None if data.read_from is None else provenance.copy_problem(root, data.read_from)
    if found is None:
        return []
    line, col = doc.positions.get(("read_from", found[0]), (1, 1))
    return [Problem(doc.path, line, col, field_name(("read_from", found[0])), found[1])]


def _references(path: Path, doc: YamlDocument, data: failed.FailedLayouts, catalog: Catalog) -> list[Problem]:
    def at(message: str, *where: str | int) -> Problem:
        line, col = doc.positions.get(tuple(where), (1, 1))
        return Problem(doc.path, line, col, field_name(where), message)

    out = []
    if data.model not in catalog.models:
        out.append(at(f"unknown model {data.model!r}: not in catalog/models/", "model"))
    elif path.stem != catalog.model_slugs.get(data.model, path.stem):
        out.append(at(f"the file for {data.model} is {failed.FOLDER}/{catalog.model_slugs[data.model]}.yaml",
                      "model"))
    for i, entry in enumerate(data.layouts):
        gpu, shape = entry.gpu, entry.layout
        if gpu.type not in catalog.gpus:
            out.append(at(f"unknown GPU type {gpu.type!r}: not in catalog/gpus.yaml", "layouts", i, "gpu", "type"))
        product = shape.dp * shape.tp * shape.pp
        if product != gpu.count:
            out.append(at(f"DP {shape.dp} x TP {shape.tp} x PP {shape.pp} = {product}, not the {gpu.count} GPUs "
                          "it was tried on", "layouts", i, "layout", "dp"))
        if gpu.count > gpu.per_node and gpu.count % gpu.per_node:
            out.append(at(f"{gpu.count} GPUs is not a whole number of {gpu.per_node}-GPU nodes",
                          "layouts", i, "gpu", "count"))
    return out
