"""Where one bundled-engine training step spends its GPU time (torch.profiler, CUDA kernels only).

    python benchmarks/engine_profile.py RECIPE [--profile-step K] [--out JSON] [-- engine train flags...]

Runs the engine (runner.engine.train.run, the recipe's layout and the given `train` flags) for K + 1 steps, records
the CUDA kernels of step K, and prints the step's wall time, the kernel time per category (GEMM, attention,
Triton-compiled elementwise, other elementwise, reductions, copies, optimizer) as a share of the step, and the
longest kernels. Also checks the torch weight-gradient GEMM (runner/engine/wgrad.py) against an FP64 reference.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CATEGORIES = [  # first match wins
    ("attention", re.compile(r"cudnn|flash|fmha|attention|sdpa", re.I)),
    ("gemm", re.compile(r"gemm|cutlass|nvjet|xmma|cublas|matmul", re.I)),
    ("optimizer", re.compile(r"adam|multi_tensor", re.I)),
    ("triton (compiled)", re.compile(r"^triton_")),
    ("reduction", re.compile(r"reduce|norm|softmax|cross_entropy|sum", re.I)),
    ("copy/cast", re.compile(r"copy|memcpy|memset|cast|cat|fill", re.I)),
    ("elementwise", re.compile(r"elementwise|vectorized|unrolled|index", re.I)),
]


def category(name: str) -> str:
    for label, pattern in CATEGORIES:
        if pattern.search(name):
            return label
    return "other"


def wgrad_gemm_check() -> dict:
    """Relative error of main_grad += g^T x (bf16 inputs, fp32 buffer) against the same sum in FP64."""
    import torch

    from runner.engine import wgrad

    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(8192, 3072, device="cuda", generator=gen).bfloat16()
    g = torch.randn(8192, 1024, device="cuda", generator=gen).bfloat16()
    main = torch.randn(1024, 3072, device="cuda", generator=gen)
    ref = main.double() + g.double().t() @ x.double()
    unfused = main + (g.t() @ x).float()  # megatron without the fusion: bf16 GEMM output, then an fp32 add
    fused = main.clone()
    wgrad.TorchWgradGemm.wgrad_gemm_accum_fp32(x, g, fused)

    def rel(t):
        return float((t.double() - ref).norm() / ref.norm())

    return {"supported": wgrad.supported(), "fused_rel_l2": rel(fused), "unfused_rel_l2": rel(unfused)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("recipe")
    ap.add_argument("--profile-step", type=int, default=4)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", type=Path)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:split])
    flags = argv[split + 1:]  # after --: runner train flags

    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    from runner.engine.cli import add_parser, plan_and_options
    from runner.engine.train import run

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    train_args = parser.parse_args(["train", args.recipe, "--steps", str(args.profile_step + 1), *flags])
    made = plan_and_options(train_args)
    if isinstance(made, int):
        return made
    plan, opts = made
    k = args.profile_step
    prof = profile(activities=[ProfilerActivity.CUDA], schedule=schedule(wait=k, warmup=0, active=1))
    prof.start()
    log = io.StringIO()
    records = run(plan, opts, out=log, on_step_end=lambda step: prof.step())
    prof.stop()

    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    by_name: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    by_cat: dict[str, float] = defaultdict(float)
    for e in kernels:
        us = e.device_time if hasattr(e, "device_time") else e.cuda_time
        by_name[e.name][0] += us
        by_name[e.name][1] += 1
        by_cat[category(e.name)] += us
    step_s = records[k]["time_s"]
    busy_s = sum(by_cat.values()) / 1e6
    print(f"step {k}: wall {step_s:.3f} s, kernels busy {busy_s:.3f} s ({busy_s / step_s:.1%}), "
          f"{len(kernels)} kernels, {plan.tokens_per_step / step_s:,.0f} tokens/s")
    for label, us in sorted(by_cat.items(), key=lambda kv: -kv[1]):
        print(f"  {label:20s} {us / 1e6:8.3f} s  {us / 1e6 / step_s:6.1%}")
    print(f"  {'idle':20s} {step_s - busy_s:8.3f} s  {(step_s - busy_s) / step_s:6.1%}")
    top = sorted(by_name.items(), key=lambda kv: -kv[1][0])[: args.top]
    for name, (us, n) in top:
        print(f"  {us / 1e3:9.1f} ms {n:6d}x  {category(name):18s} {name[:110]}")
    check = wgrad_gemm_check()
    print("wgrad GEMM vs FP64:", json.dumps(check))
    if args.out:
        args.out.write_text(json.dumps({
            "recipe": args.recipe, "flags": flags, "profile_step": k, "step_s": step_s, "busy_s": busy_s,
            "categories_s": {c: us / 1e6 for c, us in by_cat.items()},
            "top_kernels": [{"name": n, "ms": us / 1e3, "count": c} for n, (us, c) in top],
            "steps": records, "wgrad_gemm_check": check,
        }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
