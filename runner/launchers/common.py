"""What every launcher shares: the run folder, the command as the evidence records it, the confirmation."""

from __future__ import annotations

import datetime as dt
import shlex
import sys
from pathlib import Path
from typing import TextIO

from runner import commit
from runner.records import Outcome, Stop, Target


def run_folder(target: Target, started: dt.datetime) -> Path:
    """.openrecipes-runs/<recipe>/<UTC time>: the logs and scripts of one launch (outside git)."""
    return commit.runs_dir(target.root) / target.recipe_id / started.strftime("%Y%m%dT%H%M%SZ")


def relative(path: Path, root: Path, outside: str) -> str:
    """A path as the evidence records it: relative to the registry root, or `outside` for one beyond it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return outside


def recorded_command(workdir: Path, script: Path, env: dict[str, str], root: Path) -> str:
    """The launch command for the evidence: no folder of the measuring machine (the evidence is committed); a
    working folder outside the registry (the framework's checkout) is written as $WORKDIR."""
    from runner.launch import shell_quote_env

    where = relative(workdir, root, "$WORKDIR")
    where = where if where == "$WORKDIR" else shlex.quote(where)
    return f"cd {where} && {shell_quote_env(env)} bash {shlex.quote(relative(script, root, script.name))}"


def confirm(target: Target, command: str, out: TextIO) -> None:
    recipe, runs = target.recipe, target.runs
    print(f"recipe: {target.recipe_id}\nwill run ({runs} run{'s' if runs > 1 else ''}):\n  {command}\nscript:", file=out)
    for line in recipe.run.splitlines():
        print(f"  | {line}", file=out)
    if target.options.yes:
        return
    if not sys.stdin.isatty():
        raise Stop(Outcome.DECLINED, "no terminal to confirm the launch on: pass --yes to run without asking")
    if input("Launch? [y/N] ").strip().lower() not in ("y", "yes"):
        raise Stop(Outcome.DECLINED, "not launched")


