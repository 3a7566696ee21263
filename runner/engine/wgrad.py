"""Weight-gradient accumulation straight into megatron's fp32 gradient buffer, without apex.

Megatron's `gradient_accumulation_fusion` computes each linear layer's weight gradient with a GEMM that adds into
`weight.main_grad` (fp32) in place: apex's `fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32`. Without it,
megatron writes a bf16 gradient and the DDP hook adds it to the fp32 buffer in a second pass over every weight, once
per micro-batch. torch ≥ 2.9 exposes the same cuBLAS GEMM (bf16 inputs, fp32 accumulate and output, beta = 1) as
`torch.addmm(..., out_dtype=torch.float32, out=main_grad)`; this module gives megatron that kernel under apex's name.
"""

from __future__ import annotations

import torch


class TorchWgradGemm:
    """apex's fused_weight_gradient_mlp_cuda interface: main_grad += grad_output^T @ total_input."""

    @staticmethod
    def wgrad_gemm_accum_fp32(total_input: torch.Tensor, grad_output: torch.Tensor, main_grad: torch.Tensor) -> None:
        # total_input [tokens, in], grad_output [tokens, out], main_grad [out, in] (megatron flattens to 2-D first)
        if total_input.dtype == main_grad.dtype:
            main_grad.addmm_(grad_output.t(), total_input)
        else:
            torch.addmm(main_grad, grad_output.t(), total_input, out_dtype=main_grad.dtype, out=main_grad)

    @staticmethod
    def wgrad_gemm_accum_fp16(total_input: torch.Tensor, grad_output: torch.Tensor, main_grad: torch.Tensor) -> None:
        main_grad.addmm_(grad_output.t(), total_input)


def supported() -> bool:
    """The mixed-dtype GEMM exists on CUDA only (torch ≥ 2.9)."""
    if not torch.cuda.is_available():
        return False
    a = torch.ones(16, 16, device="cuda", dtype=torch.bfloat16)
    c = torch.ones(16, 16, device="cuda", dtype=torch.float32)
    try:
        TorchWgradGemm.wgrad_gemm_accum_fp32(a, a, c)
    except (RuntimeError, TypeError):
        return False
    return bool(torch.all(c == 17.0))


def enable() -> None:
    """Lets megatron-core's linear layers take `gradient_accumulation_fusion=True` with the torch GEMM above."""
    from megatron.core.tensor_parallel import layers

    layers.fused_weight_gradient_mlp_cuda = TorchWgradGemm
    layers._grad_accum_fusion_available = True
