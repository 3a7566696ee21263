"""The engine's own kernels against the functions they replace, in fp64 where the arithmetic is exact enough to hold
them to rounding: the vocab-parallel cross entropy (runner/engine/loss.py) against torch's F.cross_entropy, whole
vocabulary and split over two real gloo processes; RoPE with its written-out backward (runner/engine/modules.py)
against megatron-core's bshd rotary embedding, forward, backward and torch's gradcheck. Each has a negative control so
a comparison that cannot fail does not pass.
"""

from __future__ import annotations

import os
import socket
from importlib.util import find_spec
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import torch

# torch and megatron-core are imported by the tests that run, not at collection: every xdist worker collects every
# file, and the import costs ~3 s of CPU in each (and in each process mp.spawn starts, which imports this module).
pytestmark = [pytest.mark.slow, pytest.mark.skipif(find_spec("torch") is None or find_spec("megatron") is None,
                                                   reason="needs the runner extra (torch, megatron-core)")]

VOCAB = 37  # odd, so a two-way split is uneven only if the code assumes it; we split 18 + 19 below


def _case(dtype: torch.dtype, seed: int = 0):
    import torch

    gen = torch.Generator().manual_seed(seed)
    logits = (torch.randn(6, 3, VOCAB, generator=gen, dtype=torch.float64) * 4).to(dtype)
    target = torch.randint(0, VOCAB, (6, 3), generator=gen)
    weight = torch.randn(6, 3, generator=gen, dtype=torch.float64)  # a non-uniform upstream gradient
    return logits, target, weight


def _reference(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor):
    import torch.nn.functional as F

    x = logits.detach().double().requires_grad_()
    loss = F.cross_entropy(x.reshape(-1, VOCAB), target.reshape(-1), reduction="none").reshape(target.shape)
    (loss * weight).sum().backward()
    return loss.detach(), x.grad


@pytest.mark.parametrize(("dtype", "tol"), [("float64", 1e-12), ("float32", 1e-5), ("bfloat16", 2e-2)])
def test_cross_entropy_matches_torch(dtype: str, tol: float) -> None:
    import torch

    from runner.engine.loss import vocab_parallel_cross_entropy

    logits, target, weight = _case(getattr(torch, dtype))
    x = logits.clone().requires_grad_()
    loss = vocab_parallel_cross_entropy(x, target)
    (loss.double() * weight).sum().backward()
    ref_loss, ref_grad = _reference(logits, target, weight)
    assert loss.shape == target.shape and x.grad.dtype == getattr(torch, dtype)
    # bf16: the logits are bf16 inputs (exact in fp64), the loss accumulates in fp32; the gradient is rounded to bf16
    assert (loss.double() - ref_loss).abs().max().item() < tol
    assert (x.grad.double() - ref_grad).abs().max().item() < tol
    # Negative control: another target for one token moves that token's loss by more than the tolerance.
    wrong = target.clone()
    wrong[0, 0] = (wrong[0, 0] + 1) % VOCAB
    assert (vocab_parallel_cross_entropy(logits, wrong).double() - ref_loss).abs().max().item() > 100 * tol


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _split_worker(rank: int, port: int, out: dict) -> None:
    import torch
    import torch.distributed as dist

    from runner.engine.loss import vocab_parallel_cross_entropy

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        logits, target, weight = _case(torch.float64, seed=1)
        cut = 18
        start, stop = (0, cut) if rank == 0 else (cut, VOCAB)
        x = logits[..., start:stop].clone().requires_grad_()
        loss = vocab_parallel_cross_entropy(x, target, vocab_start=start, group=dist.group.WORLD)
        (loss * weight).sum().backward()
        out[rank] = (loss.detach(), x.grad)
    finally:
        dist.destroy_process_group()


def test_cross_entropy_vocab_split_over_two_processes() -> None:
    import torch
    import torch.multiprocessing as mp

    from runner.engine.loss import vocab_parallel_cross_entropy

    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_split_worker, args=(_free_port(), out), nprocs=2, join=True)
        results = dict(out)
    logits, target, weight = _case(torch.float64, seed=1)
    ref_loss, ref_grad = _reference(logits, target, weight)
    for rank in (0, 1):  # every rank returns the whole loss
        assert (results[rank][0] - ref_loss).abs().max().item() < 1e-12
    grad = torch.cat([results[0][1], results[1][1]], dim=-1)  # each rank's slice of the logits' gradient
    assert (grad - ref_grad).abs().max().item() < 1e-12
    # Negative control: a rank that assumed the whole vocabulary is local would miss the other slice's mass.
    alone = vocab_parallel_cross_entropy(logits[..., :18], target.clamp(max=17))
    assert (alone - ref_loss).abs().max().item() > 1e-3


def test_rope_matches_megatron_forward_and_backward() -> None:
    import torch
    from megatron.core.models.common.embeddings import rope_utils

    from runner.engine.modules import _RoPE

    megatron_rope = rope_utils._apply_rotary_pos_emb_bshd
    gen = torch.Generator().manual_seed(0)
    t = torch.randn(7, 2, 3, 8, generator=gen, dtype=torch.float64, requires_grad=True)
    freqs = torch.randn(7, 1, 1, 8, generator=gen, dtype=torch.float64)
    grad = torch.randn(7, 2, 3, 8, generator=gen, dtype=torch.float64)
    for mscale in (1.0, 1.3):
        ref = megatron_rope(t, freqs, mscale=mscale)
        (ref_grad,) = torch.autograd.grad(ref, t, grad)
        ours = _RoPE.apply(t, freqs, mscale)
        (our_grad,) = torch.autograd.grad(ours, t, grad)
        assert (ours - ref).abs().max().item() < 1e-14
        assert (our_grad - ref_grad).abs().max().item() < 1e-14
    assert torch.autograd.gradcheck(lambda x: _RoPE.apply(x, freqs, 1.3), (t,))
    # Negative control: the backward rotates by -theta; one that rotated the gradient forward again would differ.
    assert (megatron_rope(grad, freqs, mscale=1.3) - our_grad).abs().max().item() > 1e-2
