"""The card's measured matrix-product ceiling per precision (issue 39 item 6): what a recipe's MFU is compared with.

`python benchmarks/matmul_ceiling.py [--json OUT]` times square matrix products on random data (never zeros) with
CUDA events after a warm-up, rotating among several input sets so that no product reads from cache, and prints the
median TFLOP/s of each size for bf16 (torch.matmul) and fp8 e4m3 (torch._scaled_mm, one scale per tensor, bf16
output), with the card's name and the date. The largest median over the sizes is the ceiling. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys

SIZES = (4096, 8192, 16384)
SETS = 3  # input sets rotated through
REPEATS = 20


def time_products(fn, operands, flops: float) -> float:
    """Median TFLOP/s of `fn(*operands[i % SETS])` over REPEATS timed calls after a warm-up."""
    import torch

    for i in range(5):
        fn(*operands[i % SETS])
    torch.cuda.synchronize()
    times = []
    for i in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*operands[i % SETS])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return flops / statistics.median(times) / 1e12


def measure() -> dict:
    import torch

    out = {"gpu": torch.cuda.get_device_name(), "date": dt.date.today().isoformat(), "torch": torch.__version__,
           "script": "benchmarks/matmul_ceiling.py", "bf16": {}, "fp8": {}}
    for n in SIZES:
        flops = 2.0 * n ** 3
        bf16 = [(torch.randn(n, n, device="cuda", dtype=torch.bfloat16),
                 torch.randn(n, n, device="cuda", dtype=torch.bfloat16)) for _ in range(SETS)]
        out["bf16"][str(n)] = round(time_products(torch.matmul, bf16, flops), 1)
        del bf16
        one = torch.ones((), device="cuda")
        fp8 = [(torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn),
                torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()) for _ in range(SETS)]
        out["fp8"][str(n)] = round(time_products(
            lambda a, b, s=one: torch._scaled_mm(a, b, scale_a=s, scale_b=s, out_dtype=torch.bfloat16), fp8, flops), 1)
        del fp8
        torch.cuda.empty_cache()
    out["ceiling_tflops"] = {k: max(out[k].values()) for k in ("bf16", "fp8")}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: needs torch with CUDA (pip install -e '.[runner]')", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: needs a CUDA GPU; this machine has none", file=sys.stderr)
        return 2
    result = measure()
    print(json.dumps(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
