"""Runs `python -m runner train ... --cpu` with the CPU adaptation applied (launched by the tests, also by torchrun)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.engine import cpu_megatron  # noqa: E402

cpu_megatron.apply()

from runner.engine.cli import standalone  # noqa: E402

sys.exit(standalone())
