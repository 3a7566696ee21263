"""Parity probe: the engine's model and Hugging Face transformers' LlamaForCausalLM, same weights, same tokens.

Builds the recipe's model exactly as `python -m runner train` does (runner.engine.train._build_model, with the
recipe's attention backend and the engine's compiled modules), converts its initial weights to transformers'
names and layout (megatron interleaves query, key and value per key-value group in linear_qkv and stacks gate over
up in linear_fc1), and feeds both the engine's step-0 micro-batch 0. Compares the step-0 loss (cross entropy in
fp32 over the same labels) and the logits (relative L2 error).

Reference: transformers' model with the same converted weights upcast to fp32. Pass: the step-0 losses of the
engine (bf16) and transformers (bf16) differ by at most LOSS_TOL, and the engine's logits are as close to the fp32
reference as transformers' own bf16 logits are: relative L2 <= 2 x transformers' bf16 error + 1e-3 (the bound of
the attention component test). Negative controls, each a perturbed copy of the converted weights run through
transformers in bf16, must fail that bound: the final norm gain x 1.1; layer 0's gate and up projections
swapped; layer 0's fused QKV split as [all q | all k | all v] instead of per group (the classic conversion
error).

    python benchmarks/engine_hf_parity.py recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml --out parity.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LOSS_TOL = 0.02  # absolute, nats: 0.17% of the ~11.8 nats of an untrained 128k-vocabulary model (fp32: / 100)


def megatron_to_hf(state: dict, plan) -> dict:
    """Megatron GPTModel state dict (local spec, the engine's norms) -> LlamaForCausalLM state dict."""
    import torch

    a = plan.arch
    nq, nkv, hd = a.attention_heads, plan.kv_heads, plan.head_dim
    rep = nq // nkv
    out = {"model.embed_tokens.weight": state["embedding.word_embeddings.weight"],
           "model.norm.weight": state["decoder.final_layernorm.weight"]}
    if not a.tied_embeddings:
        out["lm_head.weight"] = state["output_layer.weight"]
    for i in range(a.layers):
        p = f"decoder.layers.{i}."
        h = f"model.layers.{i}."
        qkv = state[p + "self_attention.linear_qkv.weight"].view(nkv, (rep + 2) * hd, -1)
        q, k, v = torch.split(qkv, [rep * hd, hd, hd], dim=1)
        out[h + "self_attn.q_proj.weight"] = q.reshape(nq * hd, -1)
        out[h + "self_attn.k_proj.weight"] = k.reshape(nkv * hd, -1)
        out[h + "self_attn.v_proj.weight"] = v.reshape(nkv * hd, -1)
        out[h + "self_attn.o_proj.weight"] = state[p + "self_attention.linear_proj.weight"]
        gate, up = torch.chunk(state[p + "mlp.linear_fc1.weight"], 2, dim=0)
        out[h + "mlp.gate_proj.weight"] = gate
        out[h + "mlp.up_proj.weight"] = up
        out[h + "mlp.down_proj.weight"] = state[p + "mlp.linear_fc2.weight"]
        out[h + "input_layernorm.weight"] = state[p + "input_layernorm.weight"]
        out[h + "post_attention_layernorm.weight"] = state[p + "pre_mlp_layernorm.weight"]
        if a.qk_norm:
            out[h + "self_attn.q_norm.weight"] = state[p + "self_attention.q_layernorm.weight"]
            out[h + "self_attn.k_norm.weight"] = state[p + "self_attention.k_layernorm.weight"]
    return {k: v.detach().clone() for k, v in out.items()}


def hf_model(plan, dtype, device):
    import torch

    a = plan.arch
    kwargs = dict(vocab_size=plan.vocab_size, hidden_size=a.hidden_size, intermediate_size=a.ffn_hidden_size,
                  num_hidden_layers=a.layers, num_attention_heads=a.attention_heads, num_key_value_heads=plan.kv_heads,
                  head_dim=plan.head_dim, rms_norm_eps=a.norm_eps, tie_word_embeddings=a.tied_embeddings,
                  max_position_embeddings=plan.row_tokens, attention_bias=False, mlp_bias=False)
    if a.qk_norm:
        from transformers import Qwen3Config as Config
        from transformers import Qwen3ForCausalLM as Model
    else:
        from transformers import LlamaConfig as Config
        from transformers import LlamaForCausalLM as Model
    try:
        config = Config(rope_parameters={"rope_type": "default", "rope_theta": a.rope_base}, **kwargs)
    except TypeError:  # transformers 4.x
        config = Config(rope_theta=a.rope_base, **kwargs)
    config._attn_implementation = "sdpa"
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = Model(config)
    finally:
        torch.set_default_dtype(torch.float32)
    return model.eval()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("recipe")
    ap.add_argument("--cpu", action="store_true", help="CPU, gloo, fp32 (with the tests' megatron CPU adaptation)")
    ap.add_argument("--row-tokens", type=int, help="shorter rows than the recipe's (the probe's own choice)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.cpu:
        from tests.engine import cpu_megatron

        cpu_megatron.apply()

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from megatron.core import parallel_state, tensor_parallel
    from megatron.core.transformer.module import Float16Module

    from runner.engine.plan import make_engine_plan
    from runner.engine.train import EngineOptions, _Batches, _build_model, _free_port

    use_cuda = torch.cuda.is_available() and not args.cpu
    plan = make_engine_plan(args.recipe, steps=1)
    if args.row_tokens:
        plan = type(plan)(**{**plan.__dict__, "row_tokens": args.row_tokens})
    opts = EngineOptions(cpu=args.cpu)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(_free_port()))
    dist.init_process_group("nccl" if use_cuda else "gloo", rank=0, world_size=1)
    parallel_state.initialize_model_parallel(1, 1)
    torch.manual_seed(plan.seed)
    if use_cuda:
        tensor_parallel.model_parallel_cuda_manual_seed(plan.seed)
    device = torch.device("cuda") if use_cuda else torch.device("cpu")

    model, config = _build_model(plan, opts, use_cuda)
    bf16 = plan.precision == "bf16" and use_cuda
    dtype = torch.bfloat16 if bf16 else torch.float32
    engine = Float16Module(config, model) if bf16 else model
    engine.eval()
    tokens, labels, positions = next(_Batches(plan, opts, device, 0).step_iter(0))
    tokens, labels, positions = tokens[:1], labels[:1], positions[:1]

    def ce(logits):
        return float(F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1)))

    with torch.no_grad():
        engine_loss_path = float(engine(tokens, positions, None, labels=labels).float().mean())
        engine_logits = engine(tokens, positions, None).float()
    engine_loss = ce(engine_logits)
    converted = megatron_to_hf(model.state_dict(), plan)
    allowed = {"lm_head.weight"} if plan.arch.tied_embeddings else set()

    def logits_of(hf, weights: dict):
        missing, unexpected = hf.load_state_dict(weights, strict=False)
        if set(missing) - allowed or unexpected:
            raise SystemExit(f"conversion: missing {sorted(set(missing) - allowed)}, unexpected {sorted(unexpected)}")
        with torch.no_grad():
            return hf(input_ids=tokens, position_ids=positions).logits.float()

    def rel(x, ref) -> float:
        return float((x.double() - ref.double()).norm() / ref.double().norm())

    # The fp32 reference first, then its memory goes back before the bf16 model is built.
    hf32 = hf_model(plan, torch.float32, device)
    ref_logits = logits_of(hf32, {k: v.float() for k, v in converted.items()})
    ref_loss = ce(ref_logits)
    del hf32
    hf = hf_model(plan, dtype, device)
    hf_logits = logits_of(hf, converted)
    hf_error = rel(hf_logits, ref_logits)
    engine_error = rel(engine_logits, ref_logits)
    loss_tol = LOSS_TOL * (1.0 if bf16 else 0.01)
    logits_tol = 2 * hf_error + 1e-3

    def probe(weights: dict) -> dict:
        logits = hf_logits if weights is converted else logits_of(hf, weights)
        loss = ce(logits)
        return {"loss": loss, "loss_difference": abs(loss - engine_loss), "logits_rel_l2_vs_fp32": rel(logits, ref_logits),
                "logits_rel_l2_vs_engine": rel(logits, engine_logits)}

    def verdict(r: dict) -> bool:
        return r["loss_difference"] <= loss_tol and r["logits_rel_l2_vs_fp32"] <= logits_tol and math.isfinite(r["loss"])

    results = {"recipe": plan.recipe_id, "model": plan.model, "attention_backend": plan.attention_backend,
               "dtype": str(dtype), "device": torch.cuda.get_device_name() if use_cuda else "cpu",
               "row_tokens": plan.row_tokens, "rows": 1, "tolerance": {"loss": loss_tol, "logits_rel_l2_vs_fp32": logits_tol},
               "engine": {"loss": engine_loss, "loss_training_path": engine_loss_path,
                          "logits_rel_l2_vs_fp32": engine_error},
               "transformers_bf16_logits_rel_l2_vs_fp32": hf_error, "fp32_reference_loss": ref_loss,
               "uniform_loss": math.log(plan.arch.vocab_size)}
    engine_arm = {"loss": engine_loss, "loss_difference": abs(engine_loss - probe(converted)["loss"]),
                  "logits_rel_l2_vs_fp32": engine_error}
    results["parity"] = {**probe(converted), "engine_logits_rel_l2_vs_fp32": engine_error}
    results["parity"]["pass"] = verdict(engine_arm)

    nq, nkv, hd = plan.arch.attention_heads, plan.kv_heads, plan.head_dim
    controls = {}
    w = dict(converted)
    w["model.norm.weight"] = converted["model.norm.weight"] * 1.1
    controls["final_norm_gain_x1.1"] = w
    w = dict(converted)
    w["model.layers.0.mlp.gate_proj.weight"] = converted["model.layers.0.mlp.up_proj.weight"]
    w["model.layers.0.mlp.up_proj.weight"] = converted["model.layers.0.mlp.gate_proj.weight"]
    controls["layer0_gate_up_swapped"] = w
    w = dict(converted)
    flat = model.state_dict()["decoder.layers.0.self_attention.linear_qkv.weight"].detach()
    q, k, v = torch.split(flat, [nq * hd, nkv * hd, nkv * hd], dim=0)
    w["model.layers.0.self_attn.q_proj.weight"], w["model.layers.0.self_attn.k_proj.weight"] = q.clone(), k.clone()
    w["model.layers.0.self_attn.v_proj.weight"] = v.clone()
    controls["layer0_qkv_split_ungrouped"] = w
    results["negative_controls"] = {}
    for name, weights in controls.items():
        r = probe(weights)
        r["fails_as_it_must"] = not verdict(r)
        r["loss_alone_detects"] = r["loss_difference"] > loss_tol
        results["negative_controls"][name] = r
    ok = results["parity"]["pass"] and all(r["fails_as_it_must"] for r in results["negative_controls"].values())
    results["result"] = "pass" if ok else "fail"

    print(f"{plan.model} s={plan.row_tokens} {dtype} on {results['device']}: engine loss {engine_loss:.5f} "
          f"(training path {engine_loss_path:.5f}; ln V = {results['uniform_loss']:.4f})")
    print(f"  parity: transformers loss {results['parity']['loss']:.5f}, |diff| {results['parity']['loss_difference']:.2e}"
          f" (tol {loss_tol:g}); logits rel L2 against fp32: engine {engine_error:.2e}, transformers {hf_error:.2e} "
          f"(bound {logits_tol:.2e}); engine vs transformers {results['parity']['logits_rel_l2_vs_engine']:.2e} -> "
          f"{'PASS' if results['parity']['pass'] else 'FAIL'}")
    for name, r in results["negative_controls"].items():
        print(f"  control {name:28s} |diff| {r['loss_difference']:.2e} rel L2 vs fp32 {r['logits_rel_l2_vs_fp32']:.2e}"
              f" -> {'fails (good)' if r['fails_as_it_must'] else 'PASSES (bad)'}")
    print(f"parity probe: {results['result'].upper()}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
