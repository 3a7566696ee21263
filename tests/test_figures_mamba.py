"""The Mamba-2 FLOPs count and the hybrid (Nemotron-H) architecture: one layer counted by hand term by term, a small
hybrid's parameters and FLOPs by hand, a pure transformer's count unchanged, the Nemotron 3 cards against the figures
NVIDIA publishes, and the architecture's own consistency rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from generator import figures
from generator.catalog import Architecture, Mamba
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[1]

# One small Mamba-2 mixer: hidden 8, 2 heads of 4 channels (inner 8), state 3, one group, conv kernel 4.
SMALL = Mamba(heads=2, head_dim=4, state_size=3, groups=1, conv_kernel=4)


def test_one_mamba2_layer_against_a_hand_count() -> None:
    flops = figures.mamba2_forward_flops(8, SMALL)
    # in_proj: 8 inputs to z (8) + x (8) + B (3) + C (3) + dt (one a head: 2) = 24 outputs: 8 x 24 = 192 multiply-adds,
    # 384 FLOPs.
    assert flops.in_proj == 384
    # conv1d: depthwise over x, B and C (8 + 3 + 3 = 14 channels), 4 taps each: 56 multiply-adds, 112 FLOPs.
    assert flops.conv1d == 112
    # scan: 8 inner channels x 3 state elements = 24; each decayed, given x * B and summed (3 FLOPs) and read out
    # against C (a multiply-add, 2 FLOPs): 24 x 5 = 120 FLOPs.
    assert flops.scan == 120
    # out_proj: 8 inner channels to 8 hidden: 64 multiply-adds, 128 FLOPs.
    assert flops.out_proj == 128
    assert flops.forward == 384 + 112 + 120 + 128 == 744
    # Training: forward and a backward at twice the forward, 3 x 744.
    assert figures.mamba2_flops_per_token(8, SMALL) == 2232


def _tiny_hybrid(**extra: object) -> Architecture:
    """Three blocks, Mamba-2 / attention / MoE (hidden 8, 2 query heads and 1 KV head of 4, 4 experts top-2 of FFN 6,
    a shared expert of 6, not gated), vocabulary 10, untied."""
    return Architecture(layers=3, hidden_size=8, ffn_hidden_size=6, gated_ffn=False, attention_heads=2,
                        attention={"global": {"kv_heads": 1, "head_dim": 4}}, layer_pattern=["global"], vocab_size=10,
                        tied_embeddings=False, hybrid_pattern="M*E", mamba=SMALL,
                        moe={"experts": 4, "top_k": 2, "ffn_hidden_size": 6, "shared_ffn_hidden_size": 6},
                        **extra)


def test_a_small_hybrid_counted_by_hand() -> None:
    arch = _tiny_hybrid()
    # Parameters without norms. Embedding and output 2 x 10 x 8 = 160. Mamba: in_proj 8 x 24 = 192, conv 14 x 4 + 14
    # bias = 70, A, D and dt bias 3 x 2 = 6, out_proj 64: 332. Attention: q 8 x 8, k and v 8 x 4 each, o 8 x 8: 192.
    # MoE, top-2: 2 experts x 2 matrices x 8 x 6 = 192, shared 2 x 8 x 6 = 96, router 8 x 4 = 32: 320.
    assert figures.param_count(arch, include_norms=False) == 160 + 332 + 192 + 320
    # All 4 experts: 4 x 96 + 96 + 32 = 512 for the MoE block.
    assert figures.param_count(arch, include_norms=False, total=True) == 160 + 332 + 192 + 512
    # Norms: a pre-norm a block (3 x 8), the Mamba gated norm (8), the final norm (8).
    assert figures.param_count(arch, include_norms=True) == 1004 + 24 + 8 + 8
    # FLOPs at sequence 6 (multiply-adds, forward): Mamba 744 / 2 = 372; attention projections 192 plus core attention
    # 2 x 2 heads x 4 x (6 / 2 keys, causal) = 48; MoE 2 x 2 x 8 x 6 + 2 x 8 x 6 = 288; logits 8 x 10 = 80.
    assert figures.model_flops_per_token(arch, 6) == 6 * (372 + 192 + 48 + 288 + 80)
    # The core attention term alone: 6 x 48.
    assert figures.causal_attention_flops_per_token(arch, 6) == 6 * 48


def test_latent_moe_and_mtp_counted_by_hand() -> None:
    arch = _tiny_hybrid(mtp_layers=1, mtp_pattern="*E", mtp_repeated=True)
    latent = Architecture.model_validate({**arch.model_dump(), "moe": {**arch.moe.model_dump(), "latent_size": 2}})
    # LatentMoE: experts work in width 2: top-2 x 2 matrices x 2 x 6 = 48, down and up projections 2 x 8 x 2 = 32,
    # shared 96, router 32: 208 parameters in place of 320.
    assert figures.param_count(latent, include_norms=False) == 160 + 332 + 192 + 208
    # The MTP layer is not a parameter of N; its FLOPs at each depth are: the 2h x h projection 128, attention
    # 192 + 48, MoE 288, a second logits 80 (multiply-adds). Two depths of the one repeated layer count twice.
    base = 372 + 192 + 48 + 288 + 80
    depth = 128 + 192 + 48 + 288 + 80
    assert figures.model_flops_per_token(arch, 6, mtp_layers=2) == 6 * (base + 2 * depth)
    # Megatron-Bridge's count: Mamba inner width 2 x 8 = 16, in_proj 2 x 8 x (2 x 16 + 2 x 3 + 2) = 640, scan
    # 7 x 16 x 3 = 336, out_proj 2 x 16 x 8 = 256, no conv1d: 1232 FLOPs, 616 multiply-adds; no MTP projection.
    assert figures.mb_mamba2_forward_flops(8, SMALL) == 1232
    mb = 616 + 192 + 48 + 288 + 80 + 2 * (192 + 48 + 288 + 80)
    assert figures.model_flops_per_token(arch, 6, mtp_layers=2, hybrid_count=figures.MB_HYBRID_COUNT) == 6 * mb


def test_a_pure_transformer_figure_is_unchanged() -> None:
    """Llama-3-8B at 8192 tokens: Megatron's count by hand, as before hybrids were modelled."""
    arch = load_catalog(ROOT).models["Llama-3-8B"].architecture
    h, q, kv, ffn, s, vocab = 4096, 32 * 128, 8 * 128, 14336, 8192, 128256
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * ffn + 2 * 32 * 128 * (s / 2)
    assert figures.model_flops_per_token(arch, s) == 6.0 * (32 * per_layer + h * vocab)
    assert figures.param_count(arch, include_norms=True) == 8030261248


@pytest.mark.parametrize("model, active, total, stated_active, stated_total", [
    # NVIDIA: 3.5B active of 30B (Megatron-Bridge docs); the count is 31.6B.
    ("Nemotron-3-Nano-30B-A3B", 3_580_076_352, 31_577_940_288, 3.5e9, 30e9),
    # NVIDIA: 12B active of 120B (Megatron-Bridge docs).
    ("Nemotron-3-Super-120B-A12B", 12_770_237_440, 120_668_707_840, 12e9, 120e9),
])
def test_nemotron_3_cards_count_what_nvidia_states(model: str, active: int, total: int, stated_active: float,
                                                  stated_total: float) -> None:
    card = load_catalog(ROOT).models[model]
    arch = card.architecture
    assert figures.param_count(arch, include_norms=True) == card.active_params.count == active
    assert figures.param_count(arch, include_norms=True, total=True) == card.total_params == total
    assert abs(active / stated_active - 1) < 0.07 and abs(total / stated_total - 1) < 0.06


def test_super_with_its_mtp_layer_is_the_verified_checkpoint_size() -> None:
    """Megatron-Bridge's verification card (examples/model_verification_cards/nemotron-3-super-120b-a12b/card.yaml at
    067f987d) states the export reproduces 123,611,033,088 elements: the model plus its MTP layer (the 2h x h
    projection, an attention and a MoE block with their pre-norms, and the MTP layer's two input norms and its
    final norm)."""
    arch = load_catalog(ROOT).models["Nemotron-3-Super-120B-A12B"].architecture
    h = arch.hidden_size
    mtp = (2 * h * h + figures._hybrid_block_params(arch, "*", True, True)
           + figures._hybrid_block_params(arch, "E", True, True) + 3 * h)
    assert figures.param_count(arch, include_norms=True, total=True) + mtp == 123_611_033_088


@pytest.mark.parametrize("change, message", [
    ({"hybrid_pattern": "M*"}, "hybrid_pattern has 2 blocks but layers is 3"),
    ({"mamba": None}, "no mamba mixer"),
    ({"hybrid_pattern": "MXE"}, "String should match pattern"),
])
def test_an_inconsistent_hybrid_is_refused(change: dict[str, object], message: str) -> None:
    data = {**_tiny_hybrid().model_dump(), **change}
    with pytest.raises(ValidationError, match=message):
        Architecture.model_validate(data)


def test_the_methodology_page_states_the_mamba_count_from_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    from suitehelpers import REFERENCE

    from generator.registry import load_registry
    from generator.site import render
    from generator.site.pages import methodology as methodology_page

    def page() -> str:
        return methodology_page.page(render.environment(), load_registry(ROOT, [REFERENCE])).content

    text = page()
    for term, formula in figures.MAMBA2_TERMS:
        assert f"- {term} = {formula}" in text
    assert "scan = 5 x inner x N" in text and "the scan as 7 x inner x N" in text
    monkeypatch.setattr(figures, "MB_MAMBA_SCAN_FLOPS_PER_STATE", 9)
    assert "the scan as 9 x inner x N" in page()


def test_a_hybrid_of_attention_and_mlp_blocks_counts_as_the_dense_decoder() -> None:
    """Blocks "*-" repeated are a dense decoder's attention + FFN layers spelled one block a layer: the hybrid count
    and the transformer count agree on parameters (a pre-norm a block = two a layer) and on FLOPs."""
    common = {"hidden_size": 64, "ffn_hidden_size": 96, "attention_heads": 4,
              "attention": {"global": {"kv_heads": 2, "head_dim": 16}}, "layer_pattern": ["global"],
              "vocab_size": 100, "tied_embeddings": False}
    dense = Architecture.model_validate({**common, "layers": 3})
    hybrid = Architecture.model_validate({**common, "layers": 6, "hybrid_pattern": "*-*-*-"})
    for norms in (False, True):
        assert figures.param_count(hybrid, norms) == figures.param_count(dense, norms)
    for seq in (1, 128, 4096):
        assert figures.model_flops_per_token(hybrid, seq) == figures.model_flops_per_token(dense, seq)
        assert figures.causal_attention_flops_per_token(hybrid, seq) == figures.causal_attention_flops_per_token(
            dense, seq)
