"""The records passed between the steps of `remeasure` (runner/remeasure.py: target -> measurement -> decision ->
write) and the launchers (runner/launchers): what was asked (Options), what is measured (Target), what a launch gives
(Measured), and how a step ends the pipeline (Stop with its Outcome)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.catalog import Catalog
from generator.load import LoadedRecipe
from generator.models import Recipe
from generator.registry import display_path
from runner.outcomes import Outcome


class Stop(Exception):
    """The pipeline ends here; the message is for stderr, the outcome for the exit code."""

    def __init__(self, outcome: Outcome, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


GPU_HOURS_NOTE = {
    "launch": "GPUs x the median run's wall time under the runner, launch to exit (start-up included)",
    "from-log": "GPUs x the median run's span from its log's first to its last timestamp (start-up before the first "
    "timestamped line not counted)",
}


@dataclass(frozen=True)
class Options:
    recipe: Path
    runs: int | None = None
    from_log: list[Path] = field(default_factory=list)
    log_run: int | None = None  # --log-run N: the Nth run of each log that holds several (split at its restarts)
    dry_run: bool = False
    yes: bool = False
    json: bool = False
    accept_change: bool = False
    accept_partial: bool = False
    timeout: float | None = None
    as_new: str | None = None
    workdir: Path = Path(".")
    root: Path | None = None
    measured: dt.date | None = None
    launcher: str = "local"  # local | torchrun | slurm (runner/launchers)
    nodes: int | None = None  # default: the recipe's gpu.count / gpu.per_node
    rdzv_endpoint: str | None = None  # --launcher torchrun: HOST:PORT of the c10d store (default: this node)
    rdzv_id: str | None = None
    sbatch: list[str] = field(default_factory=list)  # extra sbatch options, passed through
    poll_s: float = 1.0  # --launcher slurm: seconds between looks at the job
    exclusive: bool = True  # --launcher slurm: whole nodes (sbatch --exclusive) unless --no-exclusive
    cpus_per_node: int | None = None  # --launcher slurm: CPUs of each node's task (default: all the node gives)


class Shown(Exception):
    """--dry-run with --launcher slurm: the batch script was printed and nothing submitted."""


@dataclass
class Target:
    options: Options
    root: Path
    catalog: Catalog
    source: LoadedRecipe  # the recipe named on the command line
    recipe: Recipe  # what is measured against (for --as-new: the copy for the GPUs present)
    path: Path  # the file written: the recipe itself, or the --as-new file
    recipe_id: str
    text: str  # the written file's text now, with "\n" line ends (for --as-new: the new recipe's)
    newline: str  # the line end it is written back with
    old_bytes: bytes | None  # the file's bytes as read (None: --as-new, no file yet)
    document: Any  # `text` parsed by the round-trip parser (runner/yaml_edit.py), once: the write splices from it
    gpus: Any  # runner.preflight.Gpus of this machine (None for --from-log and --launcher slurm)
    fmt: str | None  # the log format of the recipe's framework
    runs: int
    nodes: int = 1

    @property
    def display(self) -> str:
        return display_path(self.path, self.root)


@dataclass
class Measured:
    measurement: Any  # runner.measure.Measurement
    source: str  # "launch" (run here) or "from-log" (a run made elsewhere)
    command: str | None  # as recorded in the evidence: paths relative to the registry root
    nccl: str | None
    log_tail: list[str]
    environment: dict[str, Any] | None = None  # the rank-0 node's stack, captured on the nodes (multi-node runs)
    extra: dict[str, Any] = field(default_factory=dict)  # evidence keys of a multi-node run: launcher, nodes
    gpu_hours_note: str | None = None  # what the GPU-hours count, where not GPU_HOURS_NOTE[source]
    stated_stack: dict[str, str] = field(default_factory=dict)  # a from-log run's versions as its log prints them


