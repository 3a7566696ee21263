"""Python processes forked from a server that imported the project once per test process.

Why: a `python -m runner ...` process spends ~0.25 s of its ~0.35 s of CPU starting Python and importing the runner,
the generator and their libraries, and an engine process ~4 s of CPU importing torch and megatron-core; the signal-
fault tests start ~120 runner processes and the engine tests 25 engine processes on a 2-core machine. `run_forked`
asks multiprocessing's forkserver (one per test process, started by the first call; it imports tests/preloaded.py
before it forks) for a fork that runs `body(*args)`, a real process of its own with the caller's environment,
working folder, output files and exit status.

What the fork runs stays what a user runs: `run_script` runs a script as `__main__` with its argv, as `python
SCRIPT ARGS` would; `python_m` a module as `python -m MODULE ARGS` would (the runner's, the generator's and
MkDocs' command lines: tests/runner/runner_support.py, suitehelpers.generator_cli and mkdocs_build). What a fresh
interpreter would take from its environment at start-up, and the server has already fixed, is set again in the
fork: warning filters (PYTHONWARNINGS), unbuffered output (PYTHONUNBUFFERED) and torch's intra-op threads
(OMP_NUM_THREADS). Signal dispositions are Python's own (the forkserver restores them in the fork).
The runs whose subject is starting a process start one as a user would (the runner's launch of a recipe's command,
torchrun, Slurm, a fresh venv).
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


def _context() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.preloaded"])
    return context


def run_forked(body: Callable[..., int], *args: object, argv: Sequence[str], env: Mapping[str, str], cwd: Path,
               timeout: float) -> subprocess.CompletedProcess[str]:
    """`body(*args)` (a module-level function returning an exit status) in a fork of the preloaded server; what it
    printed (through files: a limit on file size would cover it) and its status as `subprocess.run(argv,
    capture_output=True, text=True)` gives them (a process killed by a signal: minus the signal). Raises
    subprocess.TimeoutExpired after `timeout` seconds, the fork killed (processes it forked die with it where they
    ask to: forked_ranks' ranks do)."""
    with tempfile.TemporaryDirectory(prefix="forked-") as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        process = _context().Process(target=_forked, args=(body, args, dict(env), str(cwd), str(out), str(err)))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(list(argv), timeout, _read(out), _read(err))
        return subprocess.CompletedProcess(list(argv), process.exitcode, _read(out), _read(err))


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _forked(body: Callable[..., int], args: tuple[object, ...], env: dict[str, str], cwd: str, out: str,
            err: str) -> None:
    """In the fork: the caller's output files, folder and environment; then the body's status."""
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    _as_at_start_up(env)
    sys.exit(body(*args))


def _as_at_start_up(env: Mapping[str, str]) -> None:
    """What an interpreter started with `env` would have set itself, which the server fixed before the fork."""
    warnings.resetwarnings()
    for action in filter(None, env.get("PYTHONWARNINGS", "").split(",")):
        if ":" in action:
            raise ValueError(f"run_forked: PYTHONWARNINGS={env['PYTHONWARNINGS']!r}: only bare actions are supported")
        warnings.simplefilter(action)  # type: ignore[arg-type]
    if env.get("PYTHONUNBUFFERED"):
        sys.stdout.reconfigure(write_through=True)  # type: ignore[union-attr]
        sys.stderr.reconfigure(write_through=True)  # type: ignore[union-attr]
    if "torch" in sys.modules and env.get("OMP_NUM_THREADS", "").isdigit():
        sys.modules["torch"].set_num_threads(int(env["OMP_NUM_THREADS"]))


def run_script(argv: list[str]) -> int:
    """The script argv[0] as `__main__` with argv; its exit status (a traceback is printed, as Python would, and
    gives 1)."""
    return _as_main(lambda: runpy.run_path(argv[0], run_name="__main__"), argv)


def run_module(argv: list[str]) -> int:
    """`python -m argv[0] argv[1:]`: the module as `__main__` with the working folder first on sys.path and
    sys.argv[0] the module's file, as `-m` sets them; its exit status as run_script's."""
    sys.path.insert(0, os.getcwd())
    return _as_main(lambda: runpy.run_module(argv[0], run_name="__main__", alter_sys=True), argv)


def python_m(module: str, args: Sequence[str], env: Mapping[str, str], cwd: Path,
             timeout: float) -> subprocess.CompletedProcess[str]:
    """What `subprocess.run([sys.executable, "-m", module, *args], env=env, cwd=cwd, capture_output=True, text=True,
    timeout=timeout)` gives, run in a fork of the preloaded server (run_module): for the tests whose subject is what a
    command does, not how a process starts."""
    return run_forked(run_module, [module, *args], argv=[sys.executable, "-m", module, *args], env=env, cwd=cwd,
                      timeout=timeout)


def _as_main(run: Callable[[], object], argv: list[str]) -> int:
    sys.argv = list(argv)
    status = 0
    try:
        run()
    except SystemExit as exc:
        if isinstance(exc.code, int) or exc.code is None:
            status = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - a script's traceback is its report
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status
