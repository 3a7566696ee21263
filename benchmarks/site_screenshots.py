"""Screenshots of the built site in Chromium, the first screen of each page at 1400 and 390 px.

    .venv/bin/python benchmarks/site_screenshots.py SITE_DIR OUT_DIR

SITE_DIR is a built site (for example from the committed registry, as tests/site/conftest.py builds it once per test run). Pages:
home, all recipes, the reference recipe, a model page, a GPU page and a compare view of three recipes. For each
shot it prints whether the page scrolls sideways (document wider than the window), the issue's phone promise.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

REF_ID = "gemma-4-31b/h100/attune-tp2-pp4-split13"
PAGES = {
    "home": "",
    "recipes": "recipes/",
    "recipe": f"recipes/{REF_ID}/",
    "model": "models/llama-3-70b/",
    "gpu": "gpus/h100/",
}
WIDTHS = {1400: 900, 390: 844}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _compare_ids(page) -> list[str]:  # noqa: ANN001
    """Three recipes of the all-recipes table, as a user would tick them (the first rows shown)."""
    page.goto("recipes/")
    return page.eval_on_selector_all("#or-recipes tbody tr:not([hidden])", "rs => rs.slice(0, 3).map(r => r.dataset.orRecipe)")


def shoot(site: Path, out: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory",
                               str(site)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = []
    try:
        time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            for width, height in WIDTHS.items():
                context = browser.new_context(base_url=f"http://127.0.0.1:{port}/",
                                              viewport={"width": width, "height": height})
                page = context.new_page()
                pages = dict(PAGES, compare="compare/?ids=" + ",".join(_compare_ids(page)))
                for name, url in pages.items():
                    page.goto(url)
                    page.wait_for_load_state("networkidle")
                    page.wait_for_timeout(400)  # charts drawn, rows filled
                    wide = page.evaluate("document.scrollingElement.scrollWidth")
                    path = out / f"{name}-{width}.png"
                    page.screenshot(path=str(path))
                    lines.append(f"{path.name}: document {wide} px wide in a {width} px window"
                                 f"{' (scrolls sideways)' if wide > width else ''}")
                context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print("\n".join(shoot(args.site, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
