"""One log, one run: a log holding a restart or a second run is refused naming the line where the next run
starts (the step counter going back, a second start banner, a world-size change); the same log passed twice is
refused; lines repeated by several ranks are not a restart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from runner_support import REFERENCE, ROOT, registry, remeasure

from generator.load import load_recipe
from generator.registry import load_catalog
from runner import cli, measure
from runner.logs import LogError, parse_file, parse_lines

LOGS = Path(__file__).resolve().parent / "real_logs"


def test_two_megatron_runs_in_one_log_are_refused_naming_the_line() -> None:
    # NVIDIA/Megatron-LM issue 1570: iterations 1-3 of a run at 06:11, then iterations 1-3 of its re-run at 06:22.
    log = parse_file(LOGS / "megatron_two_runs_concatenated.log", "megatron")
    assert log.restarts == ["line 6: the step counter goes back from 3 (line 4) to 1"]
    base = load_recipe(REFERENCE).recipe
    wanted = base.model_copy(update={"result": base.result.model_copy(update={"window": [1, 2]})})
    with pytest.raises(LogError, match=r"one log, one run: this log holds more than one run: "
                                       r"megatron_two_runs_concatenated.log line 6: the step counter goes back"):
        measure.run_figures(wanted, load_catalog(ROOT), log, allow_partial=True)


def test_a_second_start_banner_and_a_world_size_change_are_named() -> None:
    run = [
        "using world size: 8, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 1\n",
        " [2025-05-09 06:11:17] iteration        1/      10 | elapsed time per iteration (ms): 100.0 | lm loss: 1.1E+01 |\n",
        " [2025-05-09 06:11:18] iteration        2/      10 | elapsed time per iteration (ms): 100.0 | lm loss: 1.0E+01 |\n",
    ]
    restarted = run + [run[0].replace("world size: 8", "world size: 16")] + [
        line.replace("iteration        1/", "iteration        3/").replace("iteration        2/", "iteration        4/")
        for line in run[1:]]
    log = parse_lines(restarted, "megatron", "restart.log")
    assert log.restarts == ["line 4: a second start with world size 16 (the run up to line 3 started with 8 at line 1)"]
    same_size = parse_lines(run + run[:1] + [run[2].replace("2/", "3/")], "megatron", "again.log")
    assert same_size.restarts == ["line 4: a second start ('using world size:') after the step lines up to line 3"]


def test_lines_repeated_by_every_rank_are_not_a_restart() -> None:
    # pytorch/torchtitan PR 2389: eight ranks print each step's line, no [rankN]: prefix, the same step in a row.
    log = parse_file(LOGS / "torchtitan_eight_ranks_unprefixed.log", "torchtitan")
    assert log.restarts == [] and [s.step for s in log.steps] == [4]


def test_the_same_log_twice_is_refused(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    log = LOGS / "torchtitan_interval10.log"
    copy = tmp_path / "copy.log"
    copy.write_bytes(log.read_bytes())
    done = remeasure(recipe, "--from-log", str(log), "--from-log", str(copy), "--dry-run")
    assert done.returncode == cli.EXIT_USAGE
    assert f"--from-log {copy} is the same log as --from-log {log} (the same bytes): one log is one run" in done.stderr


def test_a_log_of_two_runs_is_split_on_request(tmp_path: Path) -> None:
    from runner.logs import parse_run

    path = LOGS / "megatron_two_runs_concatenated.log"
    first, second = parse_run(path, "megatron", 1), parse_run(path, "megatron", 2)
    assert first.restarts == [] and second.restarts == [] and second.source.endswith("(run 2 of 2: lines 6-8)")
    # Run 2 (the 06:22 run), window [1, 2]: 3156.5 + 3115.0 ms = 6.2715 s; for 32 rows of 4,096 tokens on 8 GPUs:
    #   2 x 32 x 4096 / 6.2715 / 8 = 5,224.91 tokens/s/GPU; run 1 (06:11): 3286.6 + 3182.4 ms -> 5,065.39.
    base = load_recipe(REFERENCE).recipe
    wanted = base.model_copy(update={
        "workload": base.workload.model_copy(update={"global_batch": 32, "row_tokens": 4096}),
        "gpu": base.gpu.model_copy(update={"count": 8, "per_node": None, "instance": None}),
        "result": base.result.model_copy(update={"window": [1, 2], "steps_per_run": 10,
                                                 "active_params": base.result.active_params.model_copy(
                                                     update={"count": 125_000_000})}),  # MFU not under test
    })
    catalog = load_catalog(ROOT)
    r2 = measure.run_figures(wanted, catalog, second, allow_partial=True)
    r1 = measure.run_figures(wanted, catalog, first, allow_partial=True)
    assert r2.tokens_per_s_per_gpu == pytest.approx(5224.91, abs=0.01)
    assert r1.tokens_per_s_per_gpu == pytest.approx(5065.39, abs=0.01)
    # Line 5 (run 2's heading "# mcore-0.11 full 10 steps") lies between run 1's last step and run 2's first: neither's.
    with pytest.raises(LogError, match=r"--log-run 3, but the log holds 2 run\(s\) \(lines 1-4, 6-8\)"):
        parse_run(path, "megatron", 3)
    # Through the CLI: refused without --log-run (naming it), and --log-run alone is a usage error.
    recipe = registry(tmp_path)
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(re.sub(r"(?m)^  framework: .*$", "  framework: Megatron-LM core_r0.12.0", text), encoding="utf-8")
    done = remeasure(recipe, "--from-log", str(path), "--dry-run")
    assert done.returncode == cli.EXIT_BAD_LOG and "Pass --log-run N to measure its Nth run alone" in done.stderr
    assert remeasure(recipe, "--log-run", "2", "--dry-run").returncode == cli.EXIT_USAGE
