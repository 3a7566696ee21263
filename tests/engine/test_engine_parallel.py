"""The engine's multi-process layouts on CPU (gloo), each held step by step to the 1-process run of the same tokens.

TP 2, PP 2 with an uneven layer split (1 + 3 of the tiny model's 4 layers), DP 2, TP 2 with sequence parallel (through
`python -m runner remeasure`, as a GPU measurement would run) and TP 2 · PP 2 · DP 2 with sequence parallel on 8
processes. Every run is a process of its own, one per rank of tests/engine/layout_train.py talking over gloo: the
layouts' ranks and the one-process reference are forks of a process that imported torch and megatron once per test
process (tests/engine/forked_ranks.py, torchrun's rank environment; on CPU the imports are most of a rank's time), and
torchrun itself starts the remeasure run (as on GPUs; tests/runner/test_cluster_rendezvous.py runs two torchrun
agents). layout_train.py is the
runner's `train` CLI after the CPU adaptation (see that file: it also gives every layout the same initial weights, and
lets megatron's distributed optimizer, the engine's GPU default, run on CPU tensors).

What holds the layouts to the 1-process run: the same recipe seed, weights and tokens in fp32, so step 0's loss and
gradient norm agree to float rounding (reductions in another order; tolerance 1e-5 relative) and every later step's to
that rounding grown by training (lr 1e-2 with clipped gradient norms up to ~8 doubles a difference every step or two;
seen: up to 1.1e-4 by step 12, with or without the fused cross entropy; tolerance 1e-3). The negative control, a PP 2
run whose second stage starts from other weights (the engine's own initialisation under tests/engine/cpu_train.py),
is off by 4e-4 at step 0 and by over 100% later: both tolerances catch it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator import figures
from runner.engine import STEP_PREFIX, SUMMARY_PREFIX
from runner.engine.plan import make_engine_plan
from tests.engine.layouts import (
    FLAGS,
    GLOBAL_BATCH,
    LAYOUT_TRAIN,
    REL_TOL,
    ROW_TOKENS,
    STEP0_TOL,
    STEPS,
    Run,
    assert_learns,
    assert_matches,
    launch,
    torchrun_env,
    train_layout,
    worst,
)
from tests.engine.support import CPU_TRAIN, ROOT, make_registry

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Run:
    recipe = make_registry(tmp_path_factory.mktemp("one"), steps=STEPS, global_batch=GLOBAL_BATCH,
                           row_tokens=ROW_TOKENS, precision="fp32")
    run = train_layout(recipe, 1)
    assert_learns(run)
    return run


LAYOUTS = {
    "tp2": dict(tp=2),
    "pp2-split-1-3": dict(pp=2, split=(1, 3)),
    "dp2": dict(dp=2),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_two_rank_layout_matches_the_one_process_run(name: str, reference: Run, tmp_path: Path) -> None:
    layout = LAYOUTS[name]
    recipe = make_registry(tmp_path, steps=STEPS, global_batch=GLOBAL_BATCH, row_tokens=ROW_TOKENS, precision="fp32",
                           **layout)
    plan = make_engine_plan(recipe)
    assert plan.world_size == 2
    run = train_layout(recipe, 2)
    got = run.summary["layout"]
    assert (got["tp"], got["pp"], got["dp"]) == (plan.tp, plan.pp, plan.dp) == (
        layout.get("tp", 1), layout.get("pp", 1), layout.get("dp", 1))
    # Each DP rank runs half the micro-batches of the global batch; the others run all of them.
    assert got["num_microbatches"] == GLOBAL_BATCH // plan.dp
    if name.startswith("pp2"):
        assert (plan.first_stage_layers, plan.last_stage_layers) == (1, 3)
    assert run.summary["options"]["distributed_optimizer"] is True
    assert_learns(run)
    assert_matches(run, reference)


def test_tp2_sequence_parallel_through_remeasure(reference: Run, tmp_path: Path) -> None:
    """TP 2 + SP as a GPU measurement would run it: remeasure launches the recipe's torchrun script, parses rank 0's
    lines, writes the figures (tokens/s per GPU over 2 GPUs) and the evidence with every step's loss."""
    recipe = make_registry(tmp_path, tp=2, sp=True, steps=STEPS, global_batch=GLOBAL_BATCH, row_tokens=ROW_TOKENS,
                           precision="fp32")
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["run"] = (f"torchrun --standalone --nproc-per-node 2 {LAYOUT_TRAIN.relative_to(ROOT)} train {recipe} "
                   f"{' '.join(FLAGS)}\n")
    data["env"] = {"NCCL_NVLS_ENABLE": "0"}  # as the GPU recipes set it; gloo ignores it
    data["result"]["window"] = [2, STEPS - 1]
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert make_engine_plan(recipe).sequence_parallel

    proc = subprocess.run(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--yes", "--json", "--root", str(tmp_path),
         "--workdir", str(ROOT), "--timeout", "300"],
        cwd=ROOT, env=torchrun_env() | {"OPENRECIPES_GPUS": "2xNVIDIA H200"}, capture_output=True, text=True, timeout=360,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    report = json.loads(proc.stdout)
    assert report["wrote"] and report["steps"] == STEPS and report["window"] == [2, STEPS - 1]

    evidence = json.loads(recipe.with_name("test.evidence.json").read_text(encoding="utf-8"))
    steps = evidence["steps"]
    times = [s["time_s"] for s in steps]
    # Per GPU: the window's tokens over its time, divided by the recipe's 2 GPUs.
    tps = figures.tokens_per_s_per_gpu(times, (2, STEPS - 1), GLOBAL_BATCH, ROW_TOKENS, 2)
    assert tps == pytest.approx(report["tokens_per_s_per_gpu"], rel=1e-9)
    summary = next(json.loads(line.split(SUMMARY_PREFIX, 1)[1]) for line in evidence["log_tail"]
                   if SUMMARY_PREFIX in line)
    assert summary["layout"]["sequence_parallel"] is True and summary["layout"]["tp"] == 2
    run = Run([s["loss"] for s in steps], [s["grad_norm"] for s in summary["per_step"]], summary, "")
    assert_matches(run, reference)


def test_tp2_pp2_dp2_on_eight_ranks(reference: Run, tmp_path: Path) -> None:
    recipe = make_registry(tmp_path, tp=2, pp=2, dp=2, sp=True, split=(1, 3), steps=STEPS,
                           global_batch=GLOBAL_BATCH, row_tokens=ROW_TOKENS, precision="fp32")
    plan = make_engine_plan(recipe)
    assert (plan.world_size, plan.num_microbatches, plan.first_stage_layers, plan.last_stage_layers) == (8, 2, 1, 3)
    run = train_layout(recipe, 8, timeout=420)
    got = run.summary["layout"]
    assert (got["tp"], got["pp"], got["dp"], got["sequence_parallel"]) == (2, 2, 2, True)
    assert_learns(run)
    assert_matches(run, reference)


def test_negative_control_other_initial_weights_fail_the_comparison(reference: Run, tmp_path: Path) -> None:
    """PP 2 on the engine's own initialisation (cpu_train.py: the CPU adaptation only): its last stage draws layers
    2-4 from the stream the 1-process run drew layer 1 from, a different model, which the tolerance must catch."""
    recipe = make_registry(tmp_path, pp=2, split=(1, 3), steps=STEPS, global_batch=GLOBAL_BATCH,
                           row_tokens=ROW_TOKENS, precision="fp32")
    run = train_layout(recipe, 2, script=CPU_TRAIN, extra=("--no-distributed-optimizer",))
    assert abs(run.losses[0] - reference.losses[0]) < 0.01  # the same tokens at init: close, not equal
    assert worst(run, reference, 1) > 10 * STEP0_TOL
    assert worst(run, reference) > 10 * REL_TOL


def test_process_count_must_match_the_layout(tmp_path: Path) -> None:
    one = make_registry(tmp_path / "one", steps=2)
    proc = launch(one, 2)
    assert proc.returncode != 0
    assert "tp x pp x dp = 1 GPUs, but 2 processes were started" in proc.stdout + proc.stderr
    assert STEP_PREFIX not in proc.stdout
    two = make_registry(tmp_path / "two", tp=2, steps=2)
    proc = launch(two, 1)
    assert proc.returncode != 0
    assert "tp x pp x dp = 2 GPUs, but 1 processes were started" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
