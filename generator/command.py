"""What the `python -m generator` verbs share: the registry a verb runs in, and argparse's positive numbers."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

# A verb that cannot start (no registry around the current folder) exits with this code, as argparse does for a
# usage error; a verb's own findings exit 1.
NO_REGISTRY = 2


def in_registry(verb: str) -> Callable[[Callable[[argparse.Namespace, Path], int]], Callable[[argparse.Namespace], int]]:
    """A verb's handler, called with the registry root the current folder lies in (registry.working_root); outside
    any registry, the handler is not called: 'error: ...' (where it looked) on stderr and exit code 2."""

    def wrap(handler: Callable[[argparse.Namespace, Path], int]) -> Callable[[argparse.Namespace], int]:
        @functools.wraps(handler)
        def run(args: argparse.Namespace) -> int:
            from generator.registry import RootNotFound, working_root

            try:
                root = working_root(verb)
            except RootNotFound as exc:
                print(f"error: {exc}", file=sys.stderr)
                return NO_REGISTRY
            return handler(args, root)

        return run

    return wrap


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value
