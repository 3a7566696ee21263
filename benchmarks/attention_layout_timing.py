"""SDPA forward and backward time on one GPU for the memory layouts attention inputs can arrive in.

    python benchmarks/attention_layout_timing.py [--shape Llama-3.2-3B] [--rows 2] [--out JSON]

megatron hands core attention [s, b, heads, head_dim] tensors; the engine's SDPAttention passes permuted views of
them to torch.nn.functional.scaled_dot_product_attention. This times that against contiguous [b, heads, s, d] and
[b, s, heads, d] inputs (CUDA events, median of 10 after 3 warm-ups), per backend torch offers, so a layout change
in runner/engine/modules.py is chosen on a measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHAPES = {"Llama-3.2-1B": (32, 8, 64, 4096), "Llama-3.2-3B": (24, 8, 128, 8192)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="Llama-3.2-3B", choices=sorted(SHAPES))
    ap.add_argument("--rows", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    nq, nkv, hd, s = SHAPES[args.shape]
    b = args.rows

    def make(layout: str, heads: int) -> torch.Tensor:
        if layout == "sbhd (megatron, permuted view)":
            return torch.randn(s, b, heads, hd, device="cuda", dtype=torch.bfloat16).permute(1, 2, 0, 3)
        if layout == "bshd (transposed view)":
            return torch.randn(b, s, heads, hd, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        return torch.randn(b, heads, s, hd, device="cuda", dtype=torch.bfloat16)

    def timed(fn) -> float:
        for _ in range(3):
            fn()
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]

    flops_fwd = 4 * b * nq * s * s * hd / 2  # causal
    def measure(backend, layout: str) -> dict:
        q = make(layout, nq).requires_grad_()
        k = make(layout, nkv).requires_grad_()
        v = make(layout, nkv).requires_grad_()
        grad = make(layout, nq)  # the output gradient arrives in the layout the output left in

        def fwd():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

        def fwd_bwd():
            fwd().backward(grad)

        with sdpa_kernel(backend):
            t_fwd, t_all = timed(fwd), timed(fwd_bwd)
        return {"backend": backend.name, "layout": layout, "fwd_ms": t_fwd, "bwd_ms": t_all - t_fwd,
                "fwd_tflops": flops_fwd / t_fwd / 1e9, "bwd_tflops_2.5x": 2.5 * flops_fwd / (t_all - t_fwd) / 1e9}

    rows = []
    for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
        for layout in ("sbhd (megatron, permuted view)", "bshd (transposed view)", "bhsd (contiguous)"):
            try:
                row = measure(backend, layout)
            except RuntimeError as exc:
                rows.append({"backend": backend.name, "layout": layout, "error": str(exc)[:200]})
                print(f"{backend.name:16s} {layout:32s} error: {str(exc)[:100]}")
                continue
            rows.append(row)
            print(f"{backend.name:16s} {layout:32s} fwd {row['fwd_ms']:6.2f} ms ({row['fwd_tflops']:5.0f} TFLOP/s)  "
                  f"bwd {row['bwd_ms']:6.2f} ms ({row['bwd_tflops_2.5x']:5.0f})")
    if args.out:
        args.out.write_text(json.dumps({"shape": args.shape, "rows_per_call": b, "gpu": torch.cuda.get_device_name(),
                                        "torch": torch.__version__, "results": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
