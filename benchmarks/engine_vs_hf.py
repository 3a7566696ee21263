"""The bundled engine against a plain Hugging Face transformers training loop, same shape, one GPU.

For each shape (a bundled-engine recipe): the engine (`python -m runner.engine train RECIPE`, or its saved log
with --engine-log) and a transformers loop (LlamaForCausalLM from the same catalog architecture, pure bf16
weights, SDPA attention, torch's fused AdamW, gradient clipping at 1.0, the recipe's micro-batch and global
batch: the same tokens per step), each in its own process. Prints tokens/s per GPU, MFU by 6N, MFU with the
causal attention term and peak memory; writes JSON with --out.

MFU with attention counts 6N + 6·L·s·(query heads x head dim) FLOPs per token (QK^T and AV, forward and backward,
halved for the causal mask); it is generator.figures.mfu with N replaced by N + L·s·d_q.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator import figures  # noqa: E402
from generator.catalog import Catalog  # noqa: E402
from generator.registry import load_catalog  # noqa: E402

STEP = "openrecipes-step "
SUMMARY = "openrecipes-engine "


def parse_log(text: str) -> tuple[list[dict], dict | None]:
    steps, summary = [], None
    for line in text.splitlines():
        if line.startswith(STEP):
            steps.append(json.loads(line[len(STEP):]))
        elif line.startswith(SUMMARY):
            summary = json.loads(line[len(SUMMARY):])
    return steps, summary


def hf_loop(recipe_path: str, steps: int) -> None:
    """Runs in a child process: prints openrecipes-step lines for the transformers loop."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from runner.engine.plan import make_plan

    plan = make_plan(recipe_path, steps=steps)
    a = plan.arch
    kwargs = dict(vocab_size=a.vocab_size, hidden_size=a.hidden_size, intermediate_size=a.ffn_hidden_size,
                  num_hidden_layers=a.layers, num_attention_heads=a.attention_heads, num_key_value_heads=plan.kv_heads,
                  head_dim=plan.head_dim, rms_norm_eps=a.norm_eps, tie_word_embeddings=a.tied_embeddings,
                  max_position_embeddings=plan.row_tokens, attention_bias=False, mlp_bias=False)
    try:
        config = LlamaConfig(rope_parameters={"rope_type": "default", "rope_theta": a.rope_base}, **kwargs)
    except TypeError:
        config = LlamaConfig(rope_theta=a.rope_base, **kwargs)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(config)
    torch.set_default_dtype(torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    nmb = plan.global_batch // plan.rows_per_microbatch
    gen = torch.Generator(device="cuda").manual_seed(1)
    for step in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        total = torch.zeros((), device="cuda")
        for _ in range(nmb):
            x = torch.randint(1, a.vocab_size, (plan.rows_per_microbatch, plan.row_tokens), device="cuda", generator=gen)
            loss = model(input_ids=x, labels=x).loss / nmb
            loss.backward()
            total += loss.detach()  # no host sync inside the step
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        rec = {"step": step, "steps": steps, "time_s": time.perf_counter() - t0, "loss": float(total),
               "tokens": plan.tokens_per_step, "max_memory_gb": round(torch.cuda.max_memory_allocated() / 1e9, 3)}
        print(STEP + json.dumps(rec), flush=True)
    import transformers

    print(SUMMARY + json.dumps({"transformers": transformers.__version__, "torch": torch.__version__,
                                "peak_memory_gb": round(torch.cuda.max_memory_allocated() / 1e9, 3)}), flush=True)


def figures_of(steps: list[dict], window: tuple[int, int], plan, catalog: Catalog, summary: dict | None) -> dict:
    times = [s["time_s"] for s in steps]
    tps = figures.tokens_per_s_per_gpu(times, window, plan.global_batch, plan.row_tokens, 1)
    card = catalog.models[plan.model]
    peak = catalog.gpus["H200"].peak_flops.bf16
    n = card.active_params.count
    attn_n = n + plan.arch.layers * plan.row_tokens * plan.arch.attention_heads * plan.head_dim
    return {"tokens_per_s_per_gpu": round(tps, 1), "mfu_6n": round(figures.mfu(n, tps, peak), 4),
            "mfu_with_attention": round(figures.mfu(attn_n, tps, peak), 4),
            "step_time_cv_percent": round(figures.step_time_cv_percent(times, window), 2),
            "peak_memory_gb": (summary or {}).get("peak_memory_gb")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("recipes", nargs="+", help="bundled-engine recipes (one shape each)")
    ap.add_argument("--engine-log", action="append", default=[], help="RECIPE=LOG: use a saved engine log")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=4, help="steps left out of the window")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--hf-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.hf_child:
        hf_loop(args.hf_child, args.steps)
        return 0

    from runner.engine.plan import make_plan

    catalog = load_catalog(ROOT)
    saved = dict(item.split("=", 1) for item in args.engine_log)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    rows = []
    for recipe in args.recipes:
        plan = make_plan(recipe, steps=args.steps)
        if recipe in saved:
            engine_text = Path(saved[recipe]).read_text()
        else:
            engine_text = subprocess.run([sys.executable, "-m", "runner.engine", "train", recipe, "--steps",
                                          str(args.steps)], cwd=ROOT, env=env, capture_output=True, text=True).stdout
        hf = subprocess.run([sys.executable, __file__, recipe, "--hf-child", recipe, "--steps", str(args.steps)],
                            cwd=ROOT, env=env, capture_output=True, text=True)
        row = {"recipe": recipe, "model": plan.model, "row_tokens": plan.row_tokens, "global_batch": plan.global_batch,
               "rows_per_microbatch": plan.rows_per_microbatch}
        for arm, text in (("engine", engine_text), ("transformers", hf.stdout)):
            steps, summary = parse_log(text)
            window = (args.warmup, len(steps) - 1)
            if len(steps) <= args.warmup:
                row[arm] = {"error": (hf.stderr if arm == "transformers" else "no steps")[-2000:]}
                continue
            row[arm] = {**figures_of(steps, window, plan, catalog, summary), "window": list(window), "summary": summary}
        if "tokens_per_s_per_gpu" in row["engine"] and "tokens_per_s_per_gpu" in row["transformers"]:
            row["speedup"] = round(row["engine"]["tokens_per_s_per_gpu"] / row["transformers"]["tokens_per_s_per_gpu"], 3)
        rows.append(row)
    print(f"{'shape':28s} {'arm':13s} {'tok/s/GPU':>10s} {'MFU 6N':>7s} {'MFU+attn':>8s} {'peak GB':>8s}")
    for row in rows:
        for arm in ("engine", "transformers"):
            f = row[arm]
            if "error" in f:
                print(f"{row['model'] + ' ' + str(row['row_tokens']):28s} {arm:13s} ERROR {f['error'][-300:]}")
                continue
            print(f"{row['model'] + ' s=' + str(row['row_tokens']):28s} {arm:13s} {f['tokens_per_s_per_gpu']:10.1f} "
                  f"{f['mfu_6n']:7.2%} {f['mfu_with_attention']:8.2%} {f['peak_memory_gb']:8.1f}")
        if "speedup" in row:
            print(f"{'':28s} engine / transformers = {row['speedup']:.3f}x")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
