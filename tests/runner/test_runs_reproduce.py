"""Figures that reproduce: a figure states how many runs it is the median of and the CV across them (result and
evidence), a verified recipe measured since generator.figures.VERIFIED_MIN_RUNS_FROM needs at least 3 runs, and a
run whose step times drift over its window is reported."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import statistics
from pathlib import Path

from runner_support import FIXTURES, ROOT, registry, remeasure

from generator import figures
from generator.check import check_recipe
from generator.load import load_recipe
from generator.registry import load_catalog

LOG = FIXTURES / "miles_gemma4_31b.txt"  # a real miles run of the reference recipe (20 steps)


def _scaled(tmp: Path, name: str, factor: float = 1.0, ramp: float = 0.0) -> Path:
    """The fixture log with every step time x factor, and step i's time x (1 + ramp x i) on top."""
    count = iter(range(10**6))

    def new(m: re.Match[str]) -> str:
        i = next(count)
        return f"{m.group(1)}{float(m.group(2)) * factor * (1 + ramp * i)!r}"

    path = tmp / name
    path.write_text(re.sub(r"('perf/step_time': )([\d.]+)", new, LOG.read_text()))
    return path


def test_three_runs_state_their_median_and_cv(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    logs = [_scaled(tmp_path, "a.log", 1.02), _scaled(tmp_path, "b.log", 1.0), _scaled(tmp_path, "c.log", 0.97)]
    done = remeasure(recipe, "--from-log", *map(str, logs), "--accept-change", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rates = report["runs_tokens_per_s_per_gpu"]
    # tokens/s scales as 1 / factor: the median run is b (factor 1.0), the CV is that of 1/1.02, 1, 1/0.97.
    assert report["median_run"] == 1 and rates[1] == sorted(rates)[1]
    expected_cv = statistics.stdev([1 / 1.02, 1.0, 1 / 0.97]) / statistics.fmean([1 / 1.02, 1.0, 1 / 0.97]) * 100
    assert abs(report["runs_cv_percent"] - expected_cv) < 1e-9
    text = recipe.read_text(encoding="utf-8")
    assert "  runs: 3\n" in text and f"  runs_cv_percent: {round(expected_cv, 2)}\n" in text
    data = json.loads(recipe.with_name(recipe.stem + ".evidence.json").read_text(encoding="utf-8"))
    assert data["median_run"] == 1 and len(data["runs"]) == 3 and "drift_percent" in data["runs"][0]
    assert data["result"]["runs_cv_percent"] == round(expected_cv, 2)
    # check recomputes the CV across runs from the evidence: a stated CV that is not theirs is a problem.
    recipe.write_text(text.replace(f"runs_cv_percent: {round(expected_cv, 2)}", "runs_cv_percent: 9.99"))
    loaded = load_recipe(recipe, "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml", tmp_path / "recipes")
    problems = [p.message for p in check_recipe(loaded, load_catalog(tmp_path), dt.date(2026, 12, 4))]
    assert any(m.startswith("stated 9.99 but the 3 runs in") for m in problems), problems


def test_a_verified_recipe_measured_since_the_rule_needs_three_runs() -> None:
    loaded = load_recipe(ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml")
    catalog = load_catalog(ROOT)
    since = figures.VERIFIED_MIN_RUNS_FROM
    assert not [p for p in check_recipe(loaded, catalog, since) if p.field == "result.runs"]  # measured before it
    res = loaded.recipe.result.model_copy(update={"measured": since})
    later = dataclasses.replace(loaded, recipe=loaded.recipe.model_copy(update={"result": res}))
    problems = [p for p in check_recipe(later, catalog, since) if p.field == "result.runs"]
    assert problems and f"at least {figures.VERIFIED_MIN_RUNS} runs (result.runs is 1)" in problems[0].message


def test_step_time_drift_is_reported(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    # Each step 1% slower than the one before: over the window [5, 19] the last third (steps 15-19) against the
    #   first (5-9) is about +10% of the mean: reported.
    done = remeasure(recipe, "--from-log", str(_scaled(tmp_path, "ramp.log", ramp=0.01)), "--accept-change",
                     "--dry-run", "--json")
    report = json.loads(done.stdout)
    assert report["drift_percent"] > figures.STEP_TIME_DRIFT_PERCENT
    assert any("the step times drift +" in w for w in report["warnings"])
    assert figures.step_time_drift_percent([1.0, 1.0, 2.0]) == (2.0 - 1.0) / (4 / 3) * 100
