"""The catalog entries the importer needs: parameter counts against the publishers' figures, GPU peaks."""

from pathlib import Path

import pytest

from generator import figures
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]

# (active, total) in billions as the model publishers state them; the registry's counts include the embedding
# and output layers (GPT-OSS's 5.13B active excludes the 0.58B input embedding).
STATED = {"Llama-3-8B": (8.03, 8.03), "Llama-3-70B": (70.55, 70.55), "Llama-3.1-8B": (8.03, 8.03),
          "Llama-3.1-70B": (70.55, 70.55), "Llama-3.1-405B": (405.85, 405.85),
          "DeepSeek-V3": (37.6, 671.0), "GPT-OSS-120B": (5.71, 116.83), "Qwen3-30B-A3B": (3.35, 30.53),
          "Qwen3-235B-A22B": (22.2, 235.1)}


@pytest.mark.parametrize("name", sorted(STATED))
def test_parameter_counts(name: str) -> None:
    card = load_catalog(ROOT).models[name]
    arch = card.architecture
    active = figures.param_count(arch, card.active_params.includes_norms)
    total = figures.param_count(arch, card.active_params.includes_norms, total=True)
    assert active == card.active_params.count
    assert total == (card.total_params or active)
    assert active / 1e9 == pytest.approx(STATED[name][0], abs=0.06)
    assert total / 1e9 == pytest.approx(STATED[name][1], abs=0.06)


def test_dense_param_count_unchanged_by_the_moe_fields() -> None:
    cat = load_catalog(ROOT)
    arch = cat.models["Llama-3.2-1B"].architecture
    assert figures.param_count(arch, True) == figures.param_count(arch, True, total=True) == 1_235_814_400


def test_llama3_8b_flops_per_token_by_hand() -> None:
    arch = load_catalog(ROOT).models["Llama-3-8B"].architecture
    h, s, layers, ffn, vocab = 4096, 8192, 32, 14336, 128256
    attn = h * (h + 2 * 1024) + h * h + h * s  # QKV (GQA: 8 x 128), output, causal QK^T + AV at s/2 each
    by_hand = 6 * (layers * (attn + 3 * h * ffn) + h * vocab)
    assert figures.model_flops_per_token(arch, s) == by_hand == 51_470_401_536


def test_sliding_window_counts_min_of_position_and_window() -> None:
    arch = load_catalog(ROOT).models["GPT-OSS-120B"].architecture
    full = figures.model_flops_per_token(arch, 4096, sliding_windows=False)
    windowed = figures.model_flops_per_token(arch, 4096)
    q = 64 * 64
    per_layer = 6 * 2 * q * (4096 / 2 - (128 * 129 / 2 + (4096 - 128) * 128) / 4096)
    assert full - windowed == pytest.approx(18 * per_layer)


@pytest.mark.parametrize("gpu", ["H100", "B200", "B300", "GB200", "GB300"])
def test_system_gpus_have_bf16_fp8_and_a_source(gpu: str) -> None:
    spec = load_catalog(ROOT).gpus[gpu]
    assert spec.peak_flops.bf16 and spec.peak_flops.fp8 == pytest.approx(2 * spec.peak_flops.bf16, rel=0.01)
    assert spec.source.startswith("https://")
    if gpu != "H100":
        assert spec.peak_flops.fp4
