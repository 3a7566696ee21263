"""Re-prices the registry after catalog/instances.yaml changes: `python -m generator.reprice [--write] [ROOT]`.

A recipe's $/1M tokens is a claim recomputed from its instance's price (figures.usd_per_million_tokens), so a price
that is added or changed must reach every recipe it prices. For each recipe this tool:

- keeps the instance the recipe names; a Megatron-Bridge, torchtitan or MLPerf Training recipe (an `mb-*`, `titan-*`
  or `mlperf-*` file) that names none gains the catalog instance of its GPU type and node size (Catalog.instance_for,
  the choice its importer makes), so the committed recipes stay exactly what a re-import writes;
- recomputes $/1M through figures.derive and rewrites only the two scalars (gpu.instance, result.usd_per_million_
  tokens) in place, every other byte kept. A stated figure that still agrees at its written precision is left as
  written (the reference recipe stays byte-identical); a new or changed one is written the importers' way: at
  least 4 decimals and at least the precision figures.PRECISIONS requires.

Recipes of other sources are not given an instance here: llm-foundry's importer writes a note naming the instance
alongside it (re-run that importer instead), and hand-written or measured recipes name theirs themselves. Without
--write it only reports what would change.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from generator import figures
from generator.catalog import Catalog
from generator.load import LoadedRecipe, written_scalar
from generator.registry import atomic_write, find_root, load_registry

# File-name prefixes of the importers whose recipes differ, priced or not, only in these two scalars.
CATALOG_PRICED_PREFIXES = ("mb-", "titan-", "mlperf-")
# generator/importers/base.derive_figures writes $/1M to at least this many decimals.


@dataclass(frozen=True)
class Change:
    """One recipe whose instance or $/1M figure changes."""

    display: str
    instance: tuple[str | None, str | None]  # before, after
    usd: tuple[str | None, str | None]  # before, after (as written)


def target_instance(loaded: LoadedRecipe, catalog: Catalog) -> str | None:
    gpu = loaded.recipe.gpu
    if gpu.instance is not None:
        return gpu.instance
    if loaded.path.name.startswith(CATALOG_PRICED_PREFIXES):
        return catalog.instance_for(gpu.type, gpu.per_node)
    return None


def usd_text(loaded: LoadedRecipe, catalog: Catalog, instance: str | None, written: str | None) -> str | None:
    """$/1M as the recipe should state it under `instance`: the written text while it still agrees, else the
    recomputed figure; None when the instance has no price (unknown instance: check reports it)."""
    if instance is None or instance not in catalog.instances:
        return written
    recipe = loaded.recipe.model_copy(update={"gpu": loaded.recipe.gpu.model_copy(update={"instance": instance})})
    usd = figures.derive(recipe, catalog).usd_per_million_tokens
    if usd is None:
        return written
    stated = loaded.recipe.result.usd_per_million_tokens
    places = figures.written_decimals(written) if written is not None and stated is not None else None
    if stated is not None and places is not None and figures.coarser_than_required(
            "usd_per_million_tokens", written, stated, usd) is None and figures.agrees(
            stated, usd, "usd_per_million_tokens", places):
        return written
    required = figures.PRECISIONS["usd_per_million_tokens"].required_decimals(usd)
    keep = places if places is not None else figures.IMPORTED_USD_DECIMALS
    return f"{usd:.{max(keep, required)}f}"


def _set_scalar(lines: list[str], position: tuple[int, int], old: str, new: str) -> None:
    line, col = position[0] - 1, position[1] - 1
    text = lines[line]
    assert text[col:col + len(old)] == old, (text, old)
    lines[line] = text[:col] + new + text[col + len(old):]


def reprice_recipe(loaded: LoadedRecipe, catalog: Catalog) -> tuple[Change | None, str]:
    """The change (None: none) and the recipe's new text."""
    lines = loaded.text.split("\n")
    inst_at = loaded.positions.get(("gpu", "instance"))
    usd_at = loaded.positions.get(("result", "usd_per_million_tokens"))
    if inst_at is None or usd_at is None:
        return None, loaded.text  # a recipe without the keys is the schema's problem, not this tool's
    old_inst, old_usd = written_scalar(lines, inst_at), written_scalar(lines, usd_at)
    instance = target_instance(loaded, catalog)
    new_inst = old_inst if instance == loaded.recipe.gpu.instance else instance
    written_usd = None if old_usd == "null" else old_usd
    new_usd = usd_text(loaded, catalog, instance, written_usd) or "null"
    if (new_inst, new_usd) == (old_inst, old_usd) or old_inst is None or old_usd is None or new_inst is None:
        return None, loaded.text
    _set_scalar(lines, inst_at, old_inst, new_inst)
    _set_scalar(lines, usd_at, old_usd, new_usd)
    return Change(loaded.display, (old_inst, new_inst), (old_usd, new_usd)), "\n".join(lines)


def reprice(root: Path, write: bool) -> tuple[list[Change], list[str]]:
    """Every change the catalog's prices ask of the registry at root (written with write=True), and the
    registry's load problems (nothing is written while there are any)."""
    registry = load_registry(root)
    problems = [str(p) for p in registry.problems]
    changes: list[Change] = []
    edits: list[tuple[Path, str]] = []
    for loaded in registry.recipes:
        change, text = reprice_recipe(loaded, registry.catalog)
        if change is not None:
            changes.append(change)
            edits.append((loaded.path, text))
    if write and not problems:
        for path, text in edits:
            atomic_write(path, text)
    return changes, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator.reprice", description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path.cwd(), help="a path inside the registry")
    parser.add_argument("--write", action="store_true", help="write the changes (default: only report them)")
    args = parser.parse_args(argv)
    changes, problems = reprice(find_root(args.root), args.write)
    for problem in problems:
        print(problem, file=sys.stderr)
    for change in changes:
        print(f"{change.display}: instance {change.instance[0]} -> {change.instance[1]}; "
              f"usd_per_million_tokens {change.usd[0]} -> {change.usd[1]}")
    verb = "written" if args.write and not problems else "to write"
    print(f"{len(changes)} recipe(s) {verb}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

