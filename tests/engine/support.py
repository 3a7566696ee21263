"""A throwaway registry with a tiny Llama-shaped model card and one engine recipe, for CPU tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

TINY_CARD = {
    "Tiny-Llama-Test": {
        "hf_id": "openrecipes/tiny-llama-test",
        "revision": None,
        "family": "test",
        "architecture": {
            "layers": 4, "hidden_size": 64, "ffn_hidden_size": 128, "attention_heads": 4,
            "attention": {"global": {"kv_heads": 2, "head_dim": 16}}, "layer_pattern": ["global"],
            "vocab_size": 128, "tied_embeddings": True, "norm_eps": 1.0e-5, "rope_base": 10000.0,
        },
        "active_params": {"count": 156_224, "includes_norms": True, "source": "tests/engine/support.py"},
        "source": "tests/engine/support.py (a test shape, not a real model)",
        "date": "2026-12-02",
    }
}
VOCAB = TINY_CARD["Tiny-Llama-Test"]["architecture"]["vocab_size"]
# The engine's CLI with the CPU adaptation of tests/engine/cpu_megatron.py applied first.
CPU_TRAIN = ROOT / "tests" / "engine" / "cpu_train.py"
# The CPU path: gloo, fp32, megatron's Float16 optimizer (its distributed optimizer needs CUDA tensor types).
CPU_FLAGS = "--cpu --no-distributed-optimizer"


def cpu_env() -> dict[str, str]:
    # One intra-op thread per process: CI has two cores and megatron's tiny matmuls gain nothing from more.
    return dict(os.environ) | {"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "PYTHONWARNINGS": "ignore"}


def recipe_dict(*, tp: int = 1, pp: int = 1, dp: int = 1, sp: bool = False, split: tuple[int, int] | None = None,
                steps: int = 4, global_batch: int = 4, mbs: int = 1, row_tokens: int = 32,
                attention: str = "sdpa", cp: int = 1, precision: str = "bf16") -> dict:
    n = tp * pp * dp
    return {
        "schema_version": 1, "model": "Tiny-Llama-Test",
        "gpu": {"type": "H200", "memory_gb": 141, "count": n, "per_node": n, "instance": None},
        "author": {"name": "tests", "url": None}, "status": "measured",
        "stack": {"framework": "openrecipes-engine 0.1.0", "attention_backend": attention},
        "workload": {"row_tokens": row_tokens, "rows": "synthetic tokens", "global_batch": global_batch,
                     "precision": precision,
                     # the engine's old default, stated: a run of ours trains at the schedule its recipe states
                     "schedule": {"peak_lr": 3e-4, "warmup_steps": 0, "decay": "constant"}},
        "layout": {"label": f"TP{tp} PP{pp} DP{dp}", "summary": "test layout", "tp": tp, "pp": pp, "cp": cp,
                   "ep": 1, "dp": dp, "sequence_parallel": sp,
                   "layer_split": {"first": split[0], "last": split[1]} if split else None,
                   "rows_per_microbatch": mbs, "recompute": {"granularity": "none"}},
        "result": {"tokens_per_s_per_gpu": 1.0, "active_params": {"count": 156_224}, "steps_per_run": steps},
        "run": "python -m runner train RECIPE",
    }


def make_registry(tmp: Path, **layout) -> Path:
    """tmp/catalog (the repo's GPUs and instances plus the tiny card) and one recipe; returns the recipe path."""
    (tmp / "catalog" / "models").mkdir(parents=True, exist_ok=True)
    for name in ("gpus.yaml", "instances.yaml"):
        shutil.copy(ROOT / "catalog" / name, tmp / "catalog" / name)
    (tmp / "catalog" / "models" / "tiny-llama-test.yaml").write_text(yaml.safe_dump(TINY_CARD, sort_keys=False))
    path = tmp / "recipes" / "tiny-llama-test" / "h200" / "test.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(recipe_dict(**layout), sort_keys=False))
    return path
