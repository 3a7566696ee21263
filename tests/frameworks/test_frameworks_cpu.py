"""torchtitan 0.2.2 and the transformers loop end to end on CPU: the framework recipe's own `run` line, under
`python -m runner remeasure --dry-run`, in a registry whose model card is tiny (4 layers, hidden 64, vocabulary 128).

The run trains for real (gloo, one process), the runner parses the framework's own log (torchtitan's metric lines;
the engine format for the transformers loop) and computes the figures over the window; the dry run writes nothing.
Skipped unless torchtitan/transformers are importable here or in $OPENRECIPES_FRAMEWORK_SITE (they are not in the
shared venv: `pip install --target DIR torchtitan==0.2.2 torchdata==0.11.0 datasets==4.7.0 tyro tomli tensorboard
transformers`). Each takes 20-60 s on two shared cores (imports dominate).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.support import ROOT
from tests.frameworks.support import RECIPES, REGISTRY, has_package, subprocess_env, tiny_registry

STEPS, WINDOW, ROW = 24, (3, 23), 32
GLOBAL_BATCH = 8


# The runner's check refuses an interval log without a time for step 0 (torchtitan's first metric line has no
# interval start); the runner's fix (issue 24 item 1: interval logs recorded as they state) lifts it.
STEP_0_REFUSAL = "steps 0-7 with time_s are needed to recompute the result (missing 0)"


def _run(recipe: Path, registry: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", "remeasure", str(recipe), "--dry-run", "--yes", "--json",
                           "--timeout", "400"], cwd=registry, env=subprocess_env(), capture_output=True, text=True,
                          timeout=480)


def _remeasure(recipe: Path, registry: Path) -> tuple[dict, str]:
    done = _run(recipe, registry)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    text = done.stdout
    report = json.loads(text if text.startswith("{") else text[text.rindex("\n{") + 1:])
    return report, out


def _log_of(registry: Path, recipe: Path) -> str:
    logs = sorted((registry / ".openrecipes-runs").rglob("run1.log"))
    assert logs, "the runner kept no log"
    return logs[-1].read_text(encoding="utf-8")


def _assert_figures(report: dict) -> None:
    # The card's formulas by hand: window tokens = 5 steps x 8 rows x 32 tokens.
    assert report["steps"] == STEPS and report["window"] == list(WINDOW) and report["dry_run"] and not report["wrote"]
    assert report["window_tokens"] == (WINDOW[1] - WINDOW[0] + 1) * GLOBAL_BATCH * ROW == 5376
    assert report["tokens_per_s_per_gpu"] > 0 and 0 < report["mfu"] < 1


@pytest.mark.skipif(not (has_package("transformers") and has_package("torch")), reason="transformers not installed")
def test_transformers_recipe_runs_and_parses_on_cpu(tmp_path: Path) -> None:
    recipe = tiny_registry(tmp_path, REGISTRY / "llama-3.2-1b/h200/transformers-4k.yaml", steps=STEPS, window=WINDOW,
                           row_tokens=ROW)
    report, out = _remeasure(recipe, tmp_path)
    _assert_figures(report)
    log = _log_of(tmp_path, recipe)
    steps = [json.loads(line.split(" ", 1)[1]) for line in log.splitlines() if line.startswith("openrecipes-step ")]
    assert [s["step"] for s in steps] == list(range(STEPS)) and all(s["tokens"] == GLOBAL_BATCH * ROW for s in steps)
    assert abs(steps[0]["loss"] - math.log(128)) < 0.5  # a fresh model on a 128-token vocabulary: about ln V
    summary = json.loads(log[log.index("openrecipes-framework ") + len("openrecipes-framework "):].splitlines()[0])
    assert summary["framework"] == "transformers" and summary["attention"] == "sdpa" and summary["fused_adam"]
    # the runner captured the framework's installed version and compared it with stack.framework (5.17.0)
    here = summary["transformers"]
    framework_lines = [d for d in report["stack_differences"] if d.startswith("framework:")]
    assert framework_lines == ([] if here == "5.17.0" else [f"framework: recipe transformers 5.17.0, here {here}"])


@pytest.mark.skipif(not (has_package("torchtitan") and has_package("torchdata") and has_package("datasets")),
                    reason="torchtitan 0.2.2 not installed")
def test_torchtitan_recipe_runs_and_parses_on_cpu(tmp_path: Path) -> None:
    # --no-compile: inductor's CPU build of the model takes a minute on two shared cores (it does build: a manual run
    # of the recipe's line with compile on passed); the device's smoke stage runs the recipe's line as it is.
    recipe = tiny_registry(tmp_path, REGISTRY / "llama-3.2-1b/h200/torchtitan-4k.yaml", steps=STEPS, window=WINDOW,
                           row_tokens=ROW, extra_run_args="--no-compile")
    done = _run(recipe, tmp_path)
    log = _log_of(tmp_path, recipe)
    # torchtitan's own metric line every step (metrics.log_freq 1): steps 1..8, 1-based.
    printed = [line for line in log.splitlines() if "step:" in line and "tps:" in line]
    assert len(printed) == STEPS and "step: 24" in printed[-1]
    assert "Model openrecipes_llama3 tiny-llama-test" in log  # the flavour is the card's, named for it
    summary = json.loads(log[log.index("openrecipes-framework ") + len("openrecipes-framework "):].splitlines()[0])
    assert summary["framework"] == "torchtitan" and summary["torchtitan"] == "0.2.2" and not summary["compile"]
    # the card's SwiGLU width 128 reached through multiple_of and ffn_dim_multiplier (int(0.7529 x 170) = 127 -> 128)
    assert summary["flavour"]["multiple_of"] == 128 and summary["flavour"]["n_kv_heads"] == 2
    out = done.stdout + done.stderr
    if done.returncode != 0 and STEP_0_REFUSAL in out:
        assert done.returncode == 10 and "new figure" in out  # parsed and computed; only the write's check refused
        pytest.xfail("the runner's check wants a time for step 0 (issue 24 item 1 lifts it)")
    assert done.returncode == 0, out[-4000:]
    text = done.stdout
    _assert_figures(json.loads(text if text.startswith("{") else text[text.rindex("\n{") + 1:]))


def test_the_tiny_registry_keeps_the_run_line(tmp_path: Path) -> None:
    recipe = tiny_registry(tmp_path, REGISTRY / "llama-3.2-3b/h200/torchtitan-8k.yaml", steps=STEPS, window=WINDOW)
    text = recipe.read_text()
    assert "python3 -m runner.frameworks.torchtitan recipes/tiny-llama-test/h200/torchtitan-8k.yaml\n" in text
    assert (ROOT / "runner" / "frameworks" / "torchtitan.py").is_file()


@pytest.mark.parametrize("source", RECIPES, ids=lambda p: p.stem)
def test_a_tiny_copy_is_unmeasured_but_otherwise_clean(source: Path, tmp_path: Path) -> None:
    # The CPU runs above measure a copy as a first measurement: its only problems are the figures it lacks.
    import datetime as dt

    from generator.check import check_recipe
    from generator.load import load_recipe
    from generator.registry import load_catalog

    recipe = tiny_registry(tmp_path, source, steps=STEPS, window=WINDOW)
    loaded = load_recipe(recipe, f"recipes/{recipe.relative_to(tmp_path / 'recipes').as_posix()}", tmp_path / "recipes")
    fields = {p.field for p in check_recipe(loaded, load_catalog(tmp_path), dt.date.today())}
    assert fields == {"result.measured", "result.step_time_cv_percent"}
    assert loaded.recipe.correctness is None and loaded.recipe.result.mfu is None
