"""Published Model TFLOP/s: held to 0.5% of its tokens/s whatever the note says; only the machine-checkable
convention changes the count, and superseded rows are held to the same count."""

from __future__ import annotations

from pathlib import Path

from recipe_edits import edited_registry
from suitehelpers import check_registry

from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
GPT_OSS = "recipes/gpt-oss-120b/h100/mb-25.11-dgx-h100-64gpu-bf16.yaml"  # reproduced only by its stated convention
QWEN = "recipes/qwen3-30b-a3b/h100/mb-26.02-dgx-h100-16gpu-fp8-cs.yaml"  # a superseded row's own error, recorded


def _problems(tmp_path: Path, rel: str, edits: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in check_registry(load_registry(edited_registry(tmp_path, rel, edits)))]


def _without_convention(text_lines: list[str]) -> tuple[str, str]:
    start = text_lines.index("  published_model_tflops_convention:\n")
    return "".join(text_lines[start:start + 3]), ""


def test_committed_rows_pass(tmp_path: Path) -> None:
    assert _problems(tmp_path / "a", GPT_OSS, []) == []
    assert _problems(tmp_path / "b", QWEN, []) == []


def test_a_note_alone_no_longer_switches_the_check_off(tmp_path: Path) -> None:
    lines = (ROOT / GPT_OSS).read_text(encoding="utf-8").splitlines(keepends=True)
    found = _problems(tmp_path, GPT_OSS, [_without_convention(lines)])
    # The note is still there; without the convention the 20% difference from Megatron's count is a problem, on
    # the row and on its superseded row (the same count for both).
    assert [f for f, _ in found] == ["result.published_model_tflops_per_gpu",
                                     "publication.superseded.0.published_model_tflops_per_gpu",
                                     "publication.superseded.1.published_model_tflops_per_gpu"]
    assert "20.07% apart" in found[0][1] and "a note does not change the count" in found[0][1]


def test_the_superseded_rows_error_must_be_recorded(tmp_path: Path) -> None:
    found = _problems(tmp_path, QWEN, [("    figures_disagree: true\n", "")])
    assert found == [("publication.superseded.0.published_model_tflops_per_gpu",
                      "that document's 2557 tokens/s give 58.8 TFLOP/s by Megatron's count of model FLOPs per token, "
                      "50.15% from its 118; if the document is wrong, record it with figures_disagree: true")]


def test_a_note_on_a_figure_that_is_not_there(tmp_path: Path) -> None:
    found = _problems(tmp_path, QWEN, [("  published_model_tflops_per_gpu: 118.0\npublication:",
                                        "  published_model_tflops_note: explained elsewhere\npublication:")])
    assert ("result.published_model_tflops_note",
            "published_model_tflops_note explains a published Model TFLOP/s the recipe does not state") in found
