"""What every framework's glue shares: the recipe's plan (shapes from the model card, no torch), the tiny flavour,
the command-line options of a run and the one-line message for a missing package.

The tiny flavour (``--tiny``): 2 layers, hidden 64, 4 query heads and 2 key-value groups of 16, SwiGLU
256, vocabulary 512, rows of 64 tokens; the recipe's global batch, micro-batch and steps are kept. It proves the glue
on a recipe in seconds (the device's smoke stage), says so in the log and is never a measurement: its figures are
not the recipe's. (A test that measures through ``remeasure`` uses a registry whose model card is tiny instead.)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from generator.load import load_recipe
from generator.registry import load_catalog
from runner.engine import schedule
from runner.engine.initial_weights import Shape
from runner.engine.streams import DEFAULT_STREAM, STREAMS, stated_stream

SEED = 1234  # the bundled engine's seed (runner/engine/plan.py): the same rows and, within a framework, weights


TINY_SHAPE = Shape(layers=2, hidden=64, ffn_hidden=256, heads=4, kv_heads=2, head_dim=16, vocab_size=512,
                   norm_eps=1e-5, rope_base=500000.0, tied_embeddings=False)
TINY_ROW_TOKENS = 64


@dataclass(frozen=True)
class Plan:
    recipe_path: str
    recipe_id: str
    model: str
    shape: Shape
    row_tokens: int
    global_batch: int
    rows_per_microbatch: int
    steps: int
    precision: str
    tiny: bool = False
    seed: int = SEED
    stated_schedule: object = None  # the recipe's workload.schedule (generator.models.Schedule) or None
    stream: str = DEFAULT_STREAM  # the rows' stream (runner/engine/streams.py): --data, else the recipe's, else pattern

    @property
    def num_microbatches(self) -> int:
        return self.global_batch // self.rows_per_microbatch

    @property
    def total_rows(self) -> int:
        return self.steps * self.global_batch


class PlanError(Exception):
    """A recipe this glue cannot run; str() is `path:line:col: field: message`."""


def make_framework_plan(recipe_path: Path | str, *, steps: int | None = None, rows_per_microbatch: int | None = None,
                        tiny: bool = False, data: str | None = None) -> Plan:
    """The recipe's model card shapes, rows and batch; refuses (PlanError) what the frameworks here do not build."""
    path = Path(recipe_path)
    loaded = load_recipe(path)
    recipe = loaded.recipe
    catalog = load_catalog(_registry_root(path))

    def fail(field_name: str, message: str) -> PlanError:
        line, col = loaded.position(*field_name.split("."))
        return PlanError(f"{loaded.display}:{line}:{col}: {field_name}: {message}")

    card = catalog.models.get(recipe.model)
    if card is None or card.architecture is None:
        raise fail("model", f"'{recipe.model}' has no model card with an architecture in catalog/models/")
    arch = card.architecture
    kinds = {arch.attention[k] for k in arch.layer_pattern}
    if len(kinds) != 1 or not arch.gated_ffn or arch.linear_bias:
        raise fail("model", "only dense decoders with one attention kind, SwiGLU and no biases are built here")
    kind = next(iter(kinds))
    if kind.window is not None or kind.shared_kv:
        raise fail("model", "sliding-window or shared key-value attention is not built here")
    lay = recipe.layout
    if lay.tp * lay.pp * lay.cp * lay.ep != 1:
        raise fail("layout.tp", "the frameworks here run data parallel only (tp, pp, cp, ep all 1)")
    mbs = rows_per_microbatch or lay.rows_per_microbatch
    if recipe.workload.global_batch % (mbs * lay.dp):
        raise fail("workload.global_batch", f"global batch {recipe.workload.global_batch} must divide by "
                   f"rows_per_microbatch x dp = {mbs * lay.dp}")
    n_steps = steps or recipe.result.steps_per_run
    if not n_steps:
        raise fail("result.steps_per_run", "the number of steps to run is needed")
    shape = Shape(layers=arch.layers, hidden=arch.hidden_size, ffn_hidden=arch.ffn_hidden_size,
                  heads=arch.attention_heads, kv_heads=kind.kv_heads, head_dim=kind.head_dim,
                  vocab_size=arch.vocab_size, norm_eps=arch.norm_eps, rope_base=arch.rope_base,
                  tied_embeddings=arch.tied_embeddings, qk_norm=arch.qk_norm)
    stream = stated_stream(recipe, data)
    if stream not in STREAMS:  # the engine's uniform `random` rows: no framework here draws them
        raise fail("workload.dataset.stream", f"the frameworks here draw {', '.join(STREAMS)}, not {stream}")
    plan = Plan(recipe_path=str(path), recipe_id=loaded.id, model=recipe.model, shape=shape,
                row_tokens=recipe.workload.row_tokens, global_batch=recipe.workload.global_batch,
                rows_per_microbatch=mbs, steps=n_steps, precision=recipe.workload.precision.value,
                stated_schedule=recipe.workload.schedule, stream=stream)
    return replace(plan, shape=TINY_SHAPE, row_tokens=TINY_ROW_TOKENS, tiny=True) if tiny else plan


def _registry_root(path: Path) -> Path:
    for parent in path.resolve().parents:
        if (parent / "catalog").is_dir():
            return parent
    raise PlanError(f"{path}: model: no catalog/ folder above the recipe")


def add_common_arguments(ap: argparse.ArgumentParser) -> None:
    """Options every framework's run takes (the engine's names, so a convergence pair reads alike)."""
    ap.add_argument("recipe", type=Path, help="recipes/<model>/<gpu>/<name>.yaml")
    ap.add_argument("--steps", type=int, help="steps to run (default: the recipe's result.steps_per_run)")
    ap.add_argument("--rows-per-microbatch", type=int, help="override layout.rows_per_microbatch")
    ap.add_argument("--data", choices=STREAMS,
                    help="runner/engine/streams.py stream (default: the recipe's workload.dataset.stream, else "
                    "pattern; markov: the learnable one)")
    schedule.add_arguments(ap)
    ap.add_argument("--tiny", action="store_true", help="the tiny flavour: a proof of the glue, not a figure")


def refuse_precision(plan: Plan, runs: dict[str, str], framework: str) -> str:
    """The framework's name for the recipe's precision (`runs`: recipe precision -> how it is run), or PlanError
    naming the precision and what the framework can run. Decided from the recipe alone, before any framework is
    imported, so that no precision is ever run silently as another."""
    if plan.precision not in runs:
        raise PlanError(f"{plan.recipe_path}: workload.precision: {framework} cannot run {plan.precision} here; it "
                        f"runs {', '.join(sorted(runs))}")
    return runs[plan.precision]


def schedule_of(plan: Plan, args: argparse.Namespace) -> schedule.RunSchedule:
    """The run's learning-rate schedule: the recipe's, with the command line's overrides (PlanError if none)."""
    try:
        return schedule.from_args(plan.stated_schedule, args, plan.recipe_path)
    except schedule.ScheduleError as exc:
        raise PlanError(str(exc)) from None


def plan_from_args(args: argparse.Namespace) -> Plan:
    return make_framework_plan(args.recipe, steps=args.steps, rows_per_microbatch=args.rows_per_microbatch,
                               tiny=args.tiny, data=args.data)


def missing_packages(modules: dict[str, str]) -> list[str]:
    """The wheels (values) of the modules (keys) that are not importable here, found without importing them."""
    out = []
    for module, wheel in modules.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(wheel)
    return out


def refuse_missing(purpose: str, modules: dict[str, str]) -> None:
    """Exits 2 with one line naming the wheels to install when any of `modules` is missing."""
    missing = missing_packages(modules)
    if missing:
        print(f"error: {purpose} needs {', '.join(missing)} for {sys.executable}: "
              f"pip install {' '.join(missing)}", file=sys.stderr)
        raise SystemExit(2)


def rank_env() -> tuple[int, int, int]:
    """(rank, world size, local rank) from torchrun's variables; a single process gets 0, 1, 0 and a free port."""
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(s.getsockname()[1])
    return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
