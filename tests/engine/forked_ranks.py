"""The engine's CPU training processes as forks of the suite's preloaded server (tests/forked.py), which imports
torch and megatron-core once per test process.

Why: on CPU an engine process spends ~4 s of CPU importing torch and megatron-core (megatron's package imports its
fusions, which import torch's compiler) and about a second or less training the tiny model; the engine tests start
25 of them (13 runs of 1 to 8 processes) on a 2-core machine. `run(...)`:

- `ranks=None`: one plain process, `python SCRIPT ARGS...` with the given environment and working folder;
- `ranks=N`: N ranks of a single-node run, each a further fork given what torchrun gives a rank (RANK, LOCAL_RANK,
  WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT); the ranks talk over gloo on localhost as
  under torchrun. Like torchrun, the first rank that fails stops the others (a rank left waiting in a collective
  would never return) and its status is the run's.

The script applies its own patches (cpu_megatron.apply and the like) in the fork, never in the server. The runs
that test launching still start as a user's would: remeasure runs the recipe's own command (plain python in
test_engine_cpu, torchrun in test_engine_parallel), two torchrun agents rendezvous, Slurm runs a job.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.forked import run_forked, run_script

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


def run(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float,
        ranks: int | None = None) -> subprocess.CompletedProcess[str]:
    """`python argv...` (argv[0] a script) as one plain process or on `ranks` ranks (see the module's docstring)."""
    if ranks is None:
        return run_forked(run_script, list(argv), argv=[sys.executable, *argv], env=env, cwd=cwd, timeout=timeout)
    return run_forked(run_ranks, ranks, list(argv), argv=[sys.executable, *argv], env=env, cwd=cwd, timeout=timeout)


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
