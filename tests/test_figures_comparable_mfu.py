"""MFU that compares (figures.comparable_mfu): beside the registry's 6N MFU, 6N over the BF16 dense peak for every
precision, Megatron's count (the causal attention term included) over the row's peak and over BF16, and the share
the attention term adds to 6N. Hand counts from the catalog's architectures; counts over the committed registry."""

from __future__ import annotations

import pytest

from generator import figures
from generator.registry import Registry


@pytest.fixture(scope="module")
def registry(committed: Registry) -> Registry:
    """The committed registry, loaded once per test process (tests/conftest.py)."""
    return committed


def _recipe(registry: Registry, rid: str):  # noqa: ANN202
    return next(x.recipe for x in registry.recipes if x.id == rid)


def test_llama_3_8b_fp8_row_by_hand(registry: Registry) -> None:
    """Llama-3-8B (32 layers, h 4096, 32 query heads of 128, 8 KV heads, FFN 14336 gated, vocabulary 128256) at
    s 8192 on 8 B200 in FP8, 29,994 tok/s per GPU. Forward multiply-adds per token: per layer projections
    4096x4096 + 2 x 4096x1024 + 4096x4096 = 41,943,040, causal core attention 2 x 4096 x 8192/2 = 33,554,432, FFN
    3 x 4096 x 14336 = 176,160,768; x 32 layers + logits 4096 x 128256 = 8,578,400,256; x 6 = 51,470,401,536 FLOPs.
    Over FP8's 4,500 TFLOP/s: 34.31%; over BF16's 2,250: 68.61%. 6N over BF16: 6 x 8,030,261,248 x 29,994 / 2.25e15
    = 64.23% (its `mfu`, over FP8, is 32.11%). The attention term 6 x 32 x 33,554,432 = 6,442,450,944 is 13.37% of
    6N = 48,181,567,488."""
    recipe = _recipe(registry, "llama-3-8b/b200/mb-25.09-dgx-b200-8gpu-fp8-cs")
    arch = registry.catalog.models["Llama-3-8B"].architecture
    assert figures.model_flops_per_token(arch, 8192) == 51_470_401_536
    assert figures.causal_attention_flops_per_token(arch, 8192) == 6_442_450_944
    got = figures.comparable_mfu(recipe, registry.catalog)
    assert round(got.megatron, 4) == 0.3431 and round(got.megatron_bf16, 4) == 0.6861
    assert round(got.six_n_bf16, 4) == 0.6423 and recipe.result.mfu == 0.3211
    assert round(got.attention_share, 4) == 0.1337


def test_a_lora_row_counts_two_thirds_under_both_conventions(registry: Registry) -> None:
    recipe = _recipe(registry, "llama-3-70b/gb300/mb-26.06-dgx-gb300-8gpu-fp8-cs-lora")
    got = figures.comparable_mfu(recipe, registry.catalog)
    arch = registry.catalog.models["Llama-3-70B"].architecture
    full = figures.model_flops_per_token(arch, 4096) * 7481 / 5000e12
    assert abs(got.megatron - full * 2 / 3) < 1e-12
    assert abs(got.six_n_bf16 - 4 * 70_553_706_496 * 7481 / 2500e12) < 1e-12


def test_sliding_window_layers_count_their_window() -> None:
    """A window w < s: each query sees min(position, w) keys; the mean over s positions is (w(w+1)/2 + (s-w)w)/s."""
    assert figures._attended_keys(8, 4) == (4 * 5 / 2 + 4 * 4) / 8
    assert figures._attended_keys(8, None) == 4 == figures._attended_keys(8, 8)


def test_long_context_rows_where_6n_leaves_out_a_quarter_or_more(registry: Registry) -> None:
    """The attention term adds at least 25% to 6N on 67 committed recipes, up to 4.88x (MPT-125M at 65,536 tokens):
    their 6N MFU understates the work; comparable_mfu's Megatron figure counts it."""
    shares = {}
    for loaded in registry.recipes:
        share = figures.comparable_mfu(loaded.recipe, registry.catalog).attention_share
        if share is not None:
            shares[loaded.id] = share
    big = {rid: v for rid, v in shares.items() if v >= 0.25}
    assert len(big) == 67
    top = max(big, key=big.get)
    assert top == "mpt-125m/a100/foundry-bf16-s65536-8gpu-gbs16" and round(big[top], 2) == 4.88


def test_every_row_has_a_bf16_figure_and_bf16_rows_agree_with_mfu(registry: Registry) -> None:
    for loaded in registry.recipes:
        recipe = loaded.recipe
        got = figures.comparable_mfu(recipe, registry.catalog)
        if recipe.gpu.type in registry.catalog.gpus:
            assert got.six_n_bf16 is not None, loaded.id
        derived = figures.derive(recipe, registry.catalog)
        if derived.peak_precision == "bf16" and derived.mfu is not None:
            assert abs(got.six_n_bf16 - derived.mfu) < 1e-12, loaded.id


def test_a_rounding_sized_gap_is_within_one_unit_of_the_last_decimal() -> None:
    assert figures.within_last_unit(36.1, 36.19, 1) and figures.within_last_unit(36.1, 36.2, 1)
    assert not figures.within_last_unit(36.1, 36.21, 1)
