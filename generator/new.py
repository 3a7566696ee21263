"""python -m generator new <model> <gpu> <name>: a recipe skeleton to fill in, at recipes/<model>/<gpu>/<name>.yaml.

Every field the schema requires is present, so the runner can load and measure the file (`python -m runner remeasure`),
but it does not pass `generator check` until filled in: text only the author knows is marked TODO (a problem
wherever it is left), and the result is a placeholder (`measured: null`, no step-time CV) until measured.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from generator.command import in_registry

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

TEMPLATE = """\
# yaml-language-server: $schema=../../../schema/recipe.schema.yaml
# An OpenRecipes recipe; the fields are documented in schema/recipe.schema.yaml. Replace every TODO.
schema_version: 1
model: {model}
gpu:
  type: {gpu}
  memory_gb: {memory_gb}
  count: 8
  per_node: 8
  instance: {instance}
author:
  name: TODO your name
  url: null
status: measured
stack:
  framework: TODO framework and version (e.g. megatron-lm 0.16.0)
workload:
  row_tokens: 8192
  rows: TODO what a row holds (e.g. SFT conversations)
  global_batch: 128
  precision: bf16
layout:
  label: TP1 PP1 DP8
  summary: TODO one paragraph describing the layout
  tp: 1
  pp: 1
  cp: 1
  ep: 1
  dp: 8
  sequence_parallel: false
  rows_per_microbatch: 1
  recompute:
    granularity: none
result:
  # Placeholders until measured: measured null marks tokens/s as no figure; python -m runner remeasure fills them.
  tokens_per_s_per_gpu: 1.0
  step_time_cv_percent: null
  active_params:
    count: {active_params}
  measured: null
  steps_per_run: 20
  window: [5, 19]
  window_tokens: {window_tokens}
  runs: 1
env: {{}}
run: |
  # TODO the exact command
notes: null
"""


def scaffold(root: Path, model_slug: str, gpu_slug: str, name: str) -> tuple[Path | None, str]:
    """Returns (path written, message); path None with the reason when nothing is written."""
    from generator import figures
    from generator.registry import atomic_write, load_catalog, recipe_path

    if not _NAME.match(name):
        return None, f"name '{name}' must be lower case letters, digits, '.', '_' or '-'"
    catalog = load_catalog(root)
    models = {slug: model for model, slug in catalog.model_slugs.items()}
    if model_slug not in models:
        return None, f"unknown model '{model_slug}' (known: {', '.join(sorted(models))})"
    gpus = {g.lower(): g for g in catalog.gpus}
    if gpu_slug.lower() not in gpus:
        return None, f"unknown GPU '{gpu_slug}' (known: {', '.join(sorted(gpus))})"
    model, gpu = models[model_slug], gpus[gpu_slug.lower()]
    path = recipe_path(root, model_slug, gpu, name)
    if path.exists():
        return None, f"{path.relative_to(root)} already exists"
    instance = catalog.instance_for(gpu, 8)
    text = TEMPLATE.format(model=model, gpu=gpu, memory_gb=catalog.gpus[gpu].memory_gb,
                           instance=instance if instance else "null",
                           active_params=catalog.models[model].active_params.count,
                           window_tokens=figures.window_tokens([5, 19], 128, 8192))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    rel = path.relative_to(root)
    return path, f"wrote {rel}; fill in the TODOs and measure it, then run python -m generator check {rel}"


@in_registry("new")
def cmd_new(args: argparse.Namespace, root: Path) -> int:
    path, message = scaffold(root, args.model, args.gpu, args.name)
    print(message, file=sys.stdout if path else sys.stderr)
    return 0 if path else 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("new", help="scaffold recipes/<model>/<gpu>/<name>.yaml to fill in")
    p.add_argument("model", help="model slug, a file name under catalog/models/ (e.g. gemma-4-31b)")
    p.add_argument("gpu", help="GPU type (e.g. h100)")
    p.add_argument("name", help="recipe name (e.g. tp2-pp4)")
    p.set_defaults(func=cmd_new)
