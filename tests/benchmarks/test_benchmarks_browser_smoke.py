"""The benchmarks' browser parts at a small size, in Debian's Chromium (tests/benchmarks/test_benchmarks_smoke.py
runs the rest): site_scale.py on a sample of the committed registry (its build against plain pages, then the
keystroke, sort, reprice, shared-link, "Show all" and CSV timings), and site_screenshots.py on a small synthetic
site. Each exits 0 and prints its figures.
Like the site's browser tests they skip without Chromium, unless OPENRECIPES_REQUIRE_CHROMIUM=1 (.ci/test, CI).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from test_benchmarks_smoke import run

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(autouse=True)
def _chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("OPENRECIPES_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"OPENRECIPES_REQUIRE_CHROMIUM=1 but {CHROMIUM} is missing (apt-get install chromium)")
    pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")


def test_site_scale_committed_in_chromium() -> None:
    out = run("benchmarks/site_scale.py", "--committed", "--limit", "40", "--smoke", timeout=600)
    assert "committed registry: 40 recipes" in out, out
    assert re.search(r"build: recipes [\d.]+ s, .* ratio [\d.]+", out), out
    assert "goals at 40 recipes" in out, out
    assert re.search(r"filter keystroke to next frame <= 50 ms: median \d+ ms", out), out
    assert re.search(r"sort click to next frame <= 50 ms: median \d+ ms", out), out
    assert re.search(r"price/budget keystroke to next frame <= 100 ms: median \d+ ms", out), out
    assert re.search(r"URL's view painted: median \d+ ms", out), out
    assert re.search(r"sort click after \"Show all\" \(40 rows shown", out), out
    assert re.search(r"CSV of every row \(40 rows, .*\), click to download: \d+ ms", out), out


def test_site_screenshots(tmp_path: Path) -> None:
    run("benchmarks/site_scale.py", "--build-only", "20", str(tmp_path))
    out = run("benchmarks/site_screenshots.py", str(tmp_path / "site"), str(tmp_path / "shots"), "--only", "home",
              timeout=600)
    assert "home-1400.png: document 1400 px wide in a 1400 px window" in out, out
    assert "home-390.png: document" in out, out
    assert (tmp_path / "shots" / "home-1400.png").stat().st_size > 10_000
