"""Consistency rules (issue 41, item 6): contradictions between fields that each look valid, which check accepted.

Each rule is a named function of check (generator/check/): convergence steps beyond the run (status.
convergence_within_run), a stack GPU name of another GPU (references.stack_gpu_name), a release that disagrees with
the file name (references.release_in_file_name), a system that disagrees with the GPU (references.
publication_system), context-parallel rows not divisible (layout.context_parallel_rows), max tokens below the row
(layout.token_cap_holds_a_row), a component test that uses the measured run dated before it (status.
component_test_after_its_run). Each case is a committed recipe with lines changed, checked in a registry of its
own: the contradiction is one problem of that rule's field at its line, and its honest neighbour none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from suitehelpers import check_registry

from generator.problems import Problem
from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
REF = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
ENGINE = "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"
LLAMA_8B = "recipes/llama-3-8b/b200/mb-25.09-dgx-b200-8gpu-fp8-cs.yaml"


def _checked(tmp_path: Path, recipe: str, edits: list[tuple[str, str]], dest: str | None = None) -> tuple[str, list[Problem]]:
    """The committed recipe with each (old, new) replaced (old occurs once), written at `dest` (default: its own
    place) in a registry of its own; (text, problems)."""
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    text = (ROOT / recipe).read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    target = tmp_path / (dest or recipe)
    target.parent.mkdir(parents=True)
    target.write_text(text, encoding="utf-8")
    return text, check_registry(load_registry(tmp_path))


def _line_of(text: str, line: str | tuple[str, int]) -> int:
    """The number of the line that is `line` (one such line), or of its n-th occurrence for (line, n)."""
    line, nth = (line, 0) if isinstance(line, str) else line
    numbers = [n for n, ln in enumerate(text.splitlines(), 1) if ln == line]
    assert nth or len(numbers) == 1, numbers
    return numbers[nth]


# name: (recipe, edits, destination or None, the line the problem is at, its field, its message; None: no problem of
# that field). Where an edit also breaks another rule (cp 3 no longer fills the GPU grid), only the rule's own
# field is looked at.
CASES = {
    "convergence_beyond_the_measured_run": (
        REF, [("    steps: 20\n    result: pass\n", "    steps: 40\n    result: pass\n")], None,
        "    steps: 40", "correctness.convergence.steps",
        "40 steps compared, but the candidate arm is the measured run (so its notes say), which has 20 steps "
        "(result.steps_per_run)"),
    "convergence_beyond_the_run_its_note_names": (
        ENGINE, [("    steps: 100\n", "    steps: 150\n")], None, "    steps: 150", "correctness.convergence.steps",
        "150 steps compared, more than the measured run's 20 (result.steps_per_run): say in convergence.note which "
        "run of at least 150 steps was compared (e.g. its --steps)"),
    "convergence_of_a_longer_run_it_names": (ENGINE, [], None, None, "correctness.convergence.steps", None),
    "convergence_within_the_measured_run": (
        REF, [("    steps: 20\n    result: pass\n", "    steps: 15\n    result: pass\n")], None, None,
        "correctness.convergence.steps", None),
    "stack_gpu_name_of_another_gpu": (
        ENGINE, [("  gpu_name: NVIDIA H200\n", "  gpu_name: NVIDIA H100 80GB HBM3\n")], None,
        "  gpu_name: NVIDIA H100 80GB HBM3", "stack.gpu_name",
        "stack.gpu_name 'NVIDIA H100 80GB HBM3' is the name of a H100, but gpu.type is H200"),
    "stack_gpu_name_naming_another_model": (
        ENGINE, [("  gpu_name: NVIDIA H200\n", "  gpu_name: NVIDIA B200 SXM6\n")], None,
        "  gpu_name: NVIDIA B200 SXM6", "stack.gpu_name",
        "stack.gpu_name 'NVIDIA B200 SXM6' is the name of a B200, but gpu.type is H200"),
    "stack_gpu_name_of_a_variant": (
        ENGINE, [("  gpu_name: NVIDIA H200\n", "  gpu_name: NVIDIA H200 NVL\n")], None,
        "  gpu_name: NVIDIA H200 NVL", "stack.gpu_name",
        "stack.gpu_name 'NVIDIA H200 NVL' is the name of a H200-NVL, but gpu.type is H200"),
    "stack_gpu_name_spelt_otherwise": (
        ENGINE, [("  gpu_name: NVIDIA H200\n", "  gpu_name: nvidia h200\n")], None, None, "stack.gpu_name", None),
    "release_not_the_file_names": (
        LLAMA_8B, [("  release: '25.09'\n", "  release: '25.11'\n")], None, "  release: '25.11'",
        "publication.release",
        "the file name mb-25.09-dgx-b200-8gpu-fp8-cs.yaml says release 25.09, but publication.release is 25.11"),
    "release_with_a_file_name_without_one": (
        LLAMA_8B, [("  release: '25.09'\n", "  release: '25.11'\n")],
        "recipes/llama-3-8b/b200/dgx-b200-8gpu-fp8-cs.yaml", None, "publication.release", None),
    "system_of_another_gpu": (
        LLAMA_8B, [("  system: DGX-B200\n", "  system: DGX-H100\n")], None, "  system: DGX-H100",
        "publication.system", "the publication's system 'DGX-H100' has H100 GPUs, but gpu.type is B200"),
    "system_of_the_superchip_not_the_gpu": (
        LLAMA_8B, [("  system: DGX-B200\n", "  system: Tyche (8x NVIDIA GB200 NVL72)\n")], None,
        "  system: Tyche (8x NVIDIA GB200 NVL72)", "publication.system",
        "the publication's system 'Tyche (8x NVIDIA GB200 NVL72)' has GB200 GPUs, but gpu.type is B200"),
    "system_naming_the_gpu_in_a_model_number": (
        LLAMA_8B, [("  system: DGX-B200\n", "  system: 1xXE9680Lx8B200-SXM-180GB\n")], None, None,
        "publication.system", None),
    "system_naming_no_gpu": (
        LLAMA_8B, [("  system: DGX-B200\n", "  system: AS-A126GS-TNBR\n")], None, None, "publication.system", None),
    "cp_not_dividing_the_row": (
        REF, [("  cp: 1\n", "  cp: 3\n")], None, "  cp: 3", "layout.cp",
        "cp 3 does not divide a row's 8192 tokens: context parallelism splits each row into cp equal parts"),
    "cp_dividing_the_row": (REF, [("  cp: 1\n", "  cp: 2\n")], None, None, "layout.cp", None),
    "token_cap_below_a_row": (
        REF, [("  max_tokens_per_gpu: null\n", "  max_tokens_per_gpu: 4096\n")], None, "  max_tokens_per_gpu: 4096",
        "layout.max_tokens_per_gpu",
        "max_tokens_per_gpu holds 4096 tokens, less than one row of 8192: dynamic batching could place no row"),
    "token_cap_below_a_rows_part": (
        REF, [("  max_tokens_per_gpu: null\n", "  max_tokens_per_gpu: 2048\n"), ("  cp: 1\n", "  cp: 2\n")], None,
        "  max_tokens_per_gpu: 2048", "layout.max_tokens_per_gpu",
        "max_tokens_per_gpu holds 2048 x cp 2 = 4096 tokens, less than one row of 8192: dynamic batching could place "
        "no row"),
    "token_cap_of_a_rows_part": (
        REF, [("  max_tokens_per_gpu: null\n", "  max_tokens_per_gpu: 4096\n"), ("  cp: 1\n", "  cp: 2\n")], None,
        None, "layout.max_tokens_per_gpu", None),
    "test_using_the_run_dated_before_it": (
        REF, [("    gpu: H100\n    date: 2026-10-21\n    result: pass\n    detail: after three steps",
               "    gpu: H100\n    date: 2026-10-19\n    result: pass\n    detail: after three steps")], None,
        "    date: 2026-10-19", "correctness.component_tests.1.date",
        "dated 2026-10-19, before the measurement it uses (2026-10-20, result.measured): its text says it uses the "
        "measured run"),
    "run_dated_after_the_test_that_uses_it": (
        REF, [("  measured: 2026-10-20\n", "  measured: 2026-10-22\n")], None, ("    date: 2026-10-21", 1),
        "correctness.component_tests.1.date",
        "dated 2026-10-21, before the measurement it uses (2026-10-22, result.measured): its text says it uses the "
        "measured run"),
    "test_not_using_the_run_dated_before_it": (
        REF, [("    gpu: H100\n    date: 2026-10-21\n    result: pass\n    detail: on the sliding-window",
               "    gpu: H100\n    date: 2026-10-19\n    result: pass\n    detail: on the sliding-window")], None,
        None, "correctness.component_tests.0.date", None),
}


@pytest.mark.parametrize("name", CASES)
def test_a_contradiction_is_one_problem_and_its_neighbour_none(name: str, tmp_path: Path) -> None:
    recipe, edits, dest, at, field, message = CASES[name]
    text, problems = _checked(tmp_path, recipe, edits, dest)
    mine = [(p.path, p.line, p.message) for p in problems if p.field == field]
    if message is None:
        assert mine == []
        if field != "layout.cp" and not name.startswith("token_cap_of"):
            assert problems == []  # and nothing else: the neighbour is a whole, honest recipe
        return
    assert mine == [(dest or recipe, _line_of(text, at), message)]
    if name not in ("cp_not_dividing_the_row", "token_cap_below_a_rows_part"):
        assert [p.field for p in problems] == [field]


def test_the_reference_recipe_and_its_honest_neighbours_pass_the_new_rules(tmp_path: Path) -> None:
    """The reference recipe's optimizer test uses the measured run's gradient norms and is dated the day after it;
    its convergence check compares the measured run's 20 steps: both honest, both pass."""
    _, problems = _checked(tmp_path, REF, [])
    assert problems == []


@pytest.mark.parametrize("implementation,problem", [("same", True), ("other", False)])
def test_a_run_of_ours_is_checked_against_another_implementation(tmp_path: Path, implementation: str,
                                                                  problem: bool) -> None:
    """Measured since figures.LOSS_FALL_FROM: a convergence check of the framework against itself alone is refused;
    one against another implementation is the honest neighbour."""
    edits = [("  measured: 2026-10-20\n", "  measured: 2026-12-06\n"),
             ("    steps: 20\n    result: pass\n", f"    steps: 20\n    result: pass\n    implementation: {implementation}\n")]
    text, problems = _checked(tmp_path, REF, edits)
    mine = [(p.line, p.message) for p in problems if p.field == "correctness.convergence"]
    if not problem:
        assert mine == []
        return
    assert mine == [(_line_of(text, "  convergence:"),
                     "every convergence check compares the framework with itself (or does not say what it compared "
                     "against): a run of ours is checked against another implementation (implementation: other), the "
                     "check against itself a further line")]


@pytest.mark.parametrize("cv,problem", [("0.0", True), ("0.01", False)])
def test_a_cv_of_exactly_zero_across_runs_is_one_run(tmp_path: Path, cv: str, problem: bool) -> None:
    text, problems = _checked(tmp_path, ENGINE, [("  runs_cv_percent: 4.51\n", f"  runs_cv_percent: {cv}\n")])
    mine = [(p.line, p.message) for p in problems if p.field == "result.runs_cv_percent" and "exactly 0" in p.message]
    assert mine == ([(_line_of(text, f"  runs_cv_percent: {cv}"),
                      "a CV of exactly 0 across 3 runs: one run given 3 times, not 3 runs")] if problem else [])
