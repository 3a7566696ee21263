"""python -m generator import SOURCE FILE: published results as `reported` recipes.

A source is a module generator/importers/<name>.py (the CLI name with '-' for '_') defining `SOURCE`, an instance
of base.Source; the shared machinery (base.run_source) parses, supersedes, renders and writes.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

from generator.importers.base import Document, Parsed, Source, WriteReport, run_source

SHARED_MODULES = {"base"}


def source_names() -> list[str]:
    """CLI names of the importer modules present (not imported: a module is loaded only when used)."""
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__)
                  if m.name not in SHARED_MODULES and not m.name.startswith("_"))


def get_source(name: str) -> Source:
    """The Source of `python -m generator import NAME`; ValueError when no module defines one."""
    module_name = name.replace("-", "_")
    if module_name in SHARED_MODULES or name not in source_names():
        raise ValueError(f"unknown source {name!r} (known: {', '.join(source_names())})")
    source = getattr(importlib.import_module(f"generator.importers.{module_name}"), "SOURCE", None)
    if not isinstance(source, Source):
        raise ValueError(f"generator/importers/{module_name}.py defines no SOURCE (a base.Source instance)")
    return source


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import published results as reported recipes")
    p.add_argument("source", help=f"which publication's format FILE is in ({', '.join(source_names())})")
    p.add_argument("file", help="the document (e.g. Megatron-Bridge's docs/performance-summary.md), or the folder "
                   "of a source that reads one (mlperf-training: a checkout of a training_results round)")
    p.add_argument("--source-url", required=True, help="URL of the document at its commit, recorded on every recipe")
    p.add_argument("--commit", default=None, help="commit of the document, recorded on every recipe")
    p.add_argument("--dry-run", action="store_true", help="report what would be written; write nothing")
    p.set_defaults(func=cmd_import)


def run_import(root: Path, file: Path, source_url: str, commit: str | None, dry_run: bool,
               source: str = "megatron-bridge") -> tuple[Parsed | None, WriteReport | None, list[str]]:
    """Parses file with the named source and writes its recipes under root; returns (parsed, report, problems)."""
    return run_source(get_source(source), root, file, Document(source_url, commit), dry_run)


def cmd_import(args: argparse.Namespace) -> int:
    root = Path.cwd()
    file = Path(args.file)
    try:
        source = get_source(args.source)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if source.reads_directory and not file.is_dir():
        print(f"{file}: not a directory ({source.name} reads a checkout's folder)", file=sys.stderr)
        return 2
    if not source.reads_directory and not file.exists() and not file.is_symlink():
        print(f"{file}: no such file", file=sys.stderr)
        return 2
    # A FILE that is no regular file (a FIFO, a device, a symlink loop) is refused by the source's read, located.
    parsed, report, problems = run_source(source, root, file, Document(args.source_url, args.commit), args.dry_run)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    assert parsed is not None and report is not None
    verb = "would write" if args.dry_run else "wrote"
    for path in report.created:
        print(f"{verb} (new) {path.relative_to(root)}")
    for path in report.updated:
        print(f"{verb} (updated) {path.relative_to(root)}")
    for skip in sorted(parsed.skips, key=lambda s: s.line):
        print(f"{file}:{skip.line}: skipped: {skip.reason}", file=sys.stderr)
    for path in report.kept:
        print(f"kept {path.relative_to(root)} (a later import superseded this document's row)")
    print(f"{parsed.table_rows} table row(s), {len(parsed.rows)} recipe(s): {len(report.created)} new, "
          f"{len(report.updated)} updated, {len(report.unchanged)} unchanged, {len(report.kept)} kept; "
          f"{len(parsed.skips)} skip(s)")
    return 0
