"""Figures of one saved engine log (openrecipes-step lines), through generator.figures.

    python benchmarks/engine_log_figures.py LOG [--window A B] [--gpu H200]

Prints tokens/s per GPU, MFU (6N), step-time CV, peak memory and the first/last loss, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine_vs_hf import parse_log  # noqa: E402
from generator import figures  # noqa: E402
from generator.registry import load_catalog  # noqa: E402


def log_figures(text: str, window: tuple[int, int] | None = None, gpu: str = "H200", gpus: int = 1) -> dict:
    steps, summary = parse_log(text)
    if not steps:
        return {"error": "no openrecipes-step lines"}
    catalog = load_catalog(ROOT)
    window = window or (min(3, len(steps) - 1), len(steps) - 1)  # steps 0-2: compile and allocator warm-up
    times = [s["time_s"] for s in steps]
    tokens = steps[0]["tokens"]
    tps = figures.window_tokens(window, 1, tokens) / sum(times[window[0]:window[1] + 1]) / gpus
    out = {"steps": len(steps), "window": list(window), "tokens_per_step": tokens, "tokens_per_s_per_gpu": round(tps, 1),
           "step_time_cv_percent": round(figures.step_time_cv_percent(times, window), 2),
           "loss_first": steps[0]["loss"], "loss_last": steps[-1]["loss"],
           # Step lines carry no memory; the engine's summary line has the peak.
           "peak_memory_gb": (summary or {}).get("peak_memory_gb")}
    if summary and summary.get("model") in catalog.models:
        n = catalog.models[summary["model"]].active_params.count
        out["mfu_6n"] = round(figures.mfu(n, tps, catalog.gpus[gpu].peak_flops.bf16), 4)
        out["attention_backend"] = summary.get("attention_backend")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("log", type=Path)
    ap.add_argument("--window", type=int, nargs=2)
    ap.add_argument("--gpu", default="H200")
    args = ap.parse_args()
    print(json.dumps(log_figures(args.log.read_text(), tuple(args.window) if args.window else None, args.gpu)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
