"""How `remeasure` starts a run: here (`local`), across nodes through a torchrun rendezvous (`torchrun`), or as a
Slurm job (`slurm`). The runner never starts ranks itself: torchrun does, on every node, and the recipe's own run
script is what runs (see rendezvous.py for how its `torchrun` joins the rendezvous).

- rendezvous.py: the c10d rendezvous: the `torchrun` the run script calls, re-parsed by torch's own parser.
- nodes.py: each node's preflight (its GPUs against the recipe, its software stack) and the comparison of the nodes.
- slurm.py: the sbatch script, the submission, the job's state and progress, cancellation, rank 0's log.
- torchrun.py: the multi-node torchrun launch without a scheduler (this node and the nodes that join it).
"""

from __future__ import annotations

import math

from generator.models import Recipe

LAUNCHERS = ("local", "torchrun", "slurm")


def per_node(recipe: Recipe) -> int:
    """GPUs (ranks) on each node: the recipe's gpu.per_node, or all of them on one node."""
    return min(recipe.gpu.count, recipe.gpu.per_node or recipe.gpu.count)


def default_nodes(recipe: Recipe) -> int:
    """Nodes the recipe's layout needs: gpu.count / gpu.per_node."""
    return math.ceil(recipe.gpu.count / per_node(recipe))
