"""The bundled engine against a plain Hugging Face transformers training loop, same shape, one GPU.

For each shape (a bundled-engine recipe): the engine (`python -m runner.engine train RECIPE`, or its saved log
with --engine-log) and a transformers loop (LlamaForCausalLM from the same catalog architecture, pure bf16
weights, SDPA attention, torch's fused AdamW, gradient clipping at 1.0, the recipe's micro-batch and global
batch: the same tokens per step), each in its own process; the loop is the transformers recipe kind
(runner/frameworks/transformers.py) on the engine's pattern rows. Prints tokens/s per GPU, MFU by 6N, MFU with
the causal attention term and peak memory; writes JSON with --out.

MFU with attention counts 6N + 6·L·s·(query heads x head dim) FLOPs per token (QK^T and AV, forward and backward,
halved for the causal mask); it is generator.figures.mfu with N replaced by N + L·s·d_q.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator import figures  # noqa: E402
from generator.catalog import Catalog  # noqa: E402
from generator.registry import load_catalog  # noqa: E402

STEP = "openrecipes-step "
SUMMARIES = ("openrecipes-engine ", "openrecipes-framework ")  # the engine's and runner/frameworks' summary lines


def parse_log(text: str) -> tuple[list[dict], dict | None]:
    steps, summary = [], None
    for line in text.splitlines():
        if line.startswith(STEP):
            steps.append(json.loads(line[len(STEP):]))
        elif line.startswith(SUMMARIES):
            summary = json.loads(line.split(" ", 1)[1])
    return steps, summary


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
    args = ap.parse_args()

    from runner.engine.plan import make_engine_plan

    catalog = load_catalog(ROOT)
    saved = dict(item.split("=", 1) for item in args.engine_log)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    rows = []
    for recipe in args.recipes:
        plan = make_engine_plan(recipe, steps=args.steps)
        if recipe in saved:
            engine_text = Path(saved[recipe]).read_text()
        else:
            engine_text = subprocess.run([sys.executable, "-m", "runner.engine", "train", recipe, "--steps",
                                          str(args.steps)], cwd=ROOT, env=env, capture_output=True, text=True).stdout
        # the transformers loop as a recipe kind runs (runner/frameworks/transformers.py), on the engine recipe's shape
        hf = subprocess.run([sys.executable, "-m", "runner.frameworks.transformers", recipe, "--steps", str(args.steps)],
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
