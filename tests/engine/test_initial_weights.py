"""The seeded initial checkpoint (runner/engine/initial_weights.py): the engine trains the model it states.

The engine (megatron-core on the CPU) loads the checkpoint and its step-0 loss is held to an independent forward of
the same checkpoint, written here in float64 from the Llama equations (RMSNorm, RoPE, grouped-query causal attention,
SwiGLU, tied output layer), on the same rows: the conversion into megatron's fused layouts (query, key and value
interleaved per group; gate over up) is right only if the two agree. Negative controls: the same forward with the
key and value heads of a group swapped, or gate and up swapped, must not agree.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from runner.engine import SUMMARY_PREFIX  # noqa: E402
from runner.engine.initial_weights import Shape, hf_pieces, load_into, tensor_seed, to_megatron, to_torchtitan  # noqa: E402
from runner.engine.streams import PatternStream, step_rows  # noqa: E402
from tests.engine import forked_ranks  # noqa: E402
from tests.engine.support import CPU_FLAGS, CPU_TRAIN, ROOT, TINY_CARD, cpu_env, make_registry  # noqa: E402

ARCH = TINY_CARD["Tiny-Llama-Test"]["architecture"]
DIMS = Shape(layers=ARCH["layers"], hidden=ARCH["hidden_size"], ffn_hidden=ARCH["ffn_hidden_size"],
             heads=ARCH["attention_heads"], kv_heads=2, head_dim=16, vocab_size=ARCH["vocab_size"],
             norm_eps=ARCH["norm_eps"], rope_base=ARCH["rope_base"], tied_embeddings=ARCH["tied_embeddings"])
SEED = 1234


def checkpoint() -> dict:
    out = {}
    for piece in hf_pieces(DIMS, SEED, torch.device("cpu")):
        out.update(piece)
    return out


def reference_loss(w: dict, rows, swap_kv: bool = False, swap_gate_up: bool = False) -> float:
    """Mean next-token cross entropy of the Llama forward of `w` (transformers' names) over `rows`, float64."""
    d = DIMS
    w = {k: v.double() for k, v in w.items()}
    tokens, labels = rows[:, :-1], rows[:, 1:]
    s = tokens.shape[1]
    x = w["model.embed_tokens.weight"][tokens]
    inv = 1.0 / (ARCH["rope_base"] ** (torch.arange(0, d.head_dim, 2, dtype=torch.float64) / d.head_dim))
    angles = torch.outer(torch.arange(s, dtype=torch.float64), inv)
    cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()

    def norm(t, g):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + ARCH["norm_eps"]) * g

    def rope(t):  # [b, heads, s, hd]
        t1, t2 = t.chunk(2, -1)
        return t * cos + torch.cat([-t2, t1], -1) * sin

    mask = torch.full((s, s), float("-inf"), dtype=torch.float64).triu(1)
    for i in range(d.layers):
        p = f"model.layers.{i}."
        h = norm(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(-1, s, d.heads, d.head_dim).transpose(1, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(-1, s, d.kv_heads, d.head_dim).transpose(1, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(-1, s, d.kv_heads, d.head_dim).transpose(1, 2)
        if swap_kv:
            k, v = v, k
        q, k = rope(q), rope(k)
        rep = d.heads // d.kv_heads
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d.head_dim) + mask, -1) @ v
        x = x + att.transpose(1, 2).reshape(-1, s, d.heads * d.head_dim) @ w[p + "self_attn.o_proj.weight"].T
        h = norm(x, w[p + "post_attention_layernorm.weight"])
        gate, up = w[p + "mlp.gate_proj.weight"], w[p + "mlp.up_proj.weight"]
        if swap_gate_up:
            gate, up = up, gate
        x = x + (torch.nn.functional.silu(h @ gate.T) * (h @ up.T)) @ w[p + "mlp.down_proj.weight"].T
    logits = norm(x, w["model.norm.weight"]) @ w["model.embed_tokens.weight"].T
    return float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()))


def step0_rows(steps: int, global_batch: int, row_tokens: int):
    stream = PatternStream(SEED, DIMS.vocab_size, row_tokens, steps * global_batch)
    first = step_rows(0, 0, global_batch, 1, global_batch)
    return stream.rows(first, global_batch)


def test_each_tensor_is_a_function_of_seed_and_name() -> None:
    a, b = checkpoint(), checkpoint()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert "lm_head.weight" not in a  # tied: the embedding is the output layer
    assert tensor_seed(SEED, "x") != tensor_seed(SEED + 1, "x") != tensor_seed(SEED, "y")
    emb = a["model.embed_tokens.weight"]
    assert abs(float(emb.std()) - 0.02) < 0.002 and torch.equal(a["model.norm.weight"], torch.ones(DIMS.hidden))
    # megatron's law: output projections at 0.02 / sqrt(2 x layers), the rest at 0.02
    scaled = 0.02 / math.sqrt(2 * DIMS.layers)
    down = torch.cat([a[f"model.layers.{i}.mlp.down_proj.weight"].flatten() for i in range(DIMS.layers)])
    gate = torch.cat([a[f"model.layers.{i}.mlp.gate_proj.weight"].flatten() for i in range(DIMS.layers)])
    assert abs(float(down.std()) - scaled) < 0.1 * scaled and abs(float(gate.std()) - 0.02) < 0.002


def test_megatron_layout_holds_each_group_with_its_heads() -> None:
    piece = next(p for p in hf_pieces(DIMS, SEED, torch.device("cpu")) if "model.layers.0.self_attn.q_proj.weight" in p)
    m = to_megatron(piece, DIMS)
    qkv = m["decoder.layers.0.self_attention.linear_qkv.weight"]
    rep, hd = DIMS.heads // DIMS.kv_heads, DIMS.head_dim
    group = (rep + 2) * hd
    q = piece["model.layers.0.self_attn.q_proj.weight"]
    k = piece["model.layers.0.self_attn.k_proj.weight"]
    for g in range(DIMS.kv_heads):  # group g: its query heads, then its key head, then its value head
        rows = qkv[g * group:(g + 1) * group]
        assert torch.equal(rows[:rep * hd], q[g * rep * hd:(g + 1) * rep * hd])
        assert torch.equal(rows[rep * hd:(rep + 1) * hd], k[g * hd:(g + 1) * hd])
    fc1 = m["decoder.layers.0.mlp.linear_fc1.weight"]
    assert torch.equal(fc1[:DIMS.ffn_hidden], piece["model.layers.0.mlp.gate_proj.weight"])
    t = to_torchtitan(piece, DIMS)
    assert torch.equal(t["layers.0.feed_forward.w1.weight"], piece["model.layers.0.mlp.gate_proj.weight"])
    assert torch.equal(t["layers.0.feed_forward.w3.weight"], piece["model.layers.0.mlp.up_proj.weight"])


def test_a_model_the_checkpoint_does_not_fill_is_refused() -> None:
    model = torch.nn.Module()
    model.extra = torch.nn.Parameter(torch.zeros(3))
    with pytest.raises(ValueError, match="has no parameter"):
        load_into(model, DIMS, SEED, "transformers")


@pytest.mark.slow
def test_the_engine_starts_from_the_checkpoint(tmp_path: Path) -> None:
    steps, gb, row = 2, 4, 32
    recipe = make_registry(tmp_path, steps=steps, global_batch=gb, row_tokens=row, precision="fp32")
    proc = forked_ranks.run([str(CPU_TRAIN), "train", str(recipe), *CPU_FLAGS.split()], cwd=ROOT, env=cpu_env(),
                            timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith(SUMMARY_PREFIX))[len(SUMMARY_PREFIX):])
    weights = checkpoint()
    norm = math.sqrt(sum(float(t.double().square().sum()) for t in weights.values()))
    assert summary["initial_weights"]["checkpoint_norm"] == pytest.approx(norm, rel=1e-12)
    assert summary["init_weight_norm"] == pytest.approx(norm, rel=1e-6)
    step0 = json.loads(next(ln for ln in proc.stdout.splitlines() if "openrecipes-step " in ln).split(" ", 1)[1])
    rows = step0_rows(steps, gb, row)
    ref = reference_loss(weights, rows)
    assert abs(step0["loss"] - ref) < 1e-5, (step0["loss"], ref)
    # Negative controls: a layout read the wrong way round gives another loss.
    assert abs(reference_loss(weights, rows, swap_kv=True) - ref) > 1e-4
    assert abs(reference_loss(weights, rows, swap_gate_up=True) - ref) > 1e-4
