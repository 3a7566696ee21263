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
from runner.logs import PARSERS, LogError, check_steps, parse_file, parse_lines

EDITED = REAL_LOGS.parent / "edited_logs"


def test_each_edited_log_names_its_real_log_its_edit_and_its_outcome() -> None:
    logs = sorted(EDITED.glob("*.log"))
    assert len(logs) >= 3
    for log in logs:
        source = log.with_suffix(".source.md").read_text(encoding="utf-8")
        real = re.search(r"Copy of: \.\./real_logs/(\S+\.log)", source)
        assert real and (REAL_LOGS / real.group(1)).is_file(), log.name
        assert "- Edit: " in source and "- Expected: " in source, log.name


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
    # Its lines say "/40000": an excerpt, whose reason names the line left out.
    assert r.partial == ("an excerpt: megatron_dense_interval20_cut.log shows steps 0-179 of a run of 40,000 steps (as "
                         "its lines state), not the run to its end (its end and its wall time are not in the log); its "
                         "last line, 17, was cut short and left out")


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


# --- a log of another workload ----------------------------------------------------------------------------------

CALL2 = REAL_LOGS.parents[2] / "benchmarks/results/h200-2026-12-04-frameworks/call2"  # our own H200 runs (README there)
TITAN_3B_8K = CALL2 / "torchtitan-8k.20261204T191532Z.run1.log.gz"  # Llama-3.2-3B, 8 rows of 8,192 tokens, 1 GPU
TITAN_1B_4K = CALL2 / "torchtitan-4k.20261204T191420Z.run1.log.gz"  # Llama-3.2-1B, 8 rows of 4,096 tokens, 1 GPU


def _plain(tmp: Path, log: Path) -> Path:
    import gzip

    path = tmp / log.name.removesuffix(".gz")
    path.write_bytes(gzip.decompress(log.read_bytes()))
    return path


def _committed(name: str):  # noqa: ANN202
    from generator.load import load_recipe

    return load_recipe(REAL_LOGS.parents[2] / "recipes" / name).recipe


def test_a_log_of_another_sequence_length_is_refused_naming_both(tmp_path: Path, catalog: Catalog) -> None:
    # The 3B run's log states "global batch size 8, ..., sequence length 8192" (line 36); the 1B torchtitan-4k
    # recipe is 8 rows of 4,096 tokens: written into it, the figure was 3,516.2 tokens/s after one warning.
    log = parse_file(_plain(tmp_path, TITAN_3B_8K), "torchtitan")
    assert (log.seq_length, log.global_batch, log.stated_at["seq_length"]) == (8192, 8, 36)
    with pytest.raises(LogError, match=r"torchtitan-8k.20261204T191532Z.run1.log:36: the log's sequence length is 8192 "
                                       r"but the recipe's workload.row_tokens is 4096: this log is not a run of this "
                                       r"recipe"):
        measure.run_figures(_committed("llama-3.2-1b/h200/torchtitan-4k.yaml"), catalog, log, allow_partial=True)


def test_a_log_of_another_model_is_refused_naming_both(tmp_path: Path, catalog: Catalog) -> None:
    # The 3B run states "Model openrecipes_llama3 llama-3.2-3b size: 3,606,752,256 total parameters" (line 28):
    # Llama-3.2-3B's 3,212,749,824 with its tied output layer counted apart (+ 128,256 x 3,072 = 394,002,432).
    log = parse_file(_plain(tmp_path, TITAN_3B_8K), "torchtitan")
    assert log.model_params == 3_606_752_256 and log.stated_at["model_params"] == 28
    own = _committed("llama-3.2-3b/h200/torchtitan-8k.yaml")
    assert measure.run_figures(own, catalog, log).tokens_per_s_per_gpu > 0  # its own recipe: the same model
    # The same recipe stating Llama-3.2-1B (1,235,814,400; with its output layer apart 1,498,482,688): 58% and 140%
    # from the stated count, far beyond 5%.
    other = own.model_copy(update={"model": "Llama-3.2-1B"})
    with pytest.raises(LogError, match=r"run1.log:28: the log's model has 3,606,752,256 parameters but the recipe's "
                                       r"model Llama-3.2-1B has 1,235,814,400 \(beyond 5%, an untied output layer "
                                       r"allowed for\): this log is not a run of this recipe"):
        measure.run_figures(other, catalog, log)
    # The 1B run's own statement (1,498,482,688) agrees with its card through the same untied output layer.
    small = parse_file(_plain(tmp_path, TITAN_1B_4K), "torchtitan")
    assert small.model_params == 1_498_482_688
    assert measure.run_figures(_committed("llama-3.2-1b/h200/torchtitan-4k.yaml"), catalog, small).partial is None


def test_a_log_of_another_gpu_count_is_refused_naming_both(catalog: Catalog) -> None:
    # pytorch/torchtitan PR 1349: "Building 1-D device mesh with ['dp_shard'], [8]" on line 1: 8 GPUs.
    log = parse_file(REAL_LOGS / "torchtitan_joined_first_line.log", "torchtitan")
    assert log.world_size == 8 and log.stated_at["world_size"] == 1
    with pytest.raises(LogError, match=r"torchtitan_joined_first_line.log:1: the log's GPU count \(world size\) is 8 but "
                                       r"the recipe's gpu.count is 16: this log is not a run of this recipe"):
        measure.run_figures(recipe(64, 2048, 16, (1, 2), None), catalog, log)


def test_megatron_states_its_workload_in_its_argument_dump(catalog: Catalog) -> None:
    # Megatron-LM's _print_args lines ("  seq_length ..... 4096"), as the start of an edited copy of the Megatron-LM
    # issue 1570 log (two runs of 32 rows; the dump is Megatron's format, its values this recipe's other workload).
    dump = ["------------------------ arguments ------------------------\n",
            "  global_batch_size ............................... 32\n",
            "  seq_length ...................................... 8192\n",
            "  world_size ...................................... 8\n"]
    lines = (REAL_LOGS / "megatron_two_runs_concatenated.log").read_text(encoding="utf-8").splitlines(keepends=True)
    log = parse_lines(dump + lines[:4], "megatron", "with-arguments.log")
    assert (log.global_batch, log.seq_length, log.world_size) == (32, 8192, 8)
    with pytest.raises(LogError, match=r"with-arguments.log:3: the log's sequence length is 8192 but the recipe's "
                                       r"workload.row_tokens is 4096"):
        measure.run_figures(recipe(32, 4096, 8, (1, 2), 10), catalog, log, allow_partial=True)
    with pytest.raises(LogError, match=r"with-arguments.log:4: the log's GPU count \(world size\) is 8 but the "
                                       r"recipe's gpu.count is 16"):
        measure.run_figures(recipe(32, 8192, 16, (1, 2), 10), catalog, log, allow_partial=True)


# --- an excerpt: partial, described as the log shows it ---------------------------------------------------------


def test_steps_that_say_of_40000_are_an_excerpt_of_a_200_step_recipe(tmp_path: Path) -> None:
    # megatron_dense_interval20.log: iterations 20..200, each "/   40000". A recipe of 200 steps wrote it complete.
    recipe_path = log_registry(tmp_path, "Megatron-LM core_r0.9.0", 64, 2048, 8, (20, 199), 200)
    log = str(REAL_LOGS / "megatron_dense_interval20.log")
    refused = runner("remeasure", str(recipe_path), "--from-log", log, "--dry-run", "--accept-change")
    assert refused.returncode == cli.EXIT_BAD_LOG
    reason = ("an excerpt: megatron_dense_interval20.log shows steps 0-199 of a run of 40,000 steps (as its lines "
              "state), not the run to its end (its end and its wall time are not in the log)")
    assert refused.stderr == (f"error: not written: a partial run: {reason}. Its figures hold for the window; to record "
                              "it as partial (never verified), run again with --accept-partial.\n")
    assert "gpu_hours: the log is an excerpt, not the whole run; no GPU-hours are written\n" in refused.stdout
    wrote = runner("remeasure", str(recipe_path), "--from-log", log, "--accept-change", "--accept-partial")
    assert wrote.returncode == cli.EXIT_OK, wrote.stderr  # written, and the write passed check
    text = recipe_path.read_text(encoding="utf-8")
    assert f"  partial: \"{reason}\"\n" in text and "  steps_per_run: 200\n" in text and "gpu_hours" not in text
    assert "  tokens_per_s_per_gpu: 70462.1\n" in text


def test_a_five_line_excerpt_is_not_called_a_run_that_stopped_early(tmp_path: Path, catalog: Catalog) -> None:
    # NVIDIA-BioNeMo PR 740's log, iterations 120-125 of "/149" (150 steps), cut to its first five step lines
    # (120-124). Said before: "too few steps: the log shows 125 steps ... (the run stopped early)".
    lines = (REAL_LOGS / "nemo2_bionemo_undated_excerpt.log").read_text(encoding="utf-8").splitlines(keepends=True)
    steps = [i for i, line in enumerate(lines) if "train_step_timing in s:" in line]
    path = tmp_path / "five_lines.log"
    path.write_text("".join(lines[: steps[4] + 1]), encoding="utf-8")
    r = measure.run_figures(recipe(1, 1024, 1, (120, 124), 150), catalog, parse_file(path, "nemo"), allow_partial=True)
    assert r.partial == ("an excerpt: five_lines.log shows steps 120-124, not the run from step 0 (its start, its wall "
                         "time and its steps before are not in the log; its lines state a run of 150 steps)")
    # The head of a run, ending with no failure line: the log shows steps 0-2; whether the run stopped or the log
    # was cut, it does not say.
    two_runs = (REAL_LOGS / "megatron_two_runs_concatenated.log").read_text(encoding="utf-8").splitlines(keepends=True)
    head = tmp_path / "head.log"
    head.write_text("".join(two_runs[:4]), encoding="utf-8")
    r = measure.run_figures(recipe(32, 4096, 8, (1, 2), 10), catalog, parse_file(head, "megatron"), allow_partial=True)
    assert r.partial == ("too few steps: head.log shows steps 0-2 but the recipe's steps_per_run is 10 (its lines "
                         "state a run of 10); the log ends there, with no failure line")
    # A run whose lines state 10 steps, all shown, against a recipe of 20.
    titan = parse_file(REAL_LOGS / "nemo2_evo2_dynamo_warning.log", "nemo")
    r = measure.run_figures(recipe(1, 8192, 1, (1, 9), 20), catalog, titan, allow_partial=True)
    assert r.partial == ("too few steps: nemo2_evo2_dynamo_warning.log shows steps 0-9, the whole run its lines state "
                         "(10 steps), but the recipe's steps_per_run is 20")


# --- one run of a log that holds several: its own lines only ----------------------------------------------------


def test_log_run_takes_dates_and_banners_from_its_own_lines(tmp_path: Path) -> None:
    # Megatron-LM issue 1570's two runs, with run 2's dated banner "[before the start of training step] datetime:
    # 2025-05-09 06:22:17" inserted before its first step (line 6). Run 1 took that banner: its span (what GPU-hours
    # count) ran 06:11:17 -> 06:22:17 = 660 s, where its own lines give 06:11:17 -> 06:11:23 = 6 s.
    import datetime as dt

    from runner.logs import parse_run, tail
    from runner.logs.base import run_bounds

    path = EDITED / "megatron_two_runs_dated_banner.log"
    assert run_bounds(parse_file(path, "megatron")) == [(1, 4), (7, 9)]  # lines 5-6 are neither run's
    first, second = parse_run(path, "megatron", 1), parse_run(path, "megatron", 2)
    assert (first.first_time, first.last_time) == (dt.datetime(2025, 5, 9, 6, 11, 17), dt.datetime(2025, 5, 9, 6, 11, 23))
    assert first.wall_seconds == 6.0 and first.source.endswith("(run 1 of 2: lines 1-4)")
    assert (second.first_time, second.last_time) == (dt.datetime(2025, 5, 9, 6, 22, 40),
                                                     dt.datetime(2025, 5, 9, 6, 22, 47))
    # The evidence's log tail of run 1 is run 1's lines, not the file's end (run 2).
    assert tail(path, first=first.first_line, last=first.lines)[-1].startswith(" [2025-05-09 06:11:23] iteration")
    # Each run's start banner is its own: Megatron's "using world size" before each run splits there, once.
    banner = "using world size: 32, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 1\n"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    with_banners = tmp_path / "banners.log"
    with_banners.write_text("".join([banner, *lines[:5], banner, *lines[5:]]), encoding="utf-8")
    log = parse_file(with_banners, "megatron")
    assert log.restarts == ["line 7: a second start ('using world size:') after the step lines up to line 5"]
    assert run_bounds(log) == [(1, 5), (7, 11)]  # run 2 from its banner: its dated line 8 is its own
    assert parse_run(with_banners, "megatron", 2).first_time == dt.datetime(2025, 5, 9, 6, 22, 17)


# --- one run given as several -----------------------------------------------------------------------------------


def test_a_log_and_its_shifted_or_edited_copies_are_one_run(tmp_path: Path) -> None:
    # torchtitan PR 1287's log, a copy with every timestamp a day later, and a copy with one loss digit changed: the
    # same bytes rule let them through as a verified-looking median of three (runs: 3, runs_cv_percent: 0.0) dated by
    # the forged copy. Step times come from the timestamps' differences, so a shifted copy prints the same ones.
    log = REAL_LOGS / "torchtitan_interval10.log"
    text = log.read_text(encoding="utf-8")
    shifted, edited = tmp_path / "shifted.log", tmp_path / "edited.log"
    shifted.write_text(text.replace("2025-06-16", "2025-06-17"), encoding="utf-8")
    edited.write_text(text.replace("loss:  6.0388", "loss:  6.0389"), encoding="utf-8")
    recipe_path = log_registry(tmp_path, "torchtitan 0.2.2", 8, 8192, 8, (200, 249), 250)
    for copy in (shifted, edited):
        done = runner("remeasure", str(recipe_path), "--from-log", str(log), str(copy), "--dry-run", "--accept-change",
                      "--accept-partial")
        assert done.returncode == cli.EXIT_BAD_LOG
        # The five lines at steps 210..250 (0-based spans 200-209 .. 240-249) are timed alike in both.
        assert done.stderr == (f"error: {copy}: the 5 step lines it shares with torchtitan_interval10.log print the "
                               "same step times to the digit: one run given twice (its timestamps shifted or a figure "
                               "edited), not two runs; nothing written\n")


def test_runs_whose_tokens_per_s_agree_to_the_last_digit_are_refused(catalog: Catalog) -> None:
    # Run 2 of Megatron-LM issue 1570's log, and a copy with its window's two step times swapped (3156.5 and 3115.0 ms):
    # not the same step times, but the same sum, so the same tokens/s to the last digit: a CV of exactly 0.
    #   2 x 32 x 4096 = 262,144 tokens / (3.1565 + 3.1150 s = 6.2715 s) / 8 GPUs = 5,224.9063 tokens/s/GPU, both.
    from runner.logs import parse_lines, parse_run

    path = REAL_LOGS / "megatron_two_runs_concatenated.log"
    run = parse_run(path, "megatron", 2)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[5:]
    swapped = [lines[0], lines[1].replace("(ms): 3156.5", "(ms): 3115.0"),
               lines[2].replace("(ms): 3115.0", "(ms): 3156.5")]
    copy = parse_lines(swapped, "megatron", "swapped.log")
    wanted = recipe(32, 4096, 8, (1, 2), 10)
    runs = [measure.run_figures(wanted, catalog, log, allow_partial=True) for log in (run, copy)]
    assert measure.same_run(run, copy) == 0  # their step times differ
    with pytest.raises(LogError, match=r"megatron_two_runs_concatenated.log \(run 2 of 2: lines 6-8\), swapped.log: the "
                                       r"2 runs give the same tokens/s per GPU \(5,224\.9063\) to the last digit, a CV of "
                                       r"exactly 0 across runs: copies of one run, not 2 runs"):
        measure.combine(wanted, runs, run.measured)


# --- compressed logs, logs without dates, and what reaches the evidence -------------------------------------------


def test_a_gzip_log_is_read_as_its_text(tmp_path: Path, catalog: Catalog) -> None:
    # Our H200 torchtitan 3B run, committed gzip'd: read as it is, it gives the figure its recipe states
    # (22,443.8356 tokens/s/GPU unrounded: tests/runner/test_stated_figures.py) and the tail of its text.
    from runner.logs import tail

    log = parse_file(TITAN_3B_8K, None)
    r = measure.run_figures(_committed("llama-3.2-3b/h200/torchtitan-8k.yaml"), catalog, log)
    assert abs(r.tokens_per_s_per_gpu - 22443.83561643836) < 1e-6
    assert tail(TITAN_3B_8K)[-1].startswith('openrecipes-framework {"framework": "torchtitan"')
    # Through remeasure: megatron_dense_interval20.log gzip'd gives its 70,462.1 tokens/s/GPU.
    import gzip

    packed = tmp_path / "megatron_dense_interval20.log.gz"
    packed.write_bytes(gzip.compress((REAL_LOGS / "megatron_dense_interval20.log").read_bytes()))
    recipe_path = log_registry(tmp_path, "Megatron-LM core_r0.9.0", 64, 2048, 8, (20, 199), 40000)
    done = runner("remeasure", str(recipe_path), "--from-log", str(packed), "--dry-run", "--accept-change",
                  "--accept-partial")
    assert done.returncode == cli.EXIT_OK, done.stderr
    assert "+  tokens_per_s_per_gpu: 70462.1\n" in done.stdout


def test_a_log_compressed_otherwise_or_cut_is_refused_saying_so(tmp_path: Path) -> None:
    import gzip

    text = (REAL_LOGS / "megatron_dense_interval20.log").read_bytes()
    zstd = tmp_path / "run.log.zst"
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + text[:64])  # zstd's frame magic: Python reads no zstd
    with pytest.raises(LogError, match=r"run.log.zst: a zstd-compressed file, not a text log: decompress it and pass "
                                       r"the log itself"):
        parse_file(zstd, "megatron")
    cut = tmp_path / "run.log.gz"
    cut.write_bytes(gzip.compress(text)[:200])  # a download cut short
    with pytest.raises(LogError, match=r"run.log.gz: a gzip-compressed log that is cut or damaged \(.*\); nothing of "
                                       r"it is read"):
        parse_file(cut, "megatron")
    recipe_path = log_registry(tmp_path, "Megatron-LM core_r0.9.0", 64, 2048, 8, (20, 199), 40000)
    done = runner("remeasure", str(recipe_path), "--from-log", str(zstd), "--dry-run")
    assert done.returncode == cli.EXIT_BAD_LOG and done.stderr.count("\n") == 1 and "zstd-compressed" in done.stderr


def test_dry_run_shows_the_figures_of_a_log_without_dates(tmp_path: Path) -> None:
    # NVIDIA-BioNeMo PR 740's NeMo excerpt prints no timestamp. Refused before its figures were shown; now the dry run
    # prints them, and the write is refused naming the missing date. Window [120, 125]: 6 x 1 x 1024 = 6,144 tokens /
    # 0.18998 s / 1 GPU = 32,340.2 tokens/s/GPU (tests/runner/test_logs_corpus_more.py).
    recipe_path = log_registry(tmp_path, "NeMo 2.5", 1, 1024, 1, (120, 125), 150)
    before = recipe_path.read_bytes()
    log = str(REAL_LOGS / "nemo2_bionemo_undated_excerpt.log")
    done = runner("remeasure", str(recipe_path), "--from-log", log, "--dry-run", "--accept-change", "--accept-partial")
    assert done.returncode == cli.EXIT_BAD_LOG
    assert "+  tokens_per_s_per_gpu: 32340.2\n" in done.stdout and "measured:" not in done.stdout
    assert "(dry run: the figures of a log without a date; result.measured is not known, so nothing can be written)" \
        in done.stdout
    assert done.stderr == ("error: not written: nemo2_bionemo_undated_excerpt.log: the log prints no date; pass "
                           "--measured YYYY-MM-DD (the day the run was made)\n")
    assert recipe_path.read_bytes() == before
    dated = runner("remeasure", str(recipe_path), "--from-log", log, "--dry-run", "--accept-change", "--accept-partial",
                   "--measured", "2025-03-01")
    assert dated.returncode == cli.EXIT_OK, dated.stderr
    assert "+  measured: 2025-03-01\n" in dated.stdout


def test_no_path_of_the_machine_enters_the_evidence(tmp_path: Path) -> None:
    # torchtitan PR 1287's log (8 rows of 8,192 tokens) read into a recipe of 4,096-token rows: its own tokens/s
    # (mean 5,811) disagrees with the recipe's workload (2,904.0), and that warning named the log by its absolute
    # path, committed in the evidence.
    # A line the run printed after its last step names folders of this machine (the log's, the home folder): the
    # evidence's log tail quotes the log with those folders named, not spelled out.
    recipe_path = log_registry(tmp_path, "torchtitan 0.2.2", 8, 4096, 8, (200, 249), 250)
    log = tmp_path / "logs" / "torchtitan_interval10.log"
    log.parent.mkdir()
    said = (f"[rank0]:[titan] 2025-06-16 22:32:01,000 - root - WARNING - no checkpoint at {log.parent}/ckpt nor at "
            f"{Path.home()}/ckpt\n")
    log.write_text((REAL_LOGS / log.name).read_text(encoding="utf-8") + said, encoding="utf-8")
    done = runner("remeasure", str(recipe_path), "--from-log", str(log), "--accept-change", "--accept-partial")
    assert done.returncode == cli.EXIT_OK, done.stderr
    assert "warning: torchtitan_interval10.log: the log's own tokens/s per GPU averages 5,811 over the window" \
        in done.stdout
    written = recipe_path.read_text(encoding="utf-8") + recipe_path.with_suffix(".evidence.json").read_text("utf-8")
    assert "torchtitan_interval10.log: the log's own tokens/s" in written
    assert "no checkpoint at <log folder>/ckpt nor at ~/ckpt" in written
    for folder in (str(REAL_LOGS.resolve()), str(tmp_path), str(Path.home()), str(Path.cwd())):
        assert folder not in written
