"""The pending multi-GPU engine recipes (runner/engine/pending/): everything about them that needs no measurement.

Each loads through generator's models, passes the engine's plan and every check of generator/check.py except the
ones that ask for measured figures, names the file it lives in, and launches as many ranks as its layout has; the
runner's preflight refuses it on one H200 and takes it on its own GPU count.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from pathlib import Path

import pytest

from generator.catalog import Catalog
from generator.check import check_recipe
from generator.load import load_recipe
from generator.registry import load_catalog
from runner.engine.plan import make_engine_plan
from runner.preflight import Gpus, Refusal, check_entry, check_env, check_gpus
from tests.engine.support import ROOT

PENDING = ROOT / "runner" / "engine" / "pending"
RECIPES = sorted(PENDING.rglob("*.yaml"))
# What `python -m runner remeasure` writes into result (runner.measure.Measurement.result_fields): a pending recipe
# may lack exactly these, and check.py's only complaint about it may be that a measured recipe needs them.
MEASURED_FIELDS = {"tokens_per_s_per_gpu", "usd_per_million_tokens", "step_time_cv_percent", "mfu", "measured",
                   "steps_per_run", "window", "window_tokens", "runs", "gpu_hours"}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(ROOT)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_layouts_issue_4_names_are_all_pending() -> None:
    layouts = set()
    for path in RECIPES:
        lay = load_recipe(path).recipe.layout
        split = (lay.layer_split.first, lay.layer_split.last) if lay.layer_split else None
        layouts.add((lay.tp, lay.pp, lay.dp, lay.sequence_parallel, split is not None and split[0] != split[1]))
    assert {(2, 1, 1, False, False), (2, 1, 1, True, False), (1, 2, 1, False, True), (1, 1, 2, False, False),
            (2, 2, 2, True, True)} <= layouts
    assert {load_recipe(p).recipe.gpu.count for p in RECIPES} == {2, 4, 8}


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.relative_to(PENDING).with_suffix("").as_posix())
def test_pending_recipe_is_complete_but_its_figures(path: Path, catalog: Catalog) -> None:
    loaded = load_recipe(path, _rel(path), PENDING)
    recipe = loaded.recipe
    assert loaded.id == path.relative_to(PENDING).with_suffix("").as_posix()  # its id under recipes/ to be

    problems = check_recipe(loaded, catalog, dt.date.today())
    for p in problems:
        field = p.field.removeprefix("result.")
        assert field in MEASURED_FIELDS and p.message.startswith(f"a measured recipe needs result.{field}"), str(p)
    assert recipe.result.measured is None  # never measured: remeasure compares with no recorded figure
    assert recipe.status.value == "measured" and recipe.publication is None

    plan = make_engine_plan(path, ROOT)
    assert plan.world_size == recipe.gpu.count == recipe.gpu.per_node
    assert plan.precision == "bf16" and plan.steps == recipe.result.steps_per_run
    assert plan.num_microbatches * plan.rows_per_microbatch * plan.dp == recipe.workload.global_batch
    if plan.pp > 1:
        assert plan.first_stage_layers + plan.last_stage_layers == plan.arch.layers
    assert catalog.models[recipe.model].active_params.count == recipe.result.active_params.count

    # The run: torchrun with one rank per GPU, the engine's train on this very file, NVLink multicast off.
    words = shlex.split(recipe.run)
    assert words[:2] == ["torchrun", "--standalone"] and "-m" in words
    assert words[words.index("--nproc-per-node") + 1] == str(recipe.gpu.count)
    assert words[words.index("-m") + 1:] == ["runner", "train", _rel(path)]
    assert recipe.env == {"NCCL_NVLS_ENABLE": "0"}
    assert path.read_text(encoding="utf-8").splitlines()[0] == f"# {_rel(path)}"
    assert re.search(r"\bPending\b", recipe.notes or "")


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.relative_to(PENDING).with_suffix("").as_posix())
def test_preflight_refuses_one_h200_and_takes_the_recipes_count(path: Path, catalog: Catalog) -> None:
    recipe = load_recipe(path).recipe
    with pytest.raises(Refusal) as refused:
        check_gpus(recipe, catalog, Gpus(["NVIDIA H200"], "test"), _rel(path))
    assert f"needs {recipe.gpu.count} x H200" in str(refused.value)
    check_gpus(recipe, catalog, Gpus(["NVIDIA H200"] * recipe.gpu.count, "test"), _rel(path))
    check_env(recipe, _rel(path), {})  # the script reads no variable the caller must set
    check_entry(recipe, _rel(path), ROOT)  # `-m runner` is importable here


def test_the_published_registry_does_not_hold_them() -> None:
    ids = {p.relative_to(PENDING).as_posix() for p in RECIPES}
    published = {p.relative_to(ROOT / "recipes").as_posix() for p in (ROOT / "recipes").rglob("*.yaml")}
    assert ids and not ids & published
