"""Each node's preflight before a multi-node run trains, and the comparison of the nodes.

On every node (one Slurm task per node, or `python -m runner node` on a node joining a torchrun rendezvous): its
GPUs against the recipe's type and per-node count, and its software stack (runner.environment.capture: Python,
PyTorch, CUDA, NCCL, driver, Megatron, Transformer Engine, GPU name and count). Then the stacks are compared: a node
whose stack differs from the first node's fails the run, named by its hostname with the difference. The evidence
records every node's stack (without hostnames: the evidence is committed, like it carries no paths).

`python -m runner.launchers.nodes preflight RECIPE --root ROOT --out DIR` writes DIR/<host>.json (exit 3 and
DIR/refused/<host>.txt when this node cannot run the recipe); `compare DIR` exits 3 naming the node that differs.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from pathlib import Path
from typing import Any

EXIT_REFUSED = 3  # the runner's EXIT_PREFLIGHT
HOST_KEY = "host"
# Keys of runner.environment.capture that must agree across nodes (all of them: gpu_name and gpu_count too).
REFUSED_DIR = "refused"


def hostname() -> str:
    return socket.gethostname().split(".")[0]


def node_stack(gpus: Any) -> dict[str, Any]:
    """This node's software stack and GPUs, with its hostname."""
    from runner import environment

    return {HOST_KEY: hostname(), **environment.capture(gpus.names or None, gpus.driver, None)}


def check_node(recipe_path: Path, root: Path) -> dict[str, Any]:
    """This node's stack, after its GPUs are checked against the recipe (Refusal naming the host otherwise)."""
    from generator.load import load_recipe
    from generator.registry import RECIPES_DIR, display_path, load_catalog
    from runner.preflight import Refusal, check_gpus, gpus_here

    display = display_path(recipe_path, root)
    loaded = load_recipe(recipe_path, display, root / RECIPES_DIR)
    gpus = gpus_here()
    try:
        check_gpus(loaded.recipe, load_catalog(root), gpus, display)
    except Refusal as exc:
        raise Refusal(f"node {hostname()}: {exc}") from None
    return node_stack(gpus)


def differences(stacks: list[dict[str, Any]]) -> list[str]:
    """One line per node whose stack is not the first node's: its hostname and each differing entry."""
    if not stacks:
        return []
    first = stacks[0]
    out = []
    for stack in stacks[1:]:
        keys = sorted((set(first) | set(stack)) - {HOST_KEY})
        diff = [f"{k} {stack.get(k)!s} (on {first.get(HOST_KEY)}: {first.get(k)!s})" for k in keys
                if stack.get(k) != first.get(k)]
        if diff:
            out.append(f"node {stack.get(HOST_KEY)} differs from node {first.get(HOST_KEY)}: {'; '.join(diff)}")
    return out


def read_stacks(folder: Path) -> list[dict[str, Any]]:
    """The stacks the nodes wrote into `folder`, in hostname order."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            out.append(data)
    return out


def refusals(folder: Path) -> list[str]:
    """What the nodes refused (their messages), in hostname order."""
    where = folder / REFUSED_DIR
    return [p.read_text(encoding="utf-8").strip() for p in sorted(where.glob("*.txt"))] if where.is_dir() else []


def evidence_nodes(stacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every node's stack for the evidence, without its hostname."""
    return [{k: v for k, v in s.items() if k != HOST_KEY} for s in stacks]


def rank0_log(run_dir: Path, fmt: str) -> tuple[Path, Any]:
    """(path, ParsedLog) of the node log (node-*.log) with the training step lines: rank 0's, on whichever node the
    rendezvous placed it (c10d ranks nodes by name, not by who started first)."""
    from runner.logs import LogError, parse_file

    parsed = []
    for path in sorted(run_dir.glob("node-*.log")):
        try:
            parsed.append((path, parse_file(path, fmt)))
        except LogError:
            continue
    with_steps = [(p, log) for p, log in parsed if log.steps]
    if with_steps:
        return max(with_steps, key=lambda pair: len(pair[1].steps))
    if parsed:
        return parsed[0]
    raise LogError(f"{run_dir}: no node log with {fmt} training step lines")


def _refuse(folder: Path, message: str) -> int:
    (folder / REFUSED_DIR).mkdir(parents=True, exist_ok=True)
    (folder / REFUSED_DIR / f"{hostname()}.txt").write_text(message + "\n", encoding="utf-8")
    print(f"error: {message}", file=sys.stderr)
    return EXIT_REFUSED


def _preflight(args: argparse.Namespace) -> int:
    from runner.preflight import Refusal

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        stack = check_node(Path(args.recipe), Path(args.root))
    except Refusal as exc:
        return _refuse(out, str(exc))
    (out / f"{stack[HOST_KEY]}.json").write_text(json.dumps(stack, indent=1) + "\n", encoding="utf-8")
    print(f"node {stack[HOST_KEY]}: {stack.get('gpu_count') or 0} x {stack.get('gpu_name')}, python "
          f"{stack.get('python')}, pytorch {stack.get('pytorch')}", file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    stacks = read_stacks(folder)
    if len(stacks) != args.nodes:
        return _refuse(folder, f"{len(stacks)} of {args.nodes} nodes wrote their stack; "
                       f"refused: {'; '.join(refusals(folder)) or 'none said why'}")
    diffs = differences(stacks)
    if diffs:
        return _refuse(folder, "the nodes' stacks differ: " + " | ".join(diffs))
    print(f"{len(stacks)} nodes, one stack", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(prog="python -m runner.launchers.nodes", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True)
    p = sub.add_parser("preflight", help="check this node's GPUs; write its stack")
    p.add_argument("recipe")
    p.add_argument("--root", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_preflight)
    c = sub.add_parser("compare", help="compare the stacks the nodes wrote")
    c.add_argument("folder")
    c.add_argument("--nodes", type=int, required=True)
    c.set_defaults(func=_compare)
    args = top.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
