"""The engine's plan refuses a model whose architecture it does not build (mixture of experts, multi-latent attention,
multi-token prediction, Mamba layers, anything a card states beyond a dense decoder), with the reason, instead of
training a dense stand-in under the real model's parameter count; a dense Llama still plans."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from generator.catalog import Architecture
from runner.engine.plan import EngineError, lacking_parts, make_engine_plan

ROOT = Path(__file__).resolve().parents[2]
# A committed engine recipe (Llama-3.2-1B, TP1 PP1 DP1, bf16, SDPA): its layout asks nothing the engine lacks, so
# only the model decides whether it plans.
ENGINE_RECIPE = ROOT / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"


def registry_with(tmp: Path, model: str, extra_cards: dict | None = None) -> Path:
    """tmp/catalog (the repository's, plus `extra_cards` in a file of their own) and the engine recipe with its model
    set to `model`; returns the recipe's path."""
    shutil.copytree(ROOT / "catalog", tmp / "catalog")
    if extra_cards:
        (tmp / "catalog" / "models" / "extra.yaml").write_text(yaml.safe_dump(extra_cards, sort_keys=False))
    text = ENGINE_RECIPE.read_text(encoding="utf-8")
    assert "\nmodel: Llama-3.2-1B\n" in text
    path = tmp / "recipes" / "any" / "h200" / "engine.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text.replace("\nmodel: Llama-3.2-1B\n", f"\nmodel: {model}\n"), encoding="utf-8")
    return path


def refusal(tmp: Path, model: str, extra_cards: dict | None = None) -> EngineError:
    recipe = registry_with(tmp, model, extra_cards)
    with pytest.raises(EngineError) as err:
        make_engine_plan(recipe, tmp)
    assert err.value.field == "model" and "engine.yaml:4:8" in str(err.value)  # the recipe's `model:` value
    return err.value


def test_a_dense_llama_still_plans() -> None:
    plan = make_engine_plan(ENGINE_RECIPE, ROOT)
    assert plan.model == "Llama-3.2-1B" and plan.arch.moe is None
    assert (plan.kv_heads, plan.head_dim, plan.world_size) == (8, 64, 1)


def test_a_dense_llama_in_a_copied_catalog_plans(tmp_path: Path) -> None:
    """The same registry the refusals below use, with a dense model: what refuses them is their model alone."""
    plan = make_engine_plan(registry_with(tmp_path, "Llama-3-8B"), tmp_path)
    assert plan.model == "Llama-3-8B" and (plan.arch.layers, plan.kv_heads) == (32, 8)


def test_deepseek_v3_is_refused_for_its_experts_latent_attention_and_mtp(tmp_path: Path) -> None:
    err = refusal(tmp_path, "DeepSeek-V3")
    assert err.message == ("'DeepSeek-V3' has mixture-of-experts layers (routed expert MLPs) (architecture.moe); "
                           "multi-latent attention (architecture.mla); multi-token-prediction layers "
                           "(architecture.mtp_layers), which the engine does not build; it trains dense decoders "
                           "only and never stands one in for another model")


def test_kimi_k2_is_refused_for_its_experts_and_latent_attention(tmp_path: Path) -> None:
    # Kimi-K2's card states mtp_layers: 0 (none), so only its experts and MLA are named.
    err = refusal(tmp_path, "Kimi-K2")
    assert "(architecture.moe)" in err.message and "(architecture.mla)" in err.message
    assert "mtp_layers" not in err.message


def test_qwen3_30b_a3b_is_refused_for_its_experts(tmp_path: Path) -> None:
    err = refusal(tmp_path, "Qwen3-30B-A3B")
    assert "'Qwen3-30B-A3B' has mixture-of-experts layers (routed expert MLPs) (architecture.moe), which" in err.message
    assert "mla" not in err.message


def test_nemotron_3_nano_is_refused_for_its_hybrid_blocks_mamba_mixers_and_experts(tmp_path: Path) -> None:
    """The catalog describes Mamba-2 hybrids (architecture.hybrid_pattern, architecture.mamba): the engine, which
    builds dense decoders only, names each part it lacks."""
    err = refusal(tmp_path, "Nemotron-3-Nano-30B-A3B")
    for part in ("mixture-of-experts layers (routed expert MLPs) (architecture.moe)",
                 "hybrid Mamba-2 / attention / MLP / MoE blocks (architecture.hybrid_pattern)",
                 "Mamba-2 mixers (architecture.mamba)"):
        assert part in err.message


def test_a_dense_hybrid_is_refused_for_its_mamba_mixers_alone() -> None:
    """A hybrid without experts (Mamba-2 and attention blocks, Nemotron-H style): its pattern and its mixers are what
    the engine lacks, and without them the same architecture is a plain decoder."""
    hybrid = {"layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024, "attention_heads": 4,
              "attention": {"global": {"kv_heads": 2, "head_dim": 64}}, "layer_pattern": ["global"],
              "vocab_size": 1024, "tied_embeddings": False, "hybrid_pattern": "M-*-",
              "mamba": {"heads": 8, "head_dim": 64, "state_size": 64, "groups": 1, "conv_kernel": 4}}
    assert lacking_parts(Architecture.model_validate(hybrid)) == [
        "hybrid Mamba-2 / attention / MLP / MoE blocks (architecture.hybrid_pattern)",
        "Mamba-2 mixers (architecture.mamba)"]
    dense = {k: v for k, v in hybrid.items() if k not in ("hybrid_pattern", "mamba")}
    assert lacking_parts(Architecture.model_validate(dense)) == []


def test_every_field_of_every_card_is_built_or_refused() -> None:
    """Each catalog card either plans as a dense decoder or names what the engine lacks; the committed cards with
    experts (and only those) are refused for them."""
    from generator.registry import load_catalog

    catalog = load_catalog(ROOT)
    refused = {name for name, card in catalog.models.items() if card.architecture and lacking_parts(card.architecture)}
    with_experts = {name for name, card in catalog.models.items() if card.architecture and card.architecture.moe}
    assert {"DeepSeek-V3", "Kimi-K2", "Qwen3-30B-A3B"} <= with_experts <= refused
