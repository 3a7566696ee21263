"""Component test: the engine's SDPA core attention against megatron's unfused local attention and FP64.

For each shape: random bf16 query/key/value in megatron's [s, b, heads, head_dim] layout and a random output
gradient; forward output and the three input gradients of each backend are compared with an FP64 reference
(causal softmax attention, GQA by repeating the key-value heads) by relative L2 error ||x - ref|| / ||ref||.
Pass: SDPA's error <= 2 x the unfused error + 1e-3 on every tensor (the reference recipe's bound), a repeat of
SDPA on the same inputs passes, and two negative controls (softmax scale x 1.05; a non-causal mask) fail.
Writes JSON to --out. Needs one CUDA GPU and megatron-core.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHAPES = {  # name: (query heads, kv heads, head dim, sequence)
    "Llama-3.2-1B": (32, 8, 64, 4096),
    "Llama-3.2-3B": (24, 8, 128, 8192),
}


def rel(x, ref) -> float:
    return float((x.double() - ref).norm() / ref.norm())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/attention_component_test.json"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import torch
    import torch.distributed as dist
    from megatron.core import parallel_state
    from megatron.core.transformer.dot_product_attention import DotProductAttention
    from megatron.core.transformer.enums import AttnMaskType
    from megatron.core.transformer.transformer_config import TransformerConfig

    from runner.engine.modules import SDPAttention

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1)
    parallel_state.initialize_model_parallel(1, 1)
    torch.manual_seed(args.seed)
    from megatron.core import tensor_parallel

    tensor_parallel.model_parallel_cuda_manual_seed(args.seed)  # the unfused path forks megatron's RNG tracker
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "shapes": {}}
    ok_all = True
    def check(name, nq, nkv, hd, s):
        cfg = TransformerConfig(num_layers=1, hidden_size=nq * hd, num_attention_heads=nq, num_query_groups=nkv,
                                kv_channels=hd, bf16=True, params_dtype=torch.bfloat16, attention_dropout=0.0,
                                hidden_dropout=0.0, masked_softmax_fusion=False, attention_softmax_in_fp32=True)
        unfused = DotProductAttention(cfg, 1, AttnMaskType.causal, "self").cuda()
        sdpa = SDPAttention(cfg, 1, AttnMaskType.causal, "self").cuda()
        g = torch.Generator(device="cuda").manual_seed(args.seed + s)
        q = torch.randn(s, 1, nq, hd, device="cuda", generator=g).bfloat16()
        k = torch.randn(s, 1, nkv, hd, device="cuda", generator=g).bfloat16()
        v = torch.randn(s, 1, nkv, hd, device="cuda", generator=g).bfloat16()
        dout = torch.randn(s, 1, nq * hd, device="cuda", generator=g).bfloat16()

        def run(fn, q=q, k=k, v=v, dout=dout, dtype=None):
            # The FP64 reference gets FP64 leaves, so that its gradients are FP64 too.
            qq, kk, vv = (t.detach().to(dtype or t.dtype).clone().requires_grad_(True) for t in (q, k, v))
            out = fn(qq, kk, vv)
            out.backward(dout.to(out.dtype))
            return {"out": out.detach(), "dq": qq.grad, "dk": kk.grad, "dv": vv.grad}

        def reference(qq, kk, vv, scale=hd ** -0.5, causal=True):
            rep = nq // nkv
            qd = qq.permute(1, 2, 0, 3)  # b h s d
            kd = kk.repeat_interleave(rep, dim=2).permute(1, 2, 0, 3)
            vd = vv.repeat_interleave(rep, dim=2).permute(1, 2, 0, 3)
            scores = torch.matmul(qd, kd.transpose(-1, -2)) * scale
            if causal:
                mask = torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1)
                scores = scores.masked_fill(mask, float("-inf"))
            out = torch.matmul(scores.softmax(-1), vd)
            return out.permute(2, 0, 1, 3).reshape(s, 1, nq * hd)

        ref = run(reference, dtype=torch.float64)
        torch.cuda.empty_cache()
        arms = {
            "unfused": run(lambda a, b, c: unfused(a, b, c, None)),
            "sdpa": run(lambda a, b, c: sdpa(a, b, c, None)),
            "sdpa_repeat": run(lambda a, b, c: sdpa(a, b, c, None)),
        }
        scale = hd ** -0.5

        def bad_scale(a, b, c):
            return sdpa_with(a, b, c, scale=scale * 1.05, causal=True)

        def non_causal(a, b, c):
            return sdpa_with(a, b, c, scale=scale, causal=False)

        def sdpa_with(a, b, c, scale, causal):
            out = torch.nn.functional.scaled_dot_product_attention(
                a.permute(1, 2, 0, 3), b.permute(1, 2, 0, 3), c.permute(1, 2, 0, 3), is_causal=causal, scale=scale,
                enable_gqa=True)
            return out.permute(2, 0, 1, 3).reshape(s, 1, nq * hd)

        arms["negative_scale_x1.05"] = run(bad_scale)
        arms["negative_non_causal"] = run(non_causal)
        errors = {arm: {t: rel(vals[t], ref[t]) for t in ref} for arm, vals in arms.items()}
        bound = {t: 2 * errors["unfused"][t] + 1e-3 for t in ref}

        def passes(arm):
            return all(errors[arm][t] <= bound[t] and errors[arm][t] == errors[arm][t] for t in ref)

        verdict = {arm: passes(arm) for arm in arms if arm != "unfused"}
        shape_ok = verdict["sdpa"] and verdict["sdpa_repeat"] and not verdict["negative_scale_x1.05"] \
            and not verdict["negative_non_causal"]
        results["shapes"][name] = {"heads": nq, "kv_heads": nkv, "head_dim": hd, "sequence": s, "batch": 1,
                                   "errors": errors, "bound": bound, "passes": verdict, "result": "pass" if shape_ok else "fail"}
        print(f"{name}: s={s} heads={nq}/{nkv} hd={hd} -> {'PASS' if shape_ok else 'FAIL'}")
        for arm, errs in errors.items():
            print(f"  {arm:22s} " + " ".join(f"{t}={e:.3e}" for t, e in errs.items()))
        return shape_ok

    for name, (nq, nkv, hd, s) in SHAPES.items():
        ok_all &= check(name, nq, nkv, hd, s)
        torch.cuda.empty_cache()
    results["result"] = "pass" if ok_all else "fail"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    dist.destroy_process_group()
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
