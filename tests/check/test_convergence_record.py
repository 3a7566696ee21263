"""A convergence check's own record: a check marked pass may not state why it failed (check/status.py,
convergence_statistics), in `convergence` or in `convergence_also`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from suitehelpers import check_registry

from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
# Measured on the H100 (2026-12-06): both checks fail on the floor rule and say so in failed_because.
ENGINE_1B = "recipes/llama-3.2-1b/h100/engine-sdpa-4k.yaml"


def _checked(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    target = tmp_path / ENGINE_1B
    target.parent.mkdir(parents=True)
    target.write_text(text, encoding="utf-8")
    evidence = ENGINE_1B.replace(".yaml", ".evidence.json")
    shutil.copy(ROOT / evidence, tmp_path / evidence)
    return [(p.line, p.field, p.message) for p in check_registry(load_registry(tmp_path))]


def test_the_committed_failing_checks_state_why_and_check_clean(tmp_path: Path) -> None:
    text = (ROOT / ENGINE_1B).read_text(encoding="utf-8")
    assert text.count("    result: fail\n") == 2 and text.count("failed_because: the candidate's final loss") == 2
    assert _checked(tmp_path, text) == []


@pytest.mark.parametrize("which", [0, 1])  # correctness.convergence, then its convergence_also item
def test_a_check_marked_pass_that_states_why_it_failed(tmp_path: Path, which: int) -> None:
    text = (ROOT / ENGINE_1B).read_text(encoding="utf-8")
    head, *rest = text.split("    result: fail\n")
    parts = [head, *rest]
    text = "".join(p + ("    result: pass\n" if i == which else "    result: fail\n") for i, p in enumerate(parts[:-1]))
    text += parts[-1]
    found = [(field, message) for _, field, message in _checked(tmp_path, text) if field.endswith("failed_because")]
    field = "correctness.convergence.failed_because" if which == 0 else "correctness.convergence_also.0.failed_because"
    assert found == [(field, "marked pass, but it states why it failed")]
