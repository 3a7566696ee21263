"""Site build at scale: N synthetic recipes against N plain Markdown pages of similar size, same theme.

    .venv/bin/python benchmarks/site_scale.py [--sizes 100 1000 10000] [--no-serve] [--no-browser]
    .venv/bin/python benchmarks/site_scale.py --committed   # this repository's own registry (recipes/, failed/)
    .venv/bin/python benchmarks/site_scale.py --committed --limit 40 --smoke   # 40 of its recipes, every step once

Prints, per N: build time of the recipe site and of the plain site (both `mkdocs build`, pages off the nav,
reached through one index page) and their ratio; output size; the all-recipes page's weight, raw and gzip;
the search index size (and per recipe); then, at the largest N, in Chromium on the all-recipes table: the time
from each filter keystroke, each sort click and each price or budget keystroke to the next painted frame (and
whether any row in view still showed an old $ in that frame), and the time from one recipe edit to the new figure
being served by `mkdocs serve`.
Goals (issue 5): ratio <= 1.2 at 1,000, linear growth, rebuild <= 2 s, keystroke <= 50 ms.
Goals (issue 17 item 13, at 10,000 recipes): a filter or sort keystroke reaches the next frame in <= 50 ms, a price
or budget change reprices every visible row in <= 100 ms, the all-recipes page <= 600 KB gzip, build <= 1.2x plain
pages of the same size; our own budget for the search index: <= 1 KB a recipe page.
Goals (issue 18, the committed registry at its real size): build <= 1.2x as many plain pages of the same mean size,
search index <= 1 KB a recipe page, the same keystroke goals on its all-recipes table.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import random
import re
import shutil
import socket
import statistics
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


def write_project(dest: Path) -> None:
    """A site project without recipes: this checkout's catalogs, schema, site sources, hook and generator."""
    for name in ("catalog", "schema", "site_src", "site_theme", "hooks"):
        shutil.copytree(ROOT / name, dest / name)
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    (dest / "generator").symlink_to(ROOT / "generator")


def write_registry(dest: Path, recipes: dict[str, dict]) -> None:
    write_project(dest)
    for rid, data in recipes.items():
        path = dest / "recipes" / f"{rid}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def write_committed(dest: Path, limit: int | None = None) -> int:
    """This repository's committed registry (recipes, failed layouts, catalogs) as a project; returns its recipes.
    With `limit`, only `limit` recipes spread evenly over the registry by path (and their evidence files) stay: a
    smoke run's registry."""
    write_project(dest)
    archive = subprocess.run(["git", "archive", "HEAD", "recipes", "failed"], cwd=ROOT, capture_output=True,
                             check=True).stdout  # HEAD, not a working tree someone is editing
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    recipes = sorted((dest / "recipes").rglob("*.yaml"))
    if limit is None or limit >= len(recipes):
        return len(recipes)
    kept = {recipes[i * len(recipes) // limit] for i in range(limit)}  # spread over the models and GPUs
    for path in recipes:
        if path not in kept:
            path.unlink()
            path.with_suffix(".evidence.json").unlink(missing_ok=True)
    return limit


def write_plain(dest: Path, n: int, page_bytes: int | list[int], files: dict[str, bytes] | None = None) -> None:
    """The same theme and plugins, no hook: N hand-written-like pages off the nav plus one index table; page_bytes
    is every page's Markdown size or one size per page; `files` (path: bytes) are copied in as they are (the
    downloads a recipe site ships beside its pages)."""
    sizes = page_bytes if isinstance(page_bytes, list) else [page_bytes] * n
    docs = dest / "docs"
    (docs / "pages").mkdir(parents=True)
    shutil.copytree(ROOT / "site_src/assets", docs / "assets")
    shutil.copytree(ROOT / "site_theme", dest / "site_theme")  # mkdocs.yml's theme.custom_dir: the same templates
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
        written = 0
        while written < sizes[i]:
            section += 1
            block = [f"## Section {section}", "", para * 6, "", "```bash", "python3 train.py --flag value \\" * 8,
                     "```", ""]
            body += block
            written += sum(len(x) + 1 for x in block)
        (docs / "pages" / f"p{i:04d}.md").write_text("\n".join(body))
        rows.append(f"| [page {i}](pages/p{i:04d}.md) | {i * 1.5:,.2f} |")
    (docs / "index.md").write_text("# Plain\n\n" + "\n".join(rows) + "\n")
    for rel, data in (files or {}).items():
        (docs / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / "files" / rel).write_bytes(data)


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


def static_server(site: Path) -> tuple[subprocess.Popen, int]:
    """A `python -m http.server` on a free loopback port serving a built site, given half a second to listen; the
    caller terminates it."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory",
                               str(site)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return server, port


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as r:  # the server answers after a rebuild in progress
        return r.read().decode("utf-8", "replace")


SERVE_EDITS = 5  # recipe edits timed per server; the first one's rebuilt pages are listed


def serve_rebuild(project: Path, recipe_id: str, dirty: bool) -> dict:
    """`mkdocs serve` (with --dirty or not) on the project: seconds to come up; for each of SERVE_EDITS recipe edits
    (an atomic write of its tokens/s, 3 s apart), seconds until the server tells a live-reload client that a new
    build is served and that build shows the new figure on the recipe page and on the all-recipes table; which
    pages the first rebuild wrote (served HTML newer than the edit); the search index's entries before and after."""
    port = _free_port()
    log_path = project / f"serve-{'dirty' if dirty else 'full'}.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    # No -v: debug logging slows a rebuild. mkdocs serve builds into a mkdtemp folder: a TMPDIR of our own
    # makes it the only mkdocs_* folder there, for the pages-rebuilt count.
    tmpdir = Path(tempfile.mkdtemp(prefix="serve-tmp-", dir=project))
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--livereload", "-a", f"127.0.0.1:{port}",
           "-f", str(project / "mkdocs.yml")] + (["--dirty", "--no-strict"] if dirty else [])
    proc = subprocess.Popen(cmd, cwd=project, env=dict(ENV, TMPDIR=str(tmpdir)), stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    page_url = f"{base}recipes/{recipe_id}/"
    path = project / "recipes" / f"{recipe_id}.yaml"
    original = path.read_text()
    try:
        while True:
            try:
                _get(page_url)
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - start > 600:
                    raise RuntimeError(f"mkdocs serve did not come up; see {log_path}") from None
                time.sleep(0.2)
        ready = time.perf_counter() - start
        entries_before = len(json.loads(_get(base + "search/search_index.json"))["docs"])
        served_times: list[float] = []
        rebuilt: list[str] = []
        epoch = int(re.search(r"livereload\((\d+),", _get(page_url)).group(1))  # the site version served now
        for i in range(SERVE_EDITS):
            value = 4321.5 + i
            # The recipe page states the figure to two decimals; the all-recipes table shows it rounded and keeps the
            # value itself as the row's sort key (data-sort, or the packed rows' JSON past the first live rows).
            shown, key = f"{value:,.2f}", repr(value)
            data = yaml.safe_load(original)
            data["result"]["tokens_per_s_per_gpu"] = value
            tmp = path.with_suffix(".tmp")
            tmp.write_text(yaml.safe_dump(data, sort_keys=False))
            edited, edited_wall = time.perf_counter(), time.time()
            os.replace(tmp, path)
            # As the browser's live-reload client does: a long poll that the server answers once a rebuild is
            # over (search index written) and served; polling the pages instead would compete with the rebuild
            # for the server's CPU.
            served_s = None
            while served_s is None:
                if time.perf_counter() - edited > 300:
                    raise RuntimeError(f"the edit never showed; see {log_path}")
                epoch = int(_get(f"{base}livereload/{epoch}/{i}"))
                if shown in _get(page_url) and key in _get(base + "recipes/"):
                    served_s = time.perf_counter() - edited
            served_times.append(served_s)
            if i == 0:  # pages the rebuild wrote: the served folder's HTML files newer than the edit
                site_dir = next(tmpdir.glob("mkdocs_*"))
                rebuilt = sorted(f.relative_to(site_dir).as_posix() for f in site_dir.rglob("*.html")
                                 if f.stat().st_mtime >= edited_wall)
            time.sleep(3)
        entries_after = len(json.loads(_get(base + "search/search_index.json"))["docs"])
        return {"ready": ready, "served": served_times, "rebuilt": rebuilt,
                "search_before": entries_before, "search_after": entries_after}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        path.write_text(original)
        shutil.rmtree(tmpdir, ignore_errors=True)


def print_serve(n: int, dirty: bool, r: dict) -> None:
    pages = r["rebuilt"]
    shown = ", ".join(pages[:6]) + (", ..." if len(pages) > 6 else "")
    served = r["served"]
    print(f"mkdocs serve{' --dirty' if dirty else ''} at {n}: up in {r['ready']:.1f} s; {len(served)} recipe edits, each "
          f"served on the recipe page and the all-recipes table after: median {statistics.median(served):.2f} s, max "
          f"{max(served):.2f} s ({', '.join(f'{x:.2f}' for x in served)}); the first rebuild wrote {len(pages)} pages "
          f"({shown}); search index {r['search_before']} -> {r['search_after']} entries")


# Keystrokes typed into the all-recipes filter, as (label, key). The filter text they make: narrowing ("s" ...
# "synthetic-01": 10 matches), widening (Backspace), clearing it (every row matches again: the costliest case
# before rows were shown a few at a time), a query of 111 matches, one of none, and clearing again.
KEYSTROKES = ([(c, c) for c in "synthetic-01"] + [("Backspace", "Backspace")] * 2
              + [("clear", "Control+a Backspace")] + [(c, c) for c in "v5"]
              + [("clear", "Control+a Backspace"), ("z", "z"), ("clear", "Backspace")])
KEY_INTERVAL_MS = 150  # a fast typist's pace; the next key does not wait for the table to settle

# In the page: for each input event, the time from the event (its timeStamp: when the key reached the browser)
# to the end of the next frame (a message posted from requestAnimationFrame runs after that frame is painted);
# and the Event Timing API's entries (duration: event to next paint, 8 ms granularity, >= 16 ms reported).
PROBE = """() => {
  window.__orFrames = [];
  window.__orEvents = [];
  const probe = (e) => {
    if (e.type === 'click' && !(e.target.closest && e.target.closest('th[data-or-sort]'))) return;
    const start = e.timeStamp;
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => window.__orFrames.push(performance.now() - start);
      channel.port2.postMessage(0);
    });
  };
  window.addEventListener('input', probe, true);
  window.addEventListener('click', probe, true);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__orEvents.push({start: e.startTime, duration: e.duration});
  }).observe({type: 'event', durationThreshold: 16, buffered: false});
}"""


# Sort clicks on the all-recipes table's headers, as (label, header key): best-first, reversed, another figure,
# a text column; each click re-orders all rows.
SORTS = [("tok", "tokens"), ("tok2", "tokens"), ("usd", "usd"), ("name", "name"), ("mfu", "mfu")]
# Price and budget edits, as (label, input selector, keys): every keystroke that changes the value reprices every
# recipe of that GPU type (all of the synthetic ones: H100) or, for the budget, every row's cost to train.
PRICE_INPUT = "input[data-or-price=H100]"
BUDGET_INPUT = "input[data-or-budget]"
REPRICES = ([("$" + c, PRICE_INPUT, c) for c in "1.5"] + [("$bs", PRICE_INPUT, "Backspace")]
            + [("b" + c, BUDGET_INPUT, c) for c in "1T"] + [("b5", BUDGET_INPUT, "Backspace 5 0 0 B")]
            + [("bclr", BUDGET_INPUT, "Control+a Backspace")])
# After a reprice: the rows in view whose $ / 1M is not the one for the price typed (the frame must show them all).
STALE = """(price) => [...document.querySelectorAll('#or-recipes tbody tr[data-or-recipe]:not([hidden])')].filter(r => {
    const t = parseFloat(r.querySelector('[data-or-col=tokens]').dataset.sort);
    const u = parseFloat(r.querySelector('[data-or-col=usd]').dataset.sort);
    return r.dataset.gpu_type === 'H100' && Math.abs(u - price / (t * 3600) * 1e6) > 1e-9 * u;
}).length"""


def _timed(page, actions, run) -> list[tuple[str, float, int]]:  # noqa: ANN001
    """Run each action (label, arg); return (label, performance.now() before it, frames recorded before it) once
    its first frame was painted (an action of several keys may paint several; its figure is their longest)."""
    marks = []
    for label, arg in actions:
        before = page.evaluate("[performance.now(), window.__orFrames.length]")
        run(arg)
        page.wait_for_function(f"window.__orFrames.length > {before[1]}")
        marks.append((label, before[0], before[1]))
        page.wait_for_timeout(KEY_INTERVAL_MS)
    return marks


# The committed registry's filter keystrokes: a model narrowing to its recipes, widening, clearing, a GPU type,
# a query of no match, clearing again.
COMMITTED_KEYSTROKES = ([(c, c) for c in "llama-3-70b"] + [("Backspace", "Backspace")] * 3
                        + [("clear", "Control+a Backspace")] + [(c, c) for c in "h200"]
                        + [("clear", "Control+a Backspace"), ("z", "z"), ("q", "q"), ("clear", "Control+a Backspace")])


def keystroke_ms(site: Path, reprice: bool = False, keystrokes: list | None = None) -> dict | None:
    """Per keystroke: (label, ms to the next painted frame, Event Timing duration or None when under 16 ms); with
    `reprice`, the same for sort clicks and price and budget edits, and the stale rows in view after each price."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        return None
    from playwright.sync_api import sync_playwright

    server, port = static_server(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/recipes/")
            page.wait_for_selector("[data-or-filter-text]")
            page.wait_for_timeout(1500)  # the page's own start-up work (search index, first sort) done
            if reprice:  # the prices panel open, the H100 price empty (catalog figures) before any timing
                page.locator("[data-or-decide] summary").click()
                page.fill(PRICE_INPUT, "")
                page.wait_for_timeout(1000)
            page.evaluate(PROBE)
            page.click("[data-or-filter-text]")
            page.wait_for_timeout(300)

            def press(keys: str) -> None:
                for key in keys.split():
                    page.keyboard.press(key)

            marks = _timed(page, keystrokes or KEYSTROKES, press)
            shown = page.locator("[data-or-count]").inner_text()
            groups = {"keystrokes": len(marks)}
            stale = []
            if reprice:
                sorts = _timed(page, SORTS, lambda key: page.click(f"#or-recipes th[data-or-sort={key}] button"))
                prices = []
                for label, selector, keys in REPRICES:
                    page.click(selector)
                    prices += _timed(page, [(label, keys)], press)
                    if selector == PRICE_INPUT:
                        value = page.input_value(PRICE_INPUT)
                        stale.append(page.evaluate(STALE, float(value)) if value else 0)
                groups.update(sorts=len(sorts), reprices=len(prices))
                marks += sorts + prices
            page.wait_for_timeout(1000)
            frames = page.evaluate("window.__orFrames")
            events = page.evaluate("window.__orEvents")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    rows = []
    for i, (label, start, first) in enumerate(marks):
        end, last = (marks[i + 1][1], marks[i + 1][2]) if i + 1 < len(marks) else (float("inf"), len(frames))
        durations = [e["duration"] for e in events if start <= e["start"] < end]
        rows.append((label, max(frames[first:last]), max(durations) if durations else None))
    out, start = {"count_after": shown, "stale": stale}, 0
    for name, n in groups.items():
        out[name] = rows[start:start + n]
        start += n
    return out


# Before the page's first frame: each frame's time (from navigation start), whether the all-recipes table's rows
# were visible in it, and whether the URL's view (filters, sort, prices: set up by the page script in one task) was
# applied in it. A frame that shows rows before the view applies is the "flash of the unfiltered table".
FRAMES = """(() => {
  window.__orPaint = [];
  const tick = () => requestAnimationFrame(() => {
    const t = document.getElementById('or-recipes');
    const rows = !!(t && t.tBodies[0] && t.tBodies[0].rows.length);
    const visible = rows && !document.documentElement.classList.contains('or-view-pending');
    window.__orPaint.push([performance.now(), visible, !!(t && t.dataset.orSortReady)]);
    if (performance.now() < 120000 && !(visible && t.dataset.orSortReady)) tick();
  });
  tick();
})()"""
URL_VIEW_LOADS = 5
# The shared links opened: a filter, a text and a sort (the committed registry's is test_site_committed_browser's).
COMMITTED_QUERY = "gpu_type=H100&text=fp8&sort=usd&dir=asc"
SYNTHETIC_QUERY = "status=verified&text=v1&sort=tokens&dir=asc"
# After "Show all": each sort twice (a median and a max of ten clicks), then scrolls through the windowed table.
SHOW_ALL_SORTS = SORTS * 2
# A page of the site without a recipes table, its DOMContentLoaded and first contentful paint (ms): what any page
# costs on this machine under the load of the moment (Material's bundle, Chart.js, the theme's CSS).
FLOOR_PAGE = "methodology/"
FLOOR = """() => [performance.getEntriesByType('navigation')[0].domContentLoadedEventStart,
    performance.getEntriesByName('first-contentful-paint')[0].startTime]"""
SCROLLS = 6
# In the page: the page script's set-up steps (main.js's User Timing measures "or:<step>") and the document's
# DOMContentLoaded, in ms.
STEPS = """() => ({dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventStart,
  steps: performance.getEntriesByType('measure').filter(m => m.name.startsWith('or:'))
    .map(m => [m.name.slice(3), m.startTime, m.duration])})"""
# One scroll by most of a screen, timed to the end of the frame that paints it (the windowed table's rows for the
# new scroll position go in from that frame's scroll event); returns [ms, rows in the body, whether the rows at the
# top of the viewport are the table's rows for that position].
SCROLL = """() => new Promise(done => {
  const start = performance.now();
  window.scrollBy(0, Math.round(window.innerHeight * 0.8));
  requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      const ms = performance.now() - start;
      const body = document.getElementById('or-recipes').tBodies[0];
      const rows = [...body.rows].filter(r => !r.hasAttribute('data-or-spacer'));
      const covered = rows.length > 0 && rows[0].getBoundingClientRect().top <= 100
        && rows[rows.length - 1].getBoundingClientRect().bottom >= window.innerHeight;
      done([ms, rows.length, covered]);
    };
    channel.port2.postMessage(0);
  });
})"""


def url_view_and_show_all(site: Path, query: str) -> dict | None:
    """The all-recipes page opened with `query` URL_VIEW_LOADS times: per load, the first frame showing rows (ms
    from navigation start), whether it showed the URL's view, how long unfiltered rows showed before it, and where
    the time went (DOMContentLoaded, the page script's steps); then, after "Show all", each sort click's time to the
    next painted frame, and each scroll's."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        return None
    from playwright.sync_api import sync_playwright

    server, port = static_server(site)
    loads = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"])
            for _ in range(URL_VIEW_LOADS):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.add_init_script(FRAMES)
                page.goto(f"http://127.0.0.1:{port}/recipes/?{query}")
                page.wait_for_function("window.__orPaint.some(f => f[1] && f[2])", timeout=130000)
                frames = page.evaluate("window.__orPaint")
                first = next(f for f in frames if f[1])
                applied = next(f for f in frames if f[1] and f[2])
                loads.append({"first_rows_ms": first[0], "first_is_view": first[2], "view_ms": applied[0],
                              "unfiltered_ms": applied[0] - first[0], "count": page.inner_text("[data-or-count]"),
                              **page.evaluate(STEPS)})
                page.close()
            floor = []  # the machine's floor under the same load: a page of the same site without a recipes table
            for _ in range(URL_VIEW_LOADS):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"http://127.0.0.1:{port}/{FLOOR_PAGE}")
                page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0")
                floor.append(page.evaluate(FLOOR))
                page.close()
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(300000)  # with every row in the body, a sort at 10,000 took seconds
            page.goto(f"http://127.0.0.1:{port}/recipes/")
            page.wait_for_selector("[data-or-filter-text]")
            page.wait_for_timeout(1500)
            show_all = page.locator("button[data-or-show-all]")
            if show_all.count() and show_all.first.is_visible():  # a small registry's table shows every row already
                show_all.first.click()
            page.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached", timeout=300000)
            page.wait_for_timeout(1000)
            in_body = page.locator("#or-recipes tbody tr[data-or-recipe]:not([hidden])").count()
            csv_ms = _csv_of_every_row(page)  # before shownRows below, which builds every row
            shown = page.evaluate("(OpenRecipes.shownRows ? OpenRecipes.shownRows('or-recipes') : "
                                  "document.querySelectorAll('#or-recipes tbody tr:not([hidden])')).length")
            page.evaluate(PROBE)
            marks = _timed(page, SHOW_ALL_SORTS, lambda key: page.click(f"#or-recipes th[data-or-sort={key}] button"))
            page.wait_for_timeout(1000)
            frames = page.evaluate("window.__orFrames")
            scrolls = []
            for _ in range(SCROLLS):
                scrolls.append(page.evaluate(SCROLL))
                page.wait_for_timeout(300)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    sorts = []
    for i, (label, _, first) in enumerate(marks):
        last = marks[i + 1][2] if i + 1 < len(marks) else len(frames)
        sorts.append((label, max(frames[first:last])))
    return {"query": query, "loads": loads, "shown_all": in_body, "shown": shown, "sorts": sorts, "scrolls": scrolls,
            "floor": floor, "csv_ms": csv_ms}


def _csv_of_every_row(page) -> float:  # noqa: ANN001
    """Milliseconds from a click on the table's CSV button to the download: every row built first (packed.js), the
    rows far off screen included."""
    start = time.perf_counter()
    with page.expect_download(timeout=300000):
        page.click("button[data-or-csv=or-recipes]")
    return (time.perf_counter() - start) * 1000


def print_url_view(result: dict | None, n: int) -> None:
    if result is None:
        print("URL view at first paint: no Chromium at /usr/bin/chromium")
        return
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) at the end of this run")
    print(f"all-recipes page at {n} rows opened with ?{result['query']}, {len(result['loads'])} loads (ms from "
          "navigation start):")
    for load in result["loads"]:
        steps = ", ".join(f"{name} {ms:.0f}" for name, _, ms in load["steps"] if ms >= 5)
        print(f"    first frame with rows {load['first_rows_ms']:.0f} ms, showing the URL's view: "
              f"{'yes' if load['first_is_view'] else 'NO'}; URL's view painted at {load['view_ms']:.0f} ms; "
              f"unfiltered rows shown {load['unfiltered_ms']:.0f} ms; count {load['count']!r}")
        start = min((at for _, at, _ in load["steps"]), default=0)
        print(f"        DOMContentLoaded {load['dcl']:.0f} ms; page script from {start:.0f} ms: {steps or '-'}")
    views = [load["view_ms"] for load in result["loads"]]
    frames = [ms for _, ms in result["sorts"]]
    after = [load["view_ms"] - load["dcl"] for load in result["loads"]]
    floor = result["floor"]
    print(f"    a page without a table ({FLOOR_PAGE}), {len(floor)} loads: DOMContentLoaded median "
          f"{statistics.median(d for d, _ in floor):.0f} ms, max {max(d for d, _ in floor):.0f} ms; first contentful "
          f"paint median {statistics.median(p for _, p in floor):.0f} ms, max {max(p for _, p in floor):.0f} ms")
    print(f"    URL's view painted: median {statistics.median(views):.0f} ms, max {max(views):.0f} ms; after "
          f"DOMContentLoaded (the page script's share): median {statistics.median(after):.0f} ms, max {max(after):.0f} ms")
    print(f"sort click after \"Show all\" ({result['shown']} rows shown, {result['shown_all']} of them in the body "
          "before the first click), click to next painted frame:")
    print("    key         " + " ".join(f"{label[:5]:>5}" for label, _ in result["sorts"]))
    print("    frame ms    " + " ".join(f"{ms:>5.0f}" for ms in frames))
    scrolls = result["scrolls"]
    print(f"scroll by 0.8 screen after the sorts, to the end of the frame that paints it: "
          f"{' '.join(f'{ms:.0f}' for ms, _, _ in scrolls)} ms; rows in the body {[r for _, r, _ in scrolls]}; "
          f"viewport covered by rows each time: {'yes' if all(c for _, _, c in scrolls) else 'NO'}")
    print(f"CSV of every row ({result['shown']} rows, most never built before), click to download: "
          f"{result['csv_ms']:.0f} ms")
    worst = max(views)
    flash = any(not load["first_is_view"] for load in result["loads"])
    print(f"    goals: URL's view at first paint <= 1000 ms: worst {worst:.0f} ms, unfiltered rows never painted first: "
          f"{'met' if not flash else 'MISSED'} ({'met' if worst <= 1000 and not flash else 'MISSED'}); sort after "
          f"\"Show all\" <= 100 ms: median {statistics.median(frames):.0f}, max {max(frames):.0f} ms "
          f"({'met' if max(frames) <= 100 else 'MISSED'})")


def print_keystrokes(result: dict | None, rows: int) -> None:
    if result is None:
        print(f"filter keystroke at {rows} rows: no Chromium at /usr/bin/chromium")
        return
    rows = rows or int(result["count_after"].split(" of ")[1].split()[0])  # --keystrokes-only: the table's own count
    print_timings(result["keystrokes"], f"filter keystroke at {rows} rows, {len(result['keystrokes'])} keystrokes "
                  f"{KEY_INTERVAL_MS} ms apart (input event to next painted frame):",
                  f"table after the last key: {result['count_after']}")
    if "sorts" in result:
        print_timings(result["sorts"], f"sort click at {rows} rows (click to next painted frame):", "")
        print_timings(result["reprices"], f"price (H100 $/GPU-h, every row is H100) and budget edit at {rows} rows "
                      "(input event to next painted frame):",
                      f"rows in view showing a stale $ after each price key: {result['stale']}")


def print_goals(timings: dict | None, times: tuple[float, float], table_gz: int, n: int,
                search_kb: float | None = None) -> None:
    """Issue 17 item 13's goals at the largest N, each with the figure it is judged on (max and median)."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    print(f"goals at {n} recipes:")
    if timings is not None:
        for name, goal, keys in (("filter keystroke", 50, timings["keystrokes"]), ("sort click", 50, timings["sorts"]),
                                 ("price/budget keystroke", 100, timings["reprices"])):
            frames = [ms for _, ms, _ in keys]
            print(f"    {name} to next frame <= {goal} ms: median {statistics.median(frames):.0f} ms "
                  f"({verdict(statistics.median(frames) <= goal)}), max {max(frames):.0f} ms "
                  f"({verdict(max(frames) <= goal)})")
        print(f"    every visible row repriced in that frame: {verdict(not any(timings['stale']))}")
    print(f"    all-recipes page <= 600 KB gzip: {table_gz / 1e3:.0f} KB ({verdict(table_gz <= 600e3)})")
    print(f"    build <= 1.2x plain: {times[0] / times[1]:.2f}x ({verdict(times[0] <= 1.2 * times[1])})")
    if search_kb is not None:
        print(f"    search index <= 1 KB a recipe page: {search_kb:.2f} KB ({verdict(search_kb <= 1.0)})")


def print_timings(keys: list, title: str, tail: str) -> None:
    frames = [ms for _, ms, _ in keys]
    # Event Timing reports only durations of 16 ms or more: a keystroke without an entry counts as 16.
    timed = [16.0 if ms is None else ms for _, _, ms in keys]
    print(title)
    print("    key         " + " ".join(f"{label[:5]:>5}" for label, _, _ in keys))
    print("    frame ms    " + " ".join(f"{ms:>5.0f}" for ms in frames))
    print("    event ms    " + " ".join(f"{'<16' if ms is None else f'{ms:.0f}':>5}" for _, _, ms in keys))
    print(f"    frame: max {max(frames):.1f} ms, median {statistics.median(frames):.1f} ms; "
          f"Event Timing: max {max(timed):.0f} ms, median {statistics.median(timed):.0f} ms" + (f"; {tail}" if tail else ""))


def run_committed(tmp: Path, browser: bool, limit: int | None = None) -> None:
    """The committed registry built as the site is, against as many plain pages of its pages' mean Markdown size
    (with `limit`, `limit` of its recipes spread over it)."""
    from generator.registry import load_registry
    from generator.site import render_site

    project = tmp / "committed"
    n = write_committed(project, limit)
    site = tmp / "committed-out"
    recipe_time = build(project, site)
    rendered = render_site(load_registry(project))
    sizes = [len(page.content.encode()) for rel, page in rendered.items() if rel.endswith(".md")]
    files = {rel: page.content.encode() for rel, page in rendered.items() if not rel.endswith(".md")}
    plain = tmp / "plain-committed"
    write_plain(plain, len(sizes), sizes, files)  # each page as big as its counterpart, the downloads as they are
    plain_time = build(plain, tmp / "plain-committed-out")
    table = site / "recipes/index.html"
    index_path = site / "search/search_index.json"
    index = json.loads(index_path.read_text())["docs"]
    recipe_pages = {f"recipes/{p.relative_to(project / 'recipes').with_suffix('').as_posix()}/"
                    for p in (project / "recipes").rglob("*.yaml")}
    per_recipe = sum(len(json.dumps(d)) for d in index if d["location"].split("#")[0] in recipe_pages) / n
    print(f"committed registry: {n:,} recipes, "
          f"{sum(1 for _ in (project / 'failed').glob('*.yaml'))} failed-layouts files, {len(sizes):,} Markdown pages "
          f"(median {statistics.median(sizes) / 1e3:.1f} KB, largest {max(sizes) / 1e3:.0f} KB, "
          f"{sum(sizes) / 1e6:.1f} MB in all) and {len(files):,} downloads ({sum(map(len, files.values())) / 1e6:.1f} MB)")
    print(f"    build: recipes {recipe_time:.2f} s, the same pages' sizes as plain Markdown and the same downloads "
          f"{plain_time:.2f} s, ratio {recipe_time / plain_time:.2f}")
    print(f"    site {tree_bytes(site) / 1e6:.1f} MB (plain {tree_bytes(tmp / 'plain-committed-out') / 1e6:.1f} MB); "
          f"all-recipes page {table.stat().st_size / 1e3:.0f} KB, {gz(table) / 1e3:.0f} KB gzip")
    print(f"    search index {index_path.stat().st_size / 1e6:.2f} MB, {len(index):,} entries, "
          f"{per_recipe / 1e3:.2f} KB a recipe page")
    timings = keystroke_ms(site, reprice=True, keystrokes=COMMITTED_KEYSTROKES) if browser else None
    if browser:
        print_keystrokes(timings, n)
        print_url_view(url_view_and_show_all(site, COMMITTED_QUERY), n)
    print_goals(timings, (recipe_time, plain_time), gz(table), n, per_recipe / 1e3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--no-serve", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--keystrokes-only", type=Path, metavar="SITE",
                        help="only time filter keystrokes on an already built site (a folder)")
    parser.add_argument("--serve-only", type=Path, metavar="PROJECT",
                        help="only time a recipe edit under mkdocs serve on an already written project")
    parser.add_argument("--committed", action="store_true", help="this repository's registry instead of synthetic ones")
    parser.add_argument("--smoke", action="store_true",
                        help="every step once (one recipe edit per server, one load of the URL's view, one scroll): "
                             "a run that shows the script still works, at whatever size; its figures are no measurement")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="with --committed: only N of the registry's recipes, spread evenly over it by path (a smoke run)")
    parser.add_argument("--url-view-only", type=Path, nargs="+", metavar="SITE",
                        help="only time the URL's view at first paint and sorts after \"Show all\" on built sites "
                             "(several: one after the other, e.g. the same site with the page script before and after "
                             "a change); with --committed for builds of this repository's registry, whose rows the "
                             "synthetic query matches none of")
    parser.add_argument("--build-only", nargs=2, metavar=("N", "OUT"),
                        help="only write N synthetic recipes and build their site into OUT (OUT/project, OUT/site), "
                             "for --url-view-only and --keystrokes-only")
    args = parser.parse_args()
    if args.smoke:
        global SERVE_EDITS, URL_VIEW_LOADS, SCROLLS
        SERVE_EDITS, URL_VIEW_LOADS, SCROLLS = 1, 1, 1
    if args.build_only:
        n, out = int(args.build_only[0]), Path(args.build_only[1])
        write_registry(out / "project", synthetic_recipes(n))
        print(f"{n:,} synthetic recipes built into {out / 'site'} in {build(out / 'project', out / 'site'):.1f} s")
        return 0
    if args.url_view_only:
        query = COMMITTED_QUERY if args.committed else SYNTHETIC_QUERY
        for site in args.url_view_only:
            n = len(list((site / "recipes").rglob("index.html"))) - 1
            print(f"== {site} ==")
            print_url_view(url_view_and_show_all(site, query), n)
        return 0
    if args.committed and not args.keystrokes_only:
        with tempfile.TemporaryDirectory(prefix="site-scale-") as tmp_name:
            run_committed(Path(tmp_name), browser=not args.no_browser, limit=args.limit)
        return 0
    if args.serve_only:
        n = sum(1 for _ in (args.serve_only / "recipes").rglob("*.yaml"))
        for dirty in (True, False):
            print_serve(n, dirty, serve_rebuild(args.serve_only, "gemma-4-31b/h100/synthetic-0001", dirty))
        return 0
    if args.keystrokes_only:
        keys = COMMITTED_KEYSTROKES if args.committed else KEYSTROKES  # --committed: a build of the real registry
        print_keystrokes(keystroke_ms(args.keystrokes_only, reprice=True, keystrokes=keys), 0)
        return 0
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
            from generator.registry import load_registry
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
            index = json.loads((site / "search/search_index.json").read_text())["docs"]
            per_recipe = sum(len(json.dumps(d)) for d in index if "/synthetic-" in d["location"]) / n
            print(f"       (recipe page: {md_bytes / 1e3:.1f} KB Markdown, {sample.stat().st_size / 1e3:.1f} KB HTML; "
                  f"search index {per_recipe / 1e3:.2f} KB a recipe, {len(index)} entries)")
        if len(args.sizes) >= 2:
            small, large = min(args.sizes), max(args.sizes)
            growth = results[large][0] / results[small][0]
            print(f"growth {small} -> {large}: x{growth:.1f} for x{large / small:.0f} recipes "
                  f"(plain x{results[large][1] / results[small][1]:.1f})")
        largest = max(args.sizes)
        if not args.no_browser:
            timings = keystroke_ms(tmp / f"recipes-{largest}-out", reprice=True)
            print_keystrokes(timings, largest)
            print_url_view(url_view_and_show_all(tmp / f"recipes-{largest}-out", SYNTHETIC_QUERY), largest)
            print_goals(timings, results[largest], gz(tmp / f"recipes-{largest}-out/recipes/index.html"), largest)
        if not args.no_serve:
            for dirty in (True, False):
                print_serve(largest, dirty, serve_rebuild(tmp / f"recipes-{largest}", "gemma-4-31b/h100/synthetic-0001",
                                                          dirty))
    return 0


if __name__ == "__main__":
    sys.exit(main())
