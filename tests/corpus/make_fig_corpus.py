"""Writes the fig_* corpus cases: stated figures below their required precision, placeholders, and results or
statuses that contradict themselves (issue 15, items 1, 2 and 5). Each case is a committed recipe with one change;
its line is found from the changed text, so the expectation cannot drift from the case.

Run `python tests/corpus/make_fig_corpus.py` after changing a case; the files are committed data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).parent
RECIPES = HERE.parent.parent / "recipes"
REFERENCE = "gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
LLAMA_8B_H100 = "llama-3-8b/h100/mb-25.11-dgx-h100-8gpu-fp8-cs.yaml"  # reported, Megatron's count reproduces it
QWEN_30B_H100 = "qwen3-30b-a3b/h100/mb-26.02-dgx-h100-16gpu-fp8-cs.yaml"  # reported, a superseded row's own error
GPT_OSS_H100 = "gpt-oss-120b/h100/mb-25.11-dgx-h100-64gpu-bf16.yaml"  # reported, a stated convention
ENGINE_1B = "llama-3.2-1b/h200/engine-unfused-4k.yaml"  # verified, $/1M below 0.1


@dataclass
class Case:
    source: str
    edits: list[tuple[str, str]]
    at: str  # the text of the line the problem is reported at (in the edited file)
    field: str
    message: str
    place: str | None = None  # where the file sits in the temporary registry (default: the corpus's)
    extra: dict = field(default_factory=dict)


CASES: dict[str, Case] = {
    # 1. precision: each figure as written carries its required precision (the loopholes of the issue)
    "fig_mfu_zero": Case(REFERENCE, [("  mfu: 0.2194\n", "  mfu: 0.0\n")], "  mfu: 0.0", "result.mfu",
                         "MFU must be stated to at least 4 decimal places"),
    "fig_mfu_coarse": Case(REFERENCE, [("  mfu: 0.2194\n", "  mfu: 0.2\n")], "  mfu: 0.2", "result.mfu",
                           "written to 1 decimal place"),
    "fig_usd_coarse": Case(REFERENCE, [("  usd_per_million_tokens: 1.62\n", "  usd_per_million_tokens: 2.0\n")],
                           "  usd_per_million_tokens: 2.0", "result.usd_per_million_tokens",
                           "must be stated to at least 2 decimal places (2 significant figures, never fewer than 2 decimals)"),
    "fig_usd_one_significant_figure": Case(
        ENGINE_1B, [("  usd_per_million_tokens: 0.093\n", "  usd_per_million_tokens: 0.09\n")],
        "  usd_per_million_tokens: 0.09", "result.usd_per_million_tokens", "at least 3 decimal places",
        place=f"recipes/{ENGINE_1B}"),
    "fig_cv_coarse": Case(REFERENCE, [("  step_time_cv_percent: 2.19\n", "  step_time_cv_percent: 2.0\n")],
                          "  step_time_cv_percent: 2.0", "result.step_time_cv_percent",
                          "step-time CV must be stated to at least 2 decimal places"),
    "fig_gpu_hours_coarse": Case(REFERENCE, [("  gpu_hours: 5.69\n", "  gpu_hours: 5.0\n")], "  gpu_hours: 5.0",
                                 "result.gpu_hours", "GPU-hours must be stated to at least 2 decimal places"),
    "fig_tokens_per_s_coarse": Case(REFERENCE, [("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: 1178\n")],
                                    "  tokens_per_s_per_gpu: 1178", "result.tokens_per_s_per_gpu",
                                    "tokens/s per GPU must be stated to at least 1 decimal place"),
    "fig_mfu_note_does_not_exempt": Case(
        REFERENCE, [("  mfu: 0.2194\n  mfu_note: null\n", "  mfu: 0.3000\n  mfu_note: counted with attention (7.2N)\n")],
        "  mfu: 0.3000", "result.mfu", "6 x 30,696,013,824 x 1178.1"),
    # published Model TFLOP/s: 0.5% whatever the note says; only a convention changes the count
    "fig_published_note_without_convention": Case(
        LLAMA_8B_H100, [("  published_model_tflops_per_gpu: 744.0\n",
                         "  published_model_tflops_per_gpu: 800.0\n  published_model_tflops_note: the publication "
                         "counts differently\n")],
        "  published_model_tflops_per_gpu: 800.0", "result.published_model_tflops_per_gpu",
        "a note does not change the count", place=f"recipes/{LLAMA_8B_H100}"),
    "fig_published_on_measured": Case(
        REFERENCE, [("  gpu_hours: 5.69\n", "  gpu_hours: 5.69\n  published_model_tflops_per_gpu: 300.0\n")],
        "  published_model_tflops_per_gpu: 300.0", "result.published_model_tflops_per_gpu",
        "belongs to a reported recipe"),
    "fig_superseded_unchecked": Case(
        LLAMA_8B_H100, [("    tokens_per_s_per_gpu: 14451.0\n    published_model_tflops_per_gpu: 744.0\n",
                         "    tokens_per_s_per_gpu: 14451.0\n    published_model_tflops_per_gpu: 700.0\n")],
        "    published_model_tflops_per_gpu: 700.0", "publication.superseded.0.published_model_tflops_per_gpu",
        "if the document is wrong, record it with figures_disagree: true", place=f"recipes/{LLAMA_8B_H100}"),
    "fig_superseded_disagree_unfounded": Case(
        LLAMA_8B_H100, [("    published_model_tflops_per_gpu: 744.0\n",
                         "    published_model_tflops_per_gpu: 744.0\n    figures_disagree: true\n")],
        "    figures_disagree: true", "publication.superseded.0.figures_disagree", "within 0.5%",
        place=f"recipes/{LLAMA_8B_H100}"),
    "fig_superseded_under_convention": Case(
        GPT_OSS_H100, [("    published_model_tflops_per_gpu: 153.0\n", "    published_model_tflops_per_gpu: 183.0\n")],
        "    published_model_tflops_per_gpu: 183.0", "publication.superseded.0.published_model_tflops_per_gpu",
        "under the stated convention", place=f"recipes/{GPT_OSS_H100}"),
    # 2. placeholders
    "fig_todo_placeholder": Case(REFERENCE, [("  name: ATTUNE\n", "  name: TODO your name\n")], "  name: TODO your name",
                                 "author.name", "placeholder TODO"),
    # an escape in a double-quoted string spells a placeholder the file's text does not show
    "fig_escaped_placeholder": Case(REFERENCE, [("  name: ATTUNE\n", '  name: "\\x54ODO your name"\n')],
                                    '  name: "\\x54ODO your name"', "author.name", "placeholder TODO"),
    "fig_fixme_in_block_text": Case(
        REFERENCE, [("  export CUDA_DEVICE_MAX_CONNECTIONS=1\n",
                     "  export CUDA_DEVICE_MAX_CONNECTIONS=1\n  # FIXME the launcher path\n")],
        "  # FIXME the launcher path", "run", "placeholder FIXME"),
    # 5. contradictions
    "fig_gpu_hours_below_window": Case(REFERENCE, [("  gpu_hours: 5.69\n", "  gpu_hours: 3.00\n")],
                                       "  gpu_hours: 3.00", "result.gpu_hours", "fewer than the measured window alone"),
    "fig_window_tokens_without_window": Case(
        REFERENCE, [("  window:\n  - 5\n  - 19\n", "")], "  window_tokens: 15728640", "result.window_tokens",
        "a window the recipe does not state"),
    "fig_precision_without_peak": Case(
        LLAMA_8B_H100, [("  precision: fp8-cs\n", "  precision: nvfp4\n")], "  precision: nvfp4",
        "workload.precision", "H100 has no dense FP4 peak", place=f"recipes/{LLAMA_8B_H100}"),
    "fig_convergence_pass_contradicted": Case(
        REFERENCE, [("    correlation: 0.98649\n", "    correlation: -0.9\n"),
                    ("    pointwise_failures: 0\n", "    pointwise_failures: 20\n")],
        "    correlation: -0.9", "correctness.convergence.correlation", "needs at least 0.95"),
    "fig_convergence_pointwise_failures": Case(
        REFERENCE, [("    pointwise_failures: 0\n", "    pointwise_failures: 3\n")], "    pointwise_failures: 3",
        "correctness.convergence.pointwise_failures", "3 of 20 points outside the pointwise tolerance"),
    "fig_configuration_fail_verified": Case(
        REFERENCE, [("  configuration: pass\n", "  configuration: fail\n")], "  configuration: fail",
        "correctness.configuration", "failing configuration review"),
    "fig_component_test_other_gpu": Case(
        REFERENCE, [("    gpu: H100\n    date: 2026-10-21\n", "    gpu: A100\n    date: 2026-10-21\n")],
        "    gpu: A100", "correctness.component_tests.0.gpu", "the recipe runs on H100"),
    "fig_noisy_cv_verified": Case(
        REFERENCE, [("  step_time_cv_percent: 2.19\n", "  step_time_cv_percent: 6.50\n")],
        "  step_time_cv_percent: 6.50", "result.step_time_cv_percent", "needs its reason in result.step_time_cv_note"),
}


def build(case: Case) -> tuple[str, int]:
    text = (RECIPES / case.source).read_text(encoding="utf-8")
    for old, new in case.edits:
        assert text.count(old) >= 1, (case.source, old)
        text = text.replace(old, new, 1)
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines, 1) if line == case.at]
    assert len(hits) == 1, (case.at, hits)
    return text, hits[0]


def main() -> None:
    for name, case in CASES.items():
        text, line = build(case)
        (HERE / f"{name}.yaml").write_text(text, encoding="utf-8")
        expected = {"line": line, "field": case.field, "message": case.message, **case.extra}
        if case.place:
            expected["place"] = case.place
        (HERE / f"{name}.expected").write_text(yaml.safe_dump(expected, sort_keys=False, allow_unicode=True))


if __name__ == "__main__":
    main()
