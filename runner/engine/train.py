"""Runs an EnginePlan: megatron-core GPT, megatron's schedules and optimizer, seeded synthetic tokens.

One process per GPU (torchrun sets RANK/WORLD_SIZE/LOCAL_RANK); a single process runs without torchrun.
Every step prints one `openrecipes-step {json}` line (runner.logs.format_engine_step) on rank 0, the loss
brought from the last pipeline stage; the run ends with one `openrecipes-engine {json}` summary line (versions,
attention backend, per-step grad norm and peak memory).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TextIO

from runner.engine import SUMMARY_PREFIX, peak_memory
from runner.engine.plan import EnginePlan
from runner.engine.schedule import RunSchedule
from runner.engine.streams import MarkovStream, PatternStream, step_rows


@dataclass(frozen=True)
class EngineOptions:
    """Engine knobs that are not layout (the recipe's `run` line states any it changes)."""

    fused_adam: bool = True  # torch's fused AdamW kernel for the fp32 master weights
    compile: bool = True  # torch.compile'd RMSNorm, and megatron's compiled SwiGLU and bias-dropout-add
    compile_rope: bool = True  # torch.compile'd rotary embedding (megatron's fused RoPE needs transformer-engine)
    distributed_optimizer: bool = True  # megatron's contiguous-buffer optimizer (sharded when dp > 1)
    cross_entropy: str = "engine"  # engine: runner/engine/loss.py; megatron-fused; megatron (unfused)
    wgrad_fusion: bool = True  # weight gradients accumulated into the fp32 buffer by the GEMM (runner/engine/wgrad.py)
    triton_swiglu: bool = True  # SwiGLU's backward as one Triton kernel (runner/engine/swiglu.py), with `compile`
    schedule: RunSchedule = RunSchedule(3e-4, 0, "constant", 0.0, "default")  # the recipe's, resolved by the cli
    cpu: bool = False  # gloo on CPU in fp32 (tests); otherwise NCCL on CUDA
    data: str = "pattern"  # pattern: a bijective bigram; random: uniform tokens; markov: runner/engine/streams.py
    # seeded: the checkpoint of runner/engine/initial_weights.py, the one every framework here starts from (one
    # GPU's worth of model: tp = pp = 1); megatron: megatron-core's own initialisation (tp or pp > 1)
    init: str = "seeded"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(plan: EnginePlan, opts: EngineOptions, out: TextIO = sys.stdout,
        on_step_end: Callable[[int], None] | None = None) -> list[dict]:
    """Trains the plan; `on_step_end(step)` is called after each step's timing (benchmarks hang a profiler on it)."""
    # Before torch and megatron-core load (seconds of every rank's start-up): a wrong process count fails at once.
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world != plan.world_size:
        raise SystemExit(f"{plan.recipe_path}: layout: tp x pp x dp = {plan.world_size} GPUs, but "
                         f"{world} processes were started (torchrun --nproc-per-node)")
    import torch
    import torch.distributed as dist
    from megatron.core import parallel_state, tensor_parallel
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig, finalize_model_grads
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.pipeline_parallel import get_forward_backward_func
    from megatron.core.transformer.module import Float16Module

    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available() and not opts.cpu
    if use_cuda:
        torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        if world == 1:
            os.environ.setdefault("MASTER_PORT", str(_free_port()))
        dist.init_process_group(backend="nccl" if use_cuda else "gloo", rank=rank, world_size=world)
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=plan.tp, pipeline_model_parallel_size=plan.pp,
    )
    torch.manual_seed(plan.seed)
    # On every device: under sequence parallel megatron's embedding forks this tracker's state (and recompute
    # saves it), so a run without it fails with "cuda rng state model-parallel-rng is not added".
    tensor_parallel.model_parallel_cuda_manual_seed(plan.seed)

    model, config = _build_model(plan, opts, use_cuda)
    init = _initialise(model, plan, opts)
    bf16 = plan.precision == "bf16" and use_cuda
    if bf16:
        model = Float16Module(config, model)
    ddp_config = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True, overlap_grad_reduce=False, use_distributed_optimizer=opts.distributed_optimizer,
    )
    model = DistributedDataParallel(config=config, ddp_config=ddp_config, module=model)
    opt_config = OptimizerConfig(
        optimizer="adam", lr=opts.schedule.peak_lr, min_lr=opts.schedule.min_lr, weight_decay=0.1, adam_beta1=0.9,
        adam_beta2=0.95, adam_eps=1e-8, clip_grad=1.0, bf16=bf16, params_dtype=config.params_dtype,
        use_distributed_optimizer=opts.distributed_optimizer,
    )
    optimizer = get_megatron_optimizer(opt_config, [model])
    if opts.fused_adam and use_cuda:
        _use_fused_adamw(optimizer)
    config.finalize_model_grads_func = finalize_model_grads
    config.grad_scale_func = optimizer.scale_loss
    config.no_sync_func = model.no_sync

    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    batches = _Batches(plan, opts, device, parallel_state.get_data_parallel_rank())
    forward_backward = get_forward_backward_func()
    from runner.logs import format_engine_step

    is_logger = (parallel_state.is_pipeline_last_stage() and parallel_state.get_tensor_model_parallel_rank() == 0
                 and parallel_state.get_data_parallel_rank() == 0)
    dp_group = parallel_state.get_data_parallel_group()

    def forward_step(data_iterator, mdl):
        tokens, labels, positions = next(data_iterator)
        output = mdl(tokens, positions, None, labels=labels)

        def loss_func(per_token):
            loss = per_token.float().mean()
            # The schedule divides the returned loss in place by the micro-batch count: log a copy.
            return loss, {"lm loss": loss.detach().clone()}

        return output, loss_func

    init_norm = _weight_norm(model)
    records: list[dict] = []
    for step in range(plan.steps):
        _set_lr(optimizer, opts.schedule.lr(step, plan.steps))
        if use_cuda:
            torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        model.zero_grad_buffer()
        optimizer.zero_grad()
        losses = forward_backward(
            forward_step_func=forward_step, data_iterator=batches.step_iter(step), model=[model],
            num_microbatches=plan.num_microbatches, seq_length=plan.row_tokens,
            micro_batch_size=plan.rows_per_microbatch, forward_only=False,
        )
        ok, grad_norm, _ = optimizer.step()
        if use_cuda:
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        # The loss lives on the last pipeline stage; a sum over all ranks brings it to rank 0, which prints.
        loss_t = torch.zeros(1, dtype=torch.float64, device=device)
        if parallel_state.is_pipeline_last_stage():
            mean = torch.stack([d["lm loss"] for d in losses]).mean()
            if plan.dp > 1:
                dist.all_reduce(mean, group=dp_group)
                mean = mean / plan.dp
            if is_logger:
                loss_t += mean.double()
        dist.all_reduce(loss_t)
        record = {"step": step, "steps": plan.steps, "time_s": elapsed, "loss": float(loss_t),
                  "tokens": plan.tokens_per_step, "grad_norm": None if grad_norm is None else float(grad_norm),
                  "skipped": not ok}
        if use_cuda:
            record["max_memory_gb"] = round(torch.cuda.max_memory_allocated() / 1e9, 3)
        record["lr"] = opts.schedule.lr(step, plan.steps)
        records.append(record)
        if on_step_end is not None:
            on_step_end(step)
        if rank == 0:
            out.write(format_engine_step(step, plan.steps, elapsed, record["loss"], plan.tokens_per_step) + "\n")
            out.flush()
    peak = peak_memory.this_run() if use_cuda else None
    if rank == 0:
        summary = {
            "recipe": plan.recipe_id, "model": plan.model, "attention_backend": _backend_text(plan, use_cuda),
            "layout": {"tp": plan.tp, "pp": plan.pp, "dp": plan.dp, "sequence_parallel": plan.sequence_parallel,
                       "rows_per_microbatch": plan.rows_per_microbatch, "num_microbatches": plan.num_microbatches,
                       "recompute": plan.recompute_granularity},
            "options": asdict(opts), "init_weight_norm": init_norm, "initial_weights": init,
            "schedule": opts.schedule.as_dict(), "precision": plan.precision, "peak_memory": peak,
            "gradient_accumulation_fusion": config.gradient_accumulation_fusion,
            "versions": _versions(), "notes": list(plan.notes),
            "peak_memory_gb": round(torch.cuda.max_memory_allocated() / 1e9, 3) if use_cuda else None,
            "gpu_name": torch.cuda.get_device_name() if use_cuda else None,
            "per_step": [{k: r.get(k) for k in ("grad_norm", "skipped", "max_memory_gb", "lr")} for r in records],
        }
        out.write(SUMMARY_PREFIX + json.dumps(summary) + "\n")
        out.flush()
    dist.barrier()
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()
    return records


def _build_model(plan: EnginePlan, opts: EngineOptions, use_cuda: bool):
    import torch
    import torch.nn.functional as F
    from megatron.core import parallel_state
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.transformer.transformer_block import TransformerBlockSubmodules, get_num_layers_to_build
    from megatron.core.transformer.transformer_config import TransformerConfig

    from runner.engine.modules import RMSNorm, SDPAttention, engine_gpt_model_class

    arch = plan.arch
    bf16 = plan.precision == "bf16" and use_cuda
    dtype = torch.bfloat16 if bf16 else torch.float32
    fuse = opts.compile and use_cuda
    wgrad_fusion = opts.wgrad_fusion and use_cuda and _wgrad_fusion_ready()
    recompute = plan.recompute_granularity if plan.recompute_granularity != "none" else None
    config = TransformerConfig(
        num_layers=arch.layers, hidden_size=arch.hidden_size, ffn_hidden_size=arch.ffn_hidden_size,
        num_attention_heads=arch.attention_heads, num_query_groups=plan.kv_heads, kv_channels=plan.head_dim,
        normalization="RMSNorm", layernorm_epsilon=arch.norm_eps, gated_linear_unit=True, activation_func=F.silu,
        add_bias_linear=False, add_qkv_bias=False, hidden_dropout=0.0, attention_dropout=0.0,
        qk_layernorm=arch.qk_norm,
        bias_activation_fusion=fuse, bias_dropout_fusion=fuse, apply_rope_fusion=False,
        masked_softmax_fusion=False, persist_layer_norm=False, gradient_accumulation_fusion=wgrad_fusion,
        attention_softmax_in_fp32=True, cross_entropy_loss_fusion=opts.cross_entropy == "megatron-fused",
        cross_entropy_fusion_impl="native",
        bf16=bf16, params_dtype=dtype, pipeline_dtype=dtype, autocast_dtype=dtype,
        tensor_model_parallel_size=plan.tp, pipeline_model_parallel_size=plan.pp,
        sequence_parallel=plan.sequence_parallel,
        num_layers_in_first_pipeline_stage=plan.first_stage_layers,
        num_layers_in_last_pipeline_stage=plan.last_stage_layers,
        recompute_granularity=recompute, recompute_method=plan.recompute_method if recompute == "full" else None,
        recompute_num_layers=plan.recompute_num_layers if recompute == "full" else None,
        recompute_modules=list(plan.recompute_modules) if recompute == "selective" else None,
        use_cpu_initialization=not use_cuda, init_method_std=0.02, deallocate_pipeline_outputs=True,
    )
    RMSNorm.compiled = fuse
    if fuse and opts.triton_swiglu:
        from runner.engine import swiglu

        swiglu.install()
    if fuse and opts.compile_rope:
        from runner.engine.modules import compile_rope

        compile_rope()
    layer = get_gpt_layer_local_spec(normalization="RMSNorm", qk_layernorm=arch.qk_norm)
    sub = layer.submodules
    sub.input_layernorm = RMSNorm
    sub.pre_mlp_layernorm = RMSNorm
    attn = sub.self_attention.submodules
    if arch.qk_norm:
        attn.q_layernorm = RMSNorm
        attn.k_layernorm = RMSNorm
    if plan.attention_backend == "sdpa":
        attn.core_attention = SDPAttention
    n_local = get_num_layers_to_build(config, pp_rank=parallel_state.get_pipeline_model_parallel_rank())
    block = TransformerBlockSubmodules(layer_specs=[layer] * n_local, layer_norm=RMSNorm)
    if opts.cross_entropy == "engine":
        if fuse:
            from runner.engine.loss import compile_kernels

            compile_kernels()
        GPTModel = engine_gpt_model_class()  # noqa: N806 - the class megatron's GPTModel is replaced by
    model = GPTModel(
        config=config, transformer_layer_spec=block, vocab_size=plan.vocab_size,
        max_sequence_length=plan.row_tokens, pre_process=parallel_state.is_pipeline_first_stage(),
        post_process=parallel_state.is_pipeline_last_stage(),
        share_embeddings_and_output_weights=arch.tied_embeddings, position_embedding_type="rope",
        rotary_base=int(arch.rope_base), parallel_output=True,
    )
    if use_cuda:
        model.cuda(torch.cuda.current_device())
    return model, config


def _initialise(model, plan: EnginePlan, opts: EngineOptions) -> dict:
    """Copies the seeded initial checkpoint into the model (tp = pp = 1), or keeps megatron-core's initialisation
    (a layout whose ranks hold slices of the model: the checkpoint is not sliced here); says which."""
    if opts.init == "megatron" or plan.tp * plan.pp > 1:
        why = "asked" if opts.init == "megatron" else "tp x pp > 1: the seeded checkpoint is not sliced"
        return {"kind": "megatron-core's own (std 0.02, output projections scaled by 1/sqrt(2 x layers))",
                "why": why, "seed": plan.seed}
    from runner.engine.initial_weights import Shape, load_into

    arch = plan.arch
    shape = Shape(layers=arch.layers, hidden=arch.hidden_size, ffn_hidden=arch.ffn_hidden_size,
                  heads=arch.attention_heads, kv_heads=plan.kv_heads, head_dim=plan.head_dim, vocab_size=plan.vocab_size,
                  norm_eps=arch.norm_eps, rope_base=arch.rope_base, tied_embeddings=arch.tied_embeddings,
                  qk_norm=arch.qk_norm)
    norm = load_into(model, shape, plan.seed, "megatron")
    return {"kind": "seeded checkpoint (runner/engine/initial_weights.py)", "seed": plan.seed,
            "checkpoint_norm": norm}


def _wgrad_fusion_ready() -> bool:
    from runner.engine import wgrad

    if not wgrad.supported():
        return False
    wgrad.enable()
    return True


def _torch_optimizers(optimizer) -> list:
    """The torch optimizers inside megatron's (chained or not) optimizer."""
    inner = getattr(optimizer, "chained_optimizers", [optimizer])
    return [opt.optimizer for opt in inner if getattr(opt, "optimizer", None) is not None]


def _set_lr(optimizer, lr: float) -> None:
    # megatron's OptimizerParamScheduler does the same: the torch optimizer reads each group's lr at step().
    for torch_opt in _torch_optimizers(optimizer):
        for group in torch_opt.param_groups:
            group["lr"] = lr


def _weight_norm(model) -> float:
    """The L2 norm of this rank's initial weights in float64: two arms that print the same one start alike."""
    import torch

    total = torch.zeros((), dtype=torch.float64)
    for p in model.parameters():
        total += p.detach().double().square().sum().cpu()
    return float(total.sqrt())


def _use_fused_adamw(optimizer) -> None:
    """Switches megatron's torch AdamW fallback (no TE/apex) to torch's fused CUDA kernel."""
    inner = getattr(optimizer, "chained_optimizers", [optimizer])
    for opt in inner:
        torch_opt = getattr(opt, "optimizer", None)
        if torch_opt is None:
            continue
        for group in torch_opt.param_groups:
            group["foreach"] = False
            group["fused"] = True


class _Batches:
    """Seeded synthetic rows, never zeros, from runner/engine/streams.py (the same rows in every framework).

    pattern: streams.PatternStream (a bijective bigram: a model that learns the permutation drives the loss down).
    random: uniform tokens in [1, V), each row from its own seed (PatternStream.random_seeds). markov:
    streams.MarkovStream. Rows differ per step, micro-batch and data-parallel rank (streams.step_rows).
    """

    def __init__(self, plan: EnginePlan, opts: EngineOptions, device, dp_rank: int) -> None:
        import torch

        self.plan, self.device, self.dp_rank, self.mode = plan, device, dp_rank, opts.data
        v = plan.arch.vocab_size
        rows = plan.steps * plan.global_batch
        self.pattern = PatternStream(plan.seed, v, plan.row_tokens, rows)
        self.positions = torch.arange(plan.row_tokens, device=device).unsqueeze(0).expand(plan.rows_per_microbatch, -1)
        self.markov = MarkovStream(plan.seed, v, plan.row_tokens) if self.mode == "markov" else None

    def _rows(self, first: int, count: int):
        import torch

        if self.mode == "random":
            seeds = self.pattern.random_seeds
            parts = [torch.randint(1, self.plan.arch.vocab_size, (self.plan.row_tokens + 1,),
                                   generator=torch.Generator().manual_seed(seeds[first + j])) for j in range(count)]
            return torch.stack(parts).to(self.device)
        stream = self.markov if self.markov is not None else self.pattern
        return stream.rows(first, count).to(self.device)

    def step_iter(self, step: int):
        plan = self.plan
        for mb in range(plan.num_microbatches):
            first = step_rows(step, mb, plan.rows_per_microbatch, plan.num_microbatches, plan.global_batch,
                              self.dp_rank)
            rows = self._rows(first, plan.rows_per_microbatch)
            yield rows[:, :-1].contiguous(), rows[:, 1:].contiguous(), self.positions


def _backend_text(plan: EnginePlan, use_cuda: bool) -> str:
    if plan.attention_backend == "sdpa":
        text = "sdpa (torch.nn.functional.scaled_dot_product_attention, causal, GQA"
        if use_cuda:
            import torch.backends.cuda as tbc

            text += f"; cudnn {'on' if tbc.cudnn_sdp_enabled() else 'off'}, flash {'on' if tbc.flash_sdp_enabled() else 'off'}"
        return text + ")"
    return "unfused (megatron-core DotProductAttention: baddbmm, softmax in fp32, bmm)"


def _versions() -> dict:
    import platform

    import torch

    versions = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        from importlib.metadata import version

        versions["megatron_core"] = version("megatron-core")
    except Exception:  # noqa: BLE001 - a version string is informational only
        versions["megatron_core"] = None
    if torch.cuda.is_available():
        versions["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        versions["cudnn"] = str(torch.backends.cudnn.version())
    return versions
