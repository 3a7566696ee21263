"""`python tests/engine/forked_ranks.py N SCRIPT ARGS...`: N ranks of a training script, each a fork of this process
after it has imported torch, megatron-core and the engine once.

Why: on CPU a rank spends ~3 s of its ~4.5 s importing torch and megatron-core (megatron's package imports its
fusions, which import torch's compiler); the layout tests start 22 ranks on a 2-core machine. A fork shares those
imports. Each rank gets what torchrun gives a rank of a single-node run (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT), runs SCRIPT as `__main__` and exits with its status; the
ranks talk over gloo on localhost as under torchrun. Like torchrun, the first rank that fails stops the others
(a rank left waiting in a collective would never return) and its status is the launcher's. torchrun itself still
starts the runs that test launching: remeasure's torchrun command and the two-agent rendezvous.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import socket
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: a signal for this process when its parent dies


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def import_once() -> None:
    """What every rank imports, imported before the forks (nothing here starts a thread)."""
    sys.path.insert(0, str(ROOT))
    import megatron.core  # noqa: F401
    import megatron.core.optimizer  # noqa: F401
    import torch  # noqa: F401

    import runner.engine.cli  # noqa: F401
    import runner.engine.train  # noqa: F401
    import tests.engine.cpu_megatron  # noqa: F401


def run_rank(rank: int, world: int, port: int, script: str, args: list[str]) -> None:
    """In the forked child: the rank's environment, the script as __main__, then exit with its status."""
    # A launcher killed by a timeout takes its ranks with it, as torchrun's would.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.environ.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
                       "LOCAL_WORLD_SIZE": str(world), "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(port)})
    sys.argv = [script, *args]
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if isinstance(exc.code, int) or exc.code is None:
            status = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - a rank's traceback is its report, as under torchrun
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def wait_all(pids: list[int]) -> int:
    """0 when every rank exits 0; else the first failure's status, the other ranks stopped."""
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
            stop(live)
    return failed


def stop(pids: set[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.5)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit() or int(argv[0]) < 1:
        print("usage: forked_ranks.py N SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    world, script, args = int(argv[0]), argv[1], argv[2:]
    import_once()
    port = free_port()
    sys.stdout.flush()
    sys.stderr.flush()
    pids = []
    for rank in range(world):
        pid = os.fork()
        if pid == 0:
            run_rank(rank, world, port, script, args)
        pids.append(pid)
    return wait_all(pids)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
