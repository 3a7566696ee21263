"""torchtitan 0.2.2 started from a recipe's `run`: ``python3 -m runner.frameworks.torchtitan RECIPE [options]``.

Through torchtitan's extension points, not a fork: a TrainSpec registered at launch
(``torchtitan.protocols.train_spec.register_train_spec``) that is torchtitan's own llama3 spec (its Transformer,
``parallelize_llama``, optimizers, cross-entropy loss) with four parts replaced:

- ``model_args``: one flavour, named for the recipe, whose shapes come from the recipe's model card
  (catalog/models/): layers, hidden size, heads, key-value heads, vocabulary, norm epsilon, RoPE base; torchtitan
  derives the SwiGLU width from ``dim``, ``multiple_of`` and ``ffn_dim_multiplier``, which are chosen so that it
  lands exactly on the card's ``ffn_hidden_size`` (refused otherwise).
- ``build_dataloader_fn``: torchtitan's ParallelAwareDataloader over the rows of runner/engine/streams.py (pattern
  or markov, seed 1234) in the engine's order (streams.step_rows), so every framework trains on the same rows;
  ``build_tokenizer_fn`` is None: synthetic token ids need no tokenizer, and nothing is downloaded.
- ``build_optimizers_fn``: before torchtitan's own builder makes the optimizer, the model is made the model the card
  states and started where every framework here starts: a tied card's output layer becomes the embedding (torchtitan's
  llama3 is always untied), and the seeded initial checkpoint (runner/engine/initial_weights.py) replaces
  torchtitan's initialisation.
- ``build_lr_schedulers_fn``: torchtitan's LRSchedulersContainer over generator.figures.scheduled_lr, the recipe's
  schedule (workload.schedule) as every framework here runs it.

A recipe's precision decides the mixed precision: bf16 (torchtitan's autocast over fp32 weights), fp32, or fp8-cs /
fp8-rw, torchao's float8 training of the linear layers (torchtitan's ``quantize.linear.float8`` converter) with
tensorwise or rowwise dynamic scaling, the output layer kept in bf16; any other precision is refused before torch is
imported.

Then torchtitan's Trainer runs with the job config built here: FSDP over the data-parallel ranks (data_parallel_
shard_degree = the ranks; on one GPU that is 1, at which torchtitan applies no FSDP wrapper and runs its bf16 mixed
precision by autocast over fp32 weights), torch.compile of the model and the loss unless ``--no-compile``, no
activation checkpointing, the recipe's micro-batch and global batch (gradient accumulation over the rest), torch's
fused AdamW (torchtitan's default; ``--no-fused-adam``: foreach) at the recipe's schedule,
``metrics.log_freq = 1``: torchtitan prints its own metric line every step, which runner/logs/torchtitan_log.py reads.
The run ends with one ``openrecipes-framework`` line (JSON: torchtitan's and torch's versions, options, schedule,
precision and the run's peak memory: the largest allocated and reserved figures torchtitan's memory monitor saw
before each of its resets, over every rank).

On a machine without a GPU (the CPU proof of the tiny flavour) torchtitan's device type, which it fixes to "cuda"
when no accelerator is found, is set to "cpu" before its modules are imported, so that gloo and FSDP on CPU run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from runner.frameworks.common import (
    Plan,
    PlanError,
    Shape,
    add_common_arguments,
    plan_from_args,
    refuse_missing,
    refuse_precision,
    schedule_of,
)

FRAMEWORK = "torchtitan"
SPEC_NAME = "openrecipes_llama3"
SUMMARY_PREFIX = "openrecipes-framework "
# Import name -> wheel (torchtitan 0.2.2 and what its imports need beyond torch).
NEEDS = {"torch": "torch", "torchtitan": "torchtitan==0.2.2", "torchdata": "torchdata==0.11.0",
         "datasets": "datasets==4.7.0", "tyro": "tyro", "tomli": "tomli", "tensorboard": "tensorboard"}
# The recipe precisions torchtitan runs here -> torchao float8 scaling (None: no float8 converter).
PRECISIONS = {"bf16": None, "fp32": None, "fp8-cs": "tensorwise", "fp8-rw": "rowwise"}
NEEDS_FP8 = {"torchao": "torchao"}


def swiglu_args(dim: int, ffn_hidden: int) -> tuple[int, float | None]:
    """(multiple_of, ffn_dim_multiplier) for which torchtitan's FeedForward width equals `ffn_hidden`.

    torchtitan (models/llama3/model/model.py, FeedForward): h = int(2 * 4 * dim / 3); with a multiplier
    h = int(multiplier * h); then h is rounded up to a multiple of `multiple_of`.
    """
    base = int(2 * (4 * dim) / 3)
    for multiple_of in (1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1):
        if ffn_hidden % multiple_of:
            continue
        for multiplier in (None, ffn_hidden / base):
            if torchtitan_ffn_width(dim, multiple_of, multiplier) == ffn_hidden:
                return multiple_of, multiplier
    raise ValueError(f"no multiple_of / ffn_dim_multiplier gives torchtitan a SwiGLU width of {ffn_hidden} at dim {dim}")


def torchtitan_ffn_width(dim: int, multiple_of: int, multiplier: float | None) -> int:
    """torchtitan 0.2.2's FeedForward hidden width for TransformerBlock's hidden_dim = 4 * dim (its formula, here so
    that the flavour can be checked without torch)."""
    hidden = int(2 * (4 * dim) / 3)
    if multiplier is not None:
        hidden = int(multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def flavour_kwargs(shape: Shape) -> dict:
    """TransformerModelArgs keyword arguments for the card's shapes (refuses what torchtitan's llama3 cannot build)."""
    if shape.hidden != shape.heads * shape.head_dim:
        raise ValueError(f"torchtitan's llama3 derives head_dim = dim / n_heads; the card's head_dim {shape.head_dim} "
                         f"is not {shape.hidden} / {shape.heads}")
    multiple_of, multiplier = swiglu_args(shape.hidden, shape.ffn_hidden)
    return dict(dim=shape.hidden, n_layers=shape.layers, n_heads=shape.heads, n_kv_heads=shape.kv_heads,
                vocab_size=shape.vocab_size, multiple_of=multiple_of, ffn_dim_multiplier=multiplier,
                norm_eps=shape.norm_eps, rope_theta=shape.rope_base)


def flavour_name(plan: Plan) -> str:
    return ("tiny-" if plan.tiny else "") + plan.model.lower()


def job_args(plan: Plan, args: argparse.Namespace, dump_folder: str, dp: int) -> list[str]:
    """torchtitan's command-line job config for the plan (its ConfigManager parses these). The learning rate given
    is the schedule's peak; the schedule itself is the TrainSpec's (register)."""
    compile_on = not args.no_compile
    run_schedule = schedule_of(plan, args)
    scaling = refuse_precision(plan, PRECISIONS, FRAMEWORK)
    out = [
        "--job.dump_folder", dump_folder,
        "--model.name", SPEC_NAME, "--model.flavor", flavour_name(plan), "--model.hf_assets_path", dump_folder,
        "--training.local_batch_size", str(plan.rows_per_microbatch),
        "--training.global_batch_size", str(plan.global_batch),
        "--training.seq_len", str(plan.row_tokens), "--training.steps", str(plan.steps),
        "--training.max_norm", "1.0", "--training.mixed_precision_param", "bfloat16",
        "--training.dataset", "openrecipes-" + plan.stream,
        "--parallelism.data_parallel_shard_degree", str(dp),
        "--parallelism.data_parallel_replicate_degree", "1",
        "--activation_checkpoint.mode", "none",
        "--optimizer.name", "AdamW", "--optimizer.lr", repr(run_schedule.peak_lr),
        "--optimizer.implementation", "foreach" if args.no_fused_adam else "fused",
        "--lr_scheduler.warmup_steps", str(run_schedule.warmup_steps),
        "--metrics.log_freq", "1", "--metrics.disable_color_printing",
        "--checkpoint.no-enable", "--debug.seed", str(plan.seed),
    ]
    if plan.precision == "fp32":
        out[out.index("bfloat16")] = "float32"
    # compile.components defaults to model and loss (torchtitan 0.2.2); only the switch is given.
    out += ["--compile.enable"] if compile_on else ["--compile.no-enable"]
    if scaling is not None:
        out += ["--model.converters", "quantize.linear.float8", "--quantize.linear.float8.recipe_name", scaling,
                "--quantize.linear.float8.filter_fqns", "output"]
    return out


def _use_cpu_if_no_gpu() -> bool:
    """Points torchtitan at the CPU where torch has no accelerator. torchtitan.tools.utils fixes its device type at
    import (``_get_available_device_type() or "cuda"``) and every other module copies it then, so torch's two
    lookups are answered with the CPU (and _CpuDevice) while torchtitan is first imported, and restored after."""
    import torch
    import torch._utils as tu

    if torch.cuda.is_available():
        return False
    if "torchtitan" in sys.modules:
        raise RuntimeError("torchtitan was imported before its device type could be set to the CPU")
    available, module_of = tu._get_available_device_type, tu._get_device_module
    tu._get_available_device_type = lambda: "cpu"
    tu._get_device_module = lambda kind="cpu": _CpuDevice() if kind == "cpu" else module_of(kind)
    try:
        import torchtitan.train  # noqa: F401 - imported here for its device type; used by train()
    finally:
        tu._get_available_device_type, tu._get_device_module = available, module_of
    return True


class _CpuDevice:
    """torch.cpu with the calls torchtitan makes of a device module that torch.cpu lacks (its memory monitor's:
    name, capacity, memory statistics). The CPU has no allocator statistics: the metric line's memory reads -1 B."""

    def __getattr__(self, name: str):
        import torch

        return getattr(torch.cpu, name)

    @staticmethod
    def set_device(_device) -> None:
        pass

    @staticmethod
    def get_device_name(_device=None) -> str:
        return "cpu"

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def get_device_properties(_device=None):
        from types import SimpleNamespace

        return SimpleNamespace(total_memory=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

    @staticmethod
    def memory_stats(_device=None) -> dict:
        return {}

    @staticmethod
    def reset_peak_memory_stats(_device=None) -> None:
        pass

    @staticmethod
    def empty_cache() -> None:
        pass


def stream_dataset(plan: Plan, data: str, dp_rank: int, dp_world: int):
    """An IterableDataset of torchtitan's (input dict, labels) pairs: the stream's rows for this rank, in the order
    the engine takes them (rows_per_microbatch rows a micro-batch, the step's micro-batches in turn)."""
    from torch.utils.data import IterableDataset

    from runner.engine.streams import make_stream, step_rows

    nmb = plan.global_batch // (plan.rows_per_microbatch * dp_world)

    class StreamRows(IterableDataset):
        def __iter__(self):
            stream = make_stream(data, plan.seed, plan.shape.vocab_size, plan.row_tokens, plan.total_rows)
            for step in range(plan.steps):
                for mb in range(nmb):
                    first = step_rows(step, mb, plan.rows_per_microbatch, nmb, plan.global_batch, dp_rank)
                    for row in stream.rows(first, plan.rows_per_microbatch):
                        yield {"input": row[:-1]}, row[1:]

    return StreamRows()


def register(plan: Plan, data: str, run_schedule, started: dict) -> None:
    """Registers the SPEC_NAME TrainSpec: torchtitan's llama3 spec with the card's flavour, the stream's rows, the
    card's tying and the seeded initial checkpoint, and the recipe's schedule; `started` receives the checkpoint's
    norm."""
    import dataclasses

    from torchtitan.components.dataloader import ParallelAwareDataloader
    from torchtitan.components.lr_scheduler import LRSchedulersContainer
    from torchtitan.models import llama3
    from torchtitan.models.llama3 import TransformerModelArgs
    from torchtitan.protocols import train_spec

    def build_dataloader(dp_world_size: int, dp_rank: int, tokenizer, job_config, **_kwargs):
        return ParallelAwareDataloader(stream_dataset(plan, data, dp_rank, dp_world_size), dp_rank=dp_rank,
                                       dp_world_size=dp_world_size,
                                       batch_size=job_config.training.local_batch_size)

    base = llama3.get_train_spec()

    def build_optimizers(model_parts, optimizer_config, parallel_dims, *more, **kwargs):
        started["checkpoint_norm"] = start_like_the_card(model_parts, plan)
        return base.build_optimizers_fn(model_parts, optimizer_config, parallel_dims, *more, **kwargs)

    def build_lr_schedulers(optimizers, _lr_scheduler_config, training_steps):
        # LambdaLR multiplies each group's initial lr (the peak, --optimizer.lr) by the factor of the step.
        return LRSchedulersContainer(optimizers, lambda step: run_schedule.lr(step, training_steps) / run_schedule.peak_lr)

    spec = dataclasses.replace(base, model_args={flavour_name(plan): TransformerModelArgs(**flavour_kwargs(plan.shape))},
                               build_dataloader_fn=build_dataloader, build_tokenizer_fn=None, build_validator_fn=None,
                               build_optimizers_fn=build_optimizers, build_lr_schedulers_fn=build_lr_schedulers)
    train_spec.register_train_spec(SPEC_NAME, spec)


def start_like_the_card(model_parts, plan: Plan) -> float:
    """Ties the output layer to the embedding where the card says tied, then copies the seeded initial checkpoint
    into the model; returns the checkpoint's norm. Before the optimizer is built, so that it holds each weight once."""
    from runner.engine.initial_weights import load_into

    if len(model_parts) != 1:
        raise PlanError(f"{plan.recipe_path}: layout.pp: the seeded checkpoint is copied into one model part, not "
                        f"{len(model_parts)} pipeline stages")
    model = model_parts[0]
    if plan.shape.tied_embeddings:
        if any(hasattr(p, "full_tensor") for p in model.parameters()):
            raise PlanError(f"{plan.recipe_path}: layout.dp: a tied output layer is not tied under torchtitan's FSDP "
                            "here (the weights are sharded DTensors); run it on one GPU")
        model.output.weight = model.tok_embeddings.weight
    return load_into(model, plan.shape, plan.seed, "torchtitan")


def _peak_tracker():
    """Keeps the run's peak allocated and reserved bytes across torchtitan's resets of the peak statistics (it resets
    them after every metric line, so that each line shows its own interval's peak)."""
    import torch
    from torchtitan.components import metrics

    peaks = {"allocated": 0, "reserved": 0}
    monitor_cls = metrics.DeviceMemoryMonitor
    reset = monitor_cls.reset_peak_stats

    def read() -> None:
        if torch.cuda.is_available():
            peaks["allocated"] = max(peaks["allocated"], torch.cuda.max_memory_allocated())
            peaks["reserved"] = max(peaks["reserved"], torch.cuda.max_memory_reserved())

    def reset_keeping_peaks(self) -> None:
        read()
        reset(self)

    monitor_cls.reset_peak_stats = reset_keeping_peaks
    return peaks, read


def _run_peak(peaks: dict, read) -> dict | None:
    """The run's peaks in GiB, the largest over the ranks (runner/engine/peak_memory.py)."""
    import torch

    from runner.engine.peak_memory import peak_memory

    if not torch.cuda.is_available():
        return None
    read()
    return peak_memory(peaks["allocated"], peaks["reserved"])


def train(plan: Plan, args: argparse.Namespace) -> None:
    rank, world, _local = _rank_env()
    on_cpu = _use_cpu_if_no_gpu()
    import torch
    import torchtitan
    from torchtitan.config import ConfigManager
    from torchtitan.tools.logging import init_logger
    from torchtitan.train import Trainer

    init_logger()
    run_schedule = schedule_of(plan, args)
    scaling = refuse_precision(plan, PRECISIONS, FRAMEWORK)
    started: dict = {}
    register(plan, plan.stream, run_schedule, started)
    peaks, read_peaks = _peak_tracker()
    dump = args.dump_folder or tempfile.mkdtemp(prefix="openrecipes-torchtitan-")
    config = ConfigManager().parse_args(job_args(plan, args, dump, world))
    trainer = Trainer(config)
    initial_norm = _weight_norm(trainer.model_parts)
    float8 = _float8_layers(trainer.model_parts)
    if scaling is not None and not float8:
        raise SystemExit(f"error: {plan.recipe_path}: workload.precision {plan.precision}: torchtitan's float8 "
                         "converter swapped no linear layer; not run in another precision")
    try:
        trainer.train()
    finally:
        trainer.close()
    peak = None if on_cpu else _run_peak(peaks, read_peaks)
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    if rank == 0:
        summary = {"framework": FRAMEWORK, "torchtitan": _version("torchtitan") or torchtitan.__version__,
                   "torch": torch.__version__, "device": "cpu" if on_cpu else "cuda", "compile": not args.no_compile,
                   "fused_adam": not args.no_fused_adam, "data": plan.stream, "schedule": run_schedule.as_dict(),
                   "precision": plan.precision, "float8_scaling": scaling, "float8_linear_layers": float8,
                   "torchao": _version("torchao") if scaling else None, "tiny": plan.tiny,
                   "tied_embeddings": plan.shape.tied_embeddings, "flavour": flavour_kwargs(plan.shape),
                   "initial_weights": {"kind": "seeded checkpoint (runner/engine/initial_weights.py)",
                                       "seed": plan.seed, **started},
                   "initial_weight_norm": initial_norm, "peak_memory": peak}
        print(SUMMARY_PREFIX + json.dumps(summary), flush=True)


def _weight_norm(model_parts) -> float:
    """The L2 norm of the initial weights in float64: two arms that print the same one start alike."""
    import torch

    total = 0.0
    with torch.no_grad():
        for part in model_parts:
            for p in part.parameters():
                full = p.full_tensor() if hasattr(p, "full_tensor") else p  # a DTensor under FSDP
                total += float((full.double() ** 2).sum())
    return total ** 0.5


def _float8_layers(model_parts) -> int:
    """How many linear layers run in float8 (torchao's Float8Linear)."""
    return sum(type(m).__name__ == "Float8Linear" for part in model_parts for m in part.modules())


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _rank_env() -> tuple[int, int, int]:
    from runner.frameworks.common import rank_env

    return rank_env()


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python3 -m runner.frameworks.torchtitan", description=__doc__.split("\n")[0])
    add_common_arguments(ap)
    ap.add_argument("--no-compile", action="store_true", help="no torch.compile of model and loss (the reference arm)")
    ap.add_argument("--no-fused-adam", action="store_true", help="torch's foreach AdamW instead of the fused one")
    ap.add_argument("--dump-folder", help="torchtitan's job.dump_folder (default: a new temporary folder)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:  # the recipe's refusals first: they need no torch
        plan = plan_from_args(args)
        flavour_kwargs(plan.shape)
        scaling = refuse_precision(plan, PRECISIONS, FRAMEWORK)
        schedule_of(plan, args)
    except (PlanError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    refuse_missing("torchtitan's run (runner/frameworks/torchtitan.py)", {**NEEDS, **(NEEDS_FP8 if scaling else {})})
    if plan.tiny:
        print("openrecipes: the tiny flavour (a proof of the glue, not a measurement)", file=sys.stderr)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    train(plan, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
