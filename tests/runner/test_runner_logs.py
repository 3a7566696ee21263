"""Log parsers on fixtures in each framework's real line format."""

from __future__ import annotations

import math

import pytest
from runner_support import FIXTURES

from runner.logs import (
    LogError,
    check_steps,
    format_engine_step,
    format_for,
    parse_file,
    parse_lines,
    sniff,
)

# Real Megatron-LM training_log lines (format of megatron/training/training.py; the first with
# --log-interval 10 and every iteration skipped, so no loss is printed).
MEGATRON_REAL = [
    " [2025-04-13 23:41:12] iteration       10/    1000 | consumed samples:          160 | elapsed time per iteration "
    "(ms): 1147.6 | learning rate: 0.000000E+00 | global batch size:    16 | loss scale: 8388608.0 | number of "
    "skipped iterations:  10 | number of nan iterations:   0 |",
    " [2025-04-13 23:41:24] iteration       20/    1000 | consumed samples:          320 | elapsed time per iteration "
    "(ms): 1100.0 | throughput per GPU (TFLOP/s/GPU): 123.4 | learning rate: 1.000000E-05 | global batch size:    16 "
    "| lm loss: 7.399415E+00 | loss scale: 16384.0 | grad norm: 2.918 | number of skipped iterations:   0 | number of "
    "nan iterations:   0 |",
]

MILES_REAL = [
    "(MegatronTrainRayActor pid=4342) [2026-09-25 16:15:29] train_metric_utils.py:50 - perf 3: "
    "{'perf/log_probs_tflops': 100.1, 'perf/actor_train_time': 40.0, 'perf/actor_train_tflops': 91.2, "
    "'perf/actor_train_tok_per_s': 4851.7, 'perf/step_time': 43.87778568267822, 'perf/wait_time_ratio': 0.96}",
    "(MegatronTrainRayActor pid=4342) [2026-09-25 16:15:29] log_utils.py:463 - step 3: {'train/loss': 0.25, "
    "'train/grad_norm': 0.3}",
    "[2026-09-25 16:15:30] rollout.py:88 - perf 4: {'perf/rollout_time': 3.2, 'perf/tokens_per_gpu_per_sec': 12.0}",
]


def test_framework_first_word_selects_the_parser() -> None:
    assert format_for("miles 0.1.0 (radixark/miles commit 78527b91, a slime fork)") == "miles"
    assert format_for("slime 0.2") == "miles"
    assert format_for("Megatron-LM core_r0.16.0") == "megatron"
    assert format_for("Megatron-Bridge 0.5.0") == "megatron"
    assert format_for("openrecipes-engine 0.1 (megatron-core 0.16.1)") == "openrecipes"
    assert format_for("torchtitan 0.2") == "torchtitan"
    assert format_for("NeMo 2.5") == "nemo"
    assert format_for("JAX MaxText") is None


def test_megatron_interval_lines_expand_to_each_step() -> None:
    log = parse_lines(MEGATRON_REAL, "megatron")
    assert [s.step for s in log.steps] == list(range(20))
    assert log.steps[0].time_s == pytest.approx(1.1476) and log.steps[0].loss is None  # all skipped: no loss
    assert log.steps[19].time_s == pytest.approx(1.1) and log.steps[19].loss == pytest.approx(7.399415)
    assert log.total_steps == 1000 and log.global_batch == 16
    assert log.wall_seconds == 12.0


def test_megatron_fixture() -> None:
    log = parse_file(FIXTURES / "megatron_20_steps.txt", "megatron")
    assert len(log.steps) == 20 and log.total_steps == 20 and log.global_batch == 128
    assert log.steps[0].time_s == pytest.approx(333.9) and log.steps[0].loss == pytest.approx(2.27793)
    assert log.nccl_version == "2.28.9"


def test_miles_perf_and_step_lines_pair_by_rollout() -> None:
    log = parse_lines(MILES_REAL, "miles")
    assert len(log.steps) == 1  # the rollout side's perf line is not a step
    s = log.steps[0]
    assert s.step == 3 and s.time_s == pytest.approx(43.87778568267822) and s.loss == 0.25
    # actor_train_tok_per_s counts the whole batch: tokens = tok/s x train seconds, not per GPU.
    assert s.tokens == round(4851.7 * 40.0)


def test_miles_fixture() -> None:
    log = parse_file(FIXTURES / "miles_gemma4_31b.txt", "miles")
    assert len(log.steps) == 20
    assert all(s.tokens == 128 * 8192 for s in log.steps)
    assert log.steps[5].loss == pytest.approx(2.164164)


def test_engine_format_round_trips() -> None:
    line = format_engine_step(4, 20, 1.25, 2.5, 1048576)
    assert line == 'openrecipes-step {"step": 4, "steps": 20, "time_s": 1.25, "loss": 2.5, "tokens": 1048576}'
    log = parse_lines(["[rank0]: " + line], "openrecipes")
    assert log.steps[0].step == 4 and log.steps[0].tokens == 1048576 and log.total_steps == 20
    nan = parse_lines([format_engine_step(0, 1, 1.0, math.nan, 8)], "openrecipes")
    assert math.isnan(nan.steps[0].loss)


def test_engine_malformed_line_is_a_clear_error() -> None:
    with pytest.raises(LogError, match=r"<log>:1: malformed openrecipes-step line"):
        parse_lines(['openrecipes-step {"step": 0}'], "openrecipes")


def test_sniff() -> None:
    assert sniff(MEGATRON_REAL) == "megatron"
    assert sniff(MILES_REAL) == "miles"
    assert sniff([format_engine_step(0, 1, 1.0, 1.0, 1)]) == "openrecipes"
    assert sniff(["hello"]) is None


def test_wrong_format_names_the_right_one(tmp_path) -> None:
    with pytest.raises(LogError, match="looks like the miles format"):
        parse_file(FIXTURES / "miles_gemma4_31b.txt", "megatron")
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    with pytest.raises(LogError, match="no training step lines of any known format"):
        parse_file(empty, None)


def test_checks_too_few_steps_nan_and_gaps() -> None:
    lines = [format_engine_step(i, 20, 1.0, 2.0, 8) for i in range(10)]
    with pytest.raises(LogError, match=r"too few steps: the log has steps 0-9 but the window \[5, 19\]"):
        check_steps(parse_lines(lines, "openrecipes"), (5, 19))
    lines = [format_engine_step(i, 20, 1.0, math.nan if i == 7 else 2.0, 8) for i in range(20)]
    with pytest.raises(LogError, match=r"<log>:8: the loss at step 7 is nan"):
        check_steps(parse_lines(lines, "openrecipes"), (5, 19))
    lines = [format_engine_step(i, 20, 1.0, 2.0, 8) for i in range(20) if i != 11]
    with pytest.raises(LogError, match=r"lacks steps 11 \(1 steps the log does not show"):
        check_steps(parse_lines(lines, "openrecipes"), (5, 19))
    check_steps(parse_lines([format_engine_step(i, 20, 1.0, 2.0, 8) for i in range(20)], "openrecipes"), (5, 19))
