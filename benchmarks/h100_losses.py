"""`python benchmarks/h100_losses.py LOG...`: each run's step-0 and last logged loss, their ratio (a run of ours
learns when it is at most generator.figures.LOSS_FALL_RATIO), the initial checkpoint's norm its summary line states,
and the spread of the step-0 losses across the logs (frameworks started from the same checkpoint agree within
generator.figures.STEP0_LOSS_TOLERANCE). The device scripts print it after each stage."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator import figures  # noqa: E402
from runner.logs import LogError, parse_file, read_lines, stated_summary  # noqa: E402


def main(paths: list[str]) -> int:
    firsts = []
    for name in paths:
        path = Path(name)
        try:
            log = parse_file(path, None)
        except LogError as exc:
            print(f"{name}: {exc}")
            continue
        losses = [(s.step, s.loss) for s in log.steps if s.loss is not None]
        if not losses:
            print(f"{name}: no losses")
            continue
        (s0, l0), (sn, ln) = losses[0], losses[-1]
        summary = stated_summary(read_lines(path))
        init = summary.get("initial_weights", {}) if isinstance(summary.get("initial_weights"), dict) else {}
        print(json.dumps({"log": path.name, "first_step": s0, "first_loss": round(l0, 5), "last_step": sn,
                          "last_loss": round(ln, 5), "ratio": round(ln / l0, 4), "falls": figures.loss_falls(l0, ln),
                          "checkpoint_norm": init.get("checkpoint_norm"), "peak_memory": summary.get("peak_memory")}))
        if s0 == 0:
            firsts.append(l0)
    if len(firsts) > 1:
        spread = max(firsts) - min(firsts)
        print(f"step-0 losses {[round(x, 5) for x in firsts]}: spread {spread:.5f} "
              f"({'within' if spread <= figures.STEP0_LOSS_TOLERANCE else 'beyond'} {figures.STEP0_LOSS_TOLERANCE})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
