"""How `remeasure` starts a run: here (`local`), across nodes through a torchrun rendezvous (`torchrun`), or as a
Slurm job (`slurm`). The runner never starts ranks itself: torchrun does, on every node, and the recipe's own run
script is what runs (see rendezvous.py for how its `torchrun` joins the rendezvous).

- rendezvous.py: the c10d rendezvous: the `torchrun` the run script calls, re-parsed by torch's own parser.
- nodes.py: each node's preflight (its GPUs against the recipe, its software stack) and the comparison of the nodes.
- slurm.py: the sbatch script, the submission, the job's state and progress, cancellation, rank 0's log.
- torchrun.py: the multi-node torchrun launch without a scheduler (this node and the nodes that join it).
- local.py: a run on this machine; from_log.py: runs made elsewhere, given as logs.
- common.py: what every launcher shares (the run folder, the recorded command, the confirmation).
- process.py: running a script here: its own process group, signals, timeout, console echo and progress bar.

Each launcher is a module with `measure(target, out) -> Measured` (the records in runner/records.py); `measure`
below picks the one the options name.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from generator.models import Recipe

LAUNCHERS = ("local", "torchrun", "slurm")

if TYPE_CHECKING:
    from typing import TextIO

    from runner.records import Measured, Target


def measure(target: Target, out: TextIO) -> Measured:
    """The runs of the target, launched as its options say (or read from --from-log), turned into figures."""
    import importlib

    from runner.launchers.common import check_names, env_refusal
    from runner.records import Outcome, Stop

    check_names(target)
    options = target.options
    name = "from_log" if options.from_log else options.launcher
    refused = None if options.from_log else env_refusal(dict(target.recipe.env))
    if refused:
        raise Stop(Outcome.USAGE, f"{target.display}: {refused}")
    if name not in ("from_log", *LAUNCHERS):
        raise ValueError(f"unknown launcher {name!r} (known: {', '.join(LAUNCHERS)})")
    module = importlib.import_module(f"runner.launchers.{name}")
    return module.measure(target, out)


def per_node(recipe: Recipe) -> int:
    """GPUs (ranks) on each node: the recipe's gpu.per_node, or all of them on one node."""
    return min(recipe.gpu.count, recipe.gpu.per_node or recipe.gpu.count)


def default_nodes(recipe: Recipe) -> int:
    """Nodes the recipe's layout needs: gpu.count / gpu.per_node."""
    return math.ceil(recipe.gpu.count / per_node(recipe))
