"""More real logs from public repositories (tests/runner/real_logs, each with its .source.md): each gives the figures
computed by hand below, as a complete or a partial run, or is refused with a reason that names what it lacks."""

from __future__ import annotations

import datetime as dt

import pytest
from runner_support import REAL_LOGS as LOGS
from runner_support import log_recipe as recipe

from generator.catalog import Catalog
from runner import measure
from runner.logs import LogError, parse_file


def test_corpus_has_at_least_fourteen_logs_each_with_its_source() -> None:
    logs = sorted(LOGS.glob("*.log"))
    assert len(logs) >= 14
    for log in logs:
        source = log.with_suffix(".source.md").read_text(encoding="utf-8")
        assert "Repository: https://github.com/" in source and "Lines" in source and "Licence" in source, log.name


def test_megatron_excerpt_after_iteration_1_is_partial(catalog: Catalog) -> None:
    # NVIDIA/Megatron-LM issue 756: Mixtral 8x7B on 16 H100, the lines of iterations 2 and 3 of 100.
    log = parse_file(LOGS / "megatron_mixtral_16gpu_excerpt.log", "megatron")
    assert log.total_steps == 100 and log.global_batch == 128 and log.shown == (1, 2)
    assert log.measured == dt.date(2024, 4, 6)
    # Window [1, 2]: 5630.1 + 5410.6 ms = 11.0407 s; for a stated 4,096-token row: 2 x 128 x 4096 = 1,048,576
    #   tokens / 11.0407 s / 16 GPUs = 5,935.86 tokens/s/GPU.
    wanted = recipe(128, 4096, 16, (1, 2), 100)
    with pytest.raises(LogError, match=r"an excerpt: megatron_mixtral_16gpu_excerpt.log shows steps 1-2, not the run "
                                       r"from step 0 .*its lines state a run of 100 steps\)"):
        measure.run_figures(wanted, catalog, log)
    r = measure.run_figures(wanted, catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(5935.86, abs=0.01) and r.partial
    no_steps = measure.run_figures(recipe(128, 4096, 16, (1, 2), None), catalog, log, allow_partial=True)
    assert no_steps.partial and no_steps.partial.startswith("an excerpt: megatron_mixtral_16gpu_excerpt.log shows "
                                                            "steps 1-2") and no_steps.wall_seconds is None


def test_terminal_wrapped_megatron_lines_are_refused_by_name() -> None:
    # NVIDIA-NeMo/Megatron-Bridge PR 841: each log line wrapped at 86 columns, so no line holds an iteration and its
    # time: nothing is guessed from the pieces.
    with pytest.raises(LogError, match=r"megatron_bridge_wrapped_lines.log: no megatron training step lines found"):
        parse_file(LOGS / "megatron_bridge_wrapped_lines.log", "megatron")


def test_torchtitan_log_from_its_first_step_is_a_complete_run(catalog: Catalog) -> None:
    # pytorch/torchtitan PR 1349: 8 GPUs of FSDP, steps 1-3, the first line two records joined.
    log = parse_file(LOGS / "torchtitan_joined_first_line.log", None)
    assert log.format == "torchtitan" and log.shown == (0, 2) and [s.step for s in log.steps] == [1, 2]
    # Steps 2 and 3 (0-based 1, 2): 18:23:14.486 - .389 = 0.097 s, .580 - .486 = 0.094 s; for a stated global batch
    #   64 of 2,048 tokens: 2 x 131,072 / 0.191 s / 8 GPUs = 171,560.2 tokens/s/GPU (torchtitan: 168,877 and
    #   175,100, mean 171,988.5: within 2%).
    r = measure.run_figures(recipe(64, 2048, 8, (1, 2), None), catalog, log)
    assert r.partial is None and r.tokens_per_s_per_gpu == pytest.approx(171560.21, abs=0.01)
    assert not [w for w in r.warnings if "own tokens/s" in w]


def test_nemo_excerpt_without_dates_needs_its_date_and_is_partial(catalog: Catalog) -> None:
    # NVIDIA-BioNeMo/bionemo-recipes PR 740: iterations 120-125 of 150, no timestamps.
    log = parse_file(LOGS / "nemo2_bionemo_undated_excerpt.log", "nemo")
    assert log.total_steps == 150 and log.shown == (120, 125) and log.measured is None
    with pytest.raises(LogError, match="the log prints no date; pass --measured"):
        measure.measured_date([log])
    # Window [120, 125]: 0.03146 + 0.03163 + 0.03215 + 0.03157 + 0.0317 + 0.03147 = 0.18998 s; for a stated
    #   1,024-token row on 1 GPU: 6 x 1 x 1024 / 0.18998 = 32,340.2 tokens/s/GPU.
    r = measure.run_figures(recipe(1, 1024, 1, (120, 125), None), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(32340.25, abs=0.01)
    assert r.partial and r.partial.startswith("an excerpt")


def test_torchtitan_warning_between_steps_and_an_excerpt_from_step_22(catalog: Catalog) -> None:
    # pytorch/torchtitan PR 950: steps 22-29, a dataset re-loop warning between 23 and 24.
    log = parse_file(LOGS / "torchtitan_dataset_relooped.log", "torchtitan")
    assert log.shown == (21, 28) and [s.step for s in log.steps] == list(range(22, 29)) and log.failure is None
    # Steps 23-29 (0-based 22-28): 11:10:22.092 - 11:10:21.511 = 0.581 s; for a stated 8 rows of 2,048 tokens on
    #   1 GPU: 7 x 16,384 / 0.581 = 197,397.6 tokens/s/GPU (torchtitan's mean 199,188: within 2%).
    r = measure.run_figures(recipe(8, 2048, 1, (22, 28), None), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(197397.59, abs=0.01)
    assert r.partial and "shows steps 21-28" in r.partial
    assert not [w for w in r.warnings if "own tokens/s" in w]
