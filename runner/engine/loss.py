"""The engine's vocab-parallel cross entropy: two passes over the bf16 logits forward, one backward.

Megatron's native fused cross entropy (no transformer-engine) first copies the logits to fp32, subtracts the maximum
in place, materialises exp() and the softmax in fp32 and saves it for backward: for Llama-3.2-3B at 8k tokens and
micro-batch 2 that is five kernels and ~100 ms of a 2.9 s step on an H200 (benchmarks/engine_profile.py). This one
reads the logits in their own dtype: the row maximum and the sum of exponentials in fp32 registers (one
compiled reduction when the vocabulary is not split), the target logit by a gather; backward recomputes the softmax
from the saved logits and log-sum-exp in one compiled pointwise kernel. Under tensor parallelism each rank holds a
vocabulary slice; the maximum, the sum and the target logit are all-reduced over the tensor-parallel group as
megatron's does.
"""

from __future__ import annotations

import torch
import torch.distributed as dist


def _acc(t: torch.Tensor) -> torch.Tensor:
    """At least fp32 (bf16 logits are accumulated in fp32; fp64 test inputs stay fp64)."""
    return t.to(torch.promote_types(t.dtype, torch.float32))


def _row_max(logits: torch.Tensor) -> torch.Tensor:
    return _acc(logits.amax(dim=-1))


def _sum_exp(logits: torch.Tensor, row_max: torch.Tensor) -> torch.Tensor:
    return torch.exp(_acc(logits) - row_max.unsqueeze(-1)).sum(dim=-1)


def _log_sum_exp(logits: torch.Tensor) -> torch.Tensor:
    row_max = _row_max(logits)
    return row_max + torch.log(_sum_exp(logits, row_max))


def _logits_grad(logits: torch.Tensor, lse: torch.Tensor, local_target: torch.Tensor, in_range: torch.Tensor,
                 grad_loss: torch.Tensor) -> torch.Tensor:
    softmax = torch.exp(_acc(logits) - lse.unsqueeze(-1))
    vocab = torch.arange(logits.shape[-1], device=logits.device)
    is_target = (vocab == local_target.unsqueeze(-1)) & in_range.unsqueeze(-1)
    return ((softmax - is_target.to(softmax.dtype)) * grad_loss.unsqueeze(-1).to(softmax.dtype)).to(logits.dtype)


class _Kernels:
    """Eager by default (CPU tests); `compile()` swaps in torch.compile'd copies (CUDA runs)."""

    row_max, sum_exp, log_sum_exp, logits_grad = _row_max, _sum_exp, _log_sum_exp, _logits_grad

    @classmethod
    def compile(cls) -> None:
        if getattr(cls, "compiled", False):
            return
        cls.row_max = staticmethod(torch.compile(_row_max, dynamic=False))
        cls.sum_exp = staticmethod(torch.compile(_sum_exp, dynamic=False))
        cls.log_sum_exp = staticmethod(torch.compile(_log_sum_exp, dynamic=False))
        cls.logits_grad = staticmethod(torch.compile(_logits_grad, dynamic=False))
        cls.compiled = True


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor, vocab_start: int, group) -> torch.Tensor:
        k = _Kernels
        local_target = target - vocab_start
        in_range = (local_target >= 0) & (local_target < logits.shape[-1])
        local_target = torch.where(in_range, local_target, torch.zeros_like(local_target))
        target_logit = _acc(logits.gather(-1, local_target.unsqueeze(-1)).squeeze(-1)) * in_range
        split = group is not None and dist.get_world_size(group) > 1
        if split:
            row_max = k.row_max(logits)
            dist.all_reduce(row_max, op=dist.ReduceOp.MAX, group=group)
            sum_exp = k.sum_exp(logits, row_max)
            dist.all_reduce(sum_exp, group=group)
            dist.all_reduce(target_logit, group=group)
            lse = row_max + torch.log(sum_exp)
        else:
            lse = k.log_sum_exp(logits)
        ctx.save_for_backward(logits, lse, local_target, in_range)
        return lse - target_logit

    @staticmethod
    def backward(ctx, grad_loss: torch.Tensor):
        logits, lse, local_target, in_range = ctx.saved_tensors
        return _Kernels.logits_grad(logits, lse, local_target, in_range, grad_loss), None, None, None


def vocab_parallel_cross_entropy(logits: torch.Tensor, target: torch.Tensor, vocab_start: int = 0,
                                 group=None) -> torch.Tensor:
    """Per-token loss, fp32, shape of `target`: log-sum-exp over the whole vocabulary minus the target's logit.

    logits [..., local vocab] is this rank's vocabulary slice starting at global id `vocab_start`; `group` is the
    tensor-parallel process group (None or one rank: the whole vocabulary is here).
    """
    return _VocabParallelCrossEntropy.apply(logits, target, vocab_start, group)


def compile_kernels() -> None:
    _Kernels.compile()
