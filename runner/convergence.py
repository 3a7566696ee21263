"""Loss-curve comparison of a candidate run against a reference run, as Megatron-Bridge's
``validate_convergence`` does it:

- Pearson correlation of the two loss series over their common steps >= 0.95;
- pointwise relative difference |c - r| / |r| within a tolerance set by the reference loss: 10% above a loss
  of 2.0, 5% above 0.5 up to 2.0, 2% at 0.5 and below (where r is 0: |c|); the check fails if more than 10%
  of the points fail;
- final loss within 3% (relative) of the reference's final loss;
- outliers: residuals c - r further than 3 standard deviations (population) from their mean on more than 10%
  of the points fail the check (its fifth test; with 10 points or fewer there can be no such outlier).

A constant series has no correlation: Megatron-Bridge reads the NaN as a pass, here it passes only when the
two series are identical.

``final_loss_difference`` is written as the absolute difference of the final losses (the recipe field's unit).
Every threshold above is generator/figures.py's (CONVERGENCE_*), where check and the methodology page read them too.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from generator.figures import CONVERGENCE_FINAL_LOSS_TOLERANCE as FINAL_LOSS_TOLERANCE
from generator.figures import CONVERGENCE_FLOOR_TOLERANCE, STEP0_LOSS_TOLERANCE, relative_difference
from generator.figures import CONVERGENCE_MAX_FAILING_FRACTION as MAX_FAILING_FRACTION  # and of outliers
from generator.figures import CONVERGENCE_MIN_CORRELATION as MIN_CORRELATION
from generator.figures import CONVERGENCE_OUTLIER_SIGMAS as OUTLIER_SIGMAS
from generator.figures import convergence_pointwise_tolerance as tolerance
from runner.logs import LogError, parse_file


@dataclass
class Comparison:
    steps: int
    correlation: float
    pointwise_failures: int
    failing_fraction: float
    outliers: int
    final_loss_candidate: float
    final_loss_reference: float
    final_loss_difference: float
    final_loss_relative: float
    reasons: list[str]
    step0_difference: float | None = None  # |candidate - reference| at step 0, where both logs start there
    floor: float | None = None  # the stream's loss floor both arms are held to (--floor)

    @property
    def passed(self) -> bool:
        return not self.reasons

    def summary(self) -> list[str]:
        """The comparison as `python -m runner convergence` says it: the figures and the verdict, then the step-0
        difference and the floor where there are any."""
        verdict = "pass" if self.passed else "fail: " + "; ".join(self.reasons)
        lines = [f"{self.steps} steps: correlation {self.correlation:.5f}, {self.pointwise_failures} pointwise failures, "
                 f"final loss {self.final_loss_candidate:.5f} against {self.final_loss_reference:.5f} "
                 f"(difference {self.final_loss_difference:.4f}, {self.final_loss_relative * 100:.2f}%): {verdict}"]
        if self.step0_difference is not None or self.floor is not None:
            lines.append(f"step-0 difference {self.step0_difference if self.step0_difference is not None else 'n/a'}"
                         + (f"; floor {self.floor:.5f}" if self.floor is not None else ""))
        return lines

    def as_dict(self) -> dict[str, object]:
        return {
            "result": "pass" if self.passed else "fail",
            "steps": self.steps,
            "correlation": self.correlation,
            "pointwise_failures": self.pointwise_failures,
            "failing_fraction": self.failing_fraction,
            "outliers": self.outliers,
            "final_loss_candidate": self.final_loss_candidate,
            "final_loss_reference": self.final_loss_reference,
            "final_loss_difference": self.final_loss_difference,
            "final_loss_relative": self.final_loss_relative,
            "reasons": self.reasons,
            "step0_difference": self.step0_difference,
            "floor": self.floor,
        }


def pearson(a: list[float], b: list[float]) -> float:
    if len(a) < 2 or statistics.pstdev(a) == 0 or statistics.pstdev(b) == 0:
        return 1.0 if a == b else 0.0
    return statistics.correlation(a, b)


def compare(candidate: dict[int, float], reference: dict[int, float], steps: int | None = None,
            floor: float | None = None, same_start: bool = False) -> Comparison:
    """The comparison; with `floor`, each arm's final loss must end within CONVERGENCE_FLOOR_TOLERANCE above it
    (the learnable stream's ln 8: both arms learned, not only agreed); with `same_start` (both arms state the same
    initial checkpoint), their step-0 losses must agree within STEP0_LOSS_TOLERANCE."""
    result = _compare(candidate, reference, steps)
    if 0 in candidate and 0 in reference:
        result.step0_difference = abs(candidate[0] - reference[0])
        if same_start and result.step0_difference > STEP0_LOSS_TOLERANCE:
            result.reasons.append(f"step-0 losses differ by {result.step0_difference:.4f} (> {STEP0_LOSS_TOLERANCE}) "
                                  "although both arms state the same initial checkpoint")
    if floor is not None:
        result.floor = floor
        bound = floor * (1 + CONVERGENCE_FLOOR_TOLERANCE)
        for arm, final in (("candidate", result.final_loss_candidate), ("reference", result.final_loss_reference)):
            if final > bound:
                result.reasons.append(f"the {arm}'s final loss {final:.4f} is more than "
                                      f"{CONVERGENCE_FLOOR_TOLERANCE:.0%} above the stream's floor {floor:.4f} "
                                      f"(bound {bound:.4f})")
    return result


def _compare(candidate: dict[int, float], reference: dict[int, float], steps: int | None = None) -> Comparison:
    common = sorted(set(candidate) & set(reference))
    if steps is not None:
        common = [s for s in common if s < steps]
    if len(common) < 2:
        raise LogError(f"the two runs share {len(common)} steps with a loss; at least 2 are needed")
    c = [candidate[s] for s in common]
    r = [reference[s] for s in common]
    bad = [s for s in common if not (math.isfinite(candidate[s]) and math.isfinite(reference[s]))]
    if bad:
        raise LogError(f"a loss is NaN or infinite at step {bad[0]}")
    corr = pearson(c, r)
    failures = sum(1 for x, y in zip(c, r, strict=True) if relative_difference(y, x) > tolerance(y))
    fraction = failures / len(common)
    final_abs = abs(c[-1] - r[-1])
    final_rel = relative_difference(r[-1], c[-1])
    residuals = [x - y for x, y in zip(c, r, strict=True)]
    mean, spread = statistics.fmean(residuals), statistics.pstdev(residuals)
    outliers = sum(1 for d in residuals if abs(d - mean) > OUTLIER_SIGMAS * spread)
    reasons = []
    if corr < MIN_CORRELATION:
        reasons.append(f"correlation {corr:.5f} < {MIN_CORRELATION}")
    if fraction > MAX_FAILING_FRACTION:
        reasons.append(f"{failures} of {len(common)} points outside the pointwise tolerance "
                       f"(> {MAX_FAILING_FRACTION:.0%})")
    if final_rel > FINAL_LOSS_TOLERANCE:
        reasons.append(f"final loss differs by {final_rel * 100:.2f}% (> {FINAL_LOSS_TOLERANCE:.0%})")
    if outliers / len(common) > MAX_FAILING_FRACTION:
        reasons.append(f"{outliers} of {len(common)} residuals beyond {OUTLIER_SIGMAS:g} standard deviations "
                       f"(> {MAX_FAILING_FRACTION:.0%})")
    return Comparison(len(common), corr, failures, fraction, outliers, c[-1], r[-1], final_abs, final_rel, reasons)


def checkpoint_norm(path: Path) -> float | None:
    """The initial checkpoint's norm a run of ours states in its summary line (None: not stated, or not a log)."""
    from runner.logs import read_lines, stated_summary

    if path.suffix == ".json":
        return None
    try:
        init = stated_summary(read_lines(path)).get("initial_weights")
    except OSError:
        return None
    norm = init.get("checkpoint_norm") if isinstance(init, dict) else None
    return float(norm) if isinstance(norm, int | float) and not isinstance(norm, bool) else None


def same_start(candidate: Path, reference: Path) -> bool:
    """Whether both logs state the same seeded initial checkpoint (norms equal to 1e-6 relative)."""
    a, b = checkpoint_norm(candidate), checkpoint_norm(reference)
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6)


def losses(path: Path) -> dict[int, float]:
    """Loss by step from a training log (any known format) or an evidence file."""
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {int(s["step"]): float(s["loss"]) for s in data["steps"] if s.get("loss") is not None}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LogError(f"{path}: not a readable evidence file ({exc})") from None
    log = parse_file(path, None)
    return {**log.untimed_losses, **{s.step: s.loss for s in log.steps if s.loss is not None}}


# --- the write: correctness.convergence into a recipe (`convergence --write`) --------------------------------


def _display(path: Path) -> str:
    """The path relative to the working folder where it lies below it (diff headers)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def write_convergence(path: Path, result: Comparison, dry_run: bool, out: TextIO, note: str | None = None,
          arms: str | None = None, extra: dict[str, Any] | None = None, also: bool = False) -> None:
    """correctness.convergence written into the recipe, checked as it will be (no new problem) and committed as
    remeasure commits (runner/commit.py): staged outside recipes/, renamed under held signals. Set up as remeasure
    is (runner/remeasure.py registry_root, loaded_recipe); each refusal is a Stop naming its outcome."""
    from generator import evidence
    from generator.registry import display_path, load_catalog
    from runner import checked, commit
    from runner.records import Outcome, Stop
    from runner.remeasure import loaded_recipe, recover, registry_root
    from runner.yaml_edit import WriteError, decode, encode, unified_diff, with_convergence_block

    root = registry_root(path)
    try:
        commit.refuse_unwritable(path, "recipe")
    except commit.WriteRefused as exc:
        raise Stop(Outcome.USAGE, str(exc)) from None
    display = display_path(path, root)
    loaded = loaded_recipe(path, root)
    catalog = load_catalog(root)
    try:
        with commit.recipe_lock(root, path.absolute()):
            recover(root, path, dry_run, out)
            raw = path.read_bytes()
            text, newline = decode(raw, display)
            new, said = with_convergence_block(text, loaded.data, result, note, arms, extra, also)
            change = commit.FileChange(path, encode(new, newline), raw, commit.mode_of(path))

            def passed() -> None:
                print(unified_diff(text, new, _display(path)) or "(no change)", file=out)
                for line in said:
                    print(line, file=out)

            # The recipe's problems before this write stay its own (a convergence result is evidence either way);
            # a problem the write would bring refuses it.
            to_write = checked.Write(root, catalog, display, [change], 0, loaded, [evidence.path_for(path)],
                                     refuse_known=False)
            try:
                checked.checked_commit(to_write, dry_run, passed, lambda paths: print(f"wrote {display}", file=out))
            except checked.NotChecked as refused:
                raise Stop(Outcome.USAGE, "\n".join(f"not written: the recipe would not check: {p}"
                                                    for p in refused.fresh)) from None
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"{path}: {exc}") from None
    except (commit.LockHeld, commit.Changed) as exc:
        raise Stop(Outcome.LOCKED, str(exc)) from None
    except (commit.CommitFailed, commit.WriteRefused) as exc:
        raise Stop(Outcome.WRITE, str(exc)) from None
    except commit.InterruptedAfterCommit as exc:
        raise Stop(Outcome.INTERRUPTED, str(exc)) from None
