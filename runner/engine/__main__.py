"""`python -m runner.engine train RECIPE` (the same as `python -m runner train RECIPE`)."""

import sys

from runner.engine.cli import standalone

sys.exit(standalone())
