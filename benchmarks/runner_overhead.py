"""The runner's own cost: parsing a 100,000-step log per format, and the live launch path per line.

    .venv/bin/python benchmarks/runner_overhead.py [--steps 100000]

Prints, for each log format, the seconds to parse, the cost per step and per line; then, for a real
subprocess (tests/runner/fixture_trainer.py) printing engine-format lines, the wall time through
runner.launch.run_script (log file, console echo, live parser, progress) against the same program with its
output sent straight to /dev/null: the difference per line is what the runner adds to a training run.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.launch import run_script  # noqa: E402
from runner.logs import parse_file  # noqa: E402

TRAINER = ROOT / "tests/runner/fixture_trainer.py"


def make_log(fmt: str, steps: int, path: Path) -> None:
    with path.open("w") as out:
        subprocess.run([sys.executable, str(TRAINER), "--format", fmt, "--steps", str(steps), "--base-time", "1.0"],
                       stdout=out, check=True)


def bench_parse(fmt: str, steps: int, folder: Path) -> dict[str, float]:
    path = folder / f"{fmt}.txt"
    make_log(fmt, steps, path)
    lines = sum(1 for _ in path.open())
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        log = parse_file(path, fmt)
        best = min(best, time.perf_counter() - t0)
    assert len(log.steps) == steps, (fmt, len(log.steps))
    return {"format": fmt, "steps": steps, "lines": lines, "bytes": path.stat().st_size, "seconds": best,
            "us_per_step": best / steps * 1e6, "us_per_line": best / lines * 1e6}


def bench_launch(steps: int, folder: Path) -> dict[str, float]:
    cmd = f"{sys.executable} {TRAINER} --format openrecipes --steps {steps} --base-time 1.0"
    script = folder / "run.sh"
    script.write_text(cmd + "\n")
    t0 = time.perf_counter()
    subprocess.run(["bash", str(script)], stdout=subprocess.DEVNULL, check=True)
    bare = time.perf_counter() - t0
    sink = io.StringIO()
    t0 = time.perf_counter()
    done = run_script(script, {"PATH": "/usr/bin:/bin"}, folder, folder / "launch.log", "openrecipes", steps,
                      1024, 1, None, sink, progress=False)
    through = time.perf_counter() - t0
    assert len(done.parsed.steps) == steps
    lines = done.parsed.lines
    return {"steps": steps, "lines": lines, "bare_seconds": bare, "runner_seconds": through,
            "added_us_per_line": (through - bare) / lines * 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        parse = [bench_parse(fmt, args.steps, folder) for fmt in ("openrecipes", "megatron", "miles")]
        launch = bench_launch(args.steps, folder)
    if args.json:
        print(json.dumps({"parse": parse, "launch": launch}, indent=1))
        return 0
    print(f"parsing a {args.steps:,}-step log (best of 3):")
    for r in parse:
        print(f"  {r['format']:<12} {r['lines']:>8,} lines {r['bytes'] / 1e6:7.1f} MB  {r['seconds']:6.2f} s  "
              f"{r['us_per_step']:6.1f} us/step  {r['us_per_line']:5.1f} us/line")
    print(f"live launch path, {launch['steps']:,} engine steps ({launch['lines']:,} lines):")
    print(f"  program alone {launch['bare_seconds']:.2f} s, through the runner {launch['runner_seconds']:.2f} s: "
          f"{launch['added_us_per_line']:.1f} us added per line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
