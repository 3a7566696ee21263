"""Site build at scale: N synthetic recipes against N plain Markdown pages of similar size, same theme.

    .venv/bin/python benchmarks/site_scale.py [--sizes 100 1000] [--no-serve] [--no-browser]

Prints, per N: build time of the recipe site and of the plain site (both `mkdocs build`, pages off the nav,
reached through one index page) and their ratio; output size; the all-recipes page's weight, raw and gzip;
the search index size; then, at the largest N, the time from one recipe edit to the new figure being served by
`mkdocs serve` and, in Chromium, the time of one filter keystroke on the all-recipes table.
Goals (issue 5): ratio <= 1.2 at 1,000, linear growth, rebuild <= 2 s, index <= 600 KB gzip, keystroke <= 50 ms.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
ENV = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
sys.path.insert(0, str(ROOT))  # run as a script from a checkout


def synthetic_recipes(n: int, seed: int = 0) -> dict[str, dict]:
    rng = random.Random(seed)
    base = yaml.safe_load(REFERENCE.read_text())
    out = {}
    for i in range(n):
        data = copy.deepcopy(base)
        count = rng.choice([8, 16, 32, 64])
        data["gpu"]["count"] = count
        data["layout"]["dp"] = count // 8
        data["layout"]["label"] = f"TP2 PP4 DP{count // 8} v{i}"
        data["status"] = rng.choice(["verified", "measured"])
        if data["status"] == "measured":
            data["correctness"] = None
        res = data["result"]
        res["tokens_per_s_per_gpu"] = round(rng.uniform(500, 2000), 1)
        res["usd_per_million_tokens"] = None
        res["mfu"] = None
        data["author"]["name"] = f"author {i % 37}"
        out[f"gemma-4-31b/h100/synthetic-{i:04d}"] = data
    return out


def write_registry(dest: Path, recipes: dict[str, dict]) -> None:
    for name in ("catalog", "schema", "site_src", "hooks"):
        shutil.copytree(ROOT / name, dest / name)
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    (dest / "generator").symlink_to(ROOT / "generator")
    for rid, data in recipes.items():
        path = dest / "recipes" / f"{rid}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def write_plain(dest: Path, n: int, page_bytes: int) -> None:
    """The same theme and plugins, no hook: N hand-written-like pages off the nav plus one index table."""
    docs = dest / "docs"
    (docs / "pages").mkdir(parents=True)
    shutil.copytree(ROOT / "site_src/assets", docs / "assets")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.pop("hooks", None)
    config.pop("watch", None)
    config["docs_dir"] = "docs"
    config["nav"] = [{"Home": "index.md"}]
    config["not_in_nav"] = "/pages/**\n"
    (dest / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    para = ("Tokens per second per GPU measured over the window with the layout below; the figures are "
            "recomputed from the catalogs. ")
    rows = ["| page | figure |", "| --- | --- |"]
    for i in range(n):
        body = [f"# Plain page {i}", ""]
        section = 0
        while sum(len(x) + 1 for x in body) < page_bytes:
            section += 1
            body += [f"## Section {section}", "", para * 6, "", "```bash", "python3 train.py --flag value \\" * 8,
                     "```", ""]
        (docs / "pages" / f"p{i:04d}.md").write_text("\n".join(body))
        rows.append(f"| [page {i}](pages/p{i:04d}.md) | {i * 1.5:,.2f} |")
    (docs / "index.md").write_text("# Plain\n\n" + "\n".join(rows) + "\n")


def build(project: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(project / "mkdocs.yml"), "-d", str(out)],
                   cwd=project, env=ENV, check=True)
    return time.perf_counter() - start


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def gz(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), 9))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode("utf-8", "replace")


def serve_rebuild(project: Path, recipe_id: str) -> tuple[float, float]:
    """(seconds from starting `mkdocs serve` to serving, seconds from one recipe edit to the edit being served)."""
    port = _free_port()
    log = open(project / "serve.log", "w")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "--livereload", "-a", f"127.0.0.1:{port}",
                             "-f", str(project / "mkdocs.yml")], cwd=project, env=ENV, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/recipes/{recipe_id}/"
    try:
        while True:
            try:
                _get(url)
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - start > 600:
                    raise RuntimeError("mkdocs serve did not come up; see serve.log") from None
                time.sleep(0.2)
        ready = time.perf_counter() - start
        path = project / "recipes" / f"{recipe_id}.yaml"
        data = yaml.safe_load(path.read_text())
        data["result"]["tokens_per_s_per_gpu"] = 4321.5
        tmp = path.with_suffix(".tmp")
        tmp.write_text(yaml.safe_dump(data, sort_keys=False))
        edited = time.perf_counter()
        os.replace(tmp, path)
        while "4,321.50" not in _get(url):
            if time.perf_counter() - edited > 600:
                raise RuntimeError("the edit never showed")
            time.sleep(0.05)
        return ready, time.perf_counter() - edited
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def keystroke_ms(site: Path) -> float | None:
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        return None
    from playwright.sync_api import sync_playwright

    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory",
                               str(site)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/recipes/")
            page.wait_for_selector("[data-or-filter-text]")
            times = page.evaluate("""() => {
                const input = document.querySelector('[data-or-filter-text]');
                const out = [];
                for (const text of ['s', 'sy', 'syn', 'synthetic-01', 'synthetic-012', '', 'v5', '']) {
                    const t = performance.now();
                    input.value = text;
                    input.dispatchEvent(new Event('input'));
                    document.body.offsetHeight;  // force the layout the change causes
                    out.push(performance.now() - t);
                }
                return out;
            }""")
            browser.close()
        return max(times)
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--no-serve", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    print(f"{'N':>6} {'recipes s':>10} {'plain s':>8} {'ratio':>6} {'site MB':>8} {'plain MB':>9} "
          f"{'table KB':>9} {'table gz KB':>12} {'search KB':>10}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="site-scale-") as tmp_name:
        tmp = Path(tmp_name)
        for n in args.sizes:
            project = tmp / f"recipes-{n}"
            write_registry(project, synthetic_recipes(n))
            recipe_time = build(project, tmp / f"recipes-{n}-out")
            site = tmp / f"recipes-{n}-out"
            sample = next((site / "recipes/gemma-4-31b/h100").glob("synthetic-0000/index.html"))
            # plain pages as big as a recipe page's Markdown source
            from generator.check import load_registry
            from generator.site import render_site

            pages = render_site(load_registry(project, [project / "recipes/gemma-4-31b/h100/synthetic-0000.yaml"]))
            md_bytes = len(pages["recipes/gemma-4-31b/h100/synthetic-0000.md"].content.encode())
            plain = tmp / f"plain-{n}"
            write_plain(plain, n, md_bytes)
            plain_time = build(plain, tmp / f"plain-{n}-out")
            table = site / "recipes/index.html"
            results[n] = (recipe_time, plain_time)
            print(f"{n:>6} {recipe_time:>10.2f} {plain_time:>8.2f} {recipe_time / plain_time:>6.2f} "
                  f"{tree_bytes(site) / 1e6:>8.1f} {tree_bytes(tmp / f'plain-{n}-out') / 1e6:>9.1f} "
                  f"{table.stat().st_size / 1e3:>9.0f} {gz(table) / 1e3:>12.0f} "
                  f"{(site / 'search/search_index.json').stat().st_size / 1e3:>10.0f}")
            print(f"       (recipe page: {md_bytes / 1e3:.1f} KB Markdown, {sample.stat().st_size / 1e3:.1f} KB HTML)")
        if len(args.sizes) >= 2:
            small, large = min(args.sizes), max(args.sizes)
            growth = results[large][0] / results[small][0]
            print(f"growth {small} -> {large}: x{growth:.1f} for x{large / small:.0f} recipes "
                  f"(plain x{results[large][1] / results[small][1]:.1f})")
        largest = max(args.sizes)
        if not args.no_browser:
            ms = keystroke_ms(tmp / f"recipes-{largest}-out")
            print(f"filter keystroke at {largest} rows: " + ("no Chromium" if ms is None else f"{ms:.1f} ms (max of 8)"))
        if not args.no_serve:
            ready, rebuild = serve_rebuild(tmp / f"recipes-{largest}", "gemma-4-31b/h100/synthetic-0001")
            print(f"mkdocs serve at {largest}: up in {ready:.1f} s; one recipe edit served after {rebuild:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
