"""The engine's Triton SwiGLU backward against megatron's compiled swiglu_back on one GPU: error and time.

    python benchmarks/swiglu_check.py [--rows 16384] [--ffn 8192] [--out JSON]

Both run on the same bf16 inputs (fc1's output y = [y1, y2] and the incoming gradient g, shaped as Llama-3.2-3B's MLP
at 8k tokens and micro-batch 2 by default); each is held to autograd of silu(y1) * y2 in FP64 (relative L2), with a
negative control (the gradient's halves swapped), and timed with CUDA events (median of 20 after 5 warm-ups). The
bytes each must move at least (read y and g once, write the gradient) give an effective bandwidth.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=16384)
    ap.add_argument("--ffn", type=int, default=8192)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from megatron.core.fusions import fused_bias_swiglu

    from runner.engine import swiglu

    megatron_back = fused_bias_swiglu.swiglu_back
    assert swiglu.install()
    gen = torch.Generator(device="cuda").manual_seed(0)
    y = (torch.randn(args.rows, 2 * args.ffn, device="cuda", generator=gen) * 2).bfloat16()
    g = torch.randn(args.rows, args.ffn, device="cuda", generator=gen).bfloat16()

    yd = y.double().requires_grad_()
    y1, y2 = yd.chunk(2, dim=-1)
    (F.silu(y1) * y2).backward(g.double())
    ref = yd.grad

    def rel(t: torch.Tensor) -> float:
        return float((t.double() - ref).norm() / ref.norm())

    def timed(fn) -> float:
        for _ in range(5):
            fn()
        times = []
        for _ in range(20):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]

    moved = (y.numel() + g.numel() + y.numel()) * y.element_size()
    rows = {}
    for name, fn in (("megatron (torch.compile)", megatron_back), ("engine (Triton)", swiglu.swiglu_back)):
        out = fn(g, y)
        swapped = torch.cat(out.chunk(2, dim=-1)[::-1], dim=-1)
        ms = timed(lambda fn=fn: fn(g, y))
        rows[name] = {"rel_l2_vs_fp64": rel(out), "negative_control_rel_l2": rel(swapped), "ms": ms,
                      "effective_tb_per_s": moved / ms / 1e9}
        print(f"{name:26s} rel L2 {rows[name]['rel_l2_vs_fp64']:.3e} (halves swapped {rel(swapped):.2f})  "
              f"{ms:.3f} ms  {moved / ms / 1e9:.2f} TB/s effective")
    speedup = rows["megatron (torch.compile)"]["ms"] / rows["engine (Triton)"]["ms"]
    print(f"speed-up {speedup:.2f}x")
    if args.out:
        args.out.write_text(json.dumps({"rows": args.rows, "ffn": args.ffn, "gpu": torch.cuda.get_device_name(),
                                        "torch": torch.__version__, "results": rows, "speedup": speedup},
                                       indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
