"""`python -m runner train RECIPE`: the runner's `train` subcommand (also `python -m runner.engine train`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.engine import schedule

# `train` exits 2 when the recipe cannot be trained by the engine or the runner extra is not installed.
EXIT_CANNOT_TRAIN = 2
TRAIN_EPILOG = """exit codes:
  0  trained
  2  the recipe is not one the engine can train (each problem printed as path:line:col: field: message), or the
     runner extra (torch, megatron-core) is not installed: `pip install -e '.[runner]'`
"""


def add_parser(sub) -> argparse.ArgumentParser:
    """Adds `train` to the runner's subparsers (argparse `add_subparsers()` result)."""
    p = sub.add_parser("train", help="train a bundled-engine recipe on synthetic tokens (megatron-core)",
                       description="Builds the recipe's model with megatron-core, lays it out as the recipe says and "
                       "trains it on seeded synthetic tokens, one `openrecipes-step` line per step. Under torchrun, "
                       "one process per GPU.", epilog=TRAIN_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipe", type=Path, help="recipes/<model>/<gpu>/<name>.yaml")
    p.add_argument("--steps", type=int, help="steps to run (default: the recipe's result.steps_per_run)")
    p.add_argument("--attention", choices=["sdpa", "unfused"], help="override stack.attention_backend")
    p.add_argument("--rows-per-microbatch", type=int, help="override layout.rows_per_microbatch")
    p.add_argument("--recompute", choices=["none", "selective", "full"], help="override layout.recompute")
    p.add_argument("--no-fused-adam", action="store_true", help="megatron's default (foreach) torch AdamW")
    p.add_argument("--no-compile", action="store_true", help="no torch.compile'd norm, SwiGLU or bias-dropout-add")
    p.add_argument("--no-compiled-rope", action="store_true", help="megatron's eager rotary embedding")
    p.add_argument("--no-triton-swiglu", action="store_true", help="megatron's compiled SwiGLU backward")
    p.add_argument("--no-distributed-optimizer", action="store_true", help="megatron's Float16 optimizer instead")
    p.add_argument("--cross-entropy", choices=["engine", "megatron-fused", "megatron"], default="engine",
                   help="engine: runner/engine/loss.py (default); megatron-fused: megatron's native fused one; "
                   "megatron: its unfused one")
    p.add_argument("--no-cross-entropy-fusion", dest="cross_entropy", action="store_const", const="megatron",
                   help="same as --cross-entropy megatron")
    p.add_argument("--no-wgrad-fusion", action="store_true",
                   help="weight gradients written in bf16 and added to the fp32 buffer in a second pass")
    p.add_argument("--cpu", action="store_true", help="run on CPU with gloo in fp32 (tests)")
    p.add_argument("--data", choices=["pattern", "random", "markov"],
                   help="synthetic token stream (default: the recipe's workload.dataset.stream, else pattern; markov: "
                   "the learnable stream of runner/engine/streams.py)")
    schedule.add_arguments(p)
    p.add_argument("--init", choices=["seeded", "megatron"], default="seeded",
                   help="seeded: the initial checkpoint every framework here starts from (runner/engine/"
                   "initial_weights.py; default); megatron: megatron-core's own initialisation")
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    made = plan_and_options(args)  # the recipe's refusals first (precision, layout): they need no torch
    if isinstance(made, int):
        return made
    if missing_extra():
        return EXIT_CANNOT_TRAIN
    from runner.engine.train import run

    run(*made)
    return 0


def missing_extra() -> bool:
    """Whether torch or megatron-core is missing (the site install has neither), after saying so in one line: the
    engine would otherwise die on its first import with a traceback."""
    from runner.environment import missing_runner_extra, runner_extra_message

    missing = missing_runner_extra("torch", "megatron.core")
    if missing:
        print(f"error: {runner_extra_message('`python -m runner train`', missing)}", file=sys.stderr)
    return bool(missing)


def plan_and_options(args: argparse.Namespace):
    """(EnginePlan, EngineOptions) from parsed `train` arguments, or exit status 2 after printing the problems."""
    from runner.engine.plan import EngineError, make_engine_plan
    from runner.engine.train import EngineOptions

    try:
        plan = make_engine_plan(args.recipe, steps=args.steps, attention=args.attention,
                                rows_per_microbatch=args.rows_per_microbatch, recompute=args.recompute,
                                data=args.data)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_TRAIN
    except Exception as exc:  # InputError and friends carry located problems
        problems = getattr(exc, "problems", None)
        if problems:
            for problem in problems:
                print(f"error: {problem}", file=sys.stderr)
            return EXIT_CANNOT_TRAIN
        raise
    try:
        run_schedule = schedule.from_args(plan.stated_schedule, args, plan.recipe_path)
    except schedule.ScheduleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_TRAIN
    opts = EngineOptions(
        fused_adam=not args.no_fused_adam, compile=not args.no_compile, compile_rope=not args.no_compiled_rope,
        triton_swiglu=not args.no_triton_swiglu, distributed_optimizer=not args.no_distributed_optimizer,
        cross_entropy=args.cross_entropy, wgrad_fusion=not args.no_wgrad_fusion, schedule=run_schedule, cpu=args.cpu,
        data=plan.stream, init=args.init,
    )
    return plan, opts


def standalone(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.engine")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)
