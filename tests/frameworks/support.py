"""Shared by the framework tests: the framework recipes (measured on the H200, 2026-12-04), a throwaway registry whose
model card is tiny, and where the frameworks' packages are (the shared venv has torch but neither torchtitan nor
transformers)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

from tests.engine.support import ROOT, TINY_CARD, make_registry

PENDING = ROOT / "runner" / "frameworks" / "pending"  # where a framework recipe waits for its first measurement
REGISTRY = ROOT / "recipes"
FRAMEWORK_IDS = ("llama-3.2-1b/h200/torchtitan-4k", "llama-3.2-1b/h200/transformers-4k",
                 "llama-3.2-3b/h200/torchtitan-8k", "llama-3.2-3b/h200/transformers-8k")
RECIPES = [REGISTRY / f"{rid}.yaml" for rid in FRAMEWORK_IDS]
# The measured figures (and what follows from them) a tiny-card copy drops: its run is a new measurement.
MEASURED_LINES = re.compile(r"^  (usd_per_million_tokens|mfu|runs_cv_percent|gpu_hours|gpu_hours_note): .*\n", re.M)
# Where torchtitan 0.2.2 and transformers were installed apart from the shared venv (pip install --target DIR):
# the CPU tests that run them put DIR on the subprocesses' PYTHONPATH and are skipped without it.
SITE_ENV = "OPENRECIPES_FRAMEWORK_SITE"
TINY_DATASET = ("  dataset:\n    name: synthetic tokens\n    source: runner/engine/streams.py (PatternStream, seed 1234)\n"
                "    stream: pattern\n")
TINY_PEAK_LR = "3.0e-2"
CARD_SOURCE = "https://github.com/openrecipes (the tiny test card of tests/engine/support.py)"


def framework_site() -> str | None:
    return os.environ.get(SITE_ENV) or None


def has_package(name: str) -> bool:
    site = framework_site()
    if site and (Path(site) / name).is_dir():
        return True
    return importlib.util.find_spec(name) is not None


def subprocess_env() -> dict[str, str]:
    """The environment of a framework run: this checkout (and the site) importable, the venv's python3 first on
    PATH (a recipe's run says `python3`), one thread (two shared CPU cores)."""
    paths = [str(ROOT)] + ([framework_site()] if framework_site() else [])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "OPENRECIPES_GPUS": "1xNVIDIA H200"}


def unmeasured(text: str) -> str:
    """A measured recipe's text as a recipe not yet measured: placeholder tokens/s, measured null, no derived
    figures, no correctness evidence, status measured (the runner's gate has no recorded figure to hold it to)."""
    text = MEASURED_LINES.sub("", text)
    for old, new in ((r"^  tokens_per_s_per_gpu: .*$", "  tokens_per_s_per_gpu: 1.0"),
                     (r"^  step_time_cv_percent: .*$", "  step_time_cv_percent: null"),
                     (r"^  measured: .*$", "  measured: null"), (r"^status: .*$", "status: measured")):
        text, n = re.subn(old, new, text, count=1, flags=re.M)
        assert n == 1, old
    return re.sub(r"^correctness:\n(?:  .*\n)+", "", text, count=1, flags=re.M)


def tiny_registry(tmp: Path, source: Path, *, steps: int, window: tuple[int, int], row_tokens: int = 32,
                  extra_run_args: str = "") -> Path:
    """tmp as a registry holding the framework recipe `source` (under recipes/), not yet measured, retargeted at the
    tiny test card (tests/engine/support.py): same framework, layout and run line, shorter rows and run; returns the
    recipe's path there."""
    make_registry(tmp)  # catalog with the tiny card (and a test engine recipe we leave alone)
    rel = source.relative_to(REGISTRY)
    text = unmeasured(source.read_text(encoding="utf-8"))
    model = next(iter(TINY_CARD))
    count = TINY_CARD[model]["active_params"]["count"]
    rows = re.search(r"global_batch: (\d+)", text)
    assert rows
    window_tokens = (window[1] - window[0] + 1) * int(rows.group(1)) * row_tokens
    new_rel = Path("tiny-llama-test") / rel.parent.name / rel.name
    for old, new in ((r"^model: .*$", f"model: {model}"), (r"^  row_tokens: \d+$", f"  row_tokens: {row_tokens}"),
                     (r"^    count: \d+$", f"    count: {count}"), (r"^  steps_per_run: \d+$", f"  steps_per_run: {steps}"),
                     (r"^  window: \[\d+, \d+\]$", f"  window: [{window[0]}, {window[1]}]"),
                     (r"^  window_tokens: \d+$", f"  window_tokens: {window_tokens}"),
                     (r"^    source: https://huggingface.co/.*$", f"    source: {CARD_SOURCE}")):
        text, n = re.subn(old, new, text, count=1, flags=re.M)
        assert n == 1, old
    text = text.replace(f"recipes/{rel.as_posix()}", f"recipes/{new_rel.as_posix()}")
    # A run of ours must learn at its schedule (check's loss-fall rule): the learnable stream, at a peak a tiny model
    # learns at within a few steps.
    text, n = re.subn(r"^  dataset:\n(?:    .*\n)+", TINY_DATASET, text, count=1, flags=re.M)
    assert n == 1, "dataset"
    for key in ("peak_lr", "min_lr"):
        text, n = re.subn(rf"^    {key}: .*$", f"    {key}: {TINY_PEAK_LR}", text, count=1, flags=re.M)
        assert n == 1, key
    if extra_run_args:
        text = text.replace(f"recipes/{new_rel.as_posix()}\n", f"recipes/{new_rel.as_posix()} {extra_run_args}\n")
    path = tmp / "recipes" / new_rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
