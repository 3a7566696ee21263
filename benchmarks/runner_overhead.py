"""The runner's own cost: parsing a 100,000-step log per format, and the live launch path per line.

    .venv/bin/python benchmarks/runner_overhead.py [--steps 100000]

    .venv/bin/python benchmarks/runner_overhead.py --gpu [--gpu-steps 40]   (on a CUDA machine)

Prints, for each log format, the seconds to parse, the cost per step and per line, the parse time against
reading the same lines alone, and the parse time as a share of the training time the log records (1 s steps);
then, for a real
subprocess (tests/runner/fixture_trainer.py) printing engine-format lines, the wall time through
runner.launchers.process.run_script (log file, console echo, live parser, progress) against the same program with its
output sent straight to /dev/null: the difference per line is what the runner adds to a training run.
Last, a run whose steps take real time (20 ms by default, shorter than any LLM step): the wall time through the
runner against the same program whose lines are only read and dropped. That is the promise: watching and parsing
a run costs within 1% of reading its lines.

With --gpu: a small bf16 matmul "trainer" (a subprocess, engine log format, host wall time per step after a
device synchronize, as the bundled engine times its steps) runs through run_script; the tokens/s the runner
computes from its log is compared with the tokens/s from CUDA events recorded around the same steps.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.launchers.process import RunFailed, run_script  # noqa: E402
from runner.logs import parse_file  # noqa: E402

TRAINER = ROOT / "tests/runner/fixture_trainer.py"
FORMATS = ("openrecipes", "megatron", "miles", "nemo", "torchtitan")
STEP_S = 1.0  # every generated log records 1 s steps: parse seconds / steps is then the share of training time


def _nemo_line(step: int, steps: int) -> str:
    # NeMo 2's ProgressPrinter line as in tests/runner/real_logs/nemo2_llama3_8b_b200.log
    return (f"[2025-11-20T14:55:23+08:00] Training epoch 0, iteration {step}/{steps - 1} | lr: 1.469e-05 | "
            f"global_batch_size: 128 | global_step: {step} | reduced_train_loss: 6.265 | train_step_timing in s: "
            f"{STEP_S} | tokens_per_sec_per_gpu: 1.311e+05 | consumed_samples: {128 * (step + 1)}\n")


def _titan_line(step: int) -> str:
    # torchtitan v0.2.2's metrics line (log_freq 1) with its logging prefix, one second apart
    t = dt.datetime(2026, 5, 18, 16, 0, 0) + dt.timedelta(seconds=step * STEP_S)
    stamp = t.strftime("%Y-%m-%d %H:%M:%S") + ",000"
    return (f"[rank0]:[titan] {stamp} - root - INFO - step: {step}  loss:  3.24405  grad_norm:  0.8319  "
            "memory:  9.46GiB(64.99%)  tps: 8,192  tflops: 0.52  mfu: 0.17%\n")


def make_log(fmt: str, steps: int, path: Path) -> None:
    if fmt == "nemo":
        with path.open("w") as out:
            out.writelines(_nemo_line(i, steps) for i in range(steps))
        return
    if fmt == "torchtitan":  # step N (1-based) for N in 1..steps+1: steps+1 lines time `steps` steps
        with path.open("w") as out:
            out.writelines(_titan_line(i) for i in range(1, steps + 2))
        return
    with path.open("w") as out:
        subprocess.run([sys.executable, str(TRAINER), "--format", fmt, "--steps", str(steps), "--base-time", str(STEP_S)],
                       stdout=out, check=True)


def bench_parse(fmt: str, steps: int, folder: Path) -> dict[str, float]:
    path = folder / f"{fmt}.txt"
    make_log(fmt, steps, path)
    lines = sum(1 for _ in path.open())
    best = bare = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            for _line in handle:  # the baseline: reading the same lines, as the parser does, and nothing else
                pass
        bare = min(bare, time.perf_counter() - t0)
        t0 = time.perf_counter()
        log = parse_file(path, fmt)
        best = min(best, time.perf_counter() - t0)
    assert len(log.steps) == steps, (fmt, len(log.steps))
    return {"format": fmt, "steps": steps, "lines": lines, "bytes": path.stat().st_size, "seconds": best,
            "read_seconds": bare, "x_read": best / bare, "share_of_training": best / (steps * STEP_S),
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


def _relay_bare(script: Path) -> float:
    """The program with its output read line by line and dropped: reading the lines, nothing else."""
    t0 = time.perf_counter()
    with subprocess.Popen(["bash", str(script)], stdout=subprocess.PIPE, text=True, errors="replace") as proc:
        for _line in proc.stdout:  # type: ignore[union-attr]
            pass
    return time.perf_counter() - t0


def bench_paced(fmt: str, steps: int, sleep_s: float, folder: Path, repeats: int = 3) -> dict[str, float]:
    """A run whose steps take real time (sleep_s each, far shorter than any LLM training step), read by a bare
    relay and by the runner (log file, console echo, live parser, progress): the runner's share of the wall time."""
    script = folder / f"paced-{fmt}.sh"
    script.write_text(f"{sys.executable} {TRAINER} --format {fmt} --steps {steps} --base-time 1.0 --sleep {sleep_s}\n")
    bare, through = [], []
    for _ in range(repeats):  # interleaved, so drift on a shared machine hits both alike
        bare.append(_relay_bare(script))
        t0 = time.perf_counter()
        done = run_script(script, {"PATH": "/usr/bin:/bin"}, folder, folder / f"paced-{fmt}.log", fmt, steps,
                          1024, 1, None, io.StringIO(), progress=True)
        through.append(time.perf_counter() - t0)
        assert len(done.parsed.steps) == steps
    b, t = sorted(bare)[repeats // 2], sorted(through)[repeats // 2]
    return {"format": fmt, "steps": steps, "step_s": sleep_s, "bare_seconds": b, "runner_seconds": t,
            "added_percent": (t / b - 1) * 100}


GPU_TRAINER = r"""
import json, sys, time
import torch
sys.path.insert(0, sys.argv[3])
from runner.logs import format_engine_step
steps, out = int(sys.argv[1]), sys.argv[2]
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
events = []
torch.cuda.synchronize()
for step in range(steps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(40 + 10 * (step % 3)):  # uneven steps, as real ones are
        c = a @ b
    end.record()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    events.append((start, end))
    print(format_engine_step(step, steps, elapsed, float(c[0, 0].float()) * 0 + 2.0, 1024), flush=True)
json.dump([s.elapsed_time(e) / 1000.0 for s, e in events], open(out, "w"))
"""


def bench_gpu(steps: int, folder: Path) -> dict[str, float]:
    from generator.figures import tokens_per_s_per_gpu

    trainer = folder / "gpu_trainer.py"
    trainer.write_text(GPU_TRAINER)
    events_path = folder / "events.json"
    script = folder / "gpu_run.sh"
    script.write_text(f"{sys.executable} {trainer} {steps} {events_path} {ROOT}\n")
    env = dict(__import__("os").environ)
    done = run_script(script, env, folder, folder / "gpu.log", "openrecipes", steps, 1024, 1, None, io.StringIO(),
                      progress=False)
    cuda = json.loads(events_path.read_text())
    window = (5, steps - 1)
    runner_tps = tokens_per_s_per_gpu(done.parsed.step_times(), window, 1, 1024, 1)
    event_tps = tokens_per_s_per_gpu(cuda, window, 1, 1024, 1)
    return {"steps": steps, "window": list(window), "runner_tokens_per_s": runner_tps, "cuda_event_tokens_per_s": event_tps,
            "difference_percent": (runner_tps / event_tps - 1) * 100,
            "mean_step_s": sum(cuda[window[0]:]) / (steps - window[0])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--gpu", action="store_true", help="compare the runner's tokens/s with CUDA events (needs a GPU)")
    ap.add_argument("--gpu-steps", type=int, default=40)
    ap.add_argument("--paced-steps", type=int, default=300, help="steps of the live run with real step time")
    ap.add_argument("--paced-step-s", type=float, default=0.02, help="its step time (s); LLM steps take 0.1-30 s")
    args = ap.parse_args()
    if args.gpu:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                g = bench_gpu(args.gpu_steps, Path(tmp))
            except RunFailed as exc:  # no GPU, no CUDA torch: say why, from the trainer's own output
                tail = exc.log_path.read_text(errors="replace").splitlines()[-5:] if exc.log_path else []
                print(f"GPU mode failed: {exc}\n" + "\n".join("  | " + ln for ln in tail), file=sys.stderr)
                return 1
        print(json.dumps(g, indent=1) if args.json else
              f"GPU: {g['steps']} steps, window {g['window']}, mean step {g['mean_step_s'] * 1000:.1f} ms: runner "
              f"{g['runner_tokens_per_s']:.2f} tokens/s against CUDA events {g['cuda_event_tokens_per_s']:.2f} "
              f"({g['difference_percent']:+.3f}%)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        parse = [bench_parse(fmt, args.steps, folder) for fmt in FORMATS]
        launch = bench_launch(args.steps, folder)
        paced = [bench_paced(fmt, args.paced_steps, args.paced_step_s, folder) for fmt in ("openrecipes", "megatron")]
    if args.json:
        print(json.dumps({"parse": parse, "launch": launch, "paced": paced}, indent=1))
        return 0
    print(f"parsing a {args.steps:,}-step log (best of 3):")
    for r in parse:
        print(f"  {r['format']:<12} {r['lines']:>8,} lines {r['bytes'] / 1e6:7.1f} MB  {r['seconds']:6.2f} s  "
              f"{r['us_per_step']:6.1f} us/step  {r['us_per_line']:5.1f} us/line  "
              f"({r['x_read']:.1f}x reading the lines alone, {r['read_seconds']:.2f} s; "
              f"{r['share_of_training'] * 100:.4f}% of the {r['steps'] * STEP_S:,.0f} s of training it records)")
    print(f"live launch path, {launch['steps']:,} engine steps ({launch['lines']:,} lines):")
    print(f"  program alone {launch['bare_seconds']:.2f} s, through the runner {launch['runner_seconds']:.2f} s: "
          f"{launch['added_us_per_line']:.1f} us added per line ({launch['runner_seconds'] / launch['bare_seconds']:.2f}x)")
    print("live run with real step time (median of 3; goal: within 1% of reading the lines alone):")
    for r in paced:
        print(f"  {r['format']:<12} {r['steps']} steps of {r['step_s'] * 1000:.0f} ms: lines read and dropped "
              f"{r['bare_seconds']:.3f} s, through the runner {r['runner_seconds']:.3f} s ({r['added_percent']:+.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
