"""The pipeline-stage table where the layers do not divide by PP x VPP: the placement the recipe's layout implies.

recipe_page.virtual_stages is the one place it is worked out; these tests hold it to Megatron's own code (megatron-core, the
runner extra) on committed recipes: Megatron-Bridge's embedding/loss accounting (Llama 3.1 405B, 126 layers over
PP 8 x VPP 8) and a stated pipeline_model_parallel_layout (DeepSeek-V3, 61 layers over PP 8 x VPP 2), and to
torchtitan's stated split (Llama 3.1 405B, PP 8 x 2 virtual stages of 7, 8, ..., 8, 7 layers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.load import LoadedRecipe
from generator.registry import Registry
from generator.site.pages import recipe as recipe_page

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ACCOUNTED = "llama-3.1-405b/b200/mb-25.09-dgx-b200-128gpu-fp8-cs"
STATED_LAYOUT = "deepseek-v3/b200/mb-26.04.01-dgx-b200-256gpu-fp8-mx"
TORCHTITAN = "llama-3.1-405b/h100-96gb/titan-9dec370-t5-interleaved-1f1b"


@pytest.fixture(scope="module")
def registry(committed: Registry) -> Registry:
    return committed


def _recipe(registry: Registry, rid: str) -> LoadedRecipe:
    return next(r for r in registry.recipes if r.id == rid)


def _layers(registry: Registry, loaded: LoadedRecipe) -> int:
    return registry.catalog.models[loaded.recipe.model].architecture.layers


def _spans(stage: dict[str, str]) -> list[tuple[int, int]]:
    return [tuple(int(v) for v in span.split("–")) for span in stage["layers"].split(", ")]  # type: ignore[misc]


def _megatron_spans(config: object, pp: int, vpp: int, offset, count) -> list[list[tuple[int, int]]]:  # noqa: ANN001
    """Per pipeline rank, each of its chunks' decoder layers as Megatron builds them (first, last)."""
    out = []
    for rank in range(pp):
        chunks = []
        for chunk in range(vpp):
            start, n = offset(config, vp_stage=chunk, pp_rank=rank), count(config, vp_stage=chunk, pp_rank=rank)
            if n:
                chunks.append((start, start + n - 1))
        out.append(chunks)
    return out


def _uneven(registry: Registry, loaded: LoadedRecipe) -> bool:
    lay = loaded.recipe.layout
    return lay.vpp > 1 and _layers(registry, loaded) % (lay.pp * lay.vpp) != 0


def test_embedding_and_loss_accounting_matches_megatron(registry: Registry) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("megatron.core")
    from megatron.core.transformer.transformer_block import get_num_layers_to_build
    from megatron.core.transformer.transformer_config import TransformerConfig
    from megatron.core.transformer.transformer_layer import get_transformer_layer_offset

    loaded = _recipe(registry, ACCOUNTED)
    lay, layers = loaded.recipe.layout, _layers(registry, loaded)
    assert _uneven(registry, loaded) and lay.layer_split is not None and lay.layer_split.first % lay.vpp
    config = TransformerConfig(num_layers=layers, hidden_size=64, num_attention_heads=8,
                               pipeline_model_parallel_size=lay.pp, virtual_pipeline_model_parallel_size=lay.vpp,
                               account_for_embedding_in_pipeline_split=True,
                               account_for_loss_in_pipeline_split=True, pipeline_dtype=torch.bfloat16)
    expected = _megatron_spans(config, lay.pp, lay.vpp, get_transformer_layer_offset, get_num_layers_to_build)
    stages = recipe_page.pipeline_stages(loaded, registry.catalog)
    assert [_spans(s) for s in stages] == expected
    assert stages[0]["layers"].startswith("0–0, 15–16")  # one layer in the first chunk: the embedding takes a place
    assert [s["count"] for s in stages] == [str(sum(b - a + 1 for a, b in c)) for c in expected]
    assert stages[0]["holds"] == "embedding" and stages[-1]["holds"] == "loss"
    assert "account_for_embedding_in_pipeline_split" in stages[0]["placement"]


def test_stated_layout_matches_megatron(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("megatron.core")
    from megatron.core import parallel_state
    from megatron.core.transformer.enums import LayerType
    from megatron.core.transformer.pipeline_parallel_layer_layout import PipelineParallelLayerLayout

    loaded = _recipe(registry, STATED_LAYOUT)
    lay, layers = loaded.recipe.layout, _layers(registry, loaded)
    assert _uneven(registry, loaded) and lay.layer_split is None
    assert "[embedding + 4 decoder] [4 decoder] x 14 [1 decoder + mtp + loss]" in " ".join(lay.pipeline_layout.split())
    # The recipe's layout in Megatron's pipeline_model_parallel_layout syntax (E embedding, t decoder, m MTP, L loss).
    layout = PipelineParallelLayerLayout("Et*4|(t*4|)*14tmL", lay.pp)
    layout.validate_layer_layout(num_layers=layers, mtp_num_layers=1)
    # Megatron reads the VPP size from its parallel state; no process group is needed for the arithmetic.
    monkeypatch.setattr(parallel_state, "get_virtual_pipeline_model_parallel_world_size", lambda: lay.vpp)
    expected = _megatron_spans(
        None, lay.pp, lay.vpp,
        lambda _c, vp_stage, pp_rank: layout.get_layer_offset(LayerType.decoder, vp_stage=vp_stage, pp_rank=pp_rank),
        lambda _c, vp_stage, pp_rank: layout.get_num_layers_to_build(LayerType.decoder, vp_stage=vp_stage,
                                                                     pp_rank=pp_rank))
    stages = recipe_page.pipeline_stages(loaded, registry.catalog)
    assert [_spans(s) for s in stages] == expected
    assert stages[0]["layers"] == "0–3, 32–35"
    assert stages[-1]["layers"] == "28–31, 60–60" and stages[-1]["count"] == "5"
    assert stages[0]["holds"] == "embedding" and stages[-1]["holds"] == "MTP, loss"
    assert stages[0]["placement"] == "the placement the recipe's pipeline layout states"


def test_torchtitan_split_interleaves(registry: Registry) -> None:
    loaded = _recipe(registry, TORCHTITAN)
    assert _uneven(registry, loaded)
    stages = recipe_page.pipeline_stages(loaded, registry.catalog)
    # 16 virtual stages of 7, 8 x 14, 7 layers; rank r runs virtual stages r and r + 8 (looped interleaving).
    assert stages[0]["layers"] == "0–6, 63–70" and stages[0]["count"] == "15"
    assert stages[1]["layers"] == "7–14, 71–78" and stages[1]["count"] == "16"
    assert stages[7]["layers"] == "55–62, 119–125" and stages[7]["count"] == "15"


def test_every_uneven_layout_with_a_placement_gets_a_table(registry: Registry) -> None:
    """Each recipe whose layers do not divide by PP x VPP: a table covering every layer once, with VPP chunks a
    stage, wherever its layer split or stated layout places them; none where the layout is not stated."""
    shown = 0
    for loaded in registry.recipes:
        if not _uneven(registry, loaded):
            continue
        lay = loaded.recipe.layout
        stages = recipe_page.pipeline_stages(loaded, registry.catalog)
        placed = recipe_page.virtual_stages(loaded, registry.catalog)
        assert bool(stages) == (placed is not None), loaded.id
        if lay.layer_split is not None:
            assert stages, f"{loaded.id}: a layer split with VPP {lay.vpp} has a table"
        if not stages:
            assert lay.pipeline_layout is not None and "not stated" in lay.pipeline_layout, loaded.id
            continue
        shown += 1
        seen = [layer for s in stages for a, b in _spans(s) for layer in range(a, b + 1)]
        assert sorted(seen) == list(range(_layers(registry, loaded))), loaded.id
        # One span per chunk that holds decoder layers (a chunk may hold only the embedding or the loss).
        assert placed is not None and len(stages) == lay.pp, loaded.id
        chunks = [sum(1 for v, c in enumerate(placed[0]) if v % lay.pp == i and c.layers) for i in range(lay.pp)]
        assert [len(_spans(s)) for s in stages] == chunks, loaded.id
        assert stages[0]["placement"], f"{loaded.id}: an uneven placement says where it comes from"
    assert shown > 0


def test_a_chunk_with_no_decoder_layer(registry: Registry) -> None:
    """126 layers over PP 16 x VPP 8 with the embedding and loss counted: one layer per virtual stage, so the first
    chunk of stage 0 holds only the embedding (Megatron builds no decoder layer there) and stage 0 lists 7 spans."""
    loaded = next(r for r in registry.recipes if r.recipe.layout.pp == 16 and r.recipe.layout.vpp == 8
                  and r.recipe.model == "Llama-3.1-405B")
    stages = recipe_page.pipeline_stages(loaded, registry.catalog)
    assert stages[0]["layers"] == "15–15, 31–31, 47–47, 63–63, 79–79, 95–95, 111–111"
    assert stages[0]["count"] == "7" and stages[0]["holds"] == "embedding"
    assert stages[1]["layers"].startswith("0–0, 16–16") and stages[1]["count"] == "8"
    # Stage 15's last chunk is the very last virtual stage: the loss alone.
    assert stages[15]["layers"] == "14–14, 30–30, 46–46, 62–62, 78–78, 94–94, 110–110"
    assert stages[15]["count"] == "7" and stages[15]["holds"] == "loss"
