"""Modules the engine puts into megatron-core's local spec (imported only when the engine runs).

Without transformer-engine or apex, megatron's local spec has an unfused attention (two batched matmuls and a
materialised softmax) and torch's RMSNorm, which refuses sequence parallel. These replace both.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from megatron.core.transformer.module import MegatronModule


class RMSNorm(torch.nn.Module):
    """RMSNorm whose gain is marked for megatron's sequence-parallel gradient all-reduce."""

    compiled = False  # set by the engine before the model is built: run the norm through torch.compile

    def __init__(self, config, hidden_size: int, eps: float = 1e-5, **_: object) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(hidden_size, dtype=config.params_dtype,
                                                    device=None if config.use_cpu_initialization else "cuda"))
        # Under sequence parallel each TP rank sees a slice of the sequence, so the gain's gradient must be
        # summed over the TP group; megatron's finalize_model_grads does so for parameters carrying this flag.
        self.weight.sequence_parallel = bool(config.sequence_parallel)
        self._fn = _compiled_rms_norm() if RMSNorm.compiled else _rms_norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._fn(x, self.weight, self.eps)


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    # Statistics in fp32 as Hugging Face's LlamaRMSNorm computes them; the product in the input's dtype.
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return weight * y.to(x.dtype)


_COMPILED = None


def _compiled_rms_norm():
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = torch.compile(_rms_norm, dynamic=False)
    return _COMPILED


def _rope_forward(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # megatron's _apply_rotary_pos_emb_bshd (no interleave): t cos + rotate_half(t) sin, rotate_half(x) = [-x2, x1]
    x1, x2 = t.chunk(2, dim=-1)
    return t * cos + torch.cat((-x2, x1), dim=-1) * sin


def _rope_backward(grad: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # The transpose of the rotation: grad cos + rotate_half^T(grad sin), rotate_half^T(z) = [z2, -z1]
    z1, z2 = (grad * sin).chunk(2, dim=-1)
    return grad * cos + torch.cat((z2, -z1), dim=-1)


def _rope_cos_sin(freqs: torch.Tensor, mscale: float, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos(freqs) x mscale and sin(freqs) x mscale in `dtype`, as megatron computes them, once per freqs tensor.

    megatron recomputes both for the query and the key of every layer, in the kernel that rotates them: two accurate
    transcendentals per element made that kernel compute-bound (~59 ms of a 2.85 s Llama-3.2-3B step at 8k on an
    H200). All layers of a forward share one freqs tensor, so the pair is kept on it and dies with it; the key holds
    the tensor's version so an in-place change recomputes.
    """
    key = (dtype, mscale, freqs._version)
    cached = getattr(freqs, "_openrecipes_cos_sin", None)
    if cached is None or cached[0] != key:
        cached = (key, (torch.cos(freqs) * mscale).to(dtype), (torch.sin(freqs) * mscale).to(dtype))
        freqs._openrecipes_cos_sin = cached
    return cached[1], cached[2]


class _RoPEKernels:
    forward, backward = staticmethod(_rope_forward), staticmethod(_rope_backward)


class _RoPE(torch.autograd.Function):
    """RoPE with its backward written out: one pass each way, saving only cos and sin ([s, 1, 1, d], shared)."""

    @staticmethod
    def forward(ctx, t: torch.Tensor, freqs: torch.Tensor, mscale: float) -> torch.Tensor:
        cos, sin = _rope_cos_sin(freqs, mscale, t.dtype)
        ctx.save_for_backward(cos, sin)
        return _RoPEKernels.forward(t, cos, sin)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        cos, sin = ctx.saved_tensors
        return _RoPEKernels.backward(grad.contiguous(), cos, sin), None, None


def rope_bshd(t: torch.Tensor, freqs: torch.Tensor, rotary_interleaved: bool = False,
              multi_latent_attention: bool = False, mscale: float = 1.0) -> torch.Tensor:
    """Drop-in for megatron's _apply_rotary_pos_emb_bshd; other variants go to megatron's own function."""
    if rotary_interleaved or multi_latent_attention or freqs.shape[-1] != t.shape[-1] or freqs.requires_grad:
        return _MEGATRON_ROPE(t, freqs, rotary_interleaved, multi_latent_attention, mscale)
    return _RoPE.apply(t, freqs, float(mscale))


_MEGATRON_ROPE = None


def compile_rope() -> None:
    """Replaces megatron's unfused bshd rotary embedding with `rope_bshd`, its kernels torch.compile'd.

    Without transformer-engine, megatron applies RoPE eagerly: cos, sin, chunk, cat, negate, two products and a
    sum, each a pass over the query or key tensor, and autograd runs the same chain backward. Here each way is one
    compiled kernel.
    """
    global _MEGATRON_ROPE
    from megatron.core.models.common.embeddings import rope_utils

    if rope_utils._apply_rotary_pos_emb_bshd is rope_bshd:
        return
    _MEGATRON_ROPE = rope_utils._apply_rotary_pos_emb_bshd
    _RoPEKernels.forward = staticmethod(torch.compile(_rope_forward, dynamic=False))
    _RoPEKernels.backward = staticmethod(torch.compile(_rope_backward, dynamic=False))
    rope_utils._apply_rotary_pos_emb_bshd = rope_bshd


class SDPAttention(MegatronModule):
    """Megatron core attention over torch.nn.functional.scaled_dot_product_attention (causal, GQA).

    Takes megatron's [s, b, heads, head_dim] query/key/value and returns [s, b, heads x head_dim], as
    DotProductAttention does; torch picks the kernel (cuDNN or flash on Hopper).
    """

    def __init__(self, config, layer_number: int, attn_mask_type, attention_type: str,
                 attention_dropout: float | None = None, softmax_scale: float | None = None,
                 cp_comm_type: str | None = None, pg_collection=None, **_: object) -> None:
        super().__init__(config=config)
        if config.context_parallel_size != 1:
            raise ValueError("SDPAttention does not support context parallel")
        self.softmax_scale = softmax_scale if softmax_scale is not None else config.kv_channels ** -0.5
        self.dropout = config.attention_dropout if attention_dropout is None else attention_dropout

    def forward(self, query, key, value, attention_mask=None, attn_mask_type=None, attention_bias=None,
                packed_seq_params=None):
        if packed_seq_params is not None or attention_bias is not None:
            raise ValueError("SDPAttention supports neither packed sequences nor an attention bias")
        sq, b, nq, hd = query.shape
        q = query.permute(1, 2, 0, 3)  # [b, heads, s, head_dim]
        k = key.permute(1, 2, 0, 3)
        v = value.permute(1, 2, 0, 3)
        out = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, scale=self.softmax_scale, enable_gqa=k.shape[1] != nq,
            dropout_p=self.dropout if self.training else 0.0,
        )
        return out.permute(2, 0, 1, 3).reshape(sq, b, nq * hd)


def engine_gpt_model_class():
    """megatron-core's GPTModel with the engine's cross entropy (runner/engine/loss.py) as its loss."""
    from megatron.core import parallel_state
    from megatron.core.models.gpt import GPTModel

    from runner.engine.loss import vocab_parallel_cross_entropy

    class EngineGPTModel(GPTModel):
        def compute_language_model_loss(self, labels: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
            # labels [b, s], logits [s, b, this rank's vocabulary slice] -> per-token loss [b, s], as megatron's
            group = parallel_state.get_tensor_model_parallel_group()
            vocab_start = parallel_state.get_tensor_model_parallel_rank() * logits.shape[-1]
            loss = vocab_parallel_cross_entropy(logits, labels.transpose(0, 1).contiguous(), vocab_start, group)
            return loss.transpose(0, 1).contiguous()

    return EngineGPTModel
