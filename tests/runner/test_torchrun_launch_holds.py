"""`remeasure --launcher torchrun` that holds: --dry-run starts and listens on nothing, the endpoint the other nodes
are told is one they can reach (never localhost), and the report channel takes only joiners of this run (a per-run
token): a rogue connection is never counted as a node nor its output taken as a log."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from runner import cli
from runner.launchers import torchrun
from runner.launchers.rendezvous import RendezvousError, check_reachable, this_host
from tests.engine.support import ROOT, make_registry

H200 = {"OPENRECIPES_GPUS": "1xNVIDIA H200"}


def _two_node_recipe(tmp: Path) -> Path:
    recipe = make_registry(tmp, dp=2, steps=4, precision="fp32")
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["gpu"]["per_node"] = 1
    data["run"] = "torchrun --standalone --nproc-per-node 1 tests/engine/cpu_train.py train x\n"
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return recipe


def _remeasure(recipe: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", "remeasure", str(recipe), "--launcher", "torchrun",
                           "--root", str(root), "--workdir", str(ROOT), *args], cwd=ROOT,
                          env=dict(os.environ) | H200, capture_output=True, text=True, timeout=120)


def test_dry_run_starts_nothing_and_prints_a_reachable_endpoint(tmp_path: Path) -> None:
    recipe = _two_node_recipe(tmp_path)
    started = time.monotonic()
    done = _remeasure(recipe, tmp_path, "--dry-run", "--timeout", "600")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60  # it never waited for the other node
    out = done.stdout
    assert "nothing launched, nothing listening, nothing written" in out
    host = this_host()
    assert f"would hold a c10d rendezvous at {host}:PORT" in out and f"--report {host}:PORT" in out
    # the token travels in the joining command's environment, never among its arguments (ps shows those)
    assert "OPENRECIPES_JOIN_TOKEN=TOKEN " in out and "--token" not in out
    assert "localhost" not in out.split("run.sh")[0] and not list(tmp_path.rglob("node.sh"))


def test_this_host_is_never_a_loopback_name() -> None:
    host = this_host()
    assert host.lower() not in ("localhost", "localhost.localdomain") and not host.startswith("127.")
    # where socket.getfqdn() answers "localhost" (this machine's /etc/hosts lists its name on 127.0.0.1), the
    # host name or the default route's address is used instead
    if socket.getfqdn() == "localhost" and socket.gethostname() != "localhost":
        assert host == socket.gethostname()


@pytest.mark.parametrize("endpoint", ["localhost:29500", "127.0.0.1:29500", "[::1]:29500"])
def test_a_loopback_endpoint_is_refused(tmp_path: Path, endpoint: str) -> None:
    with pytest.raises(RendezvousError, match="is a loopback address: the other nodes would reach themselves"):
        check_reachable(endpoint)
    done = _remeasure(_two_node_recipe(tmp_path), tmp_path, "--dry-run", "--rdzv-endpoint", endpoint)
    assert done.returncode == cli.EXIT_USAGE and "loopback address" in done.stderr


def _connect(port: int, line: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(line)
    return sock


def test_the_report_channel_takes_only_this_runs_joiners(tmp_path: Path) -> None:
    console = io.StringIO()
    collector = torchrun.Collector(tmp_path, console, "127.0.0.1", "s3cret")
    try:
        rogue = _connect(collector.port, json.dumps({"host": "rogue"}).encode() + b"\nstep 1 fake\n")
        wrong = _connect(collector.port, json.dumps({"host": "rogue2", "token": "guess"}).encode() + b"\n")
        with pytest.raises(TimeoutError, match="0 of 1 other nodes reported"):
            collector.wait_for(1, 1.5)
        assert rogue.recv(16) == b"" and wrong.recv(16) == b""  # closed unheard, no answer
        assert collector.turned_away == 2
        good = _connect(collector.port, json.dumps({"host": "gpu-b", "token": "s3cret"}).encode() + b"\n")
        joined = collector.wait_for(1, 10.0)
        assert [j.stack for j in joined] == [{"host": "gpu-b"}]  # the token is not kept in the stack
        collector.answer(torchrun.OK)
        assert good.recv(16) == b"ok\n"
        good.sendall(b"hello from gpu-b\n")
        good.close()
        collector.drain(5.0)
        assert [p.read_text() for p in tmp_path.glob("node-*.log")] == ["hello from gpu-b\n"]
    finally:
        collector.close()
        for sock in (rogue, wrong):
            sock.close()
