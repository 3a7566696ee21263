"""A recipe whose layout.recompute is null (not stated by its source) is refused by the engine in one located line:
the engine must not read "not stated" as "no recompute" (a recipe that recomputes would be timed without it)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from runner.engine.cli import EXIT_CANNOT_TRAIN, add_parser, plan_and_options
from runner.engine.plan import EngineError, make_engine_plan

ROOT = Path(__file__).resolve().parents[2]
ENGINE_RECIPE = ROOT / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"
STATED = "  recompute:\n    granularity: none\n    method: null\n    num_layers: null\n"


def unstated(tmp: Path) -> Path:
    """The committed 1B engine recipe in a copied registry, its recompute block replaced by `recompute: null`."""
    (tmp / "catalog").symlink_to(ROOT / "catalog")
    text = ENGINE_RECIPE.read_text(encoding="utf-8")
    assert text.count(STATED) == 1
    path = tmp / "recipes" / "llama-3.2-1b" / "h200" / "engine.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text.replace(STATED, "  recompute: null\n"), encoding="utf-8")
    return path


def expected_location(path: Path) -> str:
    """line:col of the null, counted by hand from the file: the `recompute:` line, the column after 'recompute: '."""
    lines = path.read_text(encoding="utf-8").splitlines()
    line = lines.index("  recompute: null") + 1
    return f"{line}:{len('  recompute: ') + 1}"


def test_a_null_recompute_is_refused_where_it_is_written(tmp_path: Path) -> None:
    recipe = unstated(tmp_path)
    with pytest.raises(EngineError) as err:
        make_engine_plan(recipe)
    assert err.value.field == "layout.recompute"
    assert str(err.value).startswith(f"{recipe}:{expected_location(recipe)}: "
                                     "layout.recompute: not stated (null)")
    assert "\n" not in str(err.value)


def test_an_explicit_override_plans_without_the_stated_block(tmp_path: Path) -> None:
    plan = make_engine_plan(unstated(tmp_path), recompute="none")
    assert plan.recompute_granularity == "none" and plan.recompute_modules == ()


def test_the_cli_prints_the_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m runner.engine")
    add_parser(parser.add_subparsers(dest="command", required=True))
    recipe = unstated(tmp_path)
    assert plan_and_options(parser.parse_args(["train", str(recipe)])) == EXIT_CANNOT_TRAIN
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"engine.yaml:{expected_location(recipe)}: layout.recompute: not stated" in err
