"""A run as a Slurm job: the sbatch script, its submission, the job's state and training progress, cancellation
(Ctrl-C, SIGTERM, --timeout: `scancel`), and rank 0's log collected when the job ends.

The job is one task per node. Each task first runs the node's preflight (runner.launchers.nodes: GPUs, stack), the
batch script compares the stacks, then `srun` runs the recipe's script on every node, its `torchrun` joining a c10d
rendezvous on the first node (runner.launchers.rendezvous), each node's output in node-<host>.log. The recipe's text
never becomes part of the batch script: its `run` is the file run.sh, run by bash as a local run runs it, and its
`env` is written as `export NAME=<shlex-quoted value>` with every NAME checked to be a shell variable name. The
user's own sbatch options (--partition, --account, ...) go to sbatch's command line, never into the script.

The run folder (under the registry's .openrecipes-runs/) must be on a filesystem every node sees, as the runner's
checkout and its Python are: the usual shared home or project folder of a cluster.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from generator import figures
from generator.check.env import message as reserved_message
from generator.check.env import reserved as reserved_env
from generator.problems import unsafe_character
from runner.launchers import nodes as node_checks
from runner.launchers.common import confirm, end_of_runs, figures_of, recorded_command, run_folder, shown_script
from runner.launchers.process import shell_word
from runner.launchers.refusals import Interrupted, LaunchRefused, PreflightRefused, RunFailed
from runner.launchers.rendezvous import ENV_ENDPOINT, ENV_ID, ENV_NODES, ENV_PYTHON, WRAPPER
from runner.logs import ParsedLog, parser
from runner.records import Measured, Outcome, Shown, Stop, Target

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
            "DEADLINE", "SPECIAL_EXIT", "REVOKED"}
# Options the runner sets itself: one task per node, its own output files; given again they would break the launch.
RESERVED_OPTIONS = ("--nodes", "-N", "--ntasks", "-n", "--ntasks-per-node", "--output", "-o", "--error", "-e",
                    "--wrap", "--parsable", "--chdir", "-D", "--export", "--gpus-per-node", "--cpus-per-task", "-c")
RESERVED_LONG = tuple(o for o in RESERVED_OPTIONS if o.startswith("--"))
RESERVED_SHORT = {o[1] for o in RESERVED_OPTIONS if not o.startswith("--")}
# sbatch's short options (getopt): those that take a value (attached, -N2, or the next argument) and flags.
SHORT_WITH_VALUE = set("AabcCdDeFGiJLMmNnopqStwx")
SHORT_FLAGS = set("hHIkOQsuVvW")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_JOB_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_FIELD = re.compile(r"(\w+)=(\S*)")
NODE_LOG_GLOB = "node-*.log"
JOB_OUTPUT = "job.out"
NODE_SCRIPT = "node.sh"
JOB_SCRIPT = "job.sbatch"
STACKS_DIR = "nodes"


class SlurmError(LaunchRefused):
    """Slurm refused or is missing (sbatch not found, the submission failed); the message says what to do."""


class JobFailed(RunFailed):
    """The job ended without success, passed --timeout, or was cancelled; nothing is written."""


class JobInterrupted(Interrupted):
    """Ctrl-C or SIGTERM: the job was cancelled; nothing is written."""


def check_env_names(env: dict[str, str]) -> dict[str, str]:
    """The recipe's env, refused where a name is not a shell variable name or a value holds a NUL (it would become
    shell code, or be cut, in the batch script), or the name is reserved (generator/check/env.py: check refuses it
    too)."""
    for name, value in env.items():
        if not _ENV_NAME.match(str(name)):
            raise SlurmError(f"env: {name!r} is not a shell variable name (letters, digits, '_', not starting with a "
                             "digit); the batch script cannot export it")
        if "\0" in str(value):
            raise SlurmError(f"env: {name}'s value holds a NUL byte")
        why = reserved_env(str(name))
        if why:
            raise SlurmError("env: " + reserved_message(str(name), why))
    return {str(k): str(v) for k, v in env.items()}


def check_sbatch_options(options: list[str]) -> list[str]:
    """Extra sbatch options as given (one argument each, passed on sbatch's command line), read as sbatch's getopt
    reads them: a long option by any prefix of its name (--out= is --output=), short flags bundled (-vN2 is -v -N 2).
    Those the runner sets itself are refused."""
    expect_value = False
    for option in options:
        found = unsafe_character(option)
        if found is not None:
            raise SlurmError(f"sbatch option {option!r}: it holds the character {found} (no control, line-separator or "
                             "bidi character in an sbatch option)")
        if expect_value:  # the value of the previous short option (-p gpu given as two --sbatch)
            expect_value = False
            continue
        if not option.startswith("-") or option in ("-", "--"):
            raise SlurmError(f"sbatch option {option!r}: give options such as --partition=gpu or --account=proj")
        if option.startswith("--"):
            _check_long(option)
        else:
            expect_value = _check_short(option)
    return list(options)


def _refuse(option: str, name: str) -> None:
    raise SlurmError(f"sbatch option {option!r}: sbatch reads it as {name}, which the runner sets itself (one task "
                     "per node, the recipe's GPUs per node, the node's CPUs, its own output files)")


def _check_long(option: str) -> None:
    name = option.split("=", 1)[0]
    if name in RESERVED_LONG:
        _refuse(option, name)
    abbreviated = [r for r in RESERVED_LONG if r.startswith(name)]
    if abbreviated:  # getopt_long takes an unambiguous prefix for the whole name
        _refuse(option, " or ".join(abbreviated))


def _check_short(option: str) -> bool:
    """Checks bundled short options; True when the last one takes its value from the next argument."""
    letters = option[1:]
    for i, letter in enumerate(letters):
        if letter in RESERVED_SHORT:
            _refuse(option, f"-{letter}")
        if letter in SHORT_WITH_VALUE:
            return i == len(letters) - 1  # the rest of the argument is its value
        if letter not in SHORT_FLAGS:
            raise SlurmError(f"sbatch option {option!r}: -{letter} is not an sbatch option")
    return False


def job_name(recipe_id: str) -> str:
    return "openrecipes-" + _JOB_NAME.sub("-", recipe_id).strip("-")[:100]


def resources(gpus_per_node: int, exclusive: bool, cpus_per_node: int | None) -> list[str]:
    """The #SBATCH lines of what each node gives the run: the recipe's GPUs, and the whole node (exclusive, its CPUs
    to the one task) or the CPUs asked for."""
    if gpus_per_node < 1:
        raise SlurmError(f"{gpus_per_node} GPUs per node: a recipe's gpu.per_node is at least 1")
    lines = [f"#SBATCH --gpus-per-node={gpus_per_node}"]
    if exclusive:
        lines.append("#SBATCH --exclusive")
    elif cpus_per_node is None or cpus_per_node < 1:
        raise SlurmError("--no-exclusive shares the nodes: say how many CPUs the run takes on each with "
                         "--cpus-per-node N")
    if cpus_per_node is not None:
        lines.append(f"#SBATCH --cpus-per-task={cpus_per_node}")
    return lines


def _comment(text: str) -> str:
    """Text for a comment line of the script: printable, one line (a newline in a file name would end the comment
    and start a command)."""
    return "".join(c if c.isprintable() else "?" for c in text)


def check_script_text(**texts: str) -> None:
    """Names and paths the batch script writes (the recipe id, the registry, run and working folders, the
    interpreter): refused where one holds a control, line-separator or bidi character. Quoted, a newline would not
    run, but it would put a line of its own into the script a reader checks."""
    for what, text in texts.items():
        found = unsafe_character(text)
        if found is not None:
            raise SlurmError(f"{what.replace('_', ' ')} {text!r} holds the character {found}: no control, "
                             "line-separator or bidi character goes into the batch script; rename it")


def job_script(*, recipe_id: str, recipe: Path, root: Path, run_dir: Path, workdir: Path, nodes: int,
               env: dict[str, str], python: str, gpus_per_node: int = 1, exclusive: bool = True,
               cpus_per_node: int | None = None) -> str:
    """The sbatch script. Every path and value is shlex-quoted, each on one line; the recipe's own text is not in
    it."""
    check_script_text(recipe_id=recipe_id, recipe_file=str(recipe), registry=str(root), run_folder=str(run_dir),
                      working_folder=str(workdir), python=python)
    q = shlex.quote
    exports = "\n".join(f"export {name}={shell_word(value)}" for name, value in check_env_names(env).items())
    asked = "\n".join(resources(gpus_per_node, exclusive, cpus_per_node))
    # One task per node gets every CPU Slurm gave the node (srun's default is one CPU a task).
    cpus = '"$SLURM_CPUS_ON_NODE"' if cpus_per_node is None else str(cpus_per_node)
    return f"""#!/bin/bash
#SBATCH --job-name={job_name(recipe_id)}
#SBATCH --nodes={nodes}
#SBATCH --ntasks-per-node=1
{asked}
#SBATCH --output={JOB_OUTPUT}
# OpenRecipes: re-measure {_comment(recipe_id)}, written by `python -m runner remeasure --launcher slurm`.
# One task per node: each checks its GPUs and software stack, then runs the recipe's run script (run.sh) with its
# torchrun joining a c10d rendezvous on the first node. Each node's output: node-<host>.log in the run folder.
set -euo pipefail
run={q(str(run_dir))}
cd {q(str(workdir))}
export {ENV_PYTHON}={q(python)}
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export {ENV_NODES}="$SLURM_JOB_NUM_NODES"
export {ENV_ENDPOINT}="$head:$((20000 + SLURM_JOB_ID % 20000))"
export {ENV_ID}="openrecipes-$SLURM_JOB_ID"

# 1. Per-node preflight: every node's GPUs against the recipe and its stack; then one stack on every node.
srun --ntasks-per-node=1 --cpus-per-task={cpus} --output="$run/preflight-%N.log" \\
  "${ENV_PYTHON}" -m runner.launchers.nodes preflight {q(str(recipe))} --root {q(str(root))} --out "$run/{STACKS_DIR}"
"${ENV_PYTHON}" -m runner.launchers.nodes compare "$run/{STACKS_DIR}" --nodes "$SLURM_JOB_NUM_NODES"

# The recipe's env, after the runner's own commands (scontrol, the preflight), for the run alone:
{exports or '# (none)'}

# 2. The run: torchrun on every node (the first node's rank 0 prints the training steps).
srun --ntasks-per-node=1 --cpus-per-task={cpus} --kill-on-bad-exit=1 --output="$run/node-%N.log" \\
  bash "$run/{NODE_SCRIPT}"
"""


def sbatch_command(options: list[str]) -> list[str]:
    return ["sbatch", "--parsable", *options, JOB_SCRIPT]


def write_job(run_dir: Path, run_text: str, script: str) -> Path:
    """run.sh (the recipe's run), node.sh (the wrapper every node runs) and the batch script, in the run folder."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.sh").write_text(run_text, encoding="utf-8")
    (run_dir / NODE_SCRIPT).write_text(WRAPPER, encoding="utf-8")
    path = run_dir / JOB_SCRIPT
    path.write_text(script, encoding="utf-8")
    return path


def _slurm(args: list[str], cwd: Path | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SlurmError(f"{args[0]} not found: run on a Slurm login node (slurm-client installed)") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{args[0]} did not answer within {timeout:g} s (is slurmctld up?)") from None


def submit(run_dir: Path, options: list[str]) -> str:
    """Submits the batch script from the run folder (its relative --output lands there); returns the job id."""
    done = _slurm(sbatch_command(options), cwd=run_dir)
    if done.returncode != 0:
        raise SlurmError(f"sbatch refused the job: {(done.stderr or done.stdout).strip()}; nothing submitted")
    job = done.stdout.strip().split(";")[0]
    if not job.isdigit():
        raise SlurmError(f"sbatch answered {done.stdout.strip()!r}, not a job id")
    return job


@dataclass
class JobInfo:
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ... ("GONE": the controller forgot the job)
    exit_code: int | None = None
    reason: str | None = None
    node_list: str | None = None
    run_seconds: float | None = None

    @property
    def done(self) -> bool:
        return self.state in TERMINAL or self.state == "GONE"


def _seconds(text: str) -> float | None:
    """Slurm's [D-]HH:MM:SS."""
    days, _, clock = text.rpartition("-")
    parts = clock.split(":")
    if not all(p.isdigit() for p in parts) or not days.isdigit() and days:
        return None
    total = 0
    for p in parts:
        total = total * 60 + int(p)
    return total + int(days or 0) * 86400


def job_info(job: str) -> JobInfo:
    done = _slurm(["scontrol", "show", "job", "-o", job])
    if done.returncode != 0:
        return JobInfo("GONE")  # past MinJobAge: no longer in the controller's memory
    fields = dict(_FIELD.findall(done.stdout))
    code = fields.get("ExitCode", "")
    status = code.split(":")[0]
    return JobInfo(fields.get("JobState", "UNKNOWN"), int(status) if status.isdigit() else None,
                   fields.get("Reason"), fields.get("NodeList"), _seconds(fields.get("RunTime", "")))


def cancel(job: str, wait_s: float = 30.0) -> JobInfo:
    """scancel, then wait until the controller reports the job ended."""
    _slurm(["scancel", job])
    deadline = time.monotonic() + wait_s
    info = job_info(job)
    while not info.done and time.monotonic() < deadline:
        time.sleep(0.5)
        info = job_info(job)
    return info


@dataclass
class _Tail:
    """New whole lines of one growing file."""

    path: Path
    steps: Any = None  # the step-line parser of a node log (runner.logs.parser), else None
    offset: int = 0
    number: int = 0
    buffer: bytes = b""

    def lines(self) -> list[str]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except OSError:
            return []
        self.offset += len(chunk)
        data = self.buffer + chunk
        *whole, self.buffer = data.split(b"\n")
        return [line.decode("utf-8", errors="replace") for line in whole]


@dataclass
class Followed:
    job: str
    info: JobInfo
    log_path: Path  # rank 0's: the node log with the training step lines
    parsed: ParsedLog
    wall_seconds: float | None
    stacks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Watch:
    run_dir: Path
    fmt: str
    say: Callable[[str], None]  # one line to the console (through the progress bar's console while it is drawn)
    nodes: int
    tails: dict[Path, _Tail] = field(default_factory=dict)

    def poll(self, on_step: Callable[[Any], None]) -> None:
        names = [self.run_dir / JOB_OUTPUT, *sorted(self.run_dir.glob("preflight-*.log")),
                 *sorted(self.run_dir.glob(NODE_LOG_GLOB))]
        for path in names:
            if not path.exists():
                continue
            if path not in self.tails:
                self.tails[path] = _Tail(path, parser(self.fmt, str(path)) if path.name.startswith("node-") else None)
            tail = self.tails[path]
            for line in tail.lines():
                tail.number += 1
                prefix = f"[{path.stem}] " if self.nodes > 1 or not path.name.startswith("node-") else ""
                self.say(prefix + line)
                if tail.steps is not None:
                    for step in tail.steps.feed(line, tail.number):
                        on_step(step)


def follow(job: str, run_dir: Path, fmt: str, nodes: int, total_steps: int | None, tokens_per_step: int,
           gpu_count: int, timeout_s: float | None, console: TextIO, poll_s: float = 1.0,
           progress: bool = True) -> Followed:
    """Shows the job's state and its output until it ends; cancels it on Ctrl-C, SIGTERM or --timeout."""
    from runner.launchers.process import _progress_bar

    started = time.monotonic()
    bar, live = _progress_bar(console, progress)

    def say(line: str) -> None:
        if live:
            bar.console.print(line)
        else:
            console.write(line + "\n")
            console.flush()

    watch = _Watch(run_dir, fmt, say, nodes)
    previous_term = signal.getsignal(signal.SIGTERM)
    main = threading.current_thread() is threading.main_thread()

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if main:
        signal.signal(signal.SIGTERM, on_term)
    state = None
    try:
        with bar:
            task = bar.add_task("run", total=total_steps, rate="")

            def on_step(step: Any) -> None:
                rate = figures.tokens_per_s_per_gpu([step.time_s], (0, 0), tokens_per_step, 1, gpu_count) \
                    if step.time_s > 0 else 0.0
                bar.update(task, completed=step.step + 1, rate=f"{rate:,.1f} tokens/s/GPU")

            while True:
                info = job_info(job)
                shown = f"{info.state} ({info.reason})" if info.reason and info.reason != "None" else info.state
                if shown != state:
                    where = f" on {info.node_list}" if info.state == "RUNNING" and info.node_list else ""
                    say(f"job {job}: {shown}{where}")
                    state = shown
                watch.poll(on_step)
                if info.done:
                    break
                if timeout_s and time.monotonic() - started > timeout_s:
                    info = cancel(job)
                    watch.poll(on_step)
                    raise JobFailed(f"the job passed --timeout {timeout_s:g} s; job {job} cancelled (scancel, now "
                                    f"{info.state}); nothing written (logs: {run_dir})")
                time.sleep(poll_s)
    except KeyboardInterrupt:
        previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None  # a second Ctrl-C waits
        try:
            info = cancel(job)
        finally:
            if main:
                signal.signal(signal.SIGINT, previous_int)
        raise JobInterrupted(f"interrupted: job {job} cancelled (scancel, now {info.state}); nothing written "
                             f"(logs: {run_dir})") from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous_term)
    time.sleep(poll_s)  # a shared filesystem may show the last lines a moment after the job ends
    watch.poll(lambda step: None)
    refused = node_checks.refusals(run_dir / STACKS_DIR)
    if refused:
        raise PreflightRefused("; ".join(refused) + f" (job {job} {info.state}; nothing trained, nothing written)")
    if info.state not in ("COMPLETED", "GONE"):
        code = f", exit status {info.exit_code}" if info.exit_code is not None else ""
        raise JobFailed(f"job {job} ended {info.state}{code}; nothing written; see the logs in {run_dir}")
    log_path, parsed = node_checks.rank0_log(run_dir, fmt)
    stacks = node_checks.read_stacks(run_dir / STACKS_DIR)
    return Followed(job, info, log_path, parsed, info.run_seconds, stacks)


# --- the launch: measure(target) ---------------------------------------------------------------------------


SLURM_GPU_HOURS_NOTE = "GPUs x the median run's Slurm job run time (RunTime: start to end, the per-node preflight " \
    "and start-up included, queueing not)"


def measure(target: Target, out: TextIO) -> Measured:
    """The runs as Slurm jobs (runner/launchers/py): the batch script shown (with --dry-run: only shown),
    submitted, followed to its end; rank 0's log parsed as a local run's."""
    from runner.launchers import per_node
    from runner.launchers.rendezvous import launches_torchrun
    from runner.logs import LogError, attach_summary, read_lines, tail

    options, recipe = target.options, target.recipe
    workdir = options.workdir.resolve()
    try:
        sbatch = check_sbatch_options(options.sbatch)
    except SlurmError as exc:
        raise Stop(Outcome.USAGE, str(exc)) from None
    started = dt.datetime.now(dt.UTC)
    base = run_folder(target, started)

    def script_for(run_dir: Path) -> str:
        return job_script(recipe_id=target.source.id, recipe=target.options.recipe.absolute(), root=target.root,
                                run_dir=run_dir, workdir=workdir, nodes=target.nodes, env=dict(recipe.env),
                                python=sys.executable, gpus_per_node=per_node(recipe), exclusive=options.exclusive,
                                cpus_per_node=options.cpus_per_node)

    try:
        script_for(base)  # its env and resources are checked before anything is shown or submitted
    except SlurmError as exc:
        raise Stop(Outcome.USAGE, str(exc)) from None

    first = base / "run1" if target.runs > 1 else base
    shown = f"cd {shlex.quote(str(first))} && {shlex.join(sbatch_command(sbatch))}"
    if options.dry_run:
        print(f"recipe: {target.source.id}\nwould submit ({target.nodes} node{'s' if target.nodes > 1 else ''}):"
              f"\n  {shown}\n{JOB_SCRIPT}:", file=out)
        print(script_for(first), end="", file=out)
        print("run.sh (the recipe's run):\n" + "\n".join(shown_script(recipe.run.rstrip("\n"))), file=out)
        print("(dry run with --launcher slurm: nothing submitted, nothing written)", file=out)
        raise Shown()
    confirm(target, shown, out)
    wl = recipe.workload
    results, stacks, jobs = [], [], []
    followed = None
    for i in range(target.runs):
        run_dir = base / f"run{i + 1}" if target.runs > 1 else base
        write_job(run_dir, recipe.run, script_for(run_dir))
        job = submit(run_dir, sbatch)
        jobs.append(job)
        print(f"run {i + 1}/{target.runs}: Slurm job {job} ({target.nodes} node{'s' if target.nodes > 1 else ''}); "
              f"logs in {run_dir}", file=out)
        followed = follow(job, run_dir, target.fmt or "openrecipes", target.nodes, recipe.result.steps_per_run,
                                figures.step_tokens(wl.global_batch, wl.row_tokens), recipe.gpu.count,
                                options.timeout, out, options.poll_s, progress=not options.json)
        if not followed.parsed.steps:
            raise LogError(f"{followed.log_path}: no {target.fmt or 'known-format'} training step lines in the job's "
                           "output")
        stacks = followed.stacks
        attach_summary(followed.parsed, read_lines(followed.log_path))  # parsed live: the summary line read whole
        results.append(figures_of(target, followed.parsed, followed.wall_seconds, followed.info.exit_code))
    assert followed is not None
    rank0_host = followed.log_path.stem.removeprefix("node-")
    rank0 = next((s for s in stacks if s.get(node_checks.HOST_KEY) == rank0_host), stacks[0] if stacks else None)
    environment = {k: v for k, v in rank0.items() if k != node_checks.HOST_KEY} if rank0 else None
    command = (f"sbatch --nodes={target.nodes} --ntasks-per-node=1 --gpus-per-node={per_node(recipe)} "
               f"{'--exclusive ' if options.exclusive else ''}{shlex.join(sbatch)} {JOB_SCRIPT}; on each "
               f"node: " + recorded_command(workdir, first / "run.sh", dict(recipe.env), target.root)).replace("  ", " ")
    extra = {"launcher": {"name": "slurm", "nodes": target.nodes, "jobs": jobs,
                          "rendezvous": "c10d on the first node" if launches_torchrun(recipe.run) else None},
             "nodes": node_checks.evidence_nodes(stacks)}
    nccl = next((r.log.nccl_version for r in results if r.log.nccl_version), None)
    return Measured(end_of_runs(target, results, started.date()), "launch", command, nccl, tail(followed.log_path),
                    environment, extra, SLURM_GPU_HOURS_NOTE)
