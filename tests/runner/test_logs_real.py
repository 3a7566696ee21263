"""The runner on real logs from public repositories (tests/runner/real_logs/<name>.log, the source of each in
<name>.source.md): each gives the figures computed by hand in its comment, or its named refusal."""

from __future__ import annotations

import datetime as dt

import pytest
from runner_support import REAL_LOGS as LOGS
from runner_support import log_recipe as recipe

from generator.catalog import Catalog
from runner import measure
from runner.logs import LogError, check_steps, format_for, parse_file, plausible_date

# --- Megatron-LM, --log-interval 20, a README that elides a stretch of the run ---------------------------------
# SeunghyunSEO/Megatron-LM moe_exp/README.md: lines at iterations 20..140, a blank line, then 1040..1140.


def test_megatron_elided_log_gives_the_interval_and_names_the_gap(catalog: Catalog) -> None:
    log = parse_file(LOGS / "megatron_moe_elided.log", "megatron")
    assert log.interval == 20 and log.cv_basis == "interval-average (k=20)"
    shown = {s.step for s in log.steps}
    # Every printed iteration is a multiple of 20, so the line at 1040 averages iterations 1021-1040 (steps
    # 1020-1039): iterations 141-1020 (steps 140-1019) are not in the log at all.
    assert shown == set(range(0, 140)) | set(range(1020, 1140))
    with pytest.raises(LogError, match=r"window \[100, 1059\] lacks steps 140-1019 \(880 steps"):
        check_steps(log, (100, 1059))
    # Window [20, 139] = iterations 21-140, the six lines at 40..140, 20 steps each:
    #   sum = 20 x (494.3 + 515.1 + 524.7 + 523.8 + 519.1 + 522.3) ms = 20 x 3099.3 ms = 61.986 s
    #   tokens = 120 steps x 64 rows x 2048 = 15,728,640; / 61.986 s / 8 GPUs = 31,718.1 tokens/s/GPU
    # The lines say "/40000": the log shows the run's first 1,140 steps (with a gap), not its end: an excerpt.
    r = measure.run_figures(recipe(64, 2048, 8, (20, 139), None), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(31718.13, abs=0.01)
    assert r.partial == ("an excerpt: megatron_moe_elided.log shows steps 0-139, 1020-1139 of a run of 40,000 steps "
                         "(as its lines state), not the run to its end (its end and its wall time are not in the log)")
    assert r.interval == 20 and r.cv_basis == "interval-average (k=20)"
    assert log.measured == dt.date(2024, 10, 24)


def test_megatron_window_inside_an_interval_names_the_nearest_aligned_one() -> None:
    log = parse_file(LOGS / "megatron_moe_elided.log", "megatron")
    # Step 25 lies in steps 20-39 (the line at iteration 40); 20 is nearer than 40.
    with pytest.raises(LogError, match=r"starts inside steps 20-39.*nearest aligned window is \[20, 139\]"):
        check_steps(log, (25, 139))
    with pytest.raises(LogError, match=r"ends inside steps 120-139.*nearest aligned window is \[20, 139\]"):
        check_steps(log, (20, 130))


def test_megatron_dense_interval_20_with_warnings_between_lines(catalog: Catalog) -> None:
    log = parse_file(LOGS / "megatron_dense_interval20.log", "megatron")
    assert log.interval == 20 and log.global_batch == 64 and log.total_steps == 40000
    # Window [20, 199] = the nine lines at iterations 40..200:
    #   sum = 20 x (235.9+232.1+229.2+255.5+227.1+226.4+226.0+230.3+230.2) ms = 20 x 2092.7 ms = 41.854 s
    #   tokens = 180 x 64 x 2048 = 23,592,960; / 41.854 s / 8 GPUs = 70,462.1 tokens/s/GPU
    # 200 steps of a run whose lines say "/40000": an excerpt, even for a recipe of 200 steps (its first 200 steps
    # are not a run of 200: that run would have ended, this one went on); no wall time of the run, no GPU-hours.
    for steps in (None, 200):
        r = measure.run_figures(recipe(64, 2048, 8, (20, 199), steps), catalog, log, allow_partial=True)
        assert r.tokens_per_s_per_gpu == pytest.approx(70462.08, abs=0.01)
        assert r.cv_basis == "interval-average (k=20)" and r.wall_seconds is None
        assert r.partial == ("an excerpt: megatron_dense_interval20.log shows steps 0-199 of a run of 40,000 steps (as "
                             "its lines state), not the run to its end (its end and its wall time are not in the log)")
    with pytest.raises(LogError, match=r"an excerpt: .* of a run of 40,000 steps .*needs --accept-partial"):
        measure.run_figures(recipe(64, 2048, 8, (20, 199), 200), catalog, log)


def test_megatron_2020_log_without_dates() -> None:
    # NVIDIA/Megatron-LM issue 60: no timestamp on any line, --log-interval 5, all iterations skipped (no loss).
    log = parse_file(LOGS / "megatron_v2020_no_dates.log", "megatron")
    assert log.measured is None and log.interval == 5
    assert [s.step for s in log.steps] == list(range(10)) and all(s.loss is None for s in log.steps)
    assert log.steps[7].time_s == pytest.approx(1.9939)  # iterations 6-10 average 1993.9 ms
    with pytest.raises(LogError, match="the log prints no date; pass --measured"):
        measure.measured_date([log])
    assert measure.measured_date([log], launched=dt.date(2020, 5, 1)) == dt.date(2020, 5, 1)


def test_megatron_segfault_is_refused_unless_accepted_as_partial(catalog: Catalog) -> None:
    # NVIDIA/Megatron-LM issue 1880: iteration 1 of 122070, then torchrun's summary of a SIGSEGV.
    log = parse_file(LOGS / "megatron_segv_crash.log", "megatron")
    assert log.failure_line == 14 and "Signal 11 (SIGSEGV)" in (log.failure or "")
    # The log states its model's size (line 4: "Total number of parameters in billions: 1.49"): not the reference's
    # Gemma-4-31B (30,696,013,824), so against that recipe it is refused whatever else it shows.
    assert log.model_params == 1_490_000_000 and log.stated_at["model_params"] == 4
    with pytest.raises(LogError, match=r"megatron_segv_crash.log:4: the log's model has 1,490,000,000 parameters but "
                                       r"the recipe's model Gemma-4-31B has 30,696,013,824"):
        measure.run_figures(recipe(16, 4096, 8, (0, 0), 122070), catalog, log, allow_partial=True)
    # Its own model (1.49 B, 1.05 B of them embeddings) is in no card of the catalog: no size to compare with.
    wanted = recipe(16, 4096, 8, (0, 0), 122070).model_copy(update={"model": "the issue's 1.49 B model"})
    with pytest.raises(LogError, match=r"the run failed: .*megatron_segv_crash.log:14: traceback : Signal 11"):
        measure.run_figures(wanted, catalog, log)
    r = measure.run_figures(wanted, catalog, log, allow_partial=True)
    assert r.partial and "SIGSEGV" in r.partial
    # One step at 8468.3 ms: 16 x 4096 tokens / 8.4683 s / 8 GPUs = 967.4 tokens/s/GPU
    assert r.tokens_per_s_per_gpu == pytest.approx(16 * 4096 / 8.4683 / 8)
    m = measure.combine(wanted, [r], dt.date(2025, 10, 22))
    assert "steps_per_run" not in m.result_fields() and m.evidence_fields()["partial"] == r.partial


# --- NeMo 2 / Megatron-Bridge (ProgressPrinter lines) ---------------------------------------------------------


def test_nemo_llama3_8b_b200(catalog: Catalog) -> None:
    # DeepLink-org/AIChipBenchmark llm/LLaMa-V3/README.md: Llama3 8B, 8 GPUs, global batch 128, sequence 8192.
    log = parse_file(LOGS / "nemo2_llama3_8b_b200.log", format_for("Megatron-Bridge 0.2"))  # read as megatron first
    assert log.format == "nemo" and log.total_steps == 100 and log.global_batch == 128
    assert log.measured == dt.date(2025, 11, 20) and log.cv_basis == "per-step"
    # Window [97, 99]: 12.22 + 12.21 + 12.21 = 36.64 s; 3 x 128 x 8192 = 3,145,728 tokens / 36.64 s / 8 GPUs
    #   = 10,731.9 tokens/s/GPU (the log prints 1.073e+04, 1.074e+04, 1.073e+04: no disagreement warning).
    # The log shows steps 97-99 only: an excerpt, a partial run (no wall time of the run, no GPU-hours).
    with pytest.raises(LogError, match=r"an excerpt: .* shows steps 97-99, not the run from step 0"):
        measure.run_figures(recipe(128, 8192, 8, (97, 99), 100), catalog, log)
    r = measure.run_figures(recipe(128, 8192, 8, (97, 99), 100), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(10731.88, abs=0.01)
    assert r.partial and r.partial.startswith("an excerpt") and r.wall_seconds is None
    assert not [w for w in r.warnings if "own tokens/s" in w]
    # The same log read against a wrong workload (half the sequence) is flagged by the log's own rate.
    wrong = measure.run_figures(recipe(128, 4096, 8, (97, 99), 100), catalog, log, allow_partial=True)
    assert any("own tokens/s per GPU averages 10,733" in w for w in wrong.warnings)


def test_nemo_qwen3_first_line_without_its_bracket(catalog: Catalog) -> None:
    # DeepLink-org/AIChipBenchmark llm/Qwenllm/README.md: the excerpt's first line lost its "[" before the date.
    log = parse_file(LOGS / "nemo2_qwen3_no_bracket.log", None)
    assert log.format == "nemo" and log.first_time == dt.datetime(2025, 10, 17, 11, 32, 59)
    # Window [527, 529]: 2.389 + 2.443 + 2.127 = 6.959 s; 3 x 32 x 4096 = 393,216 tokens / 6.959 s / 8 GPUs
    #   = 7,063.1 tokens/s/GPU (the log's own 6859, 6706, 7702 average 7,089: within 2%).
    r = measure.run_figures(recipe(32, 4096, 8, (527, 529), None), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(7063.08, abs=0.01)
    assert r.partial and "shows steps 527-529" in r.partial
    # Against a recipe of 1000 steps it is still an excerpt of three steps, not a run that stopped at step 529.
    with pytest.raises(LogError, match=r"an excerpt: nemo2_qwen3_no_bracket.log shows steps 527-529, not the run from "
                                       r"step 0 \(its start, its wall time and its steps before are not in the log; "
                                       r"its lines state a run of 1,000 steps\)"):
        measure.run_figures(recipe(32, 4096, 8, (527, 529), 1000), catalog, log)


def test_nemo_survived_traceback_is_a_warning_not_a_crash(catalog: Catalog) -> None:
    # haydenjohnson94/HuangSeedFund_Evo2: torch._dynamo prints a traceback as a warning, then 10 steps run.
    log = parse_file(LOGS / "nemo2_evo2_dynamo_warning.log", "nemo")
    assert log.failure is None and log.total_steps == 10 and [s.step for s in log.steps] == list(range(10))
    assert log.warnings and "not counted as a crash" in log.warnings[0]
    assert log.measured == dt.date(2025, 6, 18)
    # Window [1, 9]: 0.3513+0.3506+0.3502+0.3505+0.3964+0.4149+0.399+0.4168+0.4083 = 3.438 s; for a stated
    #   global batch 1, 8192 tokens a row, 1 GPU: 9 x 8192 / 3.438 = 21,445.0 tokens/s/GPU
    r = measure.run_figures(recipe(1, 8192, 1, (1, 9), 10), catalog, log)
    assert r.tokens_per_s_per_gpu == pytest.approx(21445.03, abs=0.01)


# --- torchtitan ------------------------------------------------------------------------------------------------


def test_torchtitan_log_freq_10_timed_by_its_clock(catalog: Catalog) -> None:
    # pytorch/torchtitan PR 1287: lines at steps 200..250 (log_freq 10), GC and profiler lines between.
    log = parse_file(LOGS / "torchtitan_interval10.log", "torchtitan")
    assert log.interval == 10
    # The line at step 200 has no earlier line here, so steps 191-200 (0-based 190-199) have no time.
    assert [s.step for s in log.steps] == list(range(200, 250))
    assert log.steps[0].time_s == pytest.approx(14.648 / 10)  # 22:31:04.970 - 22:30:50.322 over 10 steps
    # Window [200, 249]: 22:32:00.846 - 22:30:50.322 = 70.524 s; for a stated global batch 8 of 8192 tokens on
    #   8 GPUs: 50 x 8 x 8192 / 70.524 s / 8 = 5,807.95 tokens/s/GPU (torchtitan's tps: 5593..5869, mean 5,811).
    # The first line (step 200, 0-based 199) is shown but untimed: an excerpt of the run from step 199.
    assert log.shown == (199, 249)
    r = measure.run_figures(recipe(8, 8192, 8, (200, 249), 250), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(5807.95, abs=0.01)
    assert r.partial and "shows steps 199-249" in r.partial
    assert r.cv_basis == "interval-average (k=10)" and not [w for w in r.warnings if "own tokens/s" in w]
    # 205 is as far from 200 as from 210: the later start (less warm-up) is named.
    with pytest.raises(LogError, match=r"nearest aligned window is \[210, 249\]"):
        check_steps(log, (205, 249))


def test_torchtitan_per_step_lines(catalog: Catalog) -> None:
    # pytorch/torchtitan PR 3393: log_freq 1, `[rank0]:` prefix, grad_norm field.
    log = parse_file(LOGS / "torchtitan_interval1.log", None)
    assert log.format == "torchtitan" and log.interval == 1 and log.cv_basis == "per-step"
    assert [s.step for s in log.steps] == list(range(14, 21))
    # Window [14, 20]: 16:04:54.191 - 16:04:46.338 = 7.853 s; for 1 GPU, global batch 1 of 8192 tokens:
    #   7 x 8192 / 7.853 = 7,302.2 tokens/s/GPU (torchtitan printed 7,272..7,334).
    r = measure.run_figures(recipe(1, 8192, 1, (14, 20), 21), catalog, log, allow_partial=True)
    assert r.tokens_per_s_per_gpu == pytest.approx(7302.18, abs=0.01)
    assert log.shown == (13, 20) and r.partial and "shows steps 13-20" in r.partial
    assert log.steps[-1].loss == pytest.approx(3.00867)


# --- slime ---------------------------------------------------------------------------------------------------


def test_slime_rollout_only_log_is_refused() -> None:
    # THUDM/slime issue 1837: only the rollout side's perf line, which is not a training step.
    with pytest.raises(LogError, match="no miles training step lines found"):
        parse_file(LOGS / "slime_rollout_only.log", "miles")
    with pytest.raises(LogError, match=r"no training step lines of any known format \(known: openrecipes"):
        parse_file(LOGS / "slime_rollout_only.log", None)


def test_dates_outside_the_plausible_era_are_refused() -> None:
    today = dt.date(2026, 12, 3)
    assert plausible_date(dt.date(2024, 10, 24), today) == dt.date(2024, 10, 24)
    with pytest.raises(LogError, match=r"dated 2099-01-01, outside \[2019-01-01, 2026-12-03\]"):
        plausible_date(dt.date(2099, 1, 1), today)
    with pytest.raises(LogError, match="dated 1970-01-01"):
        plausible_date(dt.date(1970, 1, 1), today)
