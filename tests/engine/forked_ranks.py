"""The engine's CPU training processes, forked from one process that has imported torch and megatron-core.

Why: on CPU an engine process spends ~4 s of CPU importing torch and megatron-core (megatron's package imports its
fusions, which import torch's compiler) and about a second or less training the tiny model; the engine tests start
25 of them (13 runs of 1 to 8 processes) on a 2-core machine. `run(...)` asks a server that imported everything once
per test process (multiprocessing's forkserver, preloading tests/engine/preloaded.py) for a fork that runs the
script, a real process of its own:

- `ranks=None`: one plain process, `python SCRIPT ARGS...` with the given environment and working folder;
- `ranks=N`: N ranks of a single-node run, each a further fork given what torchrun gives a rank (RANK, LOCAL_RANK,
  WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT); the ranks talk over gloo on localhost as
  under torchrun. Like torchrun, the first rank that fails stops the others (a rank left waiting in a collective
  would never return) and its status is the run's.

The script runs as `__main__` and applies its own patches (cpu_megatron.apply and the like) in the fork, never in
the server. The runs that test launching still start as a user's would: remeasure runs the recipe's own command
(plain python in test_engine_cpu, torchrun in test_engine_parallel), two torchrun agents rendezvous, Slurm runs a job.
What a fresh interpreter would take from the environment at start-up and the server has already fixed is set again
in the fork: warning filters (PYTHONWARNINGS), unbuffered output (PYTHONUNBUFFERED) and torch's intra-op threads
(OMP_NUM_THREADS).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import runpy
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: a signal for this process when its parent dies


def import_once() -> None:
    """What every engine process imports (nothing here starts a thread, so forks of it are sound)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # megatron's "Transformer Engine and Apex are not installed": the fork's own
        import megatron.core  # noqa: F401
        import megatron.core.optimizer  # noqa: F401
        import torch  # noqa: F401

        import runner.engine.cli  # noqa: F401
        import runner.engine.train  # noqa: F401
        import tests.engine.cpu_megatron  # noqa: F401


# -- the test process's side --------------------------------------------------------------------------------------


def _context() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    # The server (one per test process, started by the first run) imports preloaded.py, so torch and megatron, once.
    context.set_forkserver_preload(["tests.engine.preloaded"])
    return context


def run(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float,
        ranks: int | None = None) -> subprocess.CompletedProcess[str]:
    """`python argv...` (argv[0] a script) as a fork of the preloaded server, on `ranks` ranks or as one plain
    process; what it printed and its status, as `subprocess.run(..., capture_output=True, text=True)` gives them
    (a killed process's status is minus the signal). Raises subprocess.TimeoutExpired after `timeout` seconds,
    the process and its ranks killed."""
    with tempfile.TemporaryDirectory(prefix="forked-") as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        process = _context().Process(target=_forked, args=(list(argv), ranks, dict(env), str(cwd), str(out), str(err)))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()  # its ranks die with it (PR_SET_PDEATHSIG)
            process.join()
            raise subprocess.TimeoutExpired([sys.executable, *argv], timeout, _read(out), _read(err))
        return subprocess.CompletedProcess([sys.executable, *argv], process.exitcode, _read(out), _read(err))


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


# -- in the fork --------------------------------------------------------------------------------------------------


def _forked(argv: list[str], ranks: int | None, env: dict[str, str], cwd: str, out: str, err: str) -> None:
    """The fork's body: the caller's output files, folder and environment; then the script, alone or on N ranks."""
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    _as_at_start_up(env)
    sys.exit(run_script(argv) if ranks is None else run_ranks(ranks, argv))


def _as_at_start_up(env: Mapping[str, str]) -> None:
    """What an interpreter started with `env` would have set itself, which the server fixed before the fork."""
    warnings.resetwarnings()
    for action in filter(None, env.get("PYTHONWARNINGS", "").split(",")):
        if ":" in action:
            raise ValueError(f"forked_ranks: PYTHONWARNINGS={env['PYTHONWARNINGS']!r}: only bare actions are supported")
        warnings.simplefilter(action)  # type: ignore[arg-type]
    if env.get("PYTHONUNBUFFERED"):
        sys.stdout.reconfigure(write_through=True)  # type: ignore[union-attr]
        sys.stderr.reconfigure(write_through=True)  # type: ignore[union-attr]
    if env.get("OMP_NUM_THREADS", "").isdigit():
        import torch

        torch.set_num_threads(int(env["OMP_NUM_THREADS"]))


def run_script(argv: list[str]) -> int:
    """The script as `__main__` with argv; its exit status (a traceback is printed, as Python would, and gives 1)."""
    sys.argv = list(argv)
    status = 0
    try:
        runpy.run_path(argv[0], run_name="__main__")
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


def run_ranks(world: int, argv: list[str]) -> int:
    """`world` ranks of the script, each a fork with torchrun's rank environment; 0 or the first failure's status."""
    port = _free_port()
    sys.stdout.flush()
    sys.stderr.flush()
    pids = []
    for rank in range(world):
        pid = os.fork()
        if pid == 0:
            # A run killed by a timeout takes its ranks with it, as torchrun's would.
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.environ.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
                               "LOCAL_WORLD_SIZE": str(world), "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                               "MASTER_PORT": str(port)})
            os._exit(run_script(argv))
        pids.append(pid)
    return _wait_all(pids)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_all(pids: list[int]) -> int:
    live = set(pids)
    failed = 0
    while live:
        pid, raw = os.wait()
        if pid not in live:
            continue
        live.discard(pid)
        status = os.waitstatus_to_exitcode(raw)
        if status != 0 and not failed:
            failed = status if status > 0 else 128 - status  # killed by a signal: 128 + its number
            _stop(live)
    return failed


def _stop(pids: set[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.5)
