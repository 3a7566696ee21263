"""Shared by the whole suite (tests/ is on the path through tests/conftest.py): the committed registry exported from
git, a folder every test process of one run shares, and a lock between those processes."""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
# What export_committed takes from HEAD: a registry, without the working tree others may be editing.
REGISTRY_PARTS = ("recipes", "failed", "catalog", "schema")


def export_committed(dest: Path) -> Path:
    """The committed recipes, failed layouts, catalogs and schema (`git archive HEAD`) extracted into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", "HEAD", *REGISTRY_PARTS], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every pytest-xdist worker sees: the workers' base temp folders share a parent."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between the processes of a run (xdist's workers), held while the block runs."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
