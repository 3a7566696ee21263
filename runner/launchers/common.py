"""What every launcher shares: the run folder, the command as the evidence records it, the confirmation."""

from __future__ import annotations

import datetime as dt
import shlex
import sys
from pathlib import Path
from typing import TextIO

from runner import commit
from runner.logs import ParsedLog
from runner.measure import Measurement, RunFigures, combine, measured_date, run_figures
from runner.records import Outcome, Stop, Target


def check_names(target: Target) -> None:
    """Stop before anything runs or is written where the recipe's id (the --as-new one too), its file, the registry
    or the working folder holds a control, line-separator or bidi character: each is printed on the terminal and
    written into the run's folders, scripts and evidence, where a newline starts a line of its own and ESC drives the
    terminal. (check refuses such a recipe file too: generator.load.name_problem.)"""
    from generator.problems import unsafe_character

    for what, text in (("recipe id", target.source.id), ("recipe id", target.recipe_id),
                       ("recipe file", str(target.path)), ("registry", str(target.root)),
                       ("working folder", str(target.options.workdir))):
        found = unsafe_character(text)
        if found is not None:
            raise Stop(Outcome.USAGE, f"the {what} {text!r} holds the character {found}: no control, line-separator "
                                      "or bidi character in a recipe's name or the folders a run uses; rename it")


def env_refusal(env: dict[str, str]) -> str | None:
    """Why a launch refuses the recipe's env, or None: a reserved name (generator/check/env.py, the list check uses:
    the launcher exports the env where its own commands run too)."""
    from generator.check.env import message, reserved

    for name in env:
        why = reserved(name)
        if why is not None:
            return "env: " + message(name, why)
    return None


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
    from runner.launchers.process import shell_quote_env

    where = relative(workdir, root, "$WORKDIR")
    where = where if where == "$WORKDIR" else shlex.quote(where)
    return f"cd {where} && {shell_quote_env(env)} bash {shlex.quote(relative(script, root, script.name))}"


def shown_script(script: str) -> list[str]:
    """The recipe's run script as the launchers show it on the terminal, a line each: a control, line-separator or
    bidi character (ESC, CR, ...) as its escape, never sent to the terminal; tabs kept."""
    from generator.problems import escape

    return ["\t".join(escape(part) for part in line.split("\t")) for line in script.split("\n")]


def confirm(target: Target, command: str, out: TextIO) -> None:
    recipe, runs = target.recipe, target.runs
    print(f"recipe: {target.recipe_id}\nwill run ({runs} run{'s' if runs > 1 else ''}):\n  {command}\nscript:", file=out)
    for line in shown_script(recipe.run.rstrip("\n")):
        print(f"  | {line}", file=out)
    if target.options.yes:
        return
    if not sys.stdin.isatty():
        raise Stop(Outcome.DECLINED, "no terminal to confirm the launch on: pass --yes to run without asking")
    if input("Launch? [y/N] ").strip().lower() not in ("y", "yes"):
        raise Stop(Outcome.DECLINED, "not launched")




# --- the end of a run: its figures, its date, the median of the runs -----------------------------------------


def figures_of(target: Target, log: ParsedLog, wall_seconds: float | None = None,
               exit_code: int | None = None) -> RunFigures:
    """One run's figures over the recipe's window (a partial run is accepted here and refused at the write unless
    --accept-partial)."""
    return run_figures(target.recipe, target.catalog, log, wall_seconds, allow_partial=True, exit_code=exit_code)


def end_of_runs(target: Target, results: list[RunFigures], launched: dt.date | None = None) -> Measurement:
    """The runs' measurement: dated by their logs, else by the launch (a run launched here), else by --measured
    (a log from elsewhere without one is shown, and refused at the write), and the median run among them."""
    logs = [r.log for r in results]
    measured = measured_date(logs, launched=launched, given=target.options.measured, required=False)
    return combine(target.recipe, results, measured)
