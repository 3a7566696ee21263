"""Shared by the whole suite: the check cache kept apart per process, the committed registry loaded once per test
process, its site built once per run (the pages tests read are that build's), and the order the test files start in.

Markers (pyproject.toml): `slow`, `browser`, `cluster`. The quick subset is `-m "not slow and not browser and not
cluster"`; CI runs everything. Under pytest-xdist (`-n`), each worker is its own process: session fixtures here run
once per worker (the README's `--dist loadfile` keeps a file on one worker), except the committed site's build: the
slowest thing the suite makes (a strict `mkdocs build` of every committed recipe), made by the first test process
that needs it into the run's folder under a file lock; the others wait for it and reuse it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from suitehelpers import ROOT, BuiltSite, built_pages, export_committed, file_lock, mkdocs_build, run_folder, site_project

if TYPE_CHECKING:
    from generator.registry import Registry
    from generator.site.page import Page


# The order the files start in (xdist's workers each take the next file as one ends), longest first: under
# `--dist loadfile` a long file that starts last ends the run alone. The files that mostly wait (marked: a browser's
# timed typing, Slurm's scheduler, a run's timeout) are spread between busy ones; two of them at once left a core
# idle, but so does one beside a one-core file, and the spread did not shorten the run measurably (397 s against
# 394). The committed site's build (under a file lock) is the first browser file's, and the engine's multi-process
# file starts beside it.
LONGEST_FIRST = (
    "tests/site/test_site_committed_browser.py",
    "tests/engine/test_engine_parallel.py",
    "tests/test_fuzz_check.py",
    "tests/runner/test_faults_commit.py",
    "tests/runner/test_installs.py",
    "tests/site/test_site_planner_browser.py",  # waits
    "tests/engine/test_fw_streams.py",
    "tests/site/test_site_scale_browser.py",  # waits
    "tests/benchmarks/test_benchmarks_browser_smoke.py",  # waits
    "tests/engine/test_engine_cpu.py",
    "tests/runner/test_cluster_slurm.py",  # waits
    "tests/site/test_site_time_to_train_browser.py",
    "tests/benchmarks/test_benchmarks_smoke.py",  # waits
    "tests/importer/test_importer_fuzz.py",
    "tests/site/test_site_table_window.py",
    "tests/site/test_site_predicted.py",
    "tests/importer/test_megatron_bridge.py",
    "tests/runner/test_slurm_job_script.py",  # waits
    "tests/importer/test_playbook.py",
    "tests/runner/test_runner_remeasure.py",  # waits
    "tests/check/test_failed_layouts.py",
    "tests/runner/test_cluster_rendezvous.py",
    "tests/engine/test_engine_kernels.py",
    "tests/site/test_site_build.py",
    "tests/importer/test_llm_foundry.py",
    "tests/site/test_site_rowdata.py",
    "tests/importer/test_playbook_markers.py",
    "tests/check/test_check_parallel.py",
)


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist orders files by their number of tests unless told not to; the order of LONGEST_FIRST is better.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    # The suite starts hundreds of Python processes (the CLIs, mkdocs, torchrun and its ranks). Where
    # PYTHONDONTWRITEBYTECODE is set (as on the machines this project is built on), each compiled the project's
    # modules again, ~0.1 s of CPU a process: they write __pycache__ (git ignores it), as Python does by default.
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        sys.dont_write_bytecode = False
    # The tests read the commands' plain output. A CI whose environment forces colour (FORCE_COLOR, read by rich
    # and by node's tools) made lint-imports and dependency-cruiser split names with codes, and the runner draw a
    # progress bar into a pipe: the subprocesses the suite starts inherit a plain environment instead.
    for forcing in ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS"):
        os.environ.pop(forcing, None)
    os.environ["NO_COLOR"] = "1"
    # The check cache lives in the user's cache folder; tests keep theirs apart (subprocesses inherit it).
    if "OPENRECIPES_CACHE_DIR" not in os.environ:
        os.environ["OPENRECIPES_CACHE_DIR"] = tempfile.mkdtemp(prefix="openrecipes-test-cache-")
    # xdist's workers inherit the controller's folder: each takes a folder of its own inside it, so that no two
    # processes of one run write the same cache file.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ["OPENRECIPES_CACHE_DIR"] = str(Path(os.environ["OPENRECIPES_CACHE_DIR"]) / worker)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def committed_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This process's copy of the committed registry. Tests read it; a test that edits a registry makes its own."""
    return export_committed(tmp_path_factory.mktemp("committed"))


@pytest.fixture(scope="session")
def committed(committed_copy: Path) -> Registry:
    """The committed registry, loaded once per process."""
    from generator.registry import load_registry

    return load_registry(committed_copy)


@pytest.fixture(scope="session")
def committed_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The committed registry's site, built once per run (`mkdocs build --strict` in a process of its own:
    suitehelpers.mkdocs_build). The pages the tests read (committed_pages) and the ones Chromium loads
    (tests/site/conftest.py) are this build's."""
    shared = run_folder(tmp_path_factory)
    folder = shared / "committed-site"
    record = folder / "build.json"
    with file_lock(shared / "committed-site.lock"):
        if not record.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that another process left half-done
            registry = export_committed(folder / "reg")
            result = mkdocs_build(site_project(folder, registry), folder / "out")
            record.write_text(json.dumps({"returncode": result.returncode, "stderr": result.stderr}))
        built = json.loads(record.read_text())
    assert built["returncode"] == 0, built["stderr"][-4000:]
    return BuiltSite(folder / "reg", folder / "out", built["stderr"])


@pytest.fixture(scope="session")
def advise_validation(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The advisor's leave-one-model-out validation of the working tree's registry (generator.advise.validate: a fit
    per held-out model, ~8 s of CPU), computed once per run: the first test process that needs it writes it as JSON
    (exact for its data: strings, numbers, lists, no NaN) into the run's folder under a file lock; the others read
    it. The advisor's tests and the site's stated error (tests/site/test_site_predicted.py) judge the same run."""
    shared = run_folder(tmp_path_factory)
    record = shared / "advise-validation.json"
    with file_lock(shared / "advise-validation.lock"):
        if not record.exists():
            from generator.advise.observations import load
            from generator.advise.validate import validate
            from generator.registry import atomic_write

            registry, rows = load(ROOT)
            atomic_write(record, json.dumps(validate(rows, registry.catalog), allow_nan=False), durable=False)
        return json.loads(record.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def committed_pages(committed_site: BuiltSite) -> dict[str, Page]:
    """Every page of the committed registry's site as its one build rendered it (suitehelpers.built_pages: the
    hook's page sources, generator.site.render_site's output)."""
    return built_pages(committed_site.registry)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The LONGEST_FIRST files first, in that order; then the others, those of more tests first (what pytest-xdist
    would do), each file's tests in their own order."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    counts: dict[str, int] = {}
    for item in items:
        counts[_file_of(item)] = counts.get(_file_of(item), 0) + 1
    items.sort(key=lambda item: (rank.get(_file_of(item), len(rank)), -counts[_file_of(item)], _file_of(item)))


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]
