"""End-to-end `python -m runner remeasure` against a real subprocess (tests/runner/fixture_trainer.py)."""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_support import FIXTURES, H100_ENV, HERE, REFERENCE, ROOT, alive, fixture_run, outside_result, registry, remeasure
from suitehelpers import generator_cli

from runner import cli

GB, ROW, GPUS = 128, 8192, 8
USD_PER_GPU_HOUR = 55.04 / 8
PEAK, N = 989.0e12, 30696013824


def by_hand(times: list[float], first: int = 5, last: int = 19) -> dict[str, float]:
    """The card's formulas written out: window tokens / window seconds / GPUs, and what follows from it."""
    window = times[first : last + 1]
    tokens = (last - first + 1) * GB * ROW
    tps = tokens / sum(window) / GPUS
    mean = sum(window) / len(window)
    sd = (sum((t - mean) ** 2 for t in window) / (len(window) - 1)) ** 0.5
    stated = round(tps, 1)  # $/1M and MFU follow from tokens/s as the recipe states it (check recomputes from it)
    return {
        "tokens_per_s_per_gpu": tps,
        "usd_per_million_tokens": USD_PER_GPU_HOUR / (stated * 3600) * 1e6,
        "mfu": 6 * N * stated / PEAK,
        "step_time_cv_percent": sd / mean * 100,
        "window_tokens": tokens,
    }


def fixture_times(fmt: str) -> list[float]:
    sys.path.insert(0, str(HERE))
    import fixture_trainer

    times = [fixture_trainer.step_time(i, 111.3, 1.0) for i in range(20)]
    return [round(t * 1000, 1) / 1000 for t in times] if fmt == "megatron" else times  # Megatron prints ms to 0.1


# The fixture trainer prints ~111 s steps and ends within a second: a launch that writes runs the runner under a
# clock this much faster (tests/runner/runner_wrapper.py), or check refuses GPU-hours fewer than the steps took.
CLOCK = "100000"
WRAPPER = [sys.executable, str(HERE / "runner_wrapper.py"), "--clock", CLOCK, "--"]


def timed(recipe: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`remeasure` of a launch under the fast clock."""
    return subprocess.run([*WRAPPER, "remeasure", str(recipe), "--workdir", str(HERE), *args], cwd=ROOT,
                          env=dict(os.environ) | H100_ENV | (env or {}), capture_output=True, text=True, timeout=60)


def test_help_documents_exit_codes() -> None:
    out = subprocess.run([sys.executable, "-m", "runner", "remeasure", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0
    for code in ("0 ", "3 ", "4 ", "5 ", "6 ", "7 ", "130"):
        assert f"  {code}" in out.stdout
    assert "--from-log" in out.stdout and "--accept-change" in out.stdout


@pytest.mark.slow
def test_from_log_miles_on_the_reference_gives_the_hand_figures_and_a_minimal_diff(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    before = recipe.read_text()
    assert before == REFERENCE.read_text()
    done = remeasure(recipe, "--from-log", str(FIXTURES / "miles_gemma4_31b.txt"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    hand = by_hand(fixture_times("miles"))
    for key, value in hand.items():
        assert report[key] == pytest.approx(value, rel=1e-12), key
    assert report["window"] == [5, 19] and report["steps"] == 20
    after = recipe.read_text()
    assert outside_result(after) == outside_result(before)  # byte-exact outside result
    diff = [ln for ln in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if ln[:1] in "+-" and ln[:3] not in ("---", "+++")]
    assert diff == [
        "-  tokens_per_s_per_gpu: 1178.1",
        f"+  tokens_per_s_per_gpu: {hand['tokens_per_s_per_gpu']:.1f}",
        "-  step_time_cv_percent: 2.19",
        "-  mfu: 0.2194",
        f"+  step_time_cv_percent: {hand['step_time_cv_percent']:.2f}",
        f"+  mfu: {hand['mfu']:.4f}",
        # $/1M rounds to the same 1.62; the date is the log's own; 8 GPUs x the log's first-to-last timestamp,
        # and the note now says so (the old one described the old figure, over two lines).
        "-  gpu_hours: 5.69",
        "-  gpu_hours_note: GPUs x (scheduler admission to finish), including startup; the same run is the candidate "
        "arm of the",
        "-    convergence check",
        "+  gpu_hours: 4.83",
        "+  gpu_hours_note: GPUs x the median run's span from its log's first to its last timestamp (start-up before "
        "the first timestamped line not counted)",
    ]
    ev = json.loads(recipe.with_name("attune-tp2-pp4-split13.evidence.json").read_text())
    assert ev["history"][0]["tokens_per_s_per_gpu"] == 1178.1 and ev["history"][0]["source"] == "recipe"
    assert ev["window"] == [5, 19] and len(ev["steps"]) == 20 and ev["source"] == "from-log"
    assert ev["environment"]["nccl"] == "2.28.9"
    # The evidence recomputes the result through the one formula.
    from generator.figures import tokens_per_s_per_gpu

    inputs = ev["inputs"]
    tps = tokens_per_s_per_gpu([s["time_s"] for s in ev["steps"]], ev["window"], inputs["global_batch"],
                               inputs["row_tokens"], inputs["gpu_count"])
    assert round(tps, 1) == ev["result"]["tokens_per_s_per_gpu"]
    # A second re-measurement moves the first into history.
    again = remeasure(recipe, "--from-log", str(FIXTURES / "miles_gemma4_31b.txt"))
    assert again.returncode == 0, again.stderr
    ev2 = json.loads(recipe.with_name("attune-tp2-pp4-split13.evidence.json").read_text())
    assert [h["source"] for h in ev2["history"]] == ["recipe", "evidence"]
    # The written recipe still passes the registry's own check.
    check = generator_cli("check", str(recipe), cwd=tmp_path, env=dict(os.environ))
    assert "tokens_per_s_per_gpu" not in check.stdout + check.stderr


def test_from_log_megatron_gives_the_hand_figures(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    text = recipe.read_text().replace("  framework: miles 0.1.0", "  framework: Megatron-LM 0.16.0", 1)
    recipe.write_text(text)
    done = remeasure(recipe, "--from-log", str(FIXTURES / "megatron_20_steps.txt"), "--json", "--dry-run")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for key, value in by_hand(fixture_times("megatron")).items():
        assert report[key] == pytest.approx(value, rel=1e-12), key
    assert recipe.read_text() == text  # dry run


def test_from_log_wrong_format_and_short_logs_are_refused(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    before = recipe.read_bytes()
    wrong = remeasure(recipe, "--from-log", str(FIXTURES / "megatron_20_steps.txt"))
    assert wrong.returncode == cli.EXIT_BAD_LOG and "looks like the megatron format" in wrong.stderr
    short = tmp_path / "short.log"
    short.write_text("".join(ln for ln in (FIXTURES / "miles_gemma4_31b.txt").open() if "perf 11:" not in ln))
    gap = remeasure(recipe, "--from-log", str(short))
    assert gap.returncode == cli.EXIT_BAD_LOG and "lacks steps" in gap.stderr
    assert recipe.read_bytes() == before


def launch_recipe(tmp_path: Path, fmt: str = "miles", extra: str = "") -> Path:
    return registry(tmp_path, run=fixture_run(fmt, extra))


def test_launch_success_writes_result_and_keeps_every_other_byte(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path)
    before = recipe.read_text()
    done = timed(recipe, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tokens_per_s_per_gpu"] == pytest.approx(by_hand(fixture_times("miles"))["tokens_per_s_per_gpu"])
    assert report["source"] == "launch" and report["wrote"]
    after = recipe.read_text()
    assert outside_result(after) == outside_result(before)
    assert "  tokens_per_s_per_gpu: 1177.1\n" in after
    logs = list((tmp_path / ".openrecipes-runs").rglob("run1.log"))
    assert len(logs) == 1 and "perf/step_time" in logs[0].read_text()
    ev = json.loads(recipe.with_name(recipe.stem + ".evidence.json").read_text())
    assert ev["command"].endswith("run.sh") and ev["environment"]["python"] and ev["log_tail"][-1] == "training done"
    assert "python3 fixture_trainer.py" in done.stderr  # the exact command and script were shown


def test_a_launched_run_records_the_peak_memory_its_summary_line_states(tmp_path: Path) -> None:
    # A recipe whose framework has a log format is parsed live, line by line, as the run prints; its summary line
    # (the last `openrecipes-framework` one) must still be read: on the H100 (2026-12-06) the engine's and torchtitan's
    # recipes were written without the peak memory their runs stated, the transformers loop's (no format) with it.
    recipe = launch_recipe(tmp_path, extra="--peak-memory 61.254 63.5")
    done = timed(recipe, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"]["peak_memory"] == {"allocated_gib": 61.25, "reserved_gib": 63.5}
    assert re.search(r"^  peak_memory: \{allocated_gib: 61\.25, reserved_gib: 63\.50, source: ", recipe.read_text(), re.M)


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        ("--mode crash", cli.EXIT_RUN_FAILED, "the run failed (exit status 1)"),
        ("--mode nan", cli.EXIT_BAD_LOG, "the loss at step 9 is nan"),
        ("--mode short", cli.EXIT_BAD_LOG, "too few steps"),
    ],
)
@pytest.mark.slow
def test_failed_runs_write_nothing(tmp_path: Path, extra: str, code: int, message: str) -> None:
    recipe = launch_recipe(tmp_path, extra=extra)
    before = recipe.read_bytes()
    done = remeasure(recipe, "--yes")
    assert done.returncode == code, done.stderr
    assert message in done.stderr and "nothing written" in done.stderr
    assert recipe.read_bytes() == before
    assert not recipe.with_name(recipe.stem + ".evidence.json").exists()


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hang", "hang-detached"])
def test_timeout_ends_the_whole_process_group(tmp_path: Path, mode: str) -> None:
    pids = tmp_path / "pids"
    recipe = launch_recipe(tmp_path, extra=f"--mode {mode} --pid-file {pids}")
    before = recipe.read_bytes()
    t0 = time.monotonic()
    done = remeasure(recipe, "--yes", "--timeout", "2")
    assert done.returncode == cli.EXIT_RUN_FAILED and "--timeout 2 s" in done.stderr
    assert time.monotonic() - t0 < 20
    found = [int(p) for p in pids.read_text().split()]
    assert len(found) == 2  # the trainer and the child it started
    assert not any(alive(p) for p in found)
    assert recipe.read_bytes() == before


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("mode", ["hang", "hang-detached"])
def test_ctrl_c_ends_the_whole_process_group(tmp_path: Path, mode: str) -> None:
    pids = tmp_path / "pids"
    recipe = launch_recipe(tmp_path, extra=f"--mode {mode} --pid-file {pids}")
    before = recipe.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--workdir", str(HERE), "--yes"],
        cwd=ROOT, env=dict(os.environ) | H100_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (pids.exists() and len(pids.read_text().split()) == 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # to the runner only, as a terminal's Ctrl-C would reach it
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == cli.EXIT_INTERRUPTED, err
    assert "interrupted" in err and "nothing written" in err
    assert not any(alive(int(p)) for p in pids.read_text().split())
    assert recipe.read_bytes() == before


@pytest.mark.slow
def test_regression_is_refused_then_accepted(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path, extra="--scale 1.25")
    before = recipe.read_bytes()
    refused = timed(recipe, "--yes")
    assert refused.returncode == cli.EXIT_CHANGE
    assert "a regression, outside the tolerance of +/-6.57%" in refused.stdout + refused.stderr
    assert recipe.read_bytes() == before
    accepted = timed(recipe, "--yes", "--accept-change", "--json")
    assert accepted.returncode == 0, accepted.stderr
    report = json.loads(accepted.stdout)
    assert report["change_percent"] == pytest.approx(-20.1, abs=0.1)
    assert f"  tokens_per_s_per_gpu: {report['tokens_per_s_per_gpu']:.1f}\n" in recipe.read_text()


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path)
    before = recipe.read_bytes()
    done = timed(recipe, "--yes", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "-  tokens_per_s_per_gpu: 1178.1\n+  tokens_per_s_per_gpu: 1177.1" in done.stdout
    assert recipe.read_bytes() == before
    assert not recipe.with_name(recipe.stem + ".evidence.json").exists()


@pytest.mark.slow
def test_runs_that_repeat_each_other_exactly_are_one_run(tmp_path: Path) -> None:
    # The fixture prints the same step times every time it runs: three launches of it are one run three times, not
    # three runs (the median and CV of distinct runs: test_runs_of_different_speeds_... below).
    recipe = launch_recipe(tmp_path)
    before = recipe.read_bytes()
    done = timed(recipe, "--yes", "--runs", "3", "--json")
    assert done.returncode == cli.EXIT_BAD_LOG
    assert re.search(r"error: \S+/run2\.log: the 20 step lines it shares with run1\.log print the same step times to "
                     r"the digit: one run given twice .*nothing written\n", done.stderr), done.stderr
    assert recipe.read_bytes() == before


@pytest.mark.slow
def test_runs_of_different_speeds_write_the_median_run_and_report_their_cv(tmp_path: Path) -> None:
    count = tmp_path / "count"
    run = (f"n=$(cat {count} 2>/dev/null || echo 0)\necho $((n + 1)) > {count}\nscales=(1.1 1.0 0.95)\n"
           "python3 fixture_trainer.py --format miles --steps 20 --scale ${scales[$n]}")
    recipe = registry(tmp_path, run=run)
    done = timed(recipe, "--yes", "--runs", "3", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    base = by_hand(fixture_times("miles"))["tokens_per_s_per_gpu"]
    rates = report["runs_tokens_per_s_per_gpu"]
    assert rates == pytest.approx([base / 1.1, base, base / 0.95], rel=1e-3)  # in the order they ran
    assert report["tokens_per_s_per_gpu"] == rates[1]  # the median run, not the mean of the three
    mean = sum(rates) / 3
    cv = (sum((r - mean) ** 2 for r in rates) / 2) ** 0.5 / mean * 100
    assert report["runs_cv_percent"] == pytest.approx(cv, rel=1e-12)
    ev = json.loads(recipe.with_name(recipe.stem + ".evidence.json").read_text())
    assert ev["median_run"] == 1 and [r["log"] for r in ev["runs"]] == ["run1.log", "run2.log", "run3.log"]
    assert ev["runs_cv_percent"] == pytest.approx(cv, rel=1e-12)


@pytest.mark.slow
def test_json_report_keys(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    done = remeasure(recipe, "--from-log", str(FIXTURES / "miles_gemma4_31b.txt"), "--json", "--dry-run")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout is the JSON alone; messages went to stderr
    for key in ("tokens_per_s_per_gpu", "usd_per_million_tokens", "mfu", "step_time_cv_percent", "window",
                "window_tokens", "steps"):
        assert key in report and report[key] is not None, key
    assert report["window"] == [5, 19] and report["window_tokens"] == 15 * GB * ROW and report["steps"] == 20
    assert report["dry_run"] and not report["wrote"] and report["gate"] == "within"


@pytest.mark.slow
def test_progress_bar_on_a_terminal_shows_step_rate_and_eta(tmp_path: Path) -> None:
    import pty

    recipe = launch_recipe(tmp_path, extra="--sleep 0.05")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*WRAPPER, "remeasure", str(recipe), "--workdir", str(HERE), "--yes", "--dry-run"],
        cwd=ROOT, env=dict(os.environ) | H100_ENV | {"COLUMNS": "160", "TERM": "xterm"}, stdin=subprocess.DEVNULL,
        stdout=follower, stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the runner closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(leader)
    screen = b"".join(chunks).decode("utf-8", errors="replace")
    assert proc.returncode == 0, screen
    assert "step" in screen and "20/20" in screen and " tokens/s/GPU" in screen and "ETA" in screen
    assert "perf/step_time" in screen  # the run's own output is streamed above the bar


@pytest.mark.slow
def test_a_concurrent_remeasure_of_the_same_recipe_is_refused(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path, extra="--sleep 0.15")
    first = subprocess.Popen(
        [*WRAPPER, "remeasure", str(recipe), "--workdir", str(HERE), "--yes"],
        cwd=ROOT, env=dict(os.environ) | H100_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not list((tmp_path / ".openrecipes-runs").rglob("run1.log")):
        time.sleep(0.05)
    second = remeasure(recipe, "--yes")
    assert second.returncode == cli.EXIT_LOCKED
    assert "another remeasure of this recipe is running (pid " in second.stderr
    first.communicate(timeout=30)
    assert first.returncode == 0


@pytest.mark.slow
def test_preflight_refusals(tmp_path: Path) -> None:
    recipe = registry(tmp_path)  # the real reference run script
    before = recipe.read_bytes()
    env = {k: "" for k in ("HF_CKPT", "SFT_DATA")}
    unset = remeasure(recipe, "--yes", env=env)
    assert unset.returncode == cli.EXIT_PREFLIGHT
    assert "uses $HF_CKPT, $SFT_DATA, which are not set here" in unset.stderr
    entry = remeasure(recipe, "--yes", env={"HF_CKPT": "/ckpt", "SFT_DATA": "/data"})
    assert entry.returncode == cli.EXIT_PREFLIGHT
    assert "miles/utils/external_utils/model_args_utils.py (no such file" in entry.stderr
    wrong = remeasure(recipe, "--yes", env={"OPENRECIPES_GPUS": "8xNVIDIA H200"})
    assert wrong.returncode == cli.EXIT_PREFLIGHT
    assert "is a recipe for H100, but this machine has 8 x H200" in wrong.stderr and "--as-new" in wrong.stderr
    few = remeasure(recipe, "--yes", env={"OPENRECIPES_GPUS": "4xNVIDIA H100 80GB HBM3"})
    assert few.returncode == cli.EXIT_PREFLIGHT and "needs 8 x H100 on this node, but 4 are visible" in few.stderr
    unknown = remeasure(recipe, "--yes", env={"OPENRECIPES_GPUS": "8xNVIDIA L4"})
    assert unknown.returncode == cli.EXIT_PREFLIGHT and "not in catalog/gpus.yaml" in unknown.stderr
    assert recipe.read_bytes() == before


def test_no_terminal_and_no_yes_declines(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path)
    done = remeasure(recipe)
    assert done.returncode == cli.EXIT_DECLINED and "pass --yes" in done.stderr


@pytest.mark.slow
def test_as_new_writes_a_measured_recipe_for_the_gpus_present(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path)
    before = recipe.read_bytes()
    done = timed(recipe, "--yes", "--as-new", "fixture-on-h200", env={"OPENRECIPES_GPUS": "8xNVIDIA H200"})
    assert done.returncode == 0, done.stderr
    new = tmp_path / "recipes/gemma-4-31b/h200/fixture-on-h200.yaml"
    text = new.read_text()
    assert text.startswith("# recipes/gemma-4-31b/h200/fixture-on-h200.yaml\n")
    assert "\n  type: H200\n  memory_gb: 141\n" in text and "\n  instance: AWS p5en.48xlarge\n" in text
    assert "\nstatus: measured\n" in text
    assert recipe.read_bytes() == before
    from generator.load import load_recipe

    loaded = load_recipe(new)
    # The catalog's 8-GPU H200 instance prices it (AWS p5en.48xlarge, $63.296 an hour); MFU against the H200's peak.
    from generator import figures

    usd = figures.usd_per_million_tokens(63.296, 8, loaded.recipe.result.tokens_per_s_per_gpu)
    assert loaded.recipe.gpu.type == "H200" and loaded.recipe.result.usd_per_million_tokens == pytest.approx(usd, rel=0.01)
    assert loaded.recipe.result.mfu == pytest.approx(6 * N * loaded.recipe.result.tokens_per_s_per_gpu / 989.0e12, abs=1e-4)
    assert loaded.recipe.result.gpu_hours > 0
    # The H100 correctness evidence does not travel to the H200: the new recipe is measured, not verified.
    assert loaded.recipe.correctness is None
    assert "# The correctness evidence of gemma-4-31b/h100/attune-tp2-pp4-split13 (H100) is not carried over" in text
    ev = json.loads(new.with_name("fixture-on-h200.evidence.json").read_text())
    assert ev["recipe"] == "gemma-4-31b/h200/fixture-on-h200" and ev["inputs"]["gpu_type"] == "H200"
    check = generator_cli("check", "--no-cache", cwd=tmp_path)
    assert check.returncode == 0, check.stdout  # both recipes, and the new one against its evidence
    assert "2 recipe(s) checked, no problems" in check.stdout


@pytest.mark.slow
def test_a_recipe_edited_during_the_run_is_not_overwritten(tmp_path: Path) -> None:
    recipe = launch_recipe(tmp_path, extra="--sleep 0.1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--workdir", str(HERE), "--yes"],
        cwd=ROOT, env=dict(os.environ) | H100_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not list((tmp_path / ".openrecipes-runs").rglob("run1.log")):
        time.sleep(0.05)
    edited = recipe.read_text() + "# a note added by hand while the run was going\n"
    recipe.write_text(edited)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == cli.EXIT_LOCKED, err
    assert "changed while it was being measured" in err and "nothing written" in err
    assert recipe.read_text() == edited
    assert not recipe.with_name(recipe.stem + ".evidence.json").exists()


@pytest.mark.slow
def test_as_new_recipe_runs_itself_from_its_own_folder_with_its_own_notes(tmp_path: Path) -> None:
    # A run that reads its own recipe file: after --as-new it must name (and find) the new file, not the original.
    original = tmp_path / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
    recipe = registry(tmp_path, run=f"test -s {original}\n" + fixture_run("miles", ""))
    done = timed(recipe, "--yes", "--json", "--as-new", "fixture-on-h200", env={"OPENRECIPES_GPUS": "8xNVIDIA H200"})
    assert done.returncode == 0, done.stderr
    new = tmp_path / "recipes/gemma-4-31b/h200/fixture-on-h200.yaml"
    text = new.read_text()
    assert f"test -s {tmp_path}/recipes/gemma-4-31b/h200/fixture-on-h200.yaml\n" in text
    assert "attune-tp2-pp4-split13.yaml\n" not in text.split("\nrun: |\n", 1)[1].split("\nnotes:", 1)[0]
    notes = " ".join(text.split("\nnotes: |\n", 1)[1].split())
    assert notes.startswith("- Measured by `python -m runner remeasure recipes/gemma-4-31b/h100/attune-tp2-pp4-split13"
                            ".yaml --as-new fixture-on-h200` on")
    assert "(H200)" in notes and "written from recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml (H100)" in notes
    runs = tmp_path / ".openrecipes-runs"
    assert list((runs / "gemma-4-31b/h200/fixture-on-h200").rglob("run1.log"))
    assert not (runs / "gemma-4-31b/h100").exists()
    ev = json.loads(new.with_name("fixture-on-h200.evidence.json").read_text())
    assert ".openrecipes-runs/gemma-4-31b/h200/fixture-on-h200/" in ev["command"]
    report = json.loads(done.stdout)
    assert not any(d.startswith("gpu_name") for d in report["stack_differences"])


def test_check_refuses_a_run_naming_another_recipe(tmp_path: Path) -> None:
    recipe = registry(tmp_path, run="python3 -m runner train recipes/gemma-4-31b/h100/some-other-recipe.yaml")
    check = generator_cli("check", "--no-cache", str(recipe), cwd=tmp_path)
    assert check.returncode != 0
    assert ("run: runs recipes/gemma-4-31b/h100/some-other-recipe.yaml, another recipe file; a recipe's run names "
            "its own file (recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml)") in check.stdout
    own = registry(tmp_path, run="python3 -m runner train recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml")
    fine = generator_cli("check", "--no-cache", str(own), cwd=tmp_path)
    assert "another recipe file" not in fine.stdout
