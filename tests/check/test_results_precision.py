"""Stated figures at their required precision (figures.PRECISIONS), as written, and agreeing with their recomputation
at that precision: against the catalogs ($/1M, MFU) and against an evidence sidecar (tokens/s, CV, GPU-hours)."""

from __future__ import annotations

import shutil
from pathlib import Path

from suitehelpers import check_registry

from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
ENGINE_1B = "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"  # verified, with its evidence sidecar


def _registry(tmp_path: Path, rel: str, old: str, new: str, sidecar: bool = False) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    text = (ROOT / rel).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    target.write_text(text.replace(old, new), encoding="utf-8")
    if sidecar:
        evidence = rel.replace(".yaml", ".evidence.json")
        shutil.copyfile(ROOT / evidence, tmp_path / evidence)
    return tmp_path


def _problems(root: Path) -> list[str]:
    return [str(p) for p in check_registry(load_registry(root))]


def test_mfu_zero_on_a_copy_of_the_reference_is_one_exact_problem(tmp_path: Path) -> None:
    root = _registry(tmp_path, REFERENCE, "  mfu: 0.2194\n", "  mfu: 0.0\n")
    assert _problems(root) == [
        f"{REFERENCE}:92:8: result.mfu: stated 0.0 is written to 1 decimal place; MFU must be stated to at least 4 "
        "decimal places: 6 x 30,696,013,824 x 1178.1 / 9.89e+14 = 0.219391"]


def test_a_coarse_figure_that_happens_to_be_right_is_still_too_coarse(tmp_path: Path) -> None:
    # 1.6222 rounds to 1.6 at the stated value's own 1 decimal: the old rule passed it.
    root = _registry(tmp_path, REFERENCE, "  usd_per_million_tokens: 1.62\n", "  usd_per_million_tokens: 1.6\n")
    (problem,) = _problems(root)
    assert ":90:27: result.usd_per_million_tokens: stated 1.6 is written to 1 decimal place" in problem


def test_trailing_zeros_as_written_count(tmp_path: Path) -> None:
    # 0.2190 is 4 decimals as written, though the float reads 0.219; here it disagrees with 0.21939 at 4 decimals.
    root = _registry(tmp_path, REFERENCE, "  mfu: 0.2194\n", "  mfu: 0.2190\n")
    (problem,) = _problems(root)
    assert "result.mfu: stated 0.2190 but 6 x 30,696,013,824 x 1178.1 / 9.89e+14 = 0.219391" in problem


def test_the_reference_passes_as_committed(tmp_path: Path) -> None:
    root = _registry(tmp_path, REFERENCE, "  mfu: 0.2194\n", "  mfu: 0.2194\n")
    assert _problems(root) == []


def test_evidence_figures_agree_at_the_required_precision(tmp_path: Path) -> None:
    # The median run's step times in the sidecar give a CV of 5.4725%: 5.52 is written to 0.01 and disagrees there.
    root = _registry(tmp_path, ENGINE_1B, "  step_time_cv_percent: 5.47\n", "  step_time_cv_percent: 5.52\n",
                     sidecar=True)
    (problem,) = _problems(root)
    assert "result.step_time_cv_percent: stated 5.52 but the step times in engine-sdpa-4k.evidence.json give a CV " \
           "of 5.4725%" in problem


def test_evidence_tokens_per_s_disagreeing_at_its_tenth(tmp_path: Path) -> None:
    # The median run (the third of 3): 491,520 window tokens / 10.2497 s = 47,954.5550 tokens/s.
    root = _registry(tmp_path, ENGINE_1B, "  tokens_per_s_per_gpu: 47954.6\n", "  tokens_per_s_per_gpu: 47954.0\n",
                     sidecar=True)
    found = _problems(root)
    assert any("result.tokens_per_s_per_gpu: stated 47954.0 but engine-sdpa-4k.evidence.json gives" in p and
               "= 47954.5550" in p for p in found), found


def test_evidence_gpu_hours_coarse(tmp_path: Path) -> None:
    # The median run took 38.51 s on 1 GPU, 0.0107 GPU-hours: 0.1 agreed with it at its own 1 decimal.
    root = _registry(tmp_path, ENGINE_1B, "  gpu_hours: 0.01\n", "  gpu_hours: 0.1\n", sidecar=True)
    found = _problems(root)
    assert any("result.gpu_hours: stated 0.1 is written to 1 decimal place; GPU-hours must be stated to at least 2"
               in p for p in found), found
    assert any("result.gpu_hours: stated 0.1 but 1 GPUs x 38.5126 s" in p for p in found), found
