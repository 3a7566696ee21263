"""`python -m runner convergence`: Megatron-Bridge validate_convergence's thresholds, and --write."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from runner_support import FIXTURES, HERE, ROOT, registry, runner
from suitehelpers import generator_cli

from runner.convergence import compare, tolerance
from runner.logs import format_engine_step


def series(scale: float = 1.0, shift: float = 0.0, wiggle: float = 0.0, n: int = 20, base: float = 2.3) -> dict[int, float]:
    return {i: (base * math.exp(-0.02 * i) + wiggle * math.sin(i * 2.1)) * scale + shift for i in range(n)}


def write_log(path: Path, losses: dict[int, float]) -> Path:
    path.write_text("".join(format_engine_step(i, len(losses), 1.0, v, 8) + "\n" for i, v in losses.items()))
    return path


def test_tolerance_bands() -> None:
    assert tolerance(2.5) == 0.10 and tolerance(2.0) == 0.05 and tolerance(0.6) == 0.05 and tolerance(0.49) == 0.02


def test_identical_curves_pass() -> None:
    c = compare(series(), series())
    assert c.passed and c.correlation == pytest.approx(1.0) and c.pointwise_failures == 0 and c.final_loss_difference == 0


def test_final_loss_beyond_three_percent_fails_even_when_pointwise_passes() -> None:
    c = compare(series(scale=1.04), series())
    assert c.pointwise_failures == 0  # 4% is inside the 10% band above loss 2 and the 5% band below it
    assert not c.passed and c.reasons == ["final loss differs by 4.00% (> 3%)"]


def test_uncorrelated_curves_fail() -> None:
    flat = {i: 2.0 + 0.05 * ((-1) ** i) for i in range(20)}
    c = compare(flat, series(base=2.0))
    assert not c.passed and any("correlation" in r for r in c.reasons)


def test_more_than_ten_percent_pointwise_failures_fail() -> None:
    ref = series(base=0.4)  # below 0.5: a 2% band
    cand = dict(ref)
    for i in (2, 5, 8):  # 3 of 20 points, 15%, off by 5%
        cand[i] = ref[i] * 1.05
    c = compare(cand, ref)
    assert c.pointwise_failures == 3 and any("3 of 20 points" in r for r in c.reasons)


@pytest.mark.slow
def test_cli_json_and_write_touch_only_convergence(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    before = recipe.read_text()
    cand = write_log(tmp_path / "cand.txt", series(scale=1.002))
    done = runner("convergence", str(cand), str(FIXTURES / "engine_20_steps.txt"), "--json")
    assert done.returncode == 1  # the fixture's curve is another curve
    ref = write_log(tmp_path / "ref.txt", series())
    done = runner("convergence", str(cand), str(ref), "--write", str(recipe), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["result"] == "pass" and report["steps"] == 20
    after = recipe.read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert [a.split(":")[0] for a, _ in changed] == ["    correlation", "    final_loss_difference"]
    assert f"    final_loss_difference: {report['final_loss_difference']:.4f}" in after


def test_cli_reads_evidence_files(tmp_path: Path) -> None:
    ev = tmp_path / "x.evidence.json"
    ev.write_text(json.dumps({"steps": [{"step": i, "time_s": 1.0, "loss": v} for i, v in series().items()]}))
    done = runner("convergence", str(ev), str(write_log(tmp_path / "r.txt", series())))
    assert done.returncode == 0 and "pass" in done.stdout
    bad = runner("convergence", str(tmp_path / "missing.txt"), str(ev))
    assert bad.returncode == 5 and "cannot read the log" in bad.stderr


def test_band_edges_and_a_zero_reference_follow_megatron_bridge() -> None:
    # validate_convergence: > 2.0 -> 10%, > 0.5 -> 5%, otherwise 2%; a zero reference compares |c| itself.
    assert tolerance(2.0) == 0.05 and tolerance(0.5) == 0.02 and tolerance(0.5001) == 0.05
    ref = {i: 0.5 for i in range(20)}
    cand = {i: 0.5 * 1.03 for i in range(20)}  # 3%: inside 5%, outside the 2% that applies at exactly 0.5
    assert compare(cand, ref).pointwise_failures == 20
    zero = compare({0: 0.01, 1: 0.5, 2: 0.4}, {0: 0.0, 1: 0.5, 2: 0.4})
    assert zero.pointwise_failures == 0  # |0.01 - 0| -> 0.01 <= 2%


def test_more_than_ten_percent_outliers_fail_on_their_own() -> None:
    # 52 residuals of +D and 52 of -D among 1,000: 10.4% of the points lie beyond 3 population sigmas.
    ref = {i: 3.0 - 0.0009 * i for i in range(1000)}
    cand = dict(ref)
    for k in range(52):
        cand[10 + 2 * k] += 0.01
        cand[11 + 2 * k] -= 0.01
    c = compare(cand, ref)
    assert c.outliers == 104 and c.pointwise_failures == 0 and c.correlation > 0.999
    assert c.reasons == ["104 of 1000 residuals beyond 3 standard deviations (> 10%)"]
    few = compare({i: v for i, v in cand.items() if i < 10 or i >= 200}, ref)
    assert few.passed and few.outliers == 0


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return generator_cli("check", "--no-cache", cwd=root)


@pytest.mark.slow
def test_write_on_an_as_new_recipe_adds_the_evidence_and_verifies_it(tmp_path: Path) -> None:
    recipe = registry(tmp_path, run="python3 fixture_trainer.py --format miles --steps 20")
    # Under runner_wrapper's fast clock: the fixture's ~111 s steps must fit in the run's GPU-hours for check.
    made = subprocess.run([sys.executable, str(HERE / "runner_wrapper.py"), "--clock", "100000", "--", "remeasure",
                           str(recipe), "--workdir", str(HERE), "--yes", "--as-new", "on-h200"], cwd=ROOT,
                          env=dict(os.environ, OPENRECIPES_GPUS="8xNVIDIA H200"), capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    new = tmp_path / "recipes/gemma-4-31b/h200/on-h200.yaml"
    cand, ref = write_log(tmp_path / "cand.txt", series(scale=1.002)), write_log(tmp_path / "ref.txt", series())
    done = runner("convergence", str(cand), str(ref), "--write", str(new))
    assert done.returncode == 0, done.stderr
    assert "status measured -> verified" in done.stdout
    text = new.read_text()
    assert "# The correctness evidence of" not in text  # the reminder is answered
    assert "\ncorrectness:\n  result: pass\n  convergence:\n    steps: 20\n    result: pass\n" in text
    assert "    note: 'candidate arm: cand.txt; reference arm: ref.txt'\n" in text or \
           "    note: \"candidate arm: cand.txt; reference arm: ref.txt\"\n" in text
    assert "\nstatus: verified\n" in text
    checked = _check(tmp_path)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.slow
def test_write_adds_a_check_to_correctness_without_one(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    text = recipe.read_text()
    start, end = text.index("  convergence:\n"), text.index("  rules: ")
    recipe.write_text(text[:start] + text[end:])
    cand, ref = write_log(tmp_path / "cand.txt", series(scale=1.002)), write_log(tmp_path / "ref.txt", series())
    done = runner("convergence", str(cand), str(ref), "--write", str(recipe), "--note", "both arms on the fixture")
    assert done.returncode == 0, done.stderr
    after = recipe.read_text()
    assert "      the FP32 rounding floor'\n  rules: " in text[:start] + text[end:]
    block = after[after.index("  rules: "):after.index("env:")]
    assert block.endswith("  convergence:\n    steps: 20\n    result: pass\n    correlation: 1.00000\n"
                          f"    final_loss_difference: {abs(series(scale=1.002)[19] - series()[19]):.4f}\n"
                          "    pointwise_failures: 0\n    note: both arms on the fixture\n")
    assert _check(tmp_path).returncode == 0


@pytest.mark.slow
def test_a_failing_check_on_a_verified_recipe_demotes_it(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    before = recipe.read_text()
    cand, ref = write_log(tmp_path / "cand.txt", series(scale=1.2)), write_log(tmp_path / "ref.txt", series())
    dry = runner("convergence", str(cand), str(ref), "--write", str(recipe), "--dry-run")
    assert dry.returncode == 1 and recipe.read_text() == before  # fail, and nothing written
    done = runner("convergence", str(cand), str(ref), "--write", str(recipe))
    assert done.returncode == 1
    assert "correctness.result pass -> fail" in done.stdout and "status verified -> measured" in done.stdout
    after = recipe.read_text()
    assert "\nstatus: measured\n" in after and "\ncorrectness:\n  result: fail\n" in after
    assert "    result: fail\n    correlation: 1.00000\n" in after
    # which criteria failed is written (a 20% offset keeps correlation 1: the figures alone do not say it)
    assert ("    failed_because: 20 of 20 points outside the pointwise tolerance (> 10%); final loss differs by 20.00% "
            "(> 3%)\n") in after
    assert _check(tmp_path).returncode == 0
    # a pass written over it drops the earlier failure's reasons
    same = write_log(tmp_path / "same.txt", series())
    assert runner("convergence", str(same), str(ref), "--write", str(recipe)).returncode == 0
    assert "    failed_because: null\n" in recipe.read_text() and _check(tmp_path).returncode == 0


def test_floor_holds_each_arm_to_the_streams_floor() -> None:
    near = {i: 2.2 + 2.0 * math.exp(-0.3 * i) for i in range(30)}  # ends at 2.2: within 10% of ln 8 (2.287)
    far = {i: v + 0.3 for i, v in near.items()}  # ends at 2.5
    assert compare(near, near, floor=math.log(8)).passed
    c = compare(near, far, floor=math.log(8))
    assert not c.passed and any("the reference's final loss 2.5" in r and "above the stream's floor 2.0794" in r
                                for r in c.reasons)


def test_step0_losses_must_agree_where_both_arms_state_the_same_checkpoint() -> None:
    a = series()
    b = dict(a)
    b[0] = a[0] + 0.05  # one pointwise outlier, within every other criterion
    assert compare(a, b).step0_difference == pytest.approx(0.05)
    c = compare(a, b, same_start=True)
    assert any("step-0 losses differ by 0.0500 (> 0.02)" in r for r in c.reasons)


def test_floor_from_the_command_line_and_its_refusal(tmp_path: Path) -> None:
    cand = write_log(tmp_path / "cand.txt", series(base=2.4, n=30))
    ok = runner("convergence", str(cand), str(cand), "--floor", "markov")
    assert "floor 2.07944" in ok.stdout
    bad = runner("convergence", str(cand), str(cand), "--floor", "nope")
    assert bad.returncode == 2 and "--floor: could not convert" in bad.stderr


@pytest.mark.slow
def test_also_adds_a_further_check_with_what_it_compared_against(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    cand, ref = write_log(tmp_path / "cand.txt", series(scale=1.002)), write_log(tmp_path / "ref.txt", series())
    first = runner("convergence", str(cand), str(ref), "--write", str(recipe), "--also", "--reference-name",
                   "torchtitan 0.2.2, same initial checkpoint", "--implementation", "other")
    assert first.returncode == 0, first.stderr
    second = runner("convergence", str(cand), str(ref), "--write", str(recipe), "--also", "--implementation", "same")
    assert second.returncode == 0, second.stderr
    from generator.load import load_recipe

    corr = load_recipe(recipe).recipe.correctness
    assert [c.implementation.value for c in corr.convergence_also] == ["other", "same"]
    assert corr.convergence_also[0].reference == "torchtitan 0.2.2, same initial checkpoint"
    assert corr.convergence is not None and corr.convergence.steps == 20  # the first check stays as it was
    assert _check(tmp_path).returncode == 0


def test_torchtitans_untimed_first_line_starts_the_loss_curve() -> None:
    # torchtitan prints step 1 (our step 0) without a measurable interval: no figure comes from it, but its loss is
    # the curve's first point, so a convergence pair with a log of ours shares every step and compares the step-0
    # losses. Real log (tests/runner/real_logs/torchtitan_joined_first_line.source.md): steps 1-3 print
    # 8.1996, 8.1709, 8.1121; by hand our steps 0, 1, 2.
    from runner.convergence import losses
    from runner.logs import parse_file

    path = HERE / "real_logs" / "torchtitan_joined_first_line.log"
    log = parse_file(path, None)
    assert [s.step for s in log.steps] == [1, 2] and log.untimed_losses == {0: 8.1996}
    assert losses(path) == {0: 8.1996, 1: 8.1709, 2: 8.1121}
