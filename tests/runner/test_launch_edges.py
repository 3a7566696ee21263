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
