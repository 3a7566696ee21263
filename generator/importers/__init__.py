"""python -m generator import SOURCE FILE: published results as `reported` recipes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import published results as reported recipes")
    p.add_argument("source", choices=["megatron-bridge"], help="which publication's format FILE is in")
    p.add_argument("file", help="the document (e.g. Megatron-Bridge's docs/performance-summary.md)")
    p.add_argument("--source-url", required=True, help="URL of the document, recorded on every recipe")
    p.add_argument("--commit", default=None, help="commit of the document, recorded on every recipe")
    p.add_argument("--dry-run", action="store_true", help="report what would be written; write nothing")
    p.set_defaults(func=cmd_import)


def run_import(root: Path, file: Path, source_url: str, commit: str | None, dry_run: bool):  # noqa: ANN201
    """Parses file and writes its recipes under root; returns (parsed, write report, problems)."""
    from generator.catalog import Catalog
    from generator.importers import megatron_bridge, recipes

    catalog = Catalog.load(root)
    if catalog.problems:
        return None, None, [str(p) for p in catalog.problems]
    parsed = megatron_bridge.read(file)
    built = []
    kept: list[Path] = []
    rows = []
    for row in parsed.rows:
        missing = [what for what, ok in (("model", row.model in catalog.models),
                                         ("GPU", megatron_bridge.SYSTEMS[row.system][0] in catalog.gpus)) if not ok]
        if missing:
            parsed.skips.append(megatron_bridge.Skip(row.line, f"{' and '.join(missing)} not in the catalog"))
            continue
        rows.append(row)
    # A row whose other configuration was skipped says so on its recipe, so the registry shows the skip too.
    skipped_at: dict[int, list[str]] = {}
    for skip in parsed.skips:
        skipped_at.setdefault(skip.line, []).append(skip.reason)
    for row in rows:
        path = recipes.target(root, catalog, row)
        try:
            superseded = recipes.superseded_by_import(path, source_url, commit)
        except ValueError as exc:
            return parsed, None, [str(exc)]
        if superseded is None:
            kept.append(path)
            continue
        built.append((row, recipes.build(row, catalog, source_url, commit, superseded, skipped_at.get(row.line, []))))
    report = recipes.write(root, catalog, built, dry_run)
    report.kept = kept
    return parsed, report, []


def cmd_import(args: argparse.Namespace) -> int:
    root = Path.cwd()
    file = Path(args.file)
    if not file.is_file():
        print(f"{file}: no such file", file=sys.stderr)
        return 2
    try:
        parsed, report, problems = run_import(root, file, args.source_url, args.commit, args.dry_run)
    except UnicodeDecodeError:
        print(f"{file}: not valid UTF-8", file=sys.stderr)
        return 2
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
