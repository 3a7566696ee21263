"""The bundled engine end to end on CPU: megatron-core trains a tiny Llama-shaped model under gloo in fp32.

`python -m runner remeasure --yes` launches the recipe's run script, a real subprocess, which runs `python -m runner
train` through tests/engine/cpu_train.py (the engine's own CLI with the CPU adaptation of tests/engine/cpu_megatron.py
applied first; see that file for what it changes and why). The trainings the tests start themselves run the same
script in a process forked from one that imported torch and megatron once (tests/engine/forked_ranks.py).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator import figures
from generator.load import load_recipe
from runner.engine import STEP_PREFIX, SUMMARY_PREFIX
from runner.engine.plan import EngineError, make_engine_plan
from tests.engine import forked_ranks
from tests.engine.support import CPU_FLAGS, CPU_TRAIN, ROOT, VOCAB, cpu_env, make_registry

pytestmark = pytest.mark.slow

def _set_run(recipe: Path, run: str, window: list[int] | None = None, lr: float | None = None) -> None:
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["run"] = run
    if window is not None:
        data["result"]["window"] = window
    if lr is not None:
        data["workload"]["schedule"]["peak_lr"] = lr
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _train(recipe: Path, *args: str, timeout: float = 240) -> list[dict]:
    proc = forked_ranks.run([str(CPU_TRAIN), "train", str(recipe), *CPU_FLAGS.split(), *args], cwd=ROOT, env=cpu_env(),
                            timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    steps = [json.loads(line[len(STEP_PREFIX):]) for line in proc.stdout.splitlines() if line.startswith(STEP_PREFIX)]
    assert any(line.startswith(SUMMARY_PREFIX) for line in proc.stdout.splitlines()), proc.stdout[-2000:]
    return steps


def test_remeasure_trains_the_tiny_model_and_writes_figures(tmp_path: Path) -> None:
    # 20 steps at 2e-2: the tiny model learns the pattern well past check's "the loss falls" (4.86 -> 2.68)
    recipe = make_registry(tmp_path, steps=20, precision="fp32")
    _set_run(recipe, f"{sys.executable} {CPU_TRAIN} train {recipe} {CPU_FLAGS}\n", window=[2, 19], lr=2e-2)
    before = recipe.read_text(encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--yes", "--json", "--root", str(tmp_path),
         "--workdir", str(ROOT), "--timeout", "300"],
        cwd=ROOT, env=cpu_env() | {"OPENRECIPES_GPUS": "1xNVIDIA H200"}, capture_output=True, text=True, timeout=360,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert report["wrote"] and report["source"] == "launch" and report["steps"] == 20
    assert report["window"] == [2, 19] and report["window_tokens"] == 18 * 4 * 32

    after = load_recipe(recipe).recipe
    assert after.result.tokens_per_s_per_gpu == pytest.approx(report["tokens_per_s_per_gpu"], rel=1e-3)
    assert after.result.measured is not None and after.result.window_tokens == 18 * 4 * 32
    assert before.split("result:")[0] == recipe.read_text(encoding="utf-8").split("result:")[0]

    evidence = json.loads(recipe.with_name("test.evidence.json").read_text(encoding="utf-8"))
    steps = evidence["steps"]
    assert [s["step"] for s in steps] == list(range(20)) and all(s["tokens"] == 128 for s in steps)
    assert all(math.isfinite(s["loss"]) for s in steps)
    # The untrained model starts near the uniform loss ln(V); the evidence recomputes the written figure.
    assert abs(steps[0]["loss"] - math.log(VOCAB)) < 0.3
    tps = figures.tokens_per_s_per_gpu([s["time_s"] for s in steps], (2, 19), 4, 32, 1)
    assert figures.loss_falls(steps[0]["loss"], steps[-1]["loss"])
    assert tps == pytest.approx(report["tokens_per_s_per_gpu"], rel=1e-9)
    assert any("openrecipes-engine" in line for line in evidence["log_tail"])


def test_loss_falls_on_the_learnable_pattern_and_not_on_random_tokens(tmp_path: Path) -> None:
    recipe = make_registry(tmp_path, steps=20, precision="fp32")
    uniform = math.log(VOCAB)
    pattern = [s["loss"] for s in _train(recipe, "--data", "pattern", "--lr", "1e-2")]
    random = [s["loss"] for s in _train(recipe, "--data", "random", "--lr", "1e-2")]
    assert len(pattern) == len(random) == 20
    # Each pattern token determines the next (a seeded bijective bigram): the model learns it, the loss falls far
    # below ln(V) (seen: 4.91 -> 2.4 in 20 steps). Uniform random tokens have nothing to learn: the loss stays at
    # ln(V) or above (the negative control; seen 4.86-5.06).
    assert abs(pattern[0] - uniform) < 0.3 and abs(random[0] - uniform) < 0.3
    assert sum(pattern[-3:]) / 3 < 0.7 * uniform
    assert sum(random[-3:]) / 3 > uniform - 0.2


def test_plan_refuses_what_needs_transformer_engine(tmp_path: Path) -> None:
    recipe = make_registry(tmp_path)
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    for field_name, value, words in (("cp", 2, "context parallel"), ("precision", "fp8-cs", "FP8")):
        changed = json.loads(json.dumps(data))
        if field_name == "cp":
            changed["layout"]["cp"] = 2
            changed["layout"]["dp"] = 1
            changed["gpu"]["count"] = changed["gpu"]["per_node"] = 2
        else:
            changed["workload"]["precision"] = value
        recipe.write_text(yaml.safe_dump(changed, sort_keys=False), encoding="utf-8")
        with pytest.raises(EngineError) as err:
            make_engine_plan(recipe)
        assert words in str(err.value) and "test.yaml:" in str(err.value)
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    plan = make_engine_plan(recipe, attention="unfused")
    assert plan.attention_backend == "unfused" and plan.num_microbatches == 4 and plan.tokens_per_step == 128


@pytest.mark.slow
def test_a_run_that_does_not_learn_at_its_schedule_is_not_written(tmp_path: Path) -> None:
    # 6 steps at the engine's old 3e-4: the tiny model's loss barely moves (4.86 -> 4.74), and check refuses it.
    recipe = make_registry(tmp_path, steps=6, precision="fp32")
    _set_run(recipe, f"{sys.executable} {CPU_TRAIN} train {recipe} {CPU_FLAGS}\n", window=[2, 5])
    before = recipe.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--yes", "--root", str(tmp_path),
         "--workdir", str(ROOT), "--timeout", "300"],
        cwd=ROOT, env=cpu_env() | {"OPENRECIPES_GPUS": "1xNVIDIA H200"}, capture_output=True, text=True, timeout=360,
    )
    assert proc.returncode != 0
    assert "workload.schedule: test.evidence.json: the run did not learn at its schedule: its last logged loss" in proc.stderr
    assert "is above 0.8 x its first logged loss" in proc.stderr and "(step 0)" in proc.stderr
    assert recipe.read_bytes() == before and not recipe.with_name("test.evidence.json").exists()
