"""How fast `check` is on a large registry, against libyaml's C loader alone on the same files.

Writes N valid synthetic recipes (varied layouts, sizes like the reference) to a temporary folder, then times,
in the same run: the bare parse (yaml.load with CSafeLoader, every file the check parses: recipes and failed-layouts
files, one process), a cold check (no cache; one
worker process per core, as `python -m generator check` runs on a registry this size), the same cold check in one
process, and a warm re-check (content-hash cache). Goals: cold <= 1.3x bare parse; warm <= 0.1x cold.

    python benchmarks/check_scale.py [--recipes 10000]
    python benchmarks/check_scale.py --committed [--repeat 5]  # this repository's own registry; medians of 5 runs
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator import figures  # noqa: E402
from generator.check import _workers, check_tree  # noqa: E402


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
LAYOUTS = [(2, 4, 1, 1, (13, 15)), (2, 4, 1, 1, (14, 14)), (4, 2, 1, 1, (31, 29)), (8, 1, 1, 1, None),
           (2, 2, 1, 2, (29, 31)), (4, 1, 1, 2, None), (1, 4, 1, 2, (16, 14)), (2, 1, 1, 4, None)]


def synthetic(text: str, rng: random.Random) -> str:
    tp, pp, cp, dp, split = rng.choice(LAYOUTS)
    tps = round(rng.uniform(400, 2500), 1)
    usd = round(figures.usd_per_million_tokens(55.04, 8, tps), 2)
    mfu = round(figures.mfu(30_696_013_824, tps, 989e12), 4)
    out = text.replace("  tp: 2\n", f"  tp: {tp}\n").replace("  pp: 4\n", f"  pp: {pp}\n")
    out = out.replace("  dp: 1\n", f"  dp: {dp}\n").replace("  sequence_parallel: true\n",
                                                         f"  sequence_parallel: {'true' if tp > 1 else 'false'}\n")
    if split is None:
        out = out.replace("  layer_split:\n    first: 13\n    last: 15\n", "  layer_split: null\n")
    else:
        out = out.replace("    first: 13\n    last: 15\n", f"    first: {split[0]}\n    last: {split[1]}\n")
    out = out.replace("  tokens_per_s_per_gpu: 1178.1\n", f"  tokens_per_s_per_gpu: {tps:.1f}\n")
    out = out.replace("  usd_per_million_tokens: 1.62\n", f"  usd_per_million_tokens: {usd:.2f}\n")
    out = out.replace("  mfu: 0.2194\n", f"  mfu: {mfu:.4f}\n")
    out = out.replace("  label: TP2 PP4 DP1\n", f"  label: TP{tp} PP{pp} DP{dp}\n")
    # GPU-hours cannot be less than the measured window's own duration at this speed
    out = out.replace("  gpu_hours: 5.69\n", f"  gpu_hours: {15_728_640 / (tps * 3600) * 1.2:.2f}\n")
    # vary the size: longer or shorter notes
    return out + "".join(f"  - note line {i} of a longer discussion of the measured run.\n"
                         for i in range(rng.randint(0, 40)))


def write_synthetic(root: Path, n: int) -> list[Path]:
    """N synthetic recipes under root/recipes (varied layouts and sizes, as the reference)."""
    rng = random.Random(7)
    text = REFERENCE.read_text()
    folder = root / "recipes/gemma-4-31b/h100"
    folder.mkdir(parents=True)
    files = []
    for i in range(n):
        path = folder / f"synthetic-{i:05d}.yaml"
        path.write_text(synthetic(text, rng))
        files.append(path)
    return files


def copy_committed(root: Path) -> list[Path]:
    """This repository's recipes (and failed layouts) under root: the real registry, its real sizes and shapes."""
    for name in ("recipes", "failed"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, root / name)
    return sorted((root / "recipes").rglob("*.yaml"))


def failed_files(root: Path) -> list[Path]:
    return sorted((root / "failed").glob("*.yaml"))


def time_phases(root: Path, files: list[Path]) -> dict[str, float]:
    """Seconds for: bare parse, cold check (workers as the CLI picks), cold in one process, warm re-check."""
    n = len(files)
    start = time.perf_counter()
    for path in files + failed_files(root):  # every file the check parses
        yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    bare = time.perf_counter() - start

    start = time.perf_counter()
    run = check_tree(root, use_cache=False)
    cold = time.perf_counter() - start
    assert run.files == n and not run.problems, run.problems[:5]

    start = time.perf_counter()
    check_tree(root, use_cache=False, jobs=1)
    cold_one = time.perf_counter() - start

    cache = root / "cache"  # the user's cache folder, here a fresh one inside the temporary registry
    check_tree(root, use_cache=True, cache_folder=cache)  # fill the cache (a cold check that also writes it)
    start = time.perf_counter()
    run = check_tree(root, use_cache=True, cache_folder=cache)
    warm = time.perf_counter() - start
    assert run.files == n and not run.problems
    return {"bare": bare, "cold": cold, "cold_one": cold_one, "warm": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", type=int, default=10_000)
    parser.add_argument("--committed", action="store_true", help="time this repository's registry instead")
    parser.add_argument("--repeat", type=int, default=1, help="run every phase this many times; print the medians")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(ROOT / "catalog", root / "catalog")
        files = copy_committed(root) if args.committed else write_synthetic(root, args.recipes)
        total_bytes = sum(p.stat().st_size for p in files)
        failed = failed_files(root)
        failed_bytes = sum(p.stat().st_size for p in failed)
        runs = [time_phases(root, files) for _ in range(args.repeat)]
        t = {phase: statistics.median(r[phase] for r in runs) for phase in runs[0]}

    n = len(files)
    bare, cold, cold_one, warm = t["bare"], t["cold"], t["cold_one"], t["warm"]
    if args.repeat > 1:
        print(f"medians of {args.repeat} runs of every phase; ratios of medians")
    print(f"{n:,} recipes{' (the committed registry)' if args.committed else ''}, {total_bytes / 2**20:.1f} MiB"
          + (f"; {len(failed)} failed-layouts files, {failed_bytes / 2**20:.1f} MiB" if failed else ""))
    print(f"bare CSafeLoader parse : {bare:7.2f} s  {n / bare:8.0f} recipes/s")
    print(f"cold check             : {cold:7.2f} s  {n / cold:8.0f} recipes/s  ratio {cold / bare:.2f} (goal <= 1.3)"
          f"  [{_workers(n, None)} worker process(es), {_cores()} core(s)]")
    print(f"cold check, 1 process  : {cold_one:7.2f} s  {n / cold_one:8.0f} recipes/s  ratio {cold_one / bare:.2f}")
    print(f"warm re-check (cache)  : {warm:7.2f} s  {n / warm:8.0f} recipes/s  ratio to cold {warm / cold:.3f} (goal <= 0.1)")


if __name__ == "__main__":
    main()
