"""python -m generator advise: the layout advisor (issue 43).

`advise MODEL --gpu TYPE --gpus N` ranks the layouts a framework can run for MODEL on N GPUs of TYPE by predicted
tokens/s per GPU, each with its predicted peak memory per GPU, whether it fits, the nearest measured recipes and what
the prediction is based on; `advise --validate` measures the advisor's accuracy on the registry, leaving one model
out at a time. Every figure it prints is a prediction and says so.

Modules: memory (the memory formulas), throughput (the step-time terms), observations (the registry's rows as the
advisor reads them), model (the fits), advisor (the answer), validate (the accuracy), report (text and JSON).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from generator.command import in_registry, positive_float, positive_int

_COUNT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([kKmMbBtT]?)\s*$")
_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def token_count(text: str) -> float:
    """A token count: 15e12, 15T, 300B, 2.5M."""
    match = _COUNT.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a token count: {text!r} (e.g. 15T, 300B, 1e12)")
    value = float(match.group(1)) * _SCALE[match.group(2).lower()]
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text!r}")
    return value


@in_registry("advise")
def cmd_advise(args: argparse.Namespace, root: Path) -> int:
    from generator.advise import report
    from generator.advise.advisor import Question, Refusal, answer, precheck
    from generator.advise.observations import load
    from generator.registry import load_catalog

    if args.validate:
        from generator.advise.validate import eligible_models, validate

        registry, rows = load(root)
        if args.hold_out_model is not None:
            eligible = eligible_models(rows)
            names = {m.lower(): m for m in eligible}
            names.update({registry.catalog.model_slugs.get(m, m).lower(): m for m in eligible})
            model = names.get(args.hold_out_model.lower())
            if model is None:
                print(f"--hold-out-model: {args.hold_out_model}: not a model with at least 20 dense rows in the "
                      f"registry (those: {', '.join(eligible)})", file=sys.stderr)
                return 1
            args.hold_out_model = model
        result = validate(rows, registry.catalog, args.hold_out_model)
        print(json.dumps(result, indent=1) if args.json else report.validation_text(result))
        return 0
    missing = [flag for flag, value in (("MODEL", args.model), ("--gpu", args.gpu), ("--gpus", args.gpus))
               if value is None]
    if missing:
        print(f"error: advise needs {', '.join(missing)} (or --validate)", file=sys.stderr)
        return 2
    question = Question(model=args.model, gpu=args.gpu, gpus=args.gpus, seq=args.seq, precision=args.precision,
                        training=args.training, tokens=args.tokens, price=args.price,
                        global_batch=args.global_batch, framework=args.framework, top=args.top)
    try:
        precheck(root, load_catalog(root), question)  # what the catalogs alone refuse, before reading recipes
        registry, rows = load(root)
        result = answer(root, registry.catalog, rows, question)
    except Refusal as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(json.dumps(report.answer_json(result), indent=1) if args.json else report.answer_text(result))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    from generator.advise.observations import FAMILIES
    from generator.models import Precision, Training

    p = sub.add_parser("advise", help="rank layouts for a model on N GPUs by predicted memory and tokens/s "
                                      "(--validate: the advisor's accuracy on the registry)")
    p.add_argument("model", nargs="?", help="model card name or slug (e.g. Llama-3.1-70B, llama-3.1-70b)")
    p.add_argument("--gpu", help="GPU type, a key of catalog/gpus.yaml (e.g. H100)")
    p.add_argument("--gpus", type=positive_int, help="GPU count")
    p.add_argument("--seq", type=positive_int, help="sequence length in tokens (default: the model's most common "
                                                     "in the registry, else 4096)")
    p.add_argument("--precision", default="bf16", choices=[v.value for v in Precision])
    p.add_argument("--training", default="pre-training", choices=[v.value for v in Training])
    p.add_argument("--tokens", type=token_count, help="tokens to train (15T, 300B, 1e12): GPU-hours, days and cost")
    p.add_argument("--price", type=positive_float, help="USD per GPU-hour (default: the GPU's instance in "
                                                         "catalog/instances.yaml)")
    p.add_argument("--global-batch", type=positive_int, help="rows per step (default: the median step of the "
                                                              "model family's rows)")
    p.add_argument("--framework", choices=FAMILIES, help="framework family whose compute efficiency to use "
                                                         "(default: the one with most rows)")
    p.add_argument("--top", type=positive_int, default=10, help="layouts to list (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--validate", action="store_true", help="leave-one-model-out accuracy on the registry")
    p.add_argument("--hold-out-model", help="with --validate: only this model's fold")
    p.set_defaults(func=cmd_advise)


__all__ = ["add_parser", "cmd_advise", "token_count"]
