"""A plain Hugging Face transformers training loop as a recipe kind: ``python3 -m runner.frameworks.transformers RECIPE``.

The loop of benchmarks/engine_vs_hf.py, promoted: LlamaForCausalLM built from the recipe's model card (no hub
download; tied or untied output layer as the card states) and started from the seeded initial checkpoint every
framework here starts from (runner/engine/initial_weights.py); fp32 master weights with the forward and backward
under bf16 autocast for a bf16 recipe (pure bf16 weights lose AdamW updates below half a bf16 unit: a norm gain of
1.0 never moves at lr 1e-4), SDPA attention, torch's fused AdamW (betas 0.9, 0.95, weight decay 0.1) at the
recipe's schedule (workload.schedule), gradient clipping at 1.0, the recipe's micro-batch and global batch, the rows
of runner/engine/streams.py in the engine's order (streams.step_rows). The loss is the mean cross entropy over the
step's tokens, computed on fp32 logits as transformers' own causal-LM loss does, against the stream's next tokens.
A precision the loop cannot run (any FP8 or FP4) is refused before torch is imported.

The log is the bundled engine's format (runner/logs/engine_log.py: one ``openrecipes-step`` line per step, timed with a
device synchronize at both ends), so the engine's parser reads it; the run ends with one ``openrecipes-framework``
line (JSON: framework and versions, options, peak memory). The reference arm of a convergence check turns the speed
features off: ``--attention eager --no-fused-adam``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from runner.frameworks.common import (
    Plan,
    PlanError,
    add_common_arguments,
    plan_from_args,
    refuse_missing,
    refuse_precision,
    schedule_of,
)

FRAMEWORK = "transformers"
SUMMARY_PREFIX = "openrecipes-framework "
NEEDS = {"torch": "torch", "transformers": "transformers"}
# The recipe precisions the loop runs, and how.
PRECISIONS = {"bf16": "bf16 autocast over fp32 master weights", "fp32": "fp32"}


def build_config(plan: Plan):
    """LlamaConfig of the plan's shapes (transformers 4.x takes rope_theta, 5.x rope_parameters)."""
    from transformers import LlamaConfig

    s = plan.shape
    kwargs = dict(vocab_size=s.vocab_size, hidden_size=s.hidden, intermediate_size=s.ffn_hidden,
                  num_hidden_layers=s.layers, num_attention_heads=s.heads, num_key_value_heads=s.kv_heads,
                  head_dim=s.head_dim, rms_norm_eps=s.norm_eps, tie_word_embeddings=s.tied_embeddings,
                  max_position_embeddings=plan.row_tokens, attention_bias=False, mlp_bias=False)
    try:
        return LlamaConfig(rope_parameters={"rope_type": "default", "rope_theta": s.rope_base}, **kwargs)
    except TypeError:
        return LlamaConfig(rope_theta=s.rope_base, **kwargs)


def train(plan: Plan, args: argparse.Namespace, out=sys.stdout) -> None:
    run_schedule = schedule_of(plan, args)
    precision = refuse_precision(plan, PRECISIONS, FRAMEWORK)
    import torch
    import torch.nn.functional as F
    import transformers
    from transformers import LlamaForCausalLM

    from runner.engine import peak_memory
    from runner.engine.initial_weights import load_into
    from runner.engine.streams import make_stream, step_rows
    from runner.logs import format_engine_step

    cuda = torch.cuda.is_available() and not args.cpu
    device = torch.device("cuda" if cuda else "cpu")
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=plan.precision == "bf16")
    config = build_config(plan)
    config._attn_implementation = args.attention
    torch.manual_seed(plan.seed)
    with device:
        model = LlamaForCausalLM(config)  # fp32 master weights
    checkpoint_norm = load_into(model, plan.shape, plan.seed, "transformers")
    model.train()
    initial_norm = _weight_norm(model)
    opt = torch.optim.AdamW(model.parameters(), lr=run_schedule.peak_lr, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=not args.no_fused_adam, foreach=None if not args.no_fused_adam else True)
    stream = make_stream(plan.stream, plan.seed, plan.shape.vocab_size, plan.row_tokens, plan.total_rows)
    nmb, mbs = plan.num_microbatches, plan.rows_per_microbatch
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for step in range(plan.steps):
        for group in opt.param_groups:
            group["lr"] = run_schedule.lr(step, plan.steps)
        sync()
        t0 = time.perf_counter()
        total = torch.zeros((), device=device)
        for mb in range(nmb):
            rows = stream.rows(step_rows(step, mb, mbs, nmb, plan.global_batch), mbs).to(device, non_blocking=True)
            with autocast:
                logits = model(input_ids=rows[:, :-1]).logits
            loss = F.cross_entropy(logits.float().flatten(0, 1), rows[:, 1:].flatten()) / nmb
            loss.backward()
            total += loss.detach()  # no host sync inside the step
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        elapsed = time.perf_counter() - t0
        out.write(format_engine_step(step, plan.steps, elapsed, float(total), plan.global_batch * plan.row_tokens)
                  + "\n")
        out.flush()
    peak = peak_memory.this_run() if cuda else None
    summary = {"framework": FRAMEWORK, "transformers": transformers.__version__, "torch": torch.__version__,
               "device": str(device), "attention": args.attention, "fused_adam": not args.no_fused_adam,
               "data": plan.stream, "schedule": run_schedule.as_dict(), "precision": precision, "tiny": plan.tiny,
               "tied_embeddings": plan.shape.tied_embeddings,
               "initial_weights": {"kind": "seeded checkpoint (runner/engine/initial_weights.py)", "seed": plan.seed,
                                   "checkpoint_norm": checkpoint_norm},
               "initial_weight_norm": initial_norm, "peak_memory": peak}
    out.write(SUMMARY_PREFIX + json.dumps(summary) + "\n")
    out.flush()


def _weight_norm(model) -> float:
    """The L2 norm of the weights in float64: two arms that print the same initial norm start alike."""
    import torch

    with torch.no_grad():
        return float(torch.sqrt(sum((p.double() ** 2).sum() for p in model.parameters())))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python3 -m runner.frameworks.transformers", description=__doc__.split("\n")[0])
    add_common_arguments(ap)
    ap.add_argument("--attention", choices=["sdpa", "eager"], default="sdpa", help="transformers' attention kernel")
    ap.add_argument("--no-fused-adam", action="store_true", help="torch's foreach AdamW instead of the fused one")
    ap.add_argument("--cpu", action="store_true", help="stay on the CPU even where a GPU is present")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:  # the recipe's refusals first: they need no torch
        plan = plan_from_args(args)
        refuse_precision(plan, PRECISIONS, FRAMEWORK)
        schedule_of(plan, args)
    except PlanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    refuse_missing("the transformers loop (runner/frameworks/transformers.py)", NEEDS)
    if plan.tiny:
        print("openrecipes: the tiny flavour (a proof of the glue, not a measurement)", file=sys.stderr)
    train(plan, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
