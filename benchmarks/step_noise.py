"""Why does a step take longer than its neighbours? Engine runs with the GPU's clocks, power and throttle reasons
sampled beside every step.

    python benchmarks/step_noise.py RECIPE [--runs 3] [--steps 30] [--gc-off-runs 1] [--sample-ms 100] --out noise.json

Each run is `python -m runner.engine train RECIPE --steps S` (the recipe's own engine, unchanged); each
`openrecipes-step` line is stamped with the wall clock when it arrives, so step k spans [arrival - time_s, arrival].
`nvidia-smi --query-gpu=... -lms MS` samples the card meanwhile (`--sample-ms 0`: no sampler, the control: on the
gVisor H200 a 100 ms sampler itself slowed the 1B engine's steps from about 0.55 s to 0.8 s).
For each step the samples inside its span give
the mean SM clock, the mean power and the union of active clock-event (throttle) reasons. A run with Python's
garbage collector disabled (`--gc-off-runs`) separates host pauses from device slowdowns. Prints one table row per
step whose time is more than 10% over the run's median (the slow steps), and writes everything as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runner.logs import ENGINE_PREFIX  # noqa: E402

QUERY = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active"
GC_OFF = ("import gc, runpy, sys; gc.disable(); sys.argv = ['runner.engine'] + sys.argv[1:]; "
          "runpy.run_module('runner.engine', run_name='__main__')")


def sampler(path: Path, every_ms: int) -> subprocess.Popen[bytes] | None:
    handle = path.open("wb")
    if every_ms <= 0:
        return None
    return subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms",
                             str(every_ms)], stdout=handle, stderr=subprocess.DEVNULL)


def read_samples(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 7:
            continue
        try:
            stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
            stamp += float("0." + parts[0].split(".")[1]) if "." in parts[0] else 0.0
            out.append({"t": stamp, "sm": float(parts[1]), "mem": float(parts[2]), "power": float(parts[3]),
                        "temp": float(parts[4]), "util": float(parts[5]), "reasons": int(parts[6], 16)})
        except (ValueError, IndexError):
            continue
    return out


def one_run(recipe: str, steps: int, gc_off: bool) -> list[dict]:
    argv = [sys.executable, "-c", GC_OFF] if gc_off else [sys.executable, "-m", "runner.engine"]
    proc = subprocess.Popen([*argv, "train", recipe, "--steps", str(steps)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    found = []
    assert proc.stdout is not None
    for line in proc.stdout:
        arrived = time.time()
        at = line.find(ENGINE_PREFIX)
        if at >= 0:
            step = json.loads(line[at + len(ENGINE_PREFIX):])
            found.append({"step": step["step"], "time_s": step["time_s"], "end": arrived})
    proc.wait()
    return found


def annotate(steps: list[dict], samples: list[dict]) -> None:
    for s in steps:
        inside = [x for x in samples if s["end"] - s["time_s"] <= x["t"] <= s["end"]]
        s["samples"] = len(inside)
        s["sm_mhz"] = statistics.fmean(x["sm"] for x in inside) if inside else None
        s["power_w"] = statistics.fmean(x["power"] for x in inside) if inside else None
        s["util"] = statistics.fmean(x["util"] for x in inside) if inside else None
        reasons = 0
        for x in inside:
            reasons |= x["reasons"]
        s["reasons"] = hex(reasons)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gc-off-runs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--sample-ms", type=int, default=100, help="nvidia-smi sampling period; 0: none")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    samples_path = args.out.with_suffix(".smi.csv")
    smi = sampler(samples_path, args.sample_ms)
    runs = []
    try:
        for i in range(args.runs + args.gc_off_runs):
            gc_off = i >= args.runs
            runs.append({"gc_off": gc_off, "steps": one_run(args.recipe, args.steps, gc_off)})
    finally:
        if smi is not None:
            smi.terminate()
            smi.wait()
    samples = read_samples(samples_path)
    print(f"{len(samples)} nvidia-smi samples")
    for i, run in enumerate(runs):
        steps = run["steps"]
        annotate(steps, samples)
        body = [s["time_s"] for s in steps[3:]]  # steps 0-2: compile and allocator warm-up
        median = statistics.median(body) if body else float("nan")
        run["median_s"] = median
        run["cv_percent_from_3"] = statistics.stdev(body) / statistics.fmean(body) * 100 if len(body) > 1 else None
        slow = [s for s in steps[3:] if s["time_s"] > 1.1 * median]
        run["slow_steps"] = [s["step"] for s in slow]
        print(f"run {i + 1} (gc {'off' if run['gc_off'] else 'on'}): median {median:.4f} s, CV from step 3 "
              f"{run['cv_percent_from_3']:.2f}%, slow steps {run['slow_steps']}")
        for s in slow:
            print(f"   step {s['step']:3d} {s['time_s']:.4f} s  sm {s['sm_mhz']} MHz  power {s['power_w']} W  "
                  f"util {s['util']}  reasons {s['reasons']}  ({s['samples']} samples)")
        fast = [s for s in steps[3:] if s not in slow and s["sm_mhz"] is not None]
        if not samples:
            continue
        if fast:
            print(f"   other steps: sm {statistics.fmean(s['sm_mhz'] for s in fast):.0f} MHz, power "
                  f"{statistics.fmean(s['power_w'] for s in fast):.0f} W")
    args.out.write_text(json.dumps({"recipe": args.recipe, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
