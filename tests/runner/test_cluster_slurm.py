"""`remeasure --launcher slurm` against a real Slurm (slurmctld + slurmd on this machine: `bash .ci/slurm.sh start`).

Every job here is a real sbatch submission: the batch script's per-node preflight, then `srun` of the recipe's script,
whose torchrun joins a c10d rendezvous, running the bundled engine on CPU. The tests skip only where Slurm is not
installed or its node is not up; with OPENRECIPES_REQUIRE_SLURM=1 (CI) that is a failure instead.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from generator import figures
from generator.load import load_recipe
from runner.launchers import nodes as node_checks
from runner.launchers import slurm
from tests.engine.support import ROOT, make_registry

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

CPU_TRAIN = ROOT / "tests" / "engine" / "cpu_train.py"
H200 = {"OPENRECIPES_GPUS": "1xNVIDIA H200"}
STEPS = 20  # at 2e-2 the tiny model learns past check's loss-fall rule in 20 steps (4.86 -> 2.68)
# Contributor text in the recipe's env: quotes, a command substitution, backticks, a newline. It must reach the run
# as this exact value, never as shell code.
ODD = "it's $(touch /tmp/openrecipes-pwned) `id` \"q\"\nline2"


def _slurm_down() -> str | None:
    """Why Slurm cannot run a job here, or None when its node is idle."""
    if not shutil.which("sbatch") or not shutil.which("sinfo"):
        return "Slurm is not installed (bash .ci/slurm.sh start installs slurm-wlm and munge and starts them)"
    try:
        state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"sinfo failed: {exc}"
    if "idle" not in state.split() and "mixed" not in state.split():
        return f"no idle Slurm node (sinfo: {state.strip() or 'nothing'}; bash .ci/slurm.sh start)"
    return None


@pytest.fixture(scope="module")
def slurm_up() -> None:
    reason = _slurm_down()
    if reason is None:
        return
    if os.environ.get("OPENRECIPES_REQUIRE_SLURM") == "1":
        pytest.fail(f"OPENRECIPES_REQUIRE_SLURM=1 but {reason}")
    pytest.skip(reason)


def _env() -> dict[str, str]:
    return dict(os.environ) | {"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "PYTHONWARNINGS": "ignore"}


def _recipe(tmp: Path, run: str | None = None) -> Path:
    recipe = make_registry(tmp, steps=STEPS, precision="fp32")
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["run"] = run or (
        'printf "ODD=[%s]\\n" "$ODD"\n'
        f"torchrun --standalone --nproc-per-node 1 {CPU_TRAIN.relative_to(ROOT)} train {recipe} "
        "--cpu --no-distributed-optimizer\n")
    data["env"] = {"OMP_NUM_THREADS": "1", "ODD": ODD}
    data["result"]["window"] = [2, STEPS - 1]
    data["workload"]["schedule"]["peak_lr"] = 2e-2
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return recipe


def _remeasure(recipe: Path, root: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--launcher", "slurm", "--root", str(root),
         "--workdir", str(ROOT), "--poll", "0.5", *args],
        cwd=ROOT, env=_env() | (env if env is not None else H200), capture_output=True, text=True, timeout=timeout)


def _job_fields(job: str) -> dict[str, str]:
    out = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True, timeout=20).stdout
    return dict(slurm._FIELD.findall(out))


def _jobs_named(name: str) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True, text=True, timeout=20).stdout
    return out.split()


@pytest.mark.usefixtures("slurm_up")
def test_dry_run_prints_the_batch_script_and_submits_nothing(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    proc = _remeasure(recipe, tmp_path, "--dry-run", "--partition", "debug", "--sbatch=--time=00:05:00")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "sbatch --parsable --partition=debug --time=00:05:00 job.sbatch" in out
    script = out.split("job.sbatch:\n", 1)[1].split("run.sh (the recipe's run):", 1)[0]
    for line in ("#!/bin/bash", "#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=1", "#SBATCH --output=job.out",
                 "#SBATCH --gpus-per-node=1", "#SBATCH --exclusive",
                 'srun --ntasks-per-node=1 --cpus-per-task="$SLURM_CPUS_ON_NODE" --kill-on-bad-exit=1 '
                 '--output="$run/node-%N.log" \\\n  bash "$run/node.sh"'):
        assert line in script, script
    assert "-m runner.launchers.nodes preflight" in script and "-m runner.launchers.nodes compare" in script
    # The recipe's env is exported with its value quoted on one line (the newline as bash's \x0a), after the
    # runner's own commands, and its run text is not in the batch script.
    assert "export ODD=$'it\\'s $(touch /tmp/openrecipes-pwned) `id` \"q\"\\x0aline2'\n" in script
    assert script.index("export ODD=") > script.index("-m runner.launchers.nodes compare")
    assert "torchrun" not in script.split("# The recipe's env")[1].split("# 2. The run")[0]
    assert "cpu_train.py" not in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    # No job folder written (the runner's lock lives under .openrecipes-runs too), no job queued.
    assert not list(tmp_path.rglob("job.sbatch")) and not _jobs_named(slurm.job_name("tiny-llama-test/h200/test"))
    assert "nothing submitted" in out and not recipe.with_name("test.evidence.json").exists()


@pytest.mark.usefixtures("slurm_up")
def test_a_slurm_job_trains_the_engine_and_writes_the_figures(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    before = recipe.read_text(encoding="utf-8")
    proc = _remeasure(recipe, tmp_path, "--yes", "--json", "--partition", "debug", "--sbatch=--time=00:05:00")
    assert proc.returncode == 0, proc.stderr[-5000:]
    report = json.loads(proc.stdout)
    assert report["wrote"] and report["source"] == "launch" and report["steps"] == STEPS
    assert report["window"] == [2, STEPS - 1]
    assert "RUNNING on " in proc.stderr and "COMPLETED" in proc.stderr  # the job's state, shown as it went
    assert proc.stderr.count("openrecipes-step ") == STEPS  # the training progress, streamed from the node log

    after = load_recipe(recipe).recipe
    assert after.result.measured is not None and after.result.steps_per_run == STEPS
    assert before.split("result:")[0] == recipe.read_text(encoding="utf-8").split("result:")[0]
    evidence = json.loads(recipe.with_name("test.evidence.json").read_text(encoding="utf-8"))
    steps = evidence["steps"]
    assert [s["step"] for s in steps] == list(range(STEPS))
    tps = figures.tokens_per_s_per_gpu([s["time_s"] for s in steps], (2, STEPS - 1), 4, 32, 1)
    assert tps == pytest.approx(report["tokens_per_s_per_gpu"], rel=1e-9)
    assert after.result.tokens_per_s_per_gpu == pytest.approx(tps, rel=1e-3)
    # The job's run time is what the GPU-hours count.
    assert evidence["runs"][0]["wall_seconds"] >= 1 and after.result.gpu_hours_note.startswith("GPUs x the median "
                                                                                               "run's Slurm job")
    launcher = evidence["launcher"]
    assert launcher["name"] == "slurm" and launcher["nodes"] == 1 and len(launcher["jobs"]) == 1
    assert launcher["rendezvous"] == "c10d on the first node"
    assert evidence["nodes"] == [evidence["environment"]]  # every node's stack; rank 0's node is the environment
    assert evidence["nodes"][0]["gpu_name"] == "NVIDIA H200" and evidence["nodes"][0]["gpu_count"] == "1"
    assert evidence["command"].startswith("sbatch --nodes=1 --ntasks-per-node=1 --gpus-per-node=1 --exclusive "
                                          "--partition=debug --time=00:05:00")
    assert str(tmp_path) not in json.dumps(evidence)  # no folder of the measuring machine

    run_dir = next((tmp_path / ".openrecipes-runs").rglob("job.sbatch")).parent
    node_log = (run_dir / f"node-{node_checks.hostname()}.log").read_text(encoding="utf-8")
    assert f"ODD=[{ODD}]" in node_log and "openrecipes-rendezvous: c10d at" in node_log
    assert not Path("/tmp/openrecipes-pwned").exists()
    fields = _job_fields(launcher["jobs"][0])  # the pass-through options reached Slurm
    assert fields["Partition"] == "debug" and fields["TimeLimit"] == "00:05:00" and fields["NumNodes"] == "1"


@pytest.mark.usefixtures("slurm_up")
def test_a_node_with_the_wrong_gpus_fails_the_job_before_training(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    before = recipe.read_bytes()
    proc = _remeasure(recipe, tmp_path, "--yes", env={"OPENRECIPES_GPUS": "1xNVIDIA H100 80GB HBM3"})
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert f"node {node_checks.hostname()}: " in proc.stderr
    assert "is a recipe for H200, but this machine has 1 x H100" in proc.stderr
    assert "nothing trained, nothing written" in proc.stderr and "openrecipes-step" not in proc.stdout
    assert recipe.read_bytes() == before and not recipe.with_name("test.evidence.json").exists()


@pytest.mark.usefixtures("slurm_up")
def test_timeout_cancels_the_job_and_writes_nothing(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path, run="echo started\nsleep 120\n")
    before = recipe.read_bytes()
    started = time.monotonic()
    proc = _remeasure(recipe, tmp_path, "--yes", "--timeout", "4")
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert time.monotonic() - started < 60
    assert "passed --timeout 4 s" in proc.stderr and "cancelled (scancel, now CANCELLED)" in proc.stderr
    assert recipe.read_bytes() == before and not recipe.with_name("test.evidence.json").exists()
    assert not _jobs_named(slurm.job_name("tiny-llama-test/h200/test"))


@pytest.mark.usefixtures("slurm_up")
def test_ctrl_c_cancels_the_job_and_writes_nothing(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path, run="echo started\nsleep 120\n")
    before = recipe.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--launcher", "slurm", "--yes", "--root",
         str(tmp_path), "--workdir", str(ROOT), "--poll", "0.5"],
        cwd=ROOT, env=_env() | H200, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    watchdog = threading.Timer(180, proc.kill)  # a job that never starts fails the test instead of hanging it
    watchdog.start()
    seen = []
    try:
        for line in proc.stdout:  # wait until the job runs (its first output line arrives)
            seen.append(line)
            if line.strip() == "started":
                break
    finally:
        watchdog.cancel()
    assert seen and seen[-1].strip() == "started", "".join(seen)[-3000:]
    job = next(line.split()[1].rstrip(":") for line in seen if line.startswith("job "))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"interrupted: job {job} cancelled (scancel, now CANCELLED); nothing written" in err
    assert _job_fields(job).get("JobState") == "CANCELLED"
    assert recipe.read_bytes() == before and not recipe.with_name("test.evidence.json").exists()


def test_nodes_whose_stacks_differ_are_named_with_the_difference() -> None:
    """The comparison the batch script runs after every node's preflight (one Slurm node here, so two captured
    stacks stand for two nodes: the second with another PyTorch)."""
    gpus = __import__("runner.preflight", fromlist=["x"]).declared_gpus("1xNVIDIA H200")
    first = node_checks.node_stack(gpus) | {node_checks.HOST_KEY: "gpu-a"}
    second = first | {node_checks.HOST_KEY: "gpu-b", "pytorch": "2.0.0"}
    assert node_checks.differences([first, dict(first)]) == []
    assert node_checks.differences([first, second]) == [
        f"node gpu-b differs from node gpu-a: pytorch 2.0.0 (on gpu-a: {first['pytorch']})"]


def test_sbatch_options_the_runner_sets_and_bad_env_names_are_refused() -> None:
    for option in ("--nodes=4", "-N4", "--output=x", "--wrap=id", "partition"):
        with pytest.raises(slurm.SlurmError):
            slurm.check_sbatch_options([option])
    assert slurm.check_sbatch_options(["--partition=gpu", "--account=proj"]) == ["--partition=gpu", "--account=proj"]
    with pytest.raises(slurm.SlurmError, match="not a shell variable name"):
        slurm.check_env_names({"A;rm -rf /": "1"})
