"""Facets as table columns and filters: training kind, precision, sequence length, global batch, active and total
parameters, GPU type and count, publication, status and correctness evidence; sparse columns left out."""

from __future__ import annotations

import re

import pytest
from sitehelpers import make_registry, synthetic

from generator.frameworks import FRAMEWORKS, NOT_NAMED, framework_name
from generator.registry import Registry, load_registry
from generator.site import formatting as fmt
from generator.site import render_site, tables, views


def _recipe(name: str, training: str, seq: int, gbs: int) -> dict:
    data = synthetic(1000.0, name=name)
    data["workload"]["training"] = training
    data["workload"]["row_tokens"] = seq
    data["workload"]["global_batch"] = gbs
    return data


RECIPES = {"gemma-4-31b/h100/long": _recipe("long", "pre-training", 8192, 512),
           "gemma-4-31b/h100/short": _recipe("short", "sft", 4096, 128)}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    registry = load_registry(make_registry(tmp_path_factory.mktemp("facets"), RECIPES))
    return registry, render_site(registry)


def _row(content: str, rid: str) -> str:
    return re.search(rf'<tr data-or-recipe="{re.escape(rid)}".*?</tr>', content, re.S).group(0)


def _cell(row: str, col: str) -> str:
    return re.search(rf'data-or-col="{col}"[^>]*>(.*?)</td>', row, re.S).group(1)


def test_rows_carry_every_facet_as_a_cell_or_a_filter_value(built) -> None:  # noqa: ANN001
    registry, pages = built
    content = pages["recipes.md"].content
    long, short = _row(content, "gemma-4-31b/h100/long"), _row(content, "gemma-4-31b/h100/short")
    assert (_cell(long, "seq"), _cell(short, "seq")) == ("8k", "4k")
    assert 'data-global_batch="512"' in long and 'data-global_batch="128"' in short
    assert (_cell(long, "training"), _cell(short, "training")) == ("pre-training", "SFT")
    n = next(x for x in registry.recipes if x.id == "gemma-4-31b/h100/long").recipe.result.active_params.count
    assert _cell(long, "params") == fmt.params(n) and f'data-params_size="{fmt.params(n)}"' in long
    # the reference has component tests and a convergence check; the synthetic rows none
    ref = _row(content, "gemma-4-31b/h100/attune-tp2-pp4-split13")
    assert _cell(ref, "evidence") == "convergence + tests"
    assert _cell(long, "evidence") == views.EVIDENCE_NONE == "none published"
    filters = dict(re.findall(r'<label>([^<]+) <select data-or-filter="([a-z_]+)"', content))
    assert set(filters.values()) >= {"model", "gpu_type", "gpu_count", "status", "origin", "training", "precision",
                                     "seq", "global_batch", "params_size", "params_total", "evidence"}


def test_a_column_empty_in_nearly_every_row_is_left_out(built) -> None:  # noqa: ANN001
    _, pages = built
    content = pages["recipes.md"].content
    # three rows, one (the reference) with a step-time CV and a date: 1 in 3 is not sparse, both columns stay
    assert 'data-or-sort="cv"' in content and 'data-or-sort="measured"' in content


def test_formatting_of_sizes() -> None:
    assert fmt.params(70_553_706_496) == "70.6B" and fmt.params(124_000_000) == "124M"
    assert fmt.sequence(8192) == "8k" and fmt.sequence(4000) == "4,000"


def test_moe_params_say_active_of_total(committed: Registry) -> None:
    registry = committed
    moe = next(x for x in registry.recipes if x.recipe.model == "Qwen3-30B-A3B")
    cell = tables.params_cell(moe, registry.catalog)
    total = registry.catalog.models["Qwen3-30B-A3B"].total_params
    assert total and cell["params"] == f"{fmt.params(moe.recipe.result.active_params.count)} of {fmt.params(total)}"


def test_filter_values_differing_only_in_case_keep_one_order_in_every_process() -> None:
    """Sources spell a framework "PyTorch" and "Pytorch", "NeMo" and "nemo": the filter lists them side by side in
    one order, whatever the process's hash seed (a set ordered by str.lower alone gave two builds of one registry two
    recipes pages); so do global batches that are not a number."""
    import subprocess
    import sys

    from sitehelpers import ROOT

    script = ("from generator.site import tables; "
              "rows = [dict(model='m', gpu_type=g, gpu_count='8', status='s', origin='o', framework=f, training='t', "
              "precision='p', seq='4k', global_batch=b, params_size='8B', params_total='8B', evidence='e', "
              "peak_memory='not stated') "
              "for f, g, b in (('Pytorch', 'h100', ''), ('PyTorch', 'H100', '?'), "
              "('nemo', 'B200', 'unstated'), ('NeMo', 'b200', '512'))]; "
              "print([o['options'] for o in tables.filter_options(rows) "
              "if o['key'] in ('framework', 'gpu_type', 'global_batch')])")
    seen = {subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in range(6)}
    assert seen == {"[['B200', 'b200', 'H100', 'h100'], ['NeMo', 'nemo', 'PyTorch', 'Pytorch'], "
                    "['512', '', '?', 'unstated']]\n"}, seen


def test_framework_filter_value_is_the_framework_the_stated_text_names(committed: Registry) -> None:
    """A framework is read from the stated text (generator.frameworks): case variants are one value, MLPerf's list of
    a system's frameworks is its LLM framework (NeMo before the PyTorch it is built on), a platform alone is not a
    framework. The filter offers only those names."""
    assert framework_name("PyTorch, NeMo Framework NVIDIA Release 25.04") == "NeMo"
    assert framework_name("DGL, Merlin HugeCTR NVIDIA Release 25.03; PyTorch, NeMo Framework") == "NeMo"
    assert framework_name("NGC Pytorch 24.09, NGC Hugectr 24.06") == "PyTorch"
    assert framework_name("NVIDIA PyTorch/MxNeti/DGL") == "PyTorch"
    assert framework_name("MXNet NVIDIA Release 24.04 or PyTorch NVIDIA Release 24.04") == "PyTorch"
    assert {framework_name(t) for t in ("nemo (NeMo 24.09 container)", "NVIDIA NEMO", "NVIDIA Nemo 24.09")} == {"NeMo"}
    assert framework_name("megatron-bridge (NeMo 26.04 container)") == "Megatron-Bridge"
    assert framework_name("nemo-automodel (PyTorch FSDP2)") == "NeMo AutoModel"
    assert framework_name("NeMo 2.1.0, Megatron-LM, PyTorch NVIDIA Release 25.09") == "NeMo"
    assert framework_name("Megatron-LM core_r0.12.0") == "Megatron-LM"
    assert framework_name("MaxText (JAX 0.4.35)") == "JAX/MaxText"
    assert framework_name("openrecipes-engine 0.1.0 (runner/engine)") == "OpenRecipes engine"
    assert framework_name("miles 0.1.0 (radixark/miles commit 78527b91, a slime fork)") == "miles"
    assert framework_name("ROCm 6.4.0-47") == framework_name("DGL NVIDIA Release 24.09") == NOT_NAMED
    names = {framework_name(x.recipe.stack.framework) for x in committed.recipes}
    assert names <= {name for name, _ in FRAMEWORKS} | {NOT_NAMED}
    assert {"NeMo", "PyTorch", "Megatron-Bridge", "torchtitan", "nanotron"} <= names
    figures_of = views.figures_by_id(committed.recipes, committed.catalog)
    rows = [tables.table_row(x, figures_of[x.id], committed.catalog, "recipes.md") for x in committed.recipes]
    offered = next(o["options"] for o in tables.filter_options(rows) if o["key"] == "framework")
    assert sorted(offered, key=str.lower) == sorted(names, key=str.lower)
    assert len({o.lower() for o in offered}) == len(offered)  # no two that differ only in case


def test_a_price_field_shows_the_price_to_its_stated_decimals() -> None:
    assert fmt.price_text(27.44705 / 8, 27.44705) == "3.43088"
    assert fmt.price_text(55.04 / 8, 55.04) == "6.88"
    assert fmt.price_text(42.0 / 4, 42.0) == "10.5"
    assert fmt.price_text(98.32 / 8, 98.32) == "12.29"
    assert fmt.price_text(40.0 / 8, 40.0) == "5"


def test_peak_memory_bands() -> None:
    """The all-recipes filter's peak-memory bands say which figure they read: reserved GiB where stated, else
    allocated; else a publication's GB figure of unstated kind (the playbook's), in bands of its own; 'not stated'
    without."""
    from types import SimpleNamespace

    from generator.site import views

    def band(allocated, reserved, stated=None):
        peak = None if allocated is None and reserved is None and stated is None else SimpleNamespace(
            allocated_gib=allocated, reserved_gib=reserved, stated_gb=stated)
        return views.peak_memory_band(SimpleNamespace(recipe=SimpleNamespace(result=SimpleNamespace(peak_memory=peak))))

    known = " GiB (reserved, else allocated)"
    assert band(None, None) == "not stated"
    assert band(27.7, 27.73) == "up to 40" + known and band(39.0, 40.0) == "up to 40" + known
    assert band(30.0, 40.5) == "40-80" + known and band(66.4, None) == "40-80" + known
    assert band(None, 120.0) == "80-140" + known and band(None, 141.5) == "over 140" + known
    assert band(None, None, 11.9) == "up to 40 GB (as published, kind not stated)"
    assert band(None, None, 69.8) == "40-80 GB (as published, kind not stated)"
