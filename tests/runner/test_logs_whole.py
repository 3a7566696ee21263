"""The runner refuses what it cannot read whole (issue 41): each case an edited copy of a real log
(tests/runner/edited_logs/<name>.log, what was edited and from which real log in <name>.source.md) or a real log
read against a recipe it does not describe, beside the outcome computed by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from runner_support import REAL_LOGS, log_registry, runner
from runner_support import log_recipe as recipe

from generator.catalog import Catalog
from runner import cli, measure
from runner.logs import PARSERS, LogError, check_steps, parse_file

EDITED = REAL_LOGS.parent / "edited_logs"


# --- a last line cut short --------------------------------------------------------------------------------------


def test_a_last_line_cut_inside_its_step_time_is_left_out_and_said(catalog: Catalog) -> None:
    # megatron_dense_interval20.log with its last line cut after "elapsed time per iteration (ms): 23" (230.2 in the
    # real log). Read as a figure, 23 ms gave 78,205.3 tokens/s/GPU over [20, 199]; the whole log gives 70,462.1.
    log = parse_file(EDITED / "megatron_dense_interval20_cut.log", "megatron")
    assert log.cut == 17 and max(s.step for s in log.steps) == 179
    assert log.warnings == ["megatron_dense_interval20_cut.log:17: the log's last line is cut short (no line end, and "
                            "Megatron-LM step lines end with '|'): left out, not read as a step"]
    with pytest.raises(LogError, match=r"too few steps: the log has steps 0-179 but the window \[20, 199\] needs "
                                       r"step 199; its last line \(17\) was cut short and left out"):
        check_steps(log, (20, 199))
    # Window [20, 179] = the eight whole lines at iterations 40..180, 20 steps each:
    #   20 x (235.9 + 232.1 + 229.2 + 255.5 + 227.1 + 226.4 + 226.0 + 230.3) ms = 20 x 1862.5 ms = 37.25 s
    #   160 steps x 64 rows x 2048 tokens = 20,971,520 tokens / 37.25 s / 8 GPUs = 70,374.23 tokens/s/GPU
    r = measure.run_figures(recipe(64, 2048, 8, (20, 179), None), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(70374.23, abs=0.01)
    assert log.warnings[0] in r.warnings


def test_remeasure_says_the_cut_line_was_left_out(tmp_path: Path) -> None:
    recipe_path = log_registry(tmp_path, "Megatron-LM core_r0.9.0", 64, 2048, 8, (20, 179), 40000)
    done = runner("remeasure", str(recipe_path), "--from-log", str(EDITED / "megatron_dense_interval20_cut.log"),
                  "--dry-run", "--accept-change", "--accept-partial")
    assert done.returncode == cli.EXIT_OK, done.stderr
    assert ("warning: megatron_dense_interval20_cut.log:17: the log's last line is cut short (no line end, and "
            "Megatron-LM step lines end with '|'): left out, not read as a step\n") in done.stdout
    assert "+  tokens_per_s_per_gpu: 70374.2\n" in done.stdout


@pytest.mark.parametrize(("name", "fmt", "cut_after", "whole"), [
    # Megatron: the line ends with "|": whole without its line end; cut inside its loss, it is not.
    ("megatron_dense_interval20", "megatron", "| loss scale: 1.0 |", True),
    ("megatron_dense_interval20", "megatron", "lm loss: 6.7608", False),
    # torchtitan: the line ends with mfu's "%"; cut inside its loss ("loss:  3.0087" of 3.00867), it is not.
    ("torchtitan_interval1", "torchtitan", "%", True),
    ("torchtitan_interval1", "torchtitan", "loss:  3.0", False),
    # NeMo: the line ends with a number (consumed_samples): without its line end it cannot be known whole.
    ("nemo2_evo2_dynamo_warning", "nemo", "consumed_samples: ", False),
])
def test_a_last_line_without_its_line_end(tmp_path: Path, name: str, fmt: str, cut_after: str, whole: bool) -> None:
    lines = (REAL_LOGS / f"{name}.log").read_text(encoding="utf-8").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if PARSERS[fmt].reads(line))
    at = lines[last].rindex(cut_after) + len(cut_after)
    path = tmp_path / f"{name}.log"
    path.write_text("".join(lines[:last]) + lines[last][:at], encoding="utf-8")
    whole_log, cut_log = parse_file(REAL_LOGS / f"{name}.log", fmt), parse_file(path, fmt)
    assert (cut_log.cut is None) is whole
    assert [s.step for s in cut_log.steps] == [s.step for s in whole_log.steps if whole or s.line != last + 1]



# --- NaN or infinite loss or gradient norm --------------------------------------------------------------------


def test_a_nan_gradient_norm_in_the_window_refuses_the_run_naming_its_line(catalog: Catalog) -> None:
    # megatron_dense_interval20.log with `grad norm: nan` on line 12 (iteration 100: steps 80-99); its loss is sound.
    log = parse_file(EDITED / "megatron_dense_interval20_nan_grad_norm.log", "megatron")
    assert [s.grad_norm for s in log.steps if s.line == 12] == [pytest.approx(float("nan"), nan_ok=True)] * 20
    with pytest.raises(LogError, match=r"megatron_dense_interval20_nan_grad_norm.log:12: the gradient norm at steps "
                                       r"80-99 \(one averaged line\) is nan: the run diverged; nothing written"):
        measure.run_figures(recipe(64, 2048, 8, (20, 199), None), catalog, log, allow_partial=True)
    # Before the window too: a run that diverged is unusable wherever its window lies.
    with pytest.raises(LogError, match=r":12: the gradient norm at steps 80-99"):
        measure.run_figures(recipe(64, 2048, 8, (100, 199), None), catalog, log, allow_partial=True)


@pytest.mark.parametrize(("name", "fmt", "old", "new", "line", "what"), [
    ("megatron_dense_interval20", "megatron", "lm loss: 6.760830E+00", "lm loss: inf", 17,
     "loss at steps 180-199 (one averaged line)"),
    ("megatron_dense_interval20", "megatron", "grad norm: 0.659", "grad norm: -inf", 17,
     "gradient norm at steps 180-199 (one averaged line)"),
    ("torchtitan_interval1", "torchtitan", "grad_norm:  0.5443", "grad_norm:  nan", 3, "gradient norm at step 15"),
])
def test_infinite_or_nan_figures_on_a_window_line(tmp_path: Path, catalog: Catalog, name: str, fmt: str, old: str,
                                                  new: str, line: int, what: str) -> None:
    text = (REAL_LOGS / f"{name}.log").read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / f"{name}.log"
    path.write_text(text.replace(old, new), encoding="utf-8")
    wanted = recipe(64, 2048, 8, (20, 199), None) if fmt == "megatron" else recipe(1, 8192, 1, (14, 20), None)
    with pytest.raises(LogError, match=rf"{name}.log:{line}: the {re.escape(what)} is -?(inf|nan): the run diverged"):
        measure.run_figures(wanted, catalog, parse_file(path, fmt), allow_partial=True)


def test_a_window_without_any_loss_is_said(catalog: Catalog) -> None:
    # NVIDIA/Megatron-LM issue 60 (2020): every iteration skipped, no loss printed on any line.
    log = parse_file(REAL_LOGS / "megatron_v2020_no_dates.log", "megatron")
    r = measure.run_figures(recipe(8, 1024, 1, (5, 9), None), catalog, log, allow_partial=True)
    assert "megatron_v2020_no_dates.log: no line of the window [5, 9] prints a loss: nothing in the log shows the " \
           "run trained (every iteration skipped, or a pipeline stage that computes none)" in r.warnings
