"""The engine's Triton SwiGLU backward (runner/engine/swiglu.py) against autograd of silu(y1) * y2 in fp64.

No GPU here, so the kernel runs under Triton's CPU interpreter (TRITON_INTERPRET=1, which Triton reads when the kernel
is defined: hence a subprocess). The same kernel compiled for an H200 is checked against FP64 and timed against
megatron's compiled swiglu_back by benchmarks/swiglu_check.py. The rows are not a multiple of anything and the FFN
width is not a multiple of the kernel's block, so the masked tail is exercised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.util import find_spec

import pytest

from tests.engine.support import ROOT

# Found, not imported: the kernel runs in a subprocess, and every xdist worker collects this file (importing torch
# and megatron-core here cost each ~3 s of CPU).
pytestmark = [pytest.mark.slow, pytest.mark.skipif(any(find_spec(m) is None for m in ("torch", "triton", "megatron")),
                                                   reason="needs the runner extra (torch, triton, megatron-core)")]

SCRIPT = textwrap.dedent("""
    import json
    import torch
    import torch.nn.functional as F
    from runner.engine.swiglu import swiglu_back

    def reference(g, y):
        y = y.detach().double().requires_grad_()
        y1, y2 = y.chunk(2, dim=-1)
        (F.silu(y1) * y2).backward(g.double())
        return y.grad

    gen = torch.Generator().manual_seed(0)
    out = {}
    for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        y = (torch.randn(3, 2, 2 * 1500, generator=gen) * 3).to(dtype)
        g = torch.randn(3, 2, 1500, generator=gen).to(dtype)
        ref = reference(g, y)
        got = swiglu_back(g, y)
        # negative control: the two halves of the gradient swapped
        swapped = torch.cat(got.double().chunk(2, dim=-1)[::-1], dim=-1)
        rel = lambda t: float((t.double() - ref).norm() / ref.norm())
        out[name] = {"dtype": str(got.dtype), "shape": list(got.shape), "rel": rel(got), "swapped": rel(swapped)}
    print(json.dumps(out))
""")


def test_triton_swiglu_backward_matches_fp64_autograd() -> None:
    env = dict(os.environ) | {"TRITON_INTERPRET": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["float32"]["dtype"] == "torch.float32" and out["float32"]["shape"] == [3, 2, 3000]
    assert out["float32"]["rel"] < 1e-6  # fp32 arithmetic on fp32 inputs
    assert out["bfloat16"]["dtype"] == "torch.bfloat16"
    assert out["bfloat16"]["rel"] < 8e-3  # the bf16 rounding of the result (2^-8 relative at worst, ~3e-3 typical)
    for case in out.values():
        assert case["swapped"] > 0.5
