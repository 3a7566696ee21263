"""python -m generator VERB: check, schema (and the site's export, new; the importer's import; the advisor's advise)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import in_registry, positive_int
from generator.version import PrintVersion


def cmd_check(args: argparse.Namespace) -> int:
    from generator.check import check_tree, format_problems
    from generator.registry import RootNotFound, find_root

    paths = [Path(p) for p in args.paths]
    try:
        root = find_root(paths[0] if paths else Path.cwd())
    except RootNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    run = check_tree(root, paths or None, use_cache=not args.no_cache, jobs=args.jobs)
    for warning in run.warnings:
        print(warning, file=sys.stderr)
    problems = run.problems
    if args.format == "json":
        print(format_problems(problems, "json"))
    elif problems:
        print(format_problems(problems, "text"))
        print(f"{len(problems)} problem(s) in {len({p.path for p in problems})} file(s)", file=sys.stderr)
    else:
        failed = f" and {run.failed_files} failed-layouts file(s)" if run.failed_files else ""
        print(f"ok: {run.files} recipe(s){failed} checked, no problems")
    return 1 if problems else 0


@in_registry("schema")
def cmd_schema(args: argparse.Namespace, root: Path) -> int:
    from generator.schema import SCHEMAS, schema_path, schema_text, write_schemas

    if args.check:
        stale = [n for n in SCHEMAS
                 if not schema_path(root, n).exists() or schema_path(root, n).read_text() != schema_text(n)]
        for name in stale:
            print(f"schema/{name}.schema.yaml is not what the models generate; run `python -m generator schema`")
        return 1 if stale else 0
    for path in write_schemas(root):
        print(f"wrote {path.relative_to(root)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m generator", description="OpenRecipes registry tools.")
    parser.add_argument("--version", action=PrintVersion)
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("check", help="validate recipes and recompute every derived figure")
    p.add_argument("paths", nargs="*", help="recipe files or folders (default: the whole registry)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--no-cache", action="store_true", help="ignore the content-hash cache")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="worker processes (default: one per core when 400 or more files need checking, else 1)")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("schema", help="write schema/*.schema.yaml from the models")
    p.add_argument("--check", action="store_true", help="fail if the committed schemas are stale")
    p.set_defaults(func=cmd_schema)
    _add_module_verbs(sub)
    return parser


def _add_module_verbs(sub: argparse._SubParsersAction) -> None:
    """Verbs whose modules add their own parsers (the site's export, new, the importers). They are part of the
    package and need nothing beyond its dependencies, so a failing import is a bug: it fails with its traceback
    rather than taking the verb out of --help."""
    from generator import advise, export, importers, new

    for module in (export, new, importers, advise):
        module.add_parser(sub)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
