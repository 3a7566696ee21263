"""The scalar splice: only the named values change; quoting, comments and layout stay."""

from __future__ import annotations

import datetime as dt

import pytest
from runner_support import REFERENCE

from runner.yaml_edit import WriteError, render, result_changes, rounded, splice

TEXT = """# a comment that stays
result:
  tokens_per_s_per_gpu: 1178.1  # stated to 0.1
  mfu: 0.2194
  measured: '2026-10-20'
  window:
  - 5
  - 19
  note: a long plain scalar that runs on
    to a second line
tail: [1, 2]
"""


def test_only_the_named_scalars_change_and_quotes_and_comments_stay() -> None:
    out = splice(TEXT, {("result", "tokens_per_s_per_gpu"): "1200.5", ("result", "measured"): "2026-12-02",
                        ("result", "window"): "[4, 18]"})
    assert out == TEXT.replace("1178.1  #", "1200.5  #").replace("'2026-10-20'", "'2026-12-02'").replace(
        "  - 5\n  - 19", "  - 4\n  - 18")


def test_missing_result_keys_are_inserted_in_model_order() -> None:
    out = splice(TEXT, {("result", "step_time_cv_percent"): "2.19"})
    assert "  tokens_per_s_per_gpu: 1178.1  # stated to 0.1\n  step_time_cv_percent: 2.19\n  mfu: 0.2194\n" in out


def test_a_sequence_of_another_length_is_refused() -> None:
    with pytest.raises(WriteError, match="different length"):
        splice(TEXT, {("result", "window"): "[1, 2, 3]"})


def test_precision_and_rendering() -> None:
    assert render("tokens_per_s_per_gpu", 1177.0739) == "1177.1"
    assert render("usd_per_million_tokens", 1.6236) == "1.62"
    assert render("mfu", 0.21920007) == "0.2192"
    assert render("step_time_cv_percent", 2.2204) == "2.22"
    assert render("gpu_hours", 0.000221) == "0.00022"  # a seconds-long run keeps two significant digits
    assert rounded("gpu_hours", 0.000221) == 0.00022
    assert render("measured", dt.date(2026, 12, 2)) == "2026-12-02"
    assert render("window", [5, 19]) == "[5, 19]" and render("mfu", None) == "null"


def test_reference_recipe_round_trip_with_no_change_is_byte_exact() -> None:
    text = REFERENCE.read_text()
    same = result_changes({"tokens_per_s_per_gpu": 1178.1, "mfu": 0.2194, "window": [5, 19], "runs": 1,
                           "measured": dt.date(2026, 10, 20)})
    assert splice(text, same) == text


def test_placeholder_result_nulls_flow_window_and_missing_keys() -> None:
    text = "result:\n  tokens_per_s_per_gpu: 1.0\n  mfu: null\n  measured: null\n  window: [5, 19]\n  runs: 1\nrun: |\n  x\n"
    out = splice(text, result_changes({"tokens_per_s_per_gpu": 294.31, "mfu": 0.00221, "measured": dt.date(2026, 12, 2),
                                       "window": [5, 19], "window_tokens": 491520, "gpu_hours": 0.5}))
    assert out == (
        "result:\n  tokens_per_s_per_gpu: 294.3\n  mfu: 0.0022\n  measured: 2026-12-02\n  window: [5, 19]\n"
        "  window_tokens: 491520\n  runs: 1\n  gpu_hours: 0.50\nrun: |\n  x\n"
    )


def test_a_plain_scalar_folded_over_lines_is_replaced_whole() -> None:
    out = splice(TEXT, {("result", "note"): '"one line now"', ("result", "mfu"): "0.3",
                        ("result", "step_time_cv_percent"): "2.19"})
    assert out == TEXT.replace("  note: a long plain scalar that runs on\n    to a second line\n",
                               '  note: "one line now"\n').replace(
        "  mfu: 0.2194\n", "  step_time_cv_percent: 2.19\n  mfu: 0.3\n")
    # ... and by a value that folds again, with what follows it untouched.
    out = splice(TEXT, {("result", "note"): "first part\n    second part"})
    assert out.endswith("  note: first part\n    second part\ntail: [1, 2]\n")


def test_the_reference_recipe_gpu_hours_note_spans_two_lines() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    out = splice(text, {("result", "gpu_hours"): "0.0052", ("result", "gpu_hours_note"): "GPUs x the run's wall time"})
    removed = [ln for ln in text.splitlines() if ln not in out.splitlines()]
    assert removed == ["  gpu_hours: 5.69",
                       "  gpu_hours_note: GPUs x (scheduler admission to finish), including startup; the same run is "
                       "the candidate arm of the", "    convergence check"]
    assert "  gpu_hours: 0.0052\n  gpu_hours_note: GPUs x the run's wall time\ncorrectness:\n" in out
