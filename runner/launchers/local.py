"""A run on this machine: the recipe's script in bash, in its own process group, N times (runner/launchers/process.py runs it)."""

from __future__ import annotations

import datetime as dt
import os
import shlex
from typing import TextIO

from generator import figures
from runner.launchers.common import confirm, end_of_runs, figures_of, recorded_command, run_folder
from runner.records import Measured, Target


def measure(target: Target, out: TextIO) -> Measured:
    """The recipe's script run here target.runs times; each run's log parsed into its figures."""
    from runner.launchers.process import run_script, shell_quote_env
    from runner.logs import LogError, attach_summary, parse_file, read_lines, tail

    options, recipe = target.options, target.recipe
    workdir = options.workdir.resolve()
    started = dt.datetime.now(dt.UTC)
    run_dir = run_folder(target, started)
    run_dir.mkdir(parents=True, exist_ok=True)
    script = run_dir / "run.sh"
    script.write_text(recipe.run, encoding="utf-8")
    env = dict(os.environ) | dict(recipe.env)
    shown = f"cd {shlex.quote(str(workdir))} && {shell_quote_env(dict(recipe.env))} bash {shlex.quote(str(script))}"
    confirm(target, shown, out)
    wl = recipe.workload
    results, nccl = [], None
    log_path = run_dir / "run1.log"
    for i in range(target.runs):
        log_path = run_dir / f"run{i + 1}.log"
        print(f"run {i + 1}/{target.runs}: log {log_path}", file=out)
        launched = run_script(
            script, env, workdir, log_path, target.fmt or "openrecipes", recipe.result.steps_per_run,
            figures.step_tokens(wl.global_batch, wl.row_tokens), recipe.gpu.count, options.timeout,
            out, progress=not options.json,
        )
        log = launched.parsed if target.fmt else parse_file(log_path, None)
        if target.fmt:  # parsed live, line by line: its summary line (stack, peak memory) is read from the whole log
            attach_summary(log, read_lines(log_path))
        if not log.steps:
            raise LogError(f"{log_path}: no {target.fmt or 'known-format'} training step lines in the run's output")
        nccl = nccl or log.nccl_version
        results.append(figures_of(target, log, launched.wall_seconds, launched.returncode))
    command = recorded_command(workdir, script, dict(recipe.env), target.root)
    return Measured(end_of_runs(target, results, started.date()), "launch", command, nccl, tail(log_path))


