"""The seeded initial checkpoint every framework here starts from, converted into each one's parameter names.

So that "the same rows" is also "the same training": the bundled engine (megatron-core), torchtitan's llama3 model
and the transformers loop build the model the card states (tied or untied output layer) and copy the same initial
weights into it, so their step-0 losses agree (generator.figures.STEP0_LOSS_TOLERANCE) and their curves can be
compared (`python -m runner convergence`).

The checkpoint is named as transformers' LlamaForCausalLM names it. Each tensor is a function of (seed, name,
shape, device type) only: drawn from its own generator seeded from the run's seed and the tensor's name, so a
framework can make it one layer at a time (a 3B model's fp32 checkpoint need never sit in memory whole) and two
frameworks on the same kind of device get the same numbers. Its law is megatron-core's initialisation of a GPT
model: every matrix and the embedding N(0, 0.02^2) but the output projections, N(0, (0.02 / sqrt(2 x layers))^2),
every norm gain 1. With a tied output layer the embedding is the output layer, so the logits at step 0 have a
standard deviation near 0.02 x sqrt(hidden) and the step-0 loss sits a few tenths above ln V.

Conversions (megatron-core's layout read at 0.16.1; torchtitan's at 0.2.2):
- megatron ``linear_qkv`` holds, for each key-value group in turn, that group's query heads, then its key head, then
  its value head (rows); ``linear_fc1`` holds the gate rows above the up rows.
- torchtitan names q/k/v/o ``attention.wq/wk/wv/wo`` and the SwiGLU ``feed_forward.w1`` (gate), ``w3`` (up), ``w2``
  (down); the norms ``attention_norm``, ``ffn_norm`` and ``norm``; the embedding ``tok_embeddings``, the head
  ``output``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

INIT_STD = 0.02  # transformers' LlamaConfig.initializer_range default and megatron-core's init_method_std
# Output projections (attention's o_proj, the MLP's down_proj) are drawn at INIT_STD / sqrt(2 x layers), as
# megatron-core's scaled_init_method_normal draws them, so that the residual stream does not grow with depth. (The
# slow fall first blamed on the unscaled law, 12.17 to 10.94 in 30 steps on the H100, was the stream: those runs drew
# the pattern stream, the run that reached 3.61 the markov one; on the markov stream this law falls from 12.17 to
# 3.1 in 30 steps in all three frameworks: benchmarks/results/h100-2026-12-06b.)
SCALED = ("self_attn.o_proj.weight", "mlp.down_proj.weight")


@dataclass(frozen=True)
class Shape:
    """A dense decoder's shapes, as every framework here builds it (one attention kind, SwiGLU, no biases): what the
    checkpoint is drawn for and what each framework's plan carries (runner.frameworks.common.Plan)."""

    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    norm_eps: float
    rope_base: float
    tied_embeddings: bool
    qk_norm: bool = False


def tensor_seed(seed: int, name: str) -> int:
    """A 63-bit generator seed for one tensor: the run's seed and the tensor's name, hashed."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def init_std(name: str, layers: int) -> float:
    """The standard deviation a matrix of the checkpoint is drawn at: INIT_STD, an output projection scaled."""
    return INIT_STD / math.sqrt(2.0 * layers) if name.endswith(SCALED) else INIT_STD


def make_tensor(seed: int, name: str, shape: tuple[int, ...], device, layers: int = 1):
    """One checkpoint tensor in float32 on `device`: a norm gain is ones, every other tensor N(0, std^2) with
    init_std's standard deviation."""
    import torch

    if name.endswith("norm.weight") or "layernorm" in name:
        return torch.ones(shape, dtype=torch.float32, device=device)
    gen = torch.Generator(device=device).manual_seed(tensor_seed(seed, name))
    return torch.randn(shape, generator=gen, dtype=torch.float32, device=device).mul_(init_std(name, layers))


def hf_layer_shapes(d: Shape, i: int) -> dict[str, tuple[int, ...]]:
    h = f"model.layers.{i}."
    out = {
        h + "self_attn.q_proj.weight": (d.heads * d.head_dim, d.hidden),
        h + "self_attn.k_proj.weight": (d.kv_heads * d.head_dim, d.hidden),
        h + "self_attn.v_proj.weight": (d.kv_heads * d.head_dim, d.hidden),
        h + "self_attn.o_proj.weight": (d.hidden, d.heads * d.head_dim),
        h + "mlp.gate_proj.weight": (d.ffn_hidden, d.hidden),
        h + "mlp.up_proj.weight": (d.ffn_hidden, d.hidden),
        h + "mlp.down_proj.weight": (d.hidden, d.ffn_hidden),
        h + "input_layernorm.weight": (d.hidden,),
        h + "post_attention_layernorm.weight": (d.hidden,),
    }
    if d.qk_norm:
        out[h + "self_attn.q_norm.weight"] = (d.head_dim,)
        out[h + "self_attn.k_norm.weight"] = (d.head_dim,)
    return out


def hf_outer_shapes(d: Shape) -> dict[str, tuple[int, ...]]:
    out = {"model.embed_tokens.weight": (d.vocab_size, d.hidden), "model.norm.weight": (d.hidden,)}
    if not d.tied_embeddings:
        out["lm_head.weight"] = (d.vocab_size, d.hidden)
    return out


def hf_pieces(d: Shape, seed: int, device) -> Iterator[dict]:
    """The checkpoint in transformers' names, one piece at a time: the outer tensors, then each layer's."""
    yield {name: make_tensor(seed, name, shape, device, d.layers) for name, shape in hf_outer_shapes(d).items()}
    for i in range(d.layers):
        yield {name: make_tensor(seed, name, shape, device, d.layers) for name, shape in hf_layer_shapes(d, i).items()}


def to_megatron(piece: dict, d: Shape) -> dict:
    """A checkpoint piece in megatron-core GPTModel names (the engine's local spec)."""
    import torch

    out = {}
    for name, t in piece.items():
        if name == "model.embed_tokens.weight":
            out["embedding.word_embeddings.weight"] = t
        elif name == "model.norm.weight":
            out["decoder.final_layernorm.weight"] = t
        elif name == "lm_head.weight":
            out["output_layer.weight"] = t
    layers = {name.split(".")[2] for name in piece if name.startswith("model.layers.")}
    for i in layers:
        h, p = f"model.layers.{i}.", f"decoder.layers.{i}."
        rep = d.heads // d.kv_heads
        q = piece[h + "self_attn.q_proj.weight"].view(d.kv_heads, rep * d.head_dim, d.hidden)
        k = piece[h + "self_attn.k_proj.weight"].view(d.kv_heads, d.head_dim, d.hidden)
        v = piece[h + "self_attn.v_proj.weight"].view(d.kv_heads, d.head_dim, d.hidden)
        out[p + "self_attention.linear_qkv.weight"] = torch.cat([q, k, v], dim=1).reshape(-1, d.hidden)
        out[p + "self_attention.linear_proj.weight"] = piece[h + "self_attn.o_proj.weight"]
        out[p + "mlp.linear_fc1.weight"] = torch.cat([piece[h + "mlp.gate_proj.weight"],
                                                     piece[h + "mlp.up_proj.weight"]], dim=0)
        out[p + "mlp.linear_fc2.weight"] = piece[h + "mlp.down_proj.weight"]
        out[p + "input_layernorm.weight"] = piece[h + "input_layernorm.weight"]
        out[p + "pre_mlp_layernorm.weight"] = piece[h + "post_attention_layernorm.weight"]
        if d.qk_norm:
            out[p + "self_attention.q_layernorm.weight"] = piece[h + "self_attn.q_norm.weight"]
            out[p + "self_attention.k_layernorm.weight"] = piece[h + "self_attn.k_norm.weight"]
    return out


_TORCHTITAN_LAYER = {
    "self_attn.q_proj.weight": "attention.wq.weight", "self_attn.k_proj.weight": "attention.wk.weight",
    "self_attn.v_proj.weight": "attention.wv.weight", "self_attn.o_proj.weight": "attention.wo.weight",
    "mlp.gate_proj.weight": "feed_forward.w1.weight", "mlp.up_proj.weight": "feed_forward.w3.weight",
    "mlp.down_proj.weight": "feed_forward.w2.weight", "input_layernorm.weight": "attention_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
}
_TORCHTITAN_OUTER = {"model.embed_tokens.weight": "tok_embeddings.weight", "model.norm.weight": "norm.weight",
                     "lm_head.weight": "output.weight"}


def to_torchtitan(piece: dict, d: Shape) -> dict:
    """A checkpoint piece in torchtitan llama3 Transformer names."""
    out = {}
    for name, t in piece.items():
        if name in _TORCHTITAN_OUTER:
            out[_TORCHTITAN_OUTER[name]] = t
            continue
        _, _, i, rest = name.split(".", 3)
        if rest not in _TORCHTITAN_LAYER:
            raise ValueError(f"torchtitan's llama3 has no place for {name}")
        out[f"layers.{i}.{_TORCHTITAN_LAYER[rest]}"] = t
    return out


def to_transformers(piece: dict, d: Shape) -> dict:
    """The piece as it is (transformers' own names); a tied head is the embedding."""
    return dict(piece)


CONVERTERS = {"megatron": to_megatron, "torchtitan": to_torchtitan, "transformers": to_transformers}


def load_into(model, d: Shape, seed: int, naming: str) -> float:
    """Copies the seeded checkpoint into `model`'s parameters (named by `naming`: megatron, torchtitan or
    transformers), one piece at a time; returns the checkpoint's L2 norm (float64), which every framework prints so
    two arms can be seen to start alike. Every parameter of the model must be written, and every tensor used, or
    ValueError names what is left: a silent half-initialised model would train as another model. Wrappers' segments
    of a parameter's name (torch.compile's _orig_mod, say) are not the model's: _plain_name drops them."""
    import torch

    params = {_plain_name(name): p for name, p in model.named_parameters()}
    device = next(iter(params.values())).device
    convert = CONVERTERS[naming]
    written: set[str] = set()
    total = 0.0
    with torch.no_grad():
        for piece in hf_pieces(d, seed, device):
            for name, t in piece.items():
                if name != "lm_head.weight" or not d.tied_embeddings:
                    total += float(t.double().square().sum())
            for target, tensor in convert(piece, d).items():
                if target not in params:
                    raise ValueError(f"the {naming} model has no parameter {target} for the checkpoint's piece")
                param = params[target]
                if tuple(param.shape) != tuple(tensor.shape):
                    raise ValueError(f"{target}: the model's shape {tuple(param.shape)} is not the checkpoint's "
                                     f"{tuple(tensor.shape)}")
                param.copy_(tensor.to(param.dtype))
                written.add(target)
            del piece
    missing = sorted(set(params) - written)  # named_parameters() names a tied weight once
    if missing:
        raise ValueError(f"the checkpoint wrote none of {len(missing)} parameters of the {naming} model: "
                         + ", ".join(missing[:4]))
    return total ** 0.5


# Segments that wrappers add to a parameter's name (torch.compile's, activation checkpointing's, DDP's): the weight
# is the model's own either way.
_WRAPPER_SEGMENTS = ("_orig_mod.", "_checkpoint_wrapped_module.", "_fsdp_wrapped_module.")


def _plain_name(name: str) -> str:
    for segment in _WRAPPER_SEGMENTS:
        name = name.replace(segment, "")
    return name
