"""python -m generator export --out DIR: the site's generated pages and downloads, written to disk.

The same render_site output the MkDocs hook serves in memory; DIR plus site_src/ is a complete docs dir.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import in_registry
from generator.registry import atomic_write


def write_pages(out: Path, pages: dict) -> list[Path]:  # dict[str, generator.site.Page]
    written = []
    for rel, page in sorted(pages.items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, page.content, durable=False)  # a reader never sees half a page; made again on export
        written.append(target)
    return written


@in_registry("export")
def cmd_export(args: argparse.Namespace, root: Path) -> int:
    from generator.registry import load_registry
    from generator.site import render_site

    registry = load_registry(root)
    problems = list(registry.problems)
    pages = render_site(registry, problems)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s): those files are left out; run `python -m generator check`",
              file=sys.stderr)
        if args.strict:
            return 1
    written = write_pages(Path(args.out), pages)
    print(f"wrote {len(written)} file(s) under {args.out} from {len(registry.recipes)} recipe(s)")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write the site's generated pages, recipes.json/csv and schema JSON to DIR")
    p.add_argument("--out", required=True, help="directory to write into (created if missing)")
    p.add_argument("--strict", action="store_true", help="fail (exit 1) if any recipe does not load")
    p.set_defaults(func=cmd_export)
