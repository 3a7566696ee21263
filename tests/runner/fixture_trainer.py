"""TEST FIXTURE PROGRAM, not a trainer: prints training-log lines in a framework's real format, with
deterministic step times and losses, so the runner's launch, parsing and write-back run end to end on CPU.

    python fixture_trainer.py --format {megatron,miles,openrecipes} --steps 20
        [--mode ok|crash|nan|short|hang|hang-detached]

Standard library only (it runs under whatever python3 the recipe's script finds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import subprocess
import sys
import time

START = dt.datetime(2026, 10, 20, 12, 0, 0)


def step_time(i: int, base: float, scale: float) -> float:
    warm = 3.0 if i == 0 else 1.5 if i == 1 else 1.0
    return round(base * scale * warm * (1.0 + 0.03 * math.sin(i * 1.7)), 4)


def loss_at(i: int) -> float:
    return round(2.27393 * math.exp(-0.01 * i) + 0.004 * math.cos(i), 6)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", required=True, choices=["megatron", "miles", "openrecipes"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--base-time", type=float, default=111.3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every step time (a regression > 1)")
    ap.add_argument("--mode", default="ok", choices=["ok", "crash", "nan", "short", "hang", "hang-detached"])
    ap.add_argument("--sleep", type=float, default=0.0, help="real seconds to sleep per step")
    ap.add_argument("--peak-memory", type=float, nargs=2, metavar=("ALLOCATED_GIB", "RESERVED_GIB"),
                    help="end with the summary line a run of ours prints, stating this peak memory per GPU")
    ap.add_argument("--pid-file", help="write this process's pid and its child's (hang mode) here")
    ap.add_argument("--global-batch", type=int, default=128)
    ap.add_argument("--row-tokens", type=int, default=8192)
    args = ap.parse_args()
    if args.pid_file:
        with open(args.pid_file, "w") as f:
            f.write(f"{os.getpid()}\n")
    print("NCCL INFO NCCL version 2.28.9+cuda13.0", flush=True)
    print("training ...", flush=True)
    clock = START
    tokens = args.global_batch * args.row_tokens
    steps = 10 if args.mode == "short" else args.steps
    for i in range(steps):
        if args.mode.startswith("hang") and i == 3:
            # hang-detached: the child leaves the process group (its own session, as daemons and Ray's workers do).
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                     start_new_session=args.mode == "hang-detached")
            if args.pid_file:
                with open(args.pid_file, "a") as f:
                    f.write(f"{child.pid}\n")
            print("waiting on a collective that never completes", flush=True)
            time.sleep(300)
        if args.mode == "crash" and i == 8:
            print("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>", flush=True)
            print("RuntimeError: CUDA error: an illegal memory access was encountered", flush=True)
            return 1
        t = step_time(i, args.base_time, args.scale)
        loss = math.nan if args.mode == "nan" and i == 9 else loss_at(i)
        clock += dt.timedelta(seconds=t)
        stamp = clock.strftime("%Y-%m-%d %H:%M:%S")
        if args.format == "megatron":
            loss_text = "nan" if math.isnan(loss) else f"{loss:.6E}"
            print(
                f" [{stamp}] iteration {i + 1:8d}/{args.steps:8d} | consumed samples: {(i + 1) * args.global_batch:12d} | "
                f"elapsed time per iteration (ms): {t * 1000:.1f} | throughput per GPU (TFLOP/s/GPU): 212.3 | "
                f"learning rate: 1.000000E-05 | global batch size: {args.global_batch:5d} | lm loss: {loss_text} | "
                f"loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | "
                f"number of nan iterations:   {int(math.isnan(loss))} |",
                flush=True,
            )
        elif args.format == "miles":
            train = round(t - 0.8, 4)
            print(f"(RolloutManager pid=4121) [{stamp}] rollout.py:512 - perf {i}: "
                  f"{{'perf/rollout_time': 0.41, 'perf/tokens_per_gpu_per_sec': 0.0}}", flush=True)
            print(f"(MegatronTrainRayActor pid=4342) [{stamp}] train_metric_utils.py:50 - perf {i}: "
                  f"{{'perf/actor_train_time': {train}, 'perf/actor_train_tflops': 190.1, "
                  f"'perf/actor_train_tok_per_s': {tokens / train}, 'perf/train_wait_time': 0.8, "
                  f"'perf/train_time': {train}, 'perf/step_time': {t}, 'perf/wait_time_ratio': {0.8 / t}}}", flush=True)
            print(f"(MegatronTrainRayActor pid=4342) [{stamp}] log_utils.py:463 - step {i}: "
                  f"{{'train/loss': {loss}, 'train/grad_norm': 0.31, 'train/lr-pg_0': 1e-05}}", flush=True)
        else:
            body = (f'{{"step": {i}, "steps": {args.steps}, "time_s": {t}, '
                    f'"loss": {"NaN" if math.isnan(loss) else loss}, "tokens": {tokens}}}')
            print(f"[rank0]: openrecipes-step {body}", flush=True)
        if args.sleep:
            time.sleep(args.sleep)
    print("training done", flush=True)
    if args.peak_memory:
        allocated, reserved = args.peak_memory
        print(f'openrecipes-framework {{"framework": "fixture", "peak_memory": {{"allocated_gib": {allocated}, '
              f'"reserved_gib": {reserved}, "ranks": 1}}}}', flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
