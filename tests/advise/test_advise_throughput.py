"""The step-time terms (generator/advise/throughput.py) against counts made by hand, on two real rows of the
Ultra-Scale Playbook's sweep: Playbook-Llama-8B (catalog/models/playbook-llama-8b.yaml: 32 layers, h 4096, FFN 14336,
vocabulary 131,072) on 64 H100, TP2 PP4 DP8, micro-batch 1, gradient accumulation 32, global batch 256 x 4,096
tokens; the playbook states 424 tokens/s per GPU at ZeRO-0 and 5,982 at ZeRO-1
(recipes/playbook-llama-8b/h100/pb-64gpu-dp8-tp2-pp4-mbs1-ga32-zero{0,1}.yaml)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from suitehelpers import ROOT

from generator.advise import throughput
from generator.advise.model import COLUMNS, row_features
from generator.advise.observations import Observation, from_recipe
from generator.registry import load_catalog, load_registry

RECIPES = [ROOT / f"recipes/playbook-llama-8b/h100/pb-64gpu-dp8-tp2-pp4-mbs1-ga32-zero{z}.yaml" for z in (0, 1)]


@pytest.fixture(scope="module")
def rows() -> list[Observation]:
    registry = load_registry(ROOT, RECIPES)
    out = [from_recipe(loaded.recipe, loaded.id, registry.catalog) for loaded in registry.recipes]
    assert all(r is not None for r in out)
    return sorted(out, key=lambda r: r.plan.zero)  # type: ignore[return-value, union-attr]


def test_the_rows_read_as_published(rows: list[Observation]) -> None:
    zero0, zero1 = rows
    assert (zero0.plan.tp, zero0.plan.pp, zero0.plan.dp, zero0.plan.micro_batch) == (2, 4, 8, 1)
    assert (zero0.plan.zero, zero1.plan.zero) == (0, 1)
    assert zero0.plan.microbatches == 32  # 256 / (8 x 1): the recipe's gradient accumulation
    assert (zero0.tokens_per_s_per_gpu, zero1.tokens_per_s_per_gpu) == (424.0, 5982.0)
    # Step time: 256 x 4,096 tokens / (424 x 64 GPUs) = 38.64 s at ZeRO-0; / (5,982 x 64) = 2.74 s at ZeRO-1.
    assert throughput.step_seconds_measured(zero0.shape, zero0.plan, 424.0) == pytest.approx(38.641, abs=1e-3)
    assert throughput.step_seconds_measured(zero1.shape, zero1.plan, 5982.0) == pytest.approx(2.7388, abs=1e-4)


def test_tensor_parallel_under_a_pipeline_by_hand(rows: list[Observation]) -> None:
    zero0, _ = rows
    terms = throughput.terms(zero0.shape, zero0.plan, 989e12, 8)
    # 32 micro-batches x 8 layers on a stage (32 / PP4) x (TP2 - 1) / 1000 = 0.256
    assert terms["tp_pp_layer_microbatches"] == pytest.approx(0.256)
    # Without the pipeline (PP1 DP32) the term is 0, and so it is at TP1.
    flat = dataclasses.replace(zero0.plan, pp=1, dp=32)
    assert throughput.terms(zero0.shape, flat, 989e12, 8)["tp_pp_layer_microbatches"] == 0.0
    assert throughput.tp_pp_layer_microbatches(dataclasses.replace(zero0.plan, tp=1, dp=16), 8) == 0.0
    # TP8 PP4 DP2, micro-batch 1: 128 micro-batches x 8 layers x 7 / 1000 = 7.168
    wide = dataclasses.replace(zero0.plan, tp=8, dp=2)
    assert throughput.terms(zero0.shape, wide, 989e12, 8)["tp_pp_layer_microbatches"] == pytest.approx(7.168)


def test_zero0_under_a_pipeline_by_hand(rows: list[Observation]) -> None:
    zero0, zero1 = rows
    # ZeRO-0 with PP4 and DP8: one per micro-batch, 32; ZeRO-1: 0; ZeRO-0 without data parallelism (DP1): 0.
    assert throughput.terms(zero0.shape, zero0.plan, 989e12, 8)["zero0_pp_microbatches"] == 32.0
    assert throughput.terms(zero1.shape, zero1.plan, 989e12, 8)["zero0_pp_microbatches"] == 0.0
    alone = dataclasses.replace(zero0.plan, tp=16, dp=1)
    assert throughput.zero0_pp_microbatches(alone) == 0.0


def test_family_terms_have_one_column_per_framework_family(rows: list[Observation]) -> None:
    zero0, _ = rows
    catalog = load_catalog(ROOT)
    features = row_features(zero0, catalog)
    named = {COLUMNS[i]: features[i] for i in np.flatnonzero(features)}
    # nanotron's row lands in nanotron's columns of the family terms, never in another family's.
    assert named["tp_pp_layer_microbatches:nanotron"] == pytest.approx(0.256)
    assert named["zero0_pp_microbatches:nanotron"] == 32.0
    assert not any(name.startswith(("tp_pp_layer_microbatches:", "zero0_pp_microbatches:"))
                   and not name.endswith(":nanotron") for name in named)
    # The pipeline bubble, shared by every family: compute x (4 - 1) / 32.
    assert named["bubble"] == pytest.approx(named["compute_bf16:nanotron"] * 3 / 32)
