"""The learning-rate schedule a run of ours trains at: the recipe's `workload.schedule`, with any value the command
line overrides (a convergence arm's, a test's), resolved once and used by every framework the runner launches.

The formula is generator.figures.scheduled_lr; here is only where its inputs come from. A recipe that states no
schedule and a command line that gives no learning rate are refused: a framework's own default would be a schedule
nobody stated.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass

from generator.figures import scheduled_lr

DECAYS = ("constant", "linear", "cosine")


class ScheduleError(ValueError):
    """No learning rate stated anywhere (recipe or command line)."""


@dataclass(frozen=True)
class RunSchedule:
    peak_lr: float
    warmup_steps: int
    decay: str
    min_lr: float
    source: str  # "recipe", "recipe, overridden: --lr" or "command line"

    def lr(self, step: int, steps: int) -> float:
        return scheduled_lr(self.peak_lr, self.warmup_steps, self.decay, self.min_lr, step, steps)

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        text = f"peak lr {self.peak_lr:g}, {self.warmup_steps} warm-up steps, {self.decay} decay"
        return text + (f" to {self.min_lr:g}" if self.decay != "constant" else "")


def resolve(stated, lr: float | None = None, warmup_steps: int | None = None, decay: str | None = None,
            min_lr: float | None = None, where: str = "the recipe") -> RunSchedule:
    """The run's schedule: the recipe's (`stated`, a generator.models.Schedule or None) with the given overrides."""
    overrides = [flag for flag, value in (("--lr", lr), ("--warmup-steps", warmup_steps), ("--decay", decay),
                                          ("--min-lr", min_lr)) if value is not None]
    if stated is None:
        if lr is None:
            raise ScheduleError(f"{where}: workload.schedule: not stated, and no --lr given: a run of ours trains at "
                                "the schedule its recipe states (peak_lr, warmup_steps, decay)")
        return RunSchedule(lr, warmup_steps or 0, decay or "constant", min_lr or 0.0, "command line")
    decay_stated = stated.decay.value if hasattr(stated.decay, "value") else str(stated.decay)
    return RunSchedule(
        peak_lr=stated.peak_lr if lr is None else lr,
        warmup_steps=stated.warmup_steps if warmup_steps is None else warmup_steps,
        decay=decay_stated if decay is None else decay,
        min_lr=stated.min_lr if min_lr is None else min_lr,
        source="recipe" + (f", overridden: {' '.join(overrides)}" if overrides else ""),
    )


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The schedule's command-line overrides (default: the recipe's workload.schedule)."""
    ap.add_argument("--lr", type=float, help="peak learning rate (default: the recipe's workload.schedule.peak_lr)")
    ap.add_argument("--warmup-steps", type=int, help="linear warm-up steps (default: the recipe's schedule)")
    ap.add_argument("--decay", choices=DECAYS, help="decay after the warm-up (default: the recipe's schedule)")
    ap.add_argument("--min-lr", type=float, help="learning rate at the last step under decay (default: the recipe's)")


def from_args(stated, args: argparse.Namespace, where: str) -> RunSchedule:
    return resolve(stated, args.lr, args.warmup_steps, args.decay, args.min_lr, where)
