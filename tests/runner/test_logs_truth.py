"""Parsers say what the log says and no more: a pipeline stage's placeholder loss is no loss, a validation line is
no training step, an interrupted end is a failure, a stated total is read, an impossible MFU is refused."""

from __future__ import annotations

import datetime as dt

import pytest
from runner_support import REAL_LOGS as LOGS
from runner_support import log_recipe as recipe

from generator import figures
from generator.catalog import Catalog
from runner import measure
from runner.logs import LogError, parse_file, parse_lines

PP16 = LOGS / "torchtitan_pp16_placeholder_loss.log"






def test_torchtitan_pipeline_placeholder_loss_is_no_loss_and_the_stated_run_is_read(catalog: Catalog) -> None:
    # pytorch/torchtitan issue 1232: PP 16 over 16 GPUs, rank 0 (a first stage) prints loss -1.0 at every step.
    log = parse_file(PP16, "torchtitan")
    assert log.total_steps == 10 and log.global_batch == 2
    assert [s.step for s in log.steps] == [1, 2, 3] and all(s.loss is None for s in log.steps)
    assert log.shown == (0, 3) and log.measured == dt.date(2025, 5, 28)
    # Steps 2-4 (0-based 1-3): 21:14:39.054 - 21:13:37.816 = 61.238 s, then 61.239 s, then 61.240 s = 183.717 s;
    #   3 x 2 x 4096 = 24,576 tokens / 183.717 s / 16 GPUs = 8.3607 tokens/s/GPU (torchtitan's tps: 8).
    wanted = recipe(2, 4096, 16, (1, 3), 10)
    with pytest.raises(LogError, match=r"too few steps: torchtitan_pp16_placeholder_loss.log shows steps 0-3 but the "
                                       r"recipe's steps_per_run is 10 \(its lines state a run of 10\); the log ends "
                                       r"there, with no failure line"):
        measure.run_figures(wanted, catalog, log)
    r = measure.run_figures(wanted, catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(24576 / 183.717 / 16)
    assert r.partial and r.partial.startswith("too few steps")
    # The log states 2 rows a step: a recipe of another global batch is not this run.
    with pytest.raises(LogError, match="the log's global batch size is 2 but the recipe's workload.global_batch is 4"):
        measure.run_figures(recipe(4, 4096, 16, (1, 3), 10), catalog, log, allow_partial=True)


def _ranks_0_and_15() -> list[str]:
    """The issue's log with the last stage's lines too (LOG_RANK=0,15, as the issue's author meant): rank 15
    prints the same steps 0.4 s later on its own clock, with the real loss."""
    lines = PP16.read_text(encoding="utf-8").splitlines(keepends=True)
    out = []
    for line in lines:
        out.append(line)
        if "step:" in line and "loss: -1.0000" in line:
            stamp = line[line.index("2025-05-28"):][:23]
            later = (dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f") + dt.timedelta(seconds=0.4))
            text = later.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
            step = line.split("step:")[1].split()[0]
            out.append(line.replace("[rank0]", "[rank15]").replace(stamp, text)
                       .replace("loss: -1.0000", f"loss: {12 - int(step) * 0.5:.4f}"))
    return out


def test_torchtitan_last_stage_loss_kept_and_one_rank_times_the_steps() -> None:
    log = parse_lines(_ranks_0_and_15(), "torchtitan", "pp16-two-ranks.log")
    assert [s.loss for s in log.steps] == [11.0, 10.5, 10.0]  # rank 15's, the placeholder -1.0 of rank 0 dropped
    # Timed by one rank (rank 0: first on a tie of line counts), never across the two clocks.
    assert [round(s.time_s, 3) for s in log.steps] == [61.238, 61.239, 61.24]


def test_torchtitan_validation_lines_are_not_training_steps() -> None:
    lines = PP16.read_text(encoding="utf-8").splitlines(keepends=True)
    # torchtitan's validator (components/validate.py) logs through the metrics processor as `validate step: N`.
    lines.insert(12, "[rank0]:[titan] 2025-05-28 21:14:50,000 - root - INFO - validate step:  2  loss:  9.1000  "
                     "memory: 42.78GiB(54.06%)  tps: 30\n")
    log = parse_lines(lines, "torchtitan", "with-validation.log")
    assert [s.step for s in log.steps] == [1, 2, 3]
    assert log.steps[0].time_s == pytest.approx(61.238) and log.steps[0].loss is None


def test_torchtitan_colour_codes_are_read_through() -> None:
    lines = [line.replace("step:", "\x1b[31mstep:").replace("loss:", "\x1b[32mloss:") for line in
             PP16.read_text(encoding="utf-8").splitlines(keepends=True)]
    assert [s.step for s in parse_lines(lines, "torchtitan", "colour.log").steps] == [1, 2, 3]


@pytest.mark.parametrize("end", ["^C\n", "KeyboardInterrupt\n",
                                 "W0528 21:17:00.000000 1 torch/distributed/elastic/agent/server/api.py:723] Received 2 "
                                 "death signal, shutting down workers\n"])
def test_an_interrupted_end_is_a_failure(end: str, catalog: Catalog) -> None:
    lines = PP16.read_text(encoding="utf-8").splitlines(keepends=True) + [end]
    log = parse_lines(lines, "torchtitan", "interrupted.log")
    assert log.failure_line == len(lines)
    with pytest.raises(LogError, match=r"the run failed: interrupted.log:16"):
        measure.run_figures(recipe(2, 4096, 16, (1, 3), 4), catalog, log)


def test_an_mfu_above_the_bound_is_refused(catalog: Catalog) -> None:
    # N = 125e6 on 16 H100s (bf16 dense peak 989e12 in the catalog): at 2 rows a step, 8.36 tokens/s/GPU, MFU
    # 6.3e-6. Read as if each step were 600,000 rows, the same times give 24576 x 300,000 / 183.717 / 16
    # = 2,508,205 tokens/s/GPU: 6 x 125e6 x 2,508,205 / 989e12 = 1.90, above 0.75: refused.
    log = parse_file(PP16, "torchtitan")
    log.global_batch = None
    with pytest.raises(LogError, match=rf"an MFU of 1\.90\d\d .* above {figures.MFU_BOUND:g} of the GPU's dense peak"):
        measure.run_figures(recipe(600_000, 4096, 16, (1, 3), 4), catalog, log, allow_partial=True)
