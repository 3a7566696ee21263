"""The Slurm job that holds on a cluster: it asks for the recipe's GPUs per node and the node's CPUs (exclusive
unless told otherwise), no recipe text reaches it unquoted, reserved variables and reserved sbatch options are
refused as sbatch reads them, and a torchrun behind exec/env/timeout/nohup joins the rendezvous while one under srun
or by its path is refused. The scripts are checked by the real sbatch of `.ci/slurm.sh start` (`--test-only`: the
controller answers whether it would place them, nothing runs), including a 2-node request."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runner.launchers import slurm
from runner.launchers.rendezvous import WRAPPER, launches_torchrun, torchrun_problems


def _script(tmp: Path, recipe_id: str = "m/h200/r", nodes: int = 1, **kw: object) -> str:
    args: dict = dict(recipe_id=recipe_id, recipe=tmp / "r.yaml", root=tmp, run_dir=tmp / "run", workdir=tmp,
                      nodes=nodes, env={"A": "1"}, python=sys.executable, gpus_per_node=8)
    return slurm.job_script(**(args | kw))


def test_the_job_asks_for_gpus_cpus_and_whole_nodes(tmp_path: Path) -> None:
    script = _script(tmp_path)
    assert "#SBATCH --gpus-per-node=8\n#SBATCH --exclusive\n" in script
    assert script.count('--cpus-per-task="$SLURM_CPUS_ON_NODE"') == 2  # preflight and run: the node's CPUs
    shared = _script(tmp_path, exclusive=False, cpus_per_node=32)
    assert "--exclusive" not in shared and "#SBATCH --cpus-per-task=32" in shared
    assert shared.count("--cpus-per-task=32 ") == 2
    with pytest.raises(slurm.SlurmError, match="--no-exclusive shares the nodes: say how many CPUs"):
        _script(tmp_path, exclusive=False)


@pytest.mark.parametrize("field", ["recipe_id", "recipe", "root", "run_dir", "workdir", "python"])
@pytest.mark.parametrize("char", ["\n", "\r", "\x1b", "\u202e", "\x7f"])
def test_a_control_character_in_a_name_or_path_writes_no_script(tmp_path: Path, field: str, char: str) -> None:
    """A newline in the recipe's name (or any path the script holds) is refused before a script exists: quoted it
    would not run, but the script a reader checks would show `touch ...` as a line of its own."""
    value = f"m/h200/x{char}touch /tmp/openrecipes-pwned"
    given = value if field in ("recipe_id", "python") else tmp_path / value
    with pytest.raises(slurm.SlurmError, match="holds the character .*: no control, line-separator or bidi"):
        _script(tmp_path, **{field: given})


def test_the_comment_and_job_name_stay_on_their_lines(tmp_path: Path) -> None:
    script = _script(tmp_path, recipe_id="m/h200/x;$(touch y) z")
    assert "#SBATCH --job-name=openrecipes-m-h200-x-touch-y-z\n" in script
    assert "# OpenRecipes: re-measure m/h200/x;$(touch y) z," in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


@pytest.mark.parametrize("option", ["--time=1\ntouch x", "--comment=a\rb", "--partition=gpu\x1b[2J", "-p\x00",
                                    "--comment=\u2028", "--qos=\u202ehigh"])
def test_a_control_character_in_an_sbatch_option_is_refused(option: str) -> None:
    with pytest.raises(slurm.SlurmError, match="holds the character"):
        slurm.check_sbatch_options([option])


@pytest.mark.parametrize("name", ["OPENRECIPES_PYTHON", "SLURM_JOB_NUM_NODES", "BASH_ENV", "SRUN_CPUS_PER_TASK",
                                  "LD_PRELOAD", "BASH_FUNC_torchrun%%"])
def test_reserved_variables_in_env_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(slurm.SlurmError, match=r"is reserved|not a shell variable name"):
        _script(tmp_path, env={name: "x"})


@pytest.mark.parametrize("option,read_as", [
    ("--out=x", "--output"), ("--nod=2", "--nodes"), ("--ntasks-per=2", "--ntasks-per-node"), ("-vN2", "-N"),
    ("-vvn4", "-n"), ("-c8", "-c"), ("--gpus-per-node=4", "--gpus-per-node"), ("--exp=ALL", "--export"),
    ("-D/tmp", "-D")])
def test_reserved_sbatch_options_are_refused_as_sbatch_reads_them(option: str, read_as: str) -> None:
    with pytest.raises(slurm.SlurmError, match=f"sbatch reads it as [^,]*{read_as}"):
        slurm.check_sbatch_options([option])


def test_other_sbatch_options_pass_as_given() -> None:
    given = ["--partition=gpu", "--account=proj", "--time=01:00:00", "-p", "debug", "-vt10", "--qos=high",
             "--ntasks-per-core=1", "--exclusive=user"]
    assert slurm.check_sbatch_options(given) == given
    with pytest.raises(slurm.SlurmError, match="-y is not an sbatch option"):
        slurm.check_sbatch_options(["-y"])


@pytest.mark.parametrize("run", ["exec torchrun --standalone --nproc-per-node 8 train.py",
                                 "env NCCL_DEBUG=INFO torchrun --nproc-per-node 8 train.py",
                                 "timeout 3600 torchrun --nproc-per-node 8 train.py",
                                 "nohup torchrun --nproc-per-node 8 train.py"])
def test_torchrun_behind_a_wrapper_is_found(run: str) -> None:
    assert launches_torchrun(run) and torchrun_problems(run) == []


@pytest.mark.parametrize("run,why", [("cd x && srun --ntasks=2 torchrun train.py", "started by srun"),
                                     ("/opt/venv/bin/torchrun train.py", "called by its path"),
                                     ("python -m torch.distributed.run train.py", "torch.distributed.run")])
def test_torchrun_that_would_not_join_is_refused_naming_the_line(run: str, why: str) -> None:
    problems = torchrun_problems("set -e\n" + run)
    assert problems and problems[0].startswith("run line 2: ") and why in problems[0]


def test_the_wrapper_puts_torchrun_first_on_path_for_exec_env_and_timeout(tmp_path: Path) -> None:
    """node.sh run for real: a run.sh that starts torchrun through exec, env and timeout reaches the runner's
    rendezvous entry point each time (here refused for want of a rendezvous: that is the runner's own message)."""
    (tmp_path / "node.sh").write_text(WRAPPER)
    (tmp_path / "run.sh").write_text("env A=1 torchrun --version 2>&1 | head -1\n"
                                     "timeout 20 torchrun --version 2>&1 | head -1\n"
                                     "exec torchrun --version\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENRECIPES_")}
    env |= {"OPENRECIPES_PYTHON": sys.executable, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(["bash", str(tmp_path / "node.sh")], env=env, capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert out.count("OPENRECIPES_NNODES, OPENRECIPES_RDZV_ENDPOINT, OPENRECIPES_RDZV_ID not set") == 3, out


def _sbatch_up() -> str | None:
    if shutil.which("sbatch") is None:
        return "Slurm is not installed (bash .ci/slurm.sh start)"
    state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20).stdout
    return None if "idle" in state or "mixed" in state or "alloc" in state else f"no Slurm node up ({state.strip()})"


@pytest.fixture()
def sbatch_up() -> None:
    reason = _sbatch_up()
    if reason:
        if os.environ.get("OPENRECIPES_REQUIRE_SLURM") == "1":
            pytest.fail(f"OPENRECIPES_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)


def _test_only(script: str, tmp: Path, *options: str) -> subprocess.CompletedProcess[str]:
    path = tmp / "job.sbatch"
    path.write_text(script)
    return subprocess.run(["sbatch", "--test-only", *options, str(path)], cwd=tmp, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.usefixtures("sbatch_up")
def test_the_real_sbatch_places_the_one_node_job_and_refuses_two_nodes_here(tmp_path: Path) -> None:
    # The CI node has 8 (stand-in) GPUs: one node of 1 GPU, exclusive, is placed.
    one = _test_only(_script(tmp_path, gpus_per_node=1), tmp_path)
    assert one.returncode == 0 and "to start at" in one.stderr, one.stderr
    # 2 nodes: the request reaches the controller as written (--nodes=2 --gpus-per-node=8 --exclusive) and is
    # refused for want of a second node, not for a malformed script.
    two = _test_only(_script(tmp_path, nodes=2, gpus_per_node=8), tmp_path)
    assert two.returncode != 0 and "Requested node configuration is not available" in two.stderr, two.stderr
    # 9 GPUs on a node of 8: refused by the controller too (the job asks for what the recipe needs).
    nine = _test_only(_script(tmp_path, gpus_per_node=9), tmp_path)
    assert nine.returncode != 0, nine.stderr
