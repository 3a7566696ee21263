"""pytest plugin for benchmarks/suite_cpu.py: per test file, the wall time and the CPU of the test process itself and of
the children it waited for (subprocesses: mkdocs builds, runner runs, training ranks), one JSON line per file in
$SUITE_CPU_DIR/<worker>.jsonl. Chromium's processes are not waited for by the test process, so their CPU shows only in
the machine's total (what suite_cpu.py samples from /proc/stat).

Loaded with `-p suite_cpu_plugin` and benchmarks/ on PYTHONPATH; every xdist worker loads it too.
"""

from __future__ import annotations

import json
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest


@dataclass
class _Open:
    file: str
    own: float
    children: float
    started: float


class FileCpu:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.current: _Open | None = None
        self.out: IO[str] | None = None

    def switch(self, file: str | None) -> None:
        """Closes the file that ran so far (writing its line) and opens `file` (None: the end of the session)."""
        own, children = _cpu()
        now = time.time()
        if self.current is not None:
            if self.out is None:
                worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
                self.out = (self.folder / f"{worker}.jsonl").open("a", encoding="utf-8")
            c = self.current
            self.out.write(json.dumps({"file": c.file, "own": own - c.own, "children": children - c.children,
                                       "wall": now - c.started}) + "\n")
            self.out.flush()
        self.current = None if file is None else _Open(file, own, children, now)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        file = item.nodeid.split("::")[0]
        if self.current is None or self.current.file != file:
            self.switch(file)

    def pytest_sessionfinish(self) -> None:
        self.switch(None)


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def pytest_configure(config: pytest.Config) -> None:
    folder = os.environ.get("SUITE_CPU_DIR")
    if folder:
        config.pluginmanager.register(FileCpu(Path(folder)), "suite_cpu_files")
