"""`python -m generator check` recomputes a re-measured result from its evidence file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from runner_support import FIXTURES, registry, remeasure
from suitehelpers import generator_cli


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return generator_cli("check", "--no-cache", cwd=root)


def measured(tmp_path: Path) -> tuple[Path, Path]:
    recipe = registry(tmp_path)
    done = remeasure(recipe, "--from-log", str(FIXTURES / "miles_gemma4_31b.txt"))
    assert done.returncode == 0, done.stderr
    return recipe, recipe.with_name(recipe.stem + ".evidence.json")


@pytest.mark.slow
def test_a_remeasured_recipe_checks_clean_against_its_evidence(tmp_path: Path) -> None:
    measured(tmp_path)
    done = check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 recipe(s) checked, no problems" in done.stdout


@pytest.mark.slow
def test_a_result_edited_by_hand_disagrees_with_the_evidence(tmp_path: Path) -> None:
    recipe, _ = measured(tmp_path)
    text = recipe.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("  tokens_per_s_per_gpu: "))
    # A figure typed in by hand, with $/1M and MFU made consistent with it: only the evidence can catch it.
    recipe.write_text(text.replace(line, "  tokens_per_s_per_gpu: 1250.0", 1).replace(
        "  usd_per_million_tokens: 1.62", "  usd_per_million_tokens: 1.53", 1).replace(
        "  mfu: 0.2192", "  mfu: 0.2328", 1))
    done = check(tmp_path)
    assert done.returncode == 1
    out = done.stdout
    assert "result.tokens_per_s_per_gpu: stated 1250.0 but attune-tp2-pp4-split13.evidence.json gives 15,728,640 " \
           "window tokens / " in out
    assert "GPUs = 1177.07" in out
    assert out.count("\n") == 1  # that one problem and the summary line


@pytest.mark.slow
def test_evidence_edited_by_hand_disagrees_with_the_result(tmp_path: Path) -> None:
    _, evidence = measured(tmp_path)
    data = json.loads(evidence.read_text())
    data["steps"][10]["time_s"] *= 1.5
    data["runs"][0]["wall_seconds"] *= 2
    evidence.write_text(json.dumps(data))
    out = check(tmp_path).stdout
    assert "result.tokens_per_s_per_gpu: stated 1177.1 but attune-tp2-pp4-split13.evidence.json gives" in out
    assert "result.step_time_cv_percent: stated 2.22 but the step times in" in out
    assert "result.gpu_hours: stated 4.83 but 8 GPUs x" in out


@pytest.mark.slow
def test_evidence_of_another_window_or_recipe_or_unreadable(tmp_path: Path) -> None:
    recipe, evidence = measured(tmp_path)
    data = json.loads(evidence.read_text())
    data["window"] = [4, 19]
    data["recipe"] = "gemma-4-31b/h100/other"
    evidence.write_text(json.dumps(data))
    out = check(tmp_path).stdout
    assert "is the evidence of 'gemma-4-31b/h100/other', not of 'gemma-4-31b/h100/attune-tp2-pp4-split13'" in out
    assert "result.window: attune-tp2-pp4-split13.evidence.json was measured over the window [4, 19]" in out
    evidence.write_text("{not json")
    assert "attune-tp2-pp4-split13.evidence.json is not readable JSON" in check(tmp_path).stdout


@pytest.mark.slow
def test_the_check_cache_sees_an_evidence_change(tmp_path: Path) -> None:
    _, evidence = measured(tmp_path)

    def cached() -> subprocess.CompletedProcess[str]:
        return generator_cli("check", cwd=tmp_path)

    assert cached().returncode == 0
    data = json.loads(evidence.read_text())
    data["steps"][10]["time_s"] *= 1.5
    evidence.write_text(json.dumps(data))
    assert cached().returncode == 1  # the recipe's bytes did not change; its evidence's did
