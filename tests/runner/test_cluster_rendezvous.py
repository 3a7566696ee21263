"""`remeasure --launcher torchrun`: two real torchrun agents on localhost act as two nodes (gloo, CPU).

The first node is `python -m runner remeasure --launcher torchrun`; the second runs the `python -m runner node ...`
command the first prints. Both run the recipe's own script (`torchrun --standalone ...`), whose torchrun the runner
turns into a c10d rendezvous (runner/launchers/rendezvous.py). The DP 2 run across the two agents is held step by
step to the one-process run of the same tokens, with the tolerances of tests/engine/test_engine_parallel.py; a node
whose stack differs is refused before anything trains, named with the difference.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from generator import figures
from runner.engine import SUMMARY_PREFIX
from tests.engine.layouts import (
    FLAGS,
    GLOBAL_BATCH,
    LAYOUT_TRAIN,
    ROW_TOKENS,
    STEPS,
    Run,
    assert_learns,
    assert_matches,
    torchrun_env,
    train_layout,
)
from tests.engine.support import ROOT, make_registry

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

H200 = {"OPENRECIPES_GPUS": "1xNVIDIA H200"}


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> Run:
    recipe = make_registry(tmp_path_factory.mktemp("one"), steps=STEPS, global_batch=GLOBAL_BATCH,
                           row_tokens=ROW_TOKENS, precision="fp32")
    return train_layout(recipe, 1)


def _two_node_recipe(tmp: Path) -> Path:
    """DP 2, one GPU per node: two nodes. Its script is the single-node one a contributor would write."""
    recipe = make_registry(tmp, dp=2, steps=STEPS, global_batch=GLOBAL_BATCH, row_tokens=ROW_TOKENS,
                           precision="fp32")
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["gpu"]["per_node"] = 1
    data["run"] = (f"torchrun --standalone --nproc-per-node 1 {LAYOUT_TRAIN.relative_to(ROOT)} train {recipe} "
                   f"{' '.join(FLAGS)}\n")
    data["result"]["window"] = [2, STEPS - 1]
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return recipe


def _join_command(head: subprocess.Popen[str], deadline_s: float = 60.0) -> tuple[list[str], dict[str, str], list[str]]:
    """The `python -m runner node ...` line the first node prints (on stderr under --json) as its arguments and the
    environment it sets (the run's token), and what it printed."""
    seen: list[str] = []
    end = time.monotonic() + deadline_s
    assert head.stderr is not None
    while time.monotonic() < end:
        line = head.stderr.readline()
        if not line:
            break
        seen.append(line)
        if " -m runner node " in line:
            words = shlex.split(line.strip())
            env = dict(w.split("=", 1) for w in words[:1])
            assert list(env) == ["OPENRECIPES_JOIN_TOKEN"] and not any("token" in w.lower() for w in words[1:]), line
            return words[1:], env, seen
    raise AssertionError("no join command printed: " + "".join(seen)[-3000:])


def _two_nodes(recipe: Path, root: Path, joiner_env: dict[str, str]) -> tuple[int, str, str, int, str]:
    """(head exit, head stdout, head stderr, joiner exit, joiner output) of one run across two local agents."""
    head = subprocess.Popen(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--launcher", "torchrun", "--yes", "--json",
         "--root", str(root), "--workdir", str(ROOT), "--timeout", "240"],
        cwd=ROOT, env=torchrun_env() | H200, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        command, token_env, seen = _join_command(head)
        joiner = subprocess.run(command, cwd=ROOT, env=torchrun_env() | token_env | joiner_env, capture_output=True,
                                text=True, timeout=300)
        out, err = head.communicate(timeout=300)
    finally:
        if head.poll() is None:
            head.kill()
            head.wait()
    return head.returncode, out, "".join(seen) + err, joiner.returncode, joiner.stdout + joiner.stderr


def test_two_torchrun_agents_train_step_for_step_like_one_process(one_process: Run, tmp_path: Path) -> None:
    recipe = _two_node_recipe(tmp_path)
    code, out, err, joined, joiner_out = _two_nodes(recipe, tmp_path, H200)
    assert code == 0 and joined == 0, (err[-4000:], joiner_out[-4000:])
    assert "rendezvous: c10d at " in err and "2 nodes" in err
    # Both agents went through the rendezvous, not --standalone.
    assert "openrecipes-rendezvous: c10d at" in err + joiner_out
    report = json.loads(out)
    assert report["wrote"] and report["steps"] == STEPS and report["window"] == [2, STEPS - 1]

    evidence = json.loads(recipe.with_name("test.evidence.json").read_text(encoding="utf-8"))
    assert evidence["launcher"] == {"name": "torchrun", "nodes": 2, "rendezvous": "c10d on the first node"}
    assert len(evidence["nodes"]) == 2 and all(n["gpu_name"] == "NVIDIA H200" for n in evidence["nodes"])
    steps = evidence["steps"]
    tps = figures.tokens_per_s_per_gpu([s["time_s"] for s in steps], (2, STEPS - 1), GLOBAL_BATCH, ROW_TOKENS, 2)
    assert tps == pytest.approx(report["tokens_per_s_per_gpu"], rel=1e-9)
    summary = next(json.loads(line.split(SUMMARY_PREFIX, 1)[1]) for line in evidence["log_tail"]
                   if SUMMARY_PREFIX in line)
    assert summary["layout"]["dp"] == 2
    run = Run([s["loss"] for s in steps], [s["grad_norm"] for s in summary["per_step"]], summary, "")
    assert_learns(run)
    assert_matches(run, one_process)
    # Each node's output is kept on the first node; rank 0's (wherever c10d placed it) gave the figures.
    logs = sorted(p.name for p in (tmp_path / ".openrecipes-runs").rglob("node-*.log"))
    assert len(logs) == 2, logs
    assert Path(evidence["runs"][0]["log"]).name in logs


def test_a_node_with_another_stack_is_refused_before_training(tmp_path: Path) -> None:
    """The joining node declares two H200s (the recipe needs one per node, so its own GPU check passes): its stack
    (gpu_count) differs from the first node's, and the run stops before any step, naming the node."""
    recipe = _two_node_recipe(tmp_path)
    before = recipe.read_bytes()
    code, out, err, joined, joiner_out = _two_nodes(recipe, tmp_path, {"OPENRECIPES_GPUS": "2xNVIDIA H200"})
    assert code == 3 and joined == 3, (err[-3000:], joiner_out[-3000:])
    host = __import__("socket").gethostname().split(".")[0]
    assert f"node {host} differs from node {host}: gpu_count 2 (on {host}: 1)" in err
    assert "nothing trained, nothing written" in err
    assert "gpu_count 2" in joiner_out
    assert "openrecipes-step" not in err + joiner_out
    assert recipe.read_bytes() == before and not recipe.with_name("test.evidence.json").exists()


def test_a_node_with_the_wrong_gpus_refuses_itself_and_the_run(tmp_path: Path) -> None:
    recipe = _two_node_recipe(tmp_path)
    code, _out, err, joined, joiner_out = _two_nodes(recipe, tmp_path, {"OPENRECIPES_GPUS": "1xNVIDIA H100 80GB HBM3"})
    host = __import__("socket").gethostname().split(".")[0]
    assert code == 3 and joined == 3, (err[-3000:], joiner_out[-3000:])
    assert f"node {host}: " in err and "is a recipe for H200, but this machine has 1 x H100" in err
    assert not recipe.with_name("test.evidence.json").exists()
