"""When a recipe whose correctness passes may stay `measured` (check/status.verified_blockers): fewer runs than a
verified figure rests on, a partial run, or noisy step times. Without one of those, `measured` is a problem."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from generator.check.status import verified_blockers
from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
TORCHTITAN_1B = ROOT / "recipes/llama-3.2-1b/h200/torchtitan-4k.yaml"
ENGINE_1B = ROOT / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"


def _recipe(path: Path, **result: object):  # noqa: ANN202
    recipe = load_registry(ROOT, [path]).recipes[0].recipe
    return recipe.model_copy(update={"result": recipe.result.model_copy(update=result)})


def test_one_run_measured_today_blocks_verified() -> None:
    recipe = _recipe(TORCHTITAN_1B)
    assert recipe.result.runs == 1 and recipe.correctness.result.value == "pass"
    assert verified_blockers(recipe) == ["1 run(s), fewer than 3"]


def test_three_quiet_complete_runs_block_nothing() -> None:
    assert verified_blockers(_recipe(TORCHTITAN_1B, runs=3, runs_cv_percent=1.0)) == []


def test_a_figure_from_before_the_rule_keeps_its_one_run() -> None:
    assert verified_blockers(_recipe(TORCHTITAN_1B, measured=dt.date(2026, 12, 3))) == []


def test_noisy_step_times_block_verified_even_from_three_runs() -> None:
    recipe = _recipe(ENGINE_1B)
    assert recipe.result.runs == 3 and recipe.result.step_time_cv_percent == 5.47
    assert verified_blockers(recipe) == ["a step-time CV above 5%"]
