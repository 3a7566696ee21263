"""The launchers at their edges (issue 41, item 2): names with control characters, the variables a recipe's env may
not set, the order of the batch script, and the torchrun report port (a bounded first line; the token never on a
command line)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.launchers.common import check_names
from runner.records import Outcome, Stop
from runner.remeasure import _as_new_name


def _target(tmp_path: Path, rid: str = "m/h100/r", workdir: Path | None = None, new_id: str | None = None) -> object:
    return SimpleNamespace(source=SimpleNamespace(id=rid), recipe_id=new_id or rid, path=tmp_path / "recipes" / f"{rid}.yaml",
                           root=tmp_path, options=SimpleNamespace(workdir=workdir or tmp_path))


@pytest.mark.parametrize("char", ["\n", "\r", "\x1b", "\u202e", "\x00"])
def test_a_launch_stops_on_a_control_character_in_a_name(tmp_path: Path, char: str) -> None:
    for target in (_target(tmp_path, f"m/h100/x{char}y"), _target(tmp_path, new_id=f"m/h100/new{char}"),
                   _target(tmp_path, workdir=tmp_path / f"w{char}")):
        with pytest.raises(Stop) as stopped:
            check_names(target)  # type: ignore[arg-type]
        assert stopped.value.outcome is Outcome.USAGE and "holds the character" in str(stopped.value)
    check_names(_target(tmp_path))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["x\ny", "x\x1b[31m", "x\u202e", "x\ry"])
def test_as_new_refuses_a_control_character_in_its_name(name: str) -> None:
    with pytest.raises(Stop) as stopped:
        _as_new_name(name)
    assert stopped.value.outcome is Outcome.USAGE
    assert _as_new_name("tp2-pp4_v2.yaml") == "tp2-pp4_v2"


# --- the recipe's env --------------------------------------------------------------------------------------------

RESERVED = ["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "HOME", "TMPDIR",
            "CUDA_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK",
            "OPENRECIPES_GPUS", "OPENRECIPES_PYTHON", "SLURM_JOB_ID", "PET_NNODES", "TORCHELASTIC_RUN_ID", "BASH_ENV",
            "IFS"]


@pytest.mark.parametrize("name", RESERVED)
def test_every_launcher_refuses_a_reserved_name(tmp_path: Path, name: str) -> None:
    from runner.launchers import slurm
    from runner.launchers.common import env_refusal

    refusal = env_refusal({"NCCL_DEBUG": "INFO", name: "/tmp/x"})
    assert refusal is not None and refusal.startswith(f"env: {name} is reserved (")
    with pytest.raises(slurm.SlurmError, match=f"env: {name} is reserved"):
        _script(tmp_path, env={name: "/tmp/x"})


def test_ordinary_names_pass() -> None:
    from runner.launchers.common import env_refusal

    assert env_refusal({"CUDA_DEVICE_MAX_CONNECTIONS": "1", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                        "NCCL_DEBUG": "INFO", "PYTHONUNBUFFERED": "1", "HF_HOME": "/data/hf"}) is None


def _script(tmp_path: Path, **kw: object) -> str:
    import sys

    from runner.launchers import slurm

    args: dict = dict(recipe_id="m/h100/r", recipe=tmp_path / "r.yaml", root=tmp_path, run_dir=tmp_path / "run",
                      workdir=tmp_path, nodes=2, env={"A": "1"}, python=sys.executable, gpus_per_node=8)
    return slurm.job_script(**(args | kw))


def test_the_recipes_exports_come_after_the_runners_own_commands(tmp_path: Path) -> None:
    """scontrol, the per-node preflight's srun and the stack comparison run before the recipe's env is exported,
    the run's srun after it."""
    lines = _script(tmp_path, env={"NCCL_DEBUG": "INFO", "CUDA_DEVICE_MAX_CONNECTIONS": "1"}).splitlines()

    def at(start: str) -> int:
        (index,) = [i for i, line in enumerate(lines) if line.startswith(start)]
        return index

    scontrol, exports = at("head=$(scontrol"), [at("export NCCL_DEBUG=INFO"), at("export CUDA_DEVICE_MAX_CONNECTIONS=1")]
    preflight, compare = at('  "$OPENRECIPES_PYTHON" -m runner.launchers.nodes preflight'), \
        at('"$OPENRECIPES_PYTHON" -m runner.launchers.nodes compare')
    run = at('  bash "$run/node.sh"')
    assert scontrol < preflight < compare < min(exports) and max(exports) < run


def test_an_env_value_with_control_characters_is_one_line_that_bash_reads_back(tmp_path: Path) -> None:
    import subprocess

    values = {"A": "x\ntouch /tmp/pwned", "B": "\x1b[31mred\r", "C": "it's \\ $HOME \u202e ok ü", "D": ""}
    script = _script(tmp_path, env=values)
    exports = [line for line in script.splitlines() if line.startswith("export ") and line[7] in "ABCD"]
    assert len(exports) == 4 and not any(c in script for c in "\x1b\r\u202e")
    show = "".join(f'printf "%s\\0" "${name}"; ' for name in values)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c", "\n".join(exports) + "\n" + show],
                          capture_output=True, timeout=30, env={"HOME": "/h"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8").split("\0")[:-1] == list(values.values())


# --- the torchrun report port --------------------------------------------------------------------------------------


def _collector(tmp_path: Path):  # noqa: ANN202
    import io

    from runner.launchers import torchrun

    return torchrun.Collector(tmp_path, io.StringIO(), "127.0.0.1", "s3cret")


def _closed_unheard(sock, timeout: float = 10.0) -> bool:  # noqa: ANN001
    sock.settimeout(timeout)
    try:
        return sock.recv(16) == b""
    except ConnectionResetError:
        return True


def test_a_first_line_past_the_bound_is_closed_unread(tmp_path: Path) -> None:
    """400 MB sent as one line raised the first node from 35 to 439 MB: the line is now read up to MAX_JOIN_LINE
    bytes, then the connection is closed unheard, whatever follows."""
    import socket

    from runner.launchers import torchrun

    collector = _collector(tmp_path)
    try:
        sock = socket.create_connection(("127.0.0.1", collector.port), timeout=10)
        sent = 0
        try:
            chunk = b"x" * 65536
            while sent < 16 * torchrun.MAX_JOIN_LINE:
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass  # closed by the collector while sending: what is wanted
        assert _closed_unheard(sock)
        assert collector.turned_away == 1 and collector.joined == []
        sock.close()
        # a stack with the token and padding that ends past the bound is no joiner either
        padded = ('{"host": "gpu-b", "token": "s3cret", "pad": "' + "y" * torchrun.MAX_JOIN_LINE + '"}\n').encode()
        sock = socket.create_connection(("127.0.0.1", collector.port), timeout=10)
        try:
            sock.sendall(padded)
        except OSError:
            pass
        assert _closed_unheard(sock)
        assert collector.turned_away == 2 and collector.joined == []
        sock.close()
    finally:
        collector.close()


def test_a_first_line_that_never_comes_is_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from runner.launchers import torchrun

    monkeypatch.setattr(torchrun, "JOIN_LINE_TIMEOUT_S", 0.5)
    collector = _collector(tmp_path)
    try:
        sock = socket.create_connection(("127.0.0.1", collector.port), timeout=10)
        sock.sendall(b'{"host": "slow"')  # no end of line, ever
        assert _closed_unheard(sock)
        assert collector.turned_away == 1
        sock.close()
    finally:
        collector.close()


def test_a_token_that_is_not_ascii_is_turned_away(tmp_path: Path) -> None:
    import json
    import socket

    collector = _collector(tmp_path)
    try:
        sock = socket.create_connection(("127.0.0.1", collector.port), timeout=10)
        sock.sendall(json.dumps({"host": "x", "token": "s3crét"}).encode() + b"\n")
        assert _closed_unheard(sock) and collector.turned_away == 1
        sock.close()
    finally:
        collector.close()


def test_the_join_token_comes_from_the_environment_or_a_file_never_argv(tmp_path: Path) -> None:
    from runner.launchers import torchrun

    args = SimpleNamespace(token=None, token_file=None)
    assert torchrun.join_token(args, {torchrun.TOKEN_ENV: "abc123"}) == "abc123"
    secret = tmp_path / "token"
    secret.write_text("def456\n")
    assert torchrun.join_token(SimpleNamespace(token=None, token_file=str(secret)), {}) == "def456"
    with pytest.raises(ValueError, match="not taken on the command line"):
        torchrun.join_token(SimpleNamespace(token="abc123", token_file=None), {torchrun.TOKEN_ENV: "abc123"})
    with pytest.raises(ValueError, match="no token for this run"):
        torchrun.join_token(args, {})
    # the recipe's script on a joining node does not inherit the token
    env = torchrun.node_run_env({"PATH": "/usr/bin", torchrun.TOKEN_ENV: "abc123"}, {"NCCL_DEBUG": "INFO"},
                                {"OPENRECIPES_NNODES": "2"})
    assert env == {"PATH": "/usr/bin", "NCCL_DEBUG": "INFO", "OPENRECIPES_NNODES": "2"}


def test_the_printed_join_command_carries_the_token_in_its_environment(tmp_path: Path) -> None:
    import shlex

    from runner.launchers import torchrun
    from runner.launchers.rendezvous import Rendezvous

    target = SimpleNamespace(options=SimpleNamespace(recipe=Path("recipes/m/h100/r.yaml"), workdir=tmp_path))
    line = torchrun._join_command(target, Rendezvous("gpu01:29500", "openrecipes-1", 2), "gpu01:40000", "f00d")  # type: ignore[arg-type]
    words = shlex.split(line)
    assert words[0] == f"{torchrun.TOKEN_ENV}=f00d" and "f00d" not in " ".join(words[1:])
    assert words[2:5] == ["-m", "runner", "node"]


def test_the_run_script_is_shown_without_sending_control_characters_to_the_terminal() -> None:
    from runner.launchers.common import shown_script

    script = "echo \x1b[2Jcleared\n\tindented\r\necho \u202eevil\n"
    assert shown_script(script.rstrip("\n")) == ["echo \\x1b[2Jcleared", "\tindented\\r", "echo \\u202eevil"]
