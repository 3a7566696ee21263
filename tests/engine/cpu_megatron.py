"""CPU adaptation of megatron-core 0.16 for tests (gloo, no GPU). Test support only; the engine never imports it.

megatron-core allocates its gradient buffers with `device=torch.cuda.current_device()`, moves a few tensors with
`.cuda()`, and its optimizers build their scale and overflow tensors with `device="cuda"`. On a CPU-only torch
each raises "Torch not compiled with CUDA enabled". These patches make them mean the CPU, so that the engine's
real code path (megatron's model, schedules, DDP, optimizer and the gloo collectives of TP/PP/DP) runs in CI.
Its gradient clipping asserts CUDA gradients and is replaced by the same scaling. Nothing here changes
arithmetic. megatron's DistributedOptimizer checks for torch.cuda tensor types and is not patched: CPU runs use
--no-distributed-optimizer.
"""

from __future__ import annotations

import functools

import torch

# Factories megatron calls with device="cuda".
_FACTORIES = ("tensor", "zeros", "ones", "empty", "full", "arange", "randn", "rand", "randint")


def _cpu_device(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        device = kwargs.get("device")
        if device is not None and str(device).startswith("cuda"):
            kwargs["device"] = "cpu"
        return fn(*args, **kwargs)

    return wrapper


def apply() -> None:
    if torch.cuda.is_available():
        return  # a real GPU: leave torch alone
    torch.cuda.current_device = lambda: "cpu"  # `device=torch.cuda.current_device()` becomes the CPU
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.device_count = lambda: 0
    torch.Tensor.cuda = lambda self, *a, **k: self  # `.cuda()` on a tensor stays on the CPU
    torch.nn.Module.cuda = lambda self, *a, **k: self
    for name in _FACTORIES:
        setattr(torch, name, _cpu_device(getattr(torch, name)))
    # clip_grad_by_total_norm_fp32 asserts grad.type() == "torch.cuda.FloatTensor"; the same scaling on the CPU.
    from megatron.core.optimizer import optimizer as mopt

    mopt.clip_grad_by_total_norm_fp32 = _clip_by_total_norm
    _cpu_rng_tracker()


def _cpu_rng_tracker() -> None:
    """megatron's RNG tracker (model_parallel_cuda_manual_seed; forked by the embedding under sequence parallel and
    saved by recompute) keeps CUDA generator states; here it keeps the states of one CPU generator instead.

    The engine trains without dropout, so no kernel draws from these states: the tracker only has to exist.
    """
    from megatron.core.tensor_parallel import random as mrandom

    generator = torch.Generator()
    torch.cuda.manual_seed = lambda seed: generator.manual_seed(int(seed))
    torch.cuda.get_rng_state = lambda device="cuda": generator.get_state()
    torch.cuda.random.get_rng_state = torch.cuda.get_rng_state
    mrandom._set_cuda_rng_state = lambda state, device=-1, graph_safe=False: generator.set_state(state)


def _clip_by_total_norm(parameters, max_norm, total_norm, use_decoupled_grad=False):
    coeff = max_norm / (total_norm + 1.0e-6)  # megatron's formula
    if coeff < 1.0:
        for param in parameters:
            grad = param.decoupled_grad if use_decoupled_grad else param.grad
            if grad is not None:
                grad.detach().mul_(coeff)
