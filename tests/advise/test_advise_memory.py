"""The advisor's memory formulas (generator/advise/memory.py) against counts made by hand, term by term, for one
known configuration: Llama-3-8B (catalog/models/llama-3-8b.yaml: 32 layers, h 4096, FFN 14336 gated, 32 query heads
and 8 key-value heads of 128, vocabulary 128,256, untied) at TP2 PP1 DP4 with sequence parallelism, ZeRO-1,
selective recompute, micro-batch 1 of 8,192 tokens."""

from __future__ import annotations

import pytest
from suitehelpers import ROOT

from generator.advise.memory import (
    Plan,
    Shape,
    breakdowns,
    inflight_microbatches,
    layer_activation_bytes,
    layer_params,
    stage_breakdown,
    stage_params,
)
from generator.catalog import Architecture
from generator.registry import load_catalog


@pytest.fixture(scope="module")
def llama3_8b() -> Architecture:
    arch = load_catalog(ROOT).models["Llama-3-8B"].architecture
    assert arch is not None
    return arch


PLAN = Plan(tp=2, pp=1, dp=4, micro_batch=1, global_batch=128, zero=1, recompute="selective", sequence_parallel=True)


def test_parameters_by_hand(llama3_8b: Architecture) -> None:
    # Q 4096 x 4096 + K and V 2 x 4096 x 1024 + O 4096 x 4096 = 41,943,040; FFN 3 x 4096 x 14336 = 176,160,768;
    # two norms 8,192: 218,112,000 a layer.
    assert layer_params(llama3_8b) == 218_112_000
    # 32 layers + embedding 128,256 x 4096 (525,336,576) + untied output layer (the same) + final norm 4,096: the
    # card's N exactly.
    assert stage_params(llama3_8b, 1, 0) == 32 * 218_112_000 + 2 * 525_336_576 + 4096 == 8_030_261_248


def test_states_by_hand(llama3_8b: Architecture) -> None:
    b = stage_breakdown(Shape(llama3_8b, 8192), PLAN, 0)
    per_gpu = 8_030_261_248 / 2  # TP2
    assert b.weights == pytest.approx(2 * per_gpu)  # 8,030,261,248 bytes, 7.48 GB of 2**30
    assert b.grads == pytest.approx(4 * per_gpu)  # FP32, not sharded under ZeRO-1
    assert b.optimizer == pytest.approx(12 * per_gpu / 4)  # sharded over DP 4: 12,045,391,872 bytes


def test_activations_by_hand(llama3_8b: Architecture) -> None:
    shape = Shape(llama3_8b, 8192)
    # Per token and layer: norms' and column-parallel inputs 4 x 2h = 32,768; Q and the attention output 2 x 2q =
    # 16,384; K and V 2 x 2kv = 4,096; the gated FFN 3 x 2f = 86,016: 139,264 bytes (34h), all split by TP2 under
    # sequence parallelism: 69,632; x 8,192 tokens = 570,425,344 bytes a layer.
    assert layer_activation_bytes(llama3_8b, 8192, 1, False) == 139_264 * 8192
    assert layer_activation_bytes(llama3_8b, 8192, 2, True) == 570_425_344
    # Without sequence parallelism the 4 x 2h held by every rank are not split: (32,768 + 106,496 / 2) x 8,192.
    assert layer_activation_bytes(llama3_8b, 8192, 2, False) == (32_768 + 106_496 / 2) * 8192
    b = stage_breakdown(shape, PLAN, 0)
    # No pipelining: one micro-batch in flight, 32 layers kept; selective recompute (the core attention) keeps the
    # same as none under flash attention.
    assert b.activations == 32 * 570_425_344 == 18_253_611_008
    assert b.working == 570_425_344
    none = stage_breakdown(shape, Plan(**{**PLAN.__dict__, "recompute": "none"}), 0)
    assert none.activations == b.activations
    # The logits: 8,192 tokens x 128,256 / TP2 x 10 bytes.
    assert b.logits == 8192 * 128_256 / 2 * 10 == 5_253_365_760
    # Full recompute keeps each layer's input: 2h x 8,192 / TP2 = 33,554,432 bytes a layer, 1 GB of 2**30 for 32.
    full = stage_breakdown(shape, Plan(**{**PLAN.__dict__, "recompute": "full"}), 0)
    assert full.activations == 32 * 33_554_432 == 2**30
    assert full.working == b.working


def test_a_gpt_layer_is_korthikanti_34_sbh_without_dropout() -> None:
    """A GPT layer (q = kv = h, plain FFN f = 4h): 32h bytes a token; Korthikanti et al.'s 34 s b h counts two
    dropout masks (s b h each) that a layer without dropout does not keep."""
    arch = Architecture(layers=1, hidden_size=1024, ffn_hidden_size=4096, gated_ffn=False, attention_heads=16,
                        attention={"global": {"kv_heads": 16, "head_dim": 64}}, layer_pattern=["global"],
                        vocab_size=1000, tied_embeddings=True)
    assert layer_activation_bytes(arch, 1, 1, False) == 32 * 1024


def test_pipeline_schedules() -> None:
    plan = Plan(tp=1, pp=4, dp=1, micro_batch=1, global_batch=16)
    # 1F1B: the first stage keeps PP micro-batches, the last one; never more than there are.
    assert [inflight_microbatches(plan, s) for s in range(4)] == [4, 3, 2, 1]
    assert inflight_microbatches(Plan(tp=1, pp=4, dp=1, micro_batch=1, global_batch=2), 0) == 2
    # Interleaved, VPP 2: the first stage x (1 + 3 / 8).
    assert inflight_microbatches(Plan(tp=1, pp=4, dp=1, micro_batch=1, global_batch=16, vpp=2), 0) == 4 * 1.375


def test_pipelining_keeps_the_same_activations_on_the_first_stage(llama3_8b: Architecture) -> None:
    """Korthikanti et al.: under 1F1B the first stage keeps PP micro-batches of L / PP layers, L layers' worth."""
    shape = Shape(llama3_8b, 8192)
    flat = stage_breakdown(shape, PLAN, 0)
    piped = breakdowns(shape, Plan(tp=2, pp=4, dp=1, micro_batch=1, global_batch=128, zero=1))
    assert piped[0].activations == flat.activations
    # The last stage: one micro-batch of its 8 layers, and the logits.
    assert piped[1].activations == 8 * 570_425_344 and piped[1].logits == flat.logits and piped[0].logits == 0


def test_fsdp_shards_every_state(llama3_8b: Architecture) -> None:
    shape = Shape(llama3_8b, 8192)
    b = stage_breakdown(shape, Plan(tp=1, pp=1, dp=8, micro_batch=1, global_batch=8, zero=3), 0)
    n = 8_030_261_248
    layer = 218_112_000
    assert b.weights == pytest.approx(2 * n / 8 + 2 * layer * 2)  # sharded, two layers gathered
    assert b.grads == pytest.approx(4 * n / 8 + 2 * layer * 4)
    assert b.optimizer == pytest.approx(12 * n / 8)
    lora = stage_breakdown(Shape(llama3_8b, 8192, training="lora"), PLAN, 0)
    assert lora.grads == 0 and lora.optimizer == 0


def test_stated_peak_memory_is_read_from_the_field_first() -> None:
    """result.peak_memory (reserved, else allocated; the largest over ranks) where a recipe has it; else its stated_gb
    (a figure of unstated kind: nanotron's, the playbook's, is rank 0's, the first stage), never the summary text;
    else torchtitan's notes (the largest over GPUs)."""
    from types import SimpleNamespace

    from generator.advise.observations import FIRST_STAGE, MAX_OVER_GPUS, recipe_memory

    def recipe(peak: object = None, summary: str = "", notes: str | None = None,
               framework: str = "nanotron (the playbook's benchmark sweep; version not published)") -> object:
        return SimpleNamespace(result=SimpleNamespace(peak_memory=peak), layout=SimpleNamespace(summary=summary),
                               notes=notes, stack=SimpleNamespace(framework=framework))

    both = SimpleNamespace(allocated_gib=61.0, reserved_gib=66.5, stated_gb=None)
    assert recipe_memory(recipe(both, "peak GPU memory 5.1 GB")) == (66.5, MAX_OVER_GPUS)  # type: ignore[arg-type]
    allocated = SimpleNamespace(allocated_gib=61.0, reserved_gib=None, stated_gb=None)
    assert recipe_memory(recipe(allocated)) == (61.0, MAX_OVER_GPUS)  # type: ignore[arg-type]
    stated = SimpleNamespace(allocated_gib=None, reserved_gib=None, stated_gb=5.1)
    assert recipe_memory(recipe(stated, "TP16 PP8; peak GPU memory 9.9 GB")) == (5.1, FIRST_STAGE)  # type: ignore[arg-type]
    assert recipe_memory(recipe(stated, framework="torchtitan")) == (5.1, MAX_OVER_GPUS)  # type: ignore[arg-type]
    assert recipe_memory(recipe(None, "TP16 PP8; peak GPU memory 5.1 GB; as published.")) == (None, None)  # type: ignore[arg-type]
    assert recipe_memory(recipe(None, "", "TPS/GPU, memory 84.5 GiB (the maximum over GPUs).")) == (  # type: ignore[arg-type]
        84.5, MAX_OVER_GPUS)
    assert recipe_memory(recipe()) == (None, None)  # type: ignore[arg-type]


def test_attention_widths_average_the_layer_pattern_by_hand() -> None:
    """Gemma-4-31B (catalog/models/gemma-4-31b.yaml): 60 layers, pattern five sliding then one global, 32 query heads;
    sliding 16 KV heads of 256, separate K and V; global 4 KV heads of 512, K and V shared. 50 sliding and 10 global
    layers: query width 32 x (50 x 256 + 10 x 512) / 60, KV width (50 x 16 x 256 + 10 x 4 x 512) / 60, matrices
    (50 x 2 + 10 x 1) / 60. And for every card of the catalog, the per-layer average the docstring defines, layer by
    layer (memory._attention counts each pattern entry's layers instead)."""
    from generator.advise.memory import _attention

    catalog = load_catalog(ROOT)
    gemma = catalog.models["Gemma-4-31B"].architecture
    assert gemma is not None
    assert _attention(gemma) == (32 * 17_920 / 60, 225_280 / 60, 110 / 60)
    for name, card in catalog.models.items():
        arch = card.architecture
        if arch is None:
            continue
        kinds = [arch.attention[arch.layer_pattern[i % len(arch.layer_pattern)]] for i in range(arch.layers)]
        by_layer = (sum(arch.attention_heads * k.head_dim for k in kinds) / arch.layers,
                    sum(k.kv_heads * k.head_dim for k in kinds) / arch.layers,
                    sum(1 if k.shared_kv else 2 for k in kinds) / arch.layers)
        assert _attention(arch) == by_layer, name


def test_a_playbook_recipe_s_stated_memory_is_its_hover_text_s() -> None:
    """A committed row, read from the HTML by hand (tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html,
    line 2, column 426584): 1B on 16 nodes, DP 16 TP 8 PP 1 ZeRO 1, MBS 16, "GPU memory: 29.2 GB". The recipe carries
    it as stated_gb (allocated and reserved unstated) and the advisor reads 29.2, rank 0's (the first stage)."""
    from generator.advise.observations import FIRST_STAGE, recipe_memory
    from generator.load import load_recipe

    path = ROOT / "recipes/playbook-llama-1b/h100/pb-128gpu-dp16-tp8-pp1-mbs16-ga1-zero1.yaml"
    recipe = load_recipe(path).recipe
    peak = recipe.result.peak_memory
    assert peak is not None and (peak.stated_gb, peak.allocated_gib, peak.reserved_gib) == (29.2, None, None)
    assert recipe_memory(recipe) == (29.2, FIRST_STAGE)
