"""`mkdocs serve` (a real subprocess, the README's command, no flags) reloads on recipe, catalog, schema,
template and generator-code edits, and injects the live-reload script (some Click versions turned it off)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sitehelpers import ROOT, make_registry, synthetic

from generator import figures
from generator.site import formatting as fmt

pytestmark = pytest.mark.slow

RECIPE = "gemma-4-31b/h100/fast-dp2"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode("utf-8", "replace")


def _project(tmp: Path) -> Path:
    project = make_registry(tmp / "reg", {RECIPE: synthetic(1500.5, count=16, name="fast")})
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    for name in ("site_src", "site_theme", "hooks"):
        shutil.copytree(ROOT / name, project / name)
    # A copy of the generator, so that the test can edit a template and the code without touching the checkout.
    shutil.copytree(ROOT / "generator", project / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    return project


def _serve(project: Path, log_path: Path, *flags: str, tmpdir: Path | None = None):  # noqa: ANN202
    """`mkdocs serve` on the project, once it answers: (process, base URL, log file)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"NO_MKDOCS_2_WARNING": "1"}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    log = open(log_path, "w")  # noqa: SIM115 - closed by _stop
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", *flags], cwd=project,
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    while True:
        try:
            _get(base)
            return proc, base, log
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.close()
                proc.kill()
                pytest.fail("mkdocs serve did not come up:\n" + log_path.read_text()[-3000:])
            time.sleep(0.2)


def _stop(proc, log) -> None:  # noqa: ANN001
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    tmp = tmp_path_factory.mktemp("serve")
    project = _project(tmp)
    proc, base, log = _serve(project, tmp / "serve.log")
    yield project, base, tmp / "serve.log"
    _stop(proc, log)


def _wait_for(url: str, text: str, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in _get(url):
            return
        time.sleep(0.2)
    pytest.fail(f"{text!r} never showed at {url}; serve log:\n{log.read_text()[-3000:]}")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.replace(tmp, path)


def test_live_reload_script_is_injected(served) -> None:  # noqa: ANN001
    _, base, _ = served
    # mkdocs serve adds its live-reload client only when live reload is on (Click 8.3 turned the default off).
    assert re.search(r"livereload\(\d+, *\d+\)", _get(base)), "mkdocs serve is not live-reloading"


def test_edits_rebuild(served) -> None:  # noqa: ANN001
    project, base, log = served
    page = base + f"recipes/{RECIPE}/"
    _wait_for(page, "1,500.50", log)
    _replace(project / f"recipes/{RECIPE}.yaml", "tokens_per_s_per_gpu: 1500.5", "tokens_per_s_per_gpu: 4321.5")
    _wait_for(page, "4,321.50", log)
    # a catalog edit: the reference's instance price, so its recomputed $/1M changes from $1.62
    ref = base + "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13/"
    _wait_for(ref, "$1.62", log)
    catalog = project / "catalog/instances.yaml"
    price = re.search(r"usd_per_hour: ([0-9.]+)", catalog.read_text()).group(1)
    _replace(catalog, f"usd_per_hour: {price}", f"usd_per_hour: {float(price) * 2}")
    _wait_for(ref, fmt.usd(figures.usd_per_million_tokens(float(price) * 2, 8, 1178.1)), log)
    # the schema: its descriptions make the schema page
    _replace(project / "schema/recipe.schema.yaml", "Training throughput over the window",
             "Training throughput (edited) over the window")
    _wait_for(base + "schema/", "Training throughput (edited) over the window", log)
    # a template
    _replace(project / "generator/site/templates/recipes.md.j2", "Click a column heading to sort.",
             "Click a heading (edited) to sort.")
    _wait_for(base + "recipes/", "Click a heading (edited) to sort.", log)
    # the generator's code: the hook drops the cached modules when their files change
    _replace(project / "generator/site/formatting.py", "    return number(value, 2)\n", "    return number(value, 3)\n")
    _wait_for(page, "4,321.500", log)


def _search_docs(base: str) -> list[dict]:
    return json.loads(_get(base + "search/search_index.json"))["docs"]


def test_dirty_serve_rebuilds_the_changed_pages_and_keeps_the_whole_search_index(tmp_path: Path) -> None:
    # The README's command for large registries: only pages whose text changed are rebuilt, and the search index
    # still covers every page (Material's own --dirty carry-over kept only the pages just built).
    project = _project(tmp_path)
    log_path = tmp_path / "serve-dirty.log"
    (tmp_path / "tmp").mkdir()
    proc, base, log = _serve(project, log_path, "--dirty", "--no-strict", tmpdir=tmp_path / "tmp")
    try:
        page = base + f"recipes/{RECIPE}/"
        _wait_for(page, "1,500.50", log_path)
        before = _search_docs(base)
        assert any(e["location"] == "" for e in before) and any(e["location"].startswith("recipes/gemma") for e in before)
        # mkdocs serve builds into a mkdtemp folder: with TMPDIR ours, the only mkdocs_* folder there
        site = next((tmp_path / "tmp").glob("mkdocs_*"))
        untouched = (site / "methodology/index.html").stat().st_mtime_ns
        _replace(project / f"recipes/{RECIPE}.yaml", "name: synthetic fast", "name: synthetic faster author")
        _replace(project / f"recipes/{RECIPE}.yaml", "tokens_per_s_per_gpu: 1500.5", "tokens_per_s_per_gpu: 4321.5")
        _wait_for(page, "4,321.50", log_path)
        _wait_for(base + "recipes/", "4,322", log_path)  # tables show tokens/s at their meaningful precision
        deadline = time.monotonic() + 60
        while True:  # the index is written at the end of the rebuild that served the page
            after = _search_docs(base)
            text = " ".join(e["text"] for e in after if e["location"].startswith(f"recipes/{RECIPE}/"))
            if "synthetic faster author" in text or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert "synthetic faster author" in text
        assert (site / "methodology/index.html").stat().st_mtime_ns == untouched  # not rebuilt
        assert [e["location"] for e in after] == [e["location"] for e in before]
        # pages the edit did not change (so not rebuilt) keep their entries exactly
        kept = ("methodology/", "schema/", "contributing/", "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13/")
        unchanged = [e for e in before if e["location"].startswith(kept)]
        assert len({e["location"].split("#")[0] for e in unchanged}) == len(kept)
        assert [e for e in after if e["location"].startswith(kept)] == unchanged
    finally:
        _stop(proc, log)
