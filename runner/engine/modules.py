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


def compile_rope() -> None:
    """Replaces megatron's unfused bshd rotary embedding with a torch.compile'd copy of the same function.

    Without transformer-engine, megatron applies RoPE eagerly: cos, sin, chunk, cat, negate, two products and a
    sum, each a pass over the query or key tensor. Compiled, the same arithmetic is one kernel each way.
    """
    from megatron.core.models.common.embeddings import rope_utils

    if not getattr(rope_utils._apply_rotary_pos_emb_bshd, "_openrecipes_compiled", False):
        compiled = torch.compile(rope_utils._apply_rotary_pos_emb_bshd, dynamic=False)
        compiled._openrecipes_compiled = True
        rope_utils._apply_rotary_pos_emb_bshd = compiled


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
