"""Shared by the site tests: HTML to card text, a temp registry with synthetic recipes, a real mkdocs build."""

from __future__ import annotations

import contextlib
import copy
import os
import re
import shutil
import socket
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from tests.forked import python_m

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
GOLDEN_CARD = Path(__file__).parent / "golden" / "card.txt"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright downloads no browser here
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--no-first-run"]
BLOCKS = {"h1", "h2", "h3", "dt", "dd", "p", "pre", "li", "tr"}


class _CardText(HTMLParser):
    """Text of the card: one paragraph per block element, <pre> verbatim."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.current: list[str] | None = None
        self.depth = 0
        self.pre = 0
        self.active = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.active and tag == "div" and ("class", "or-card") in attrs:
            self.active, self.depth = True, 0
        if not self.active:
            return
        if tag == "div":
            self.depth += 1
        if tag in BLOCKS:
            self.current = []
        if tag == "pre":
            self.pre += 1

    def handle_endtag(self, tag: str) -> None:
        if not self.active:
            return
        if tag in BLOCKS and self.current is not None:
            text = "".join(self.current)
            self.blocks.append(text if self.pre else " ".join(text.split()))
            self.current = None
        if tag == "pre":
            self.pre -= 1
        if tag == "div":
            self.depth -= 1
            if self.depth == 0:
                self.active = False

    def handle_data(self, data: str) -> None:
        if self.active and self.current is not None:
            self.current.append(data)


def card_text(html: str) -> str:
    parser = _CardText()
    parser.feed(html)
    return "\n\n".join(parser.blocks)


def reference_data() -> dict:
    return yaml.safe_load(REFERENCE.read_text())


def make_registry(tmp: Path, recipes: dict[str, dict] | None = None, keep_reference: bool = True) -> Path:
    """A copy of the registry (catalogs, schema, reference recipe) plus the given recipes by id."""
    for name in ("catalog", "schema"):
        shutil.copytree(ROOT / name, tmp / name)
    (tmp / "recipes").mkdir()
    if keep_reference:
        dest = tmp / "recipes/gemma-4-31b/h100"
        dest.mkdir(parents=True)
        shutil.copy(REFERENCE, dest / REFERENCE.name)
    for rid, data in (recipes or {}).items():
        path = tmp / "recipes" / f"{rid}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return tmp


def synthetic(tokens: float, count: int = 8, name: str = "x", gpu: str = "H100", training: str | None = None,
              precision: str | None = None) -> dict:
    """A measured recipe derived from the reference, with its figures kept consistent; `training` states its
    training kind (None: not stated, as the reference), `precision` replaces the reference's bf16."""
    data = copy.deepcopy(reference_data())
    if training is None:
        data["workload"].pop("training", None)
    else:
        data["workload"]["training"] = training
    if precision is not None:
        data["workload"]["precision"] = precision
    data["status"] = "measured"
    data["correctness"] = None
    data["gpu"]["count"] = count
    data["gpu"]["type"] = gpu
    if gpu != "H100":
        data["gpu"]["instance"] = None
        data["gpu"]["memory_gb"] = {"H200": 141, "B200": 180}[gpu]
    data["layout"]["dp"] = count // 8
    data["layout"]["label"] = f"{name} layout"
    res = data["result"]
    res["tokens_per_s_per_gpu"] = tokens
    for key in ("usd_per_million_tokens", "mfu"):
        res[key] = None
    data["author"]["name"] = f"synthetic {name}"
    return data


RUNNER_LOG = ROOT / "tests/runner/fixtures/miles_gemma4_31b.txt"


# --- accessibility: axe-core (npm's, vendored at site_src/assets/vendor/axe.min.js; no page loads it) ----------------

AXE = ROOT / "site_src/assets/vendor/axe.min.js"
AXE_WIDTHS = (390, 1400)
# Violations only, without each node's CSS selector, ancestry and XPath (~7% of a run on the committed site's pages);
# a page with a serious violation is checked again with them, to say where.
_AXE_RUN = "axe.run(document, {resultTypes: ['violations'], selectors: false, ancestry: false, xpath: false})"
_AXE_WHERE = "axe.run(document, {resultTypes: ['violations']})"


def serious_axe_violations(page, urls: list[str], prepare=None, at_width=None) -> list[tuple]:  # noqa: ANN001
    """Each url loaded once at 390 px (the page's scripts decide at load which overflowing tables get a tab stop, so
    the narrow width loads first), `prepare(page)` run (opening folds, say), axe-core checked, then the window widened
    to 1400 px and checked again; `at_width(page, url, width)` runs before each check. Each check waits for the
    layout at its width and the end of its CSS transitions (Material's tabs fade in past 1220 px: axe would measure
    their contrast half-way). Returns (url, width, rule, impact, node count, first three nodes) of every serious or
    critical violation."""
    found = []
    for url in urls:
        page.set_viewport_size({"width": AXE_WIDTHS[0], "height": 900})
        page.goto(url)
        if prepare is not None:
            prepare(page)
        page.wait_for_timeout(100)  # Material's and our scripts' first frame (table wrappers, the search's name)
        page.add_script_tag(path=str(AXE))
        for width in AXE_WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(100)
            page.evaluate("Promise.all(document.getAnimations().map(a => a.finished))")
            if at_width is not None:
                at_width(page, url, width)
            result = page.evaluate(_AXE_RUN)
            assert result["testEngine"]["version"].startswith("4."), result["testEngine"]
            if any(v["impact"] in ("serious", "critical") for v in result["violations"]):
                result = page.evaluate(_AXE_WHERE)
            found += [(url or "home", width, v["id"], v["impact"], len(v["nodes"]),
                       [n["target"] for n in v["nodes"][:3]])
                      for v in result["violations"] if v["impact"] in ("serious", "critical")]
    return found


def open_folds(page) -> None:  # noqa: ANN001
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")


def no_sideways_scroll(page, url: str, width: int) -> None:  # noqa: ANN001
    """An `at_width` check for serious_axe_violations: the page scrolls no wider than the window."""
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width, (url, width)


def remeasured(registry: Path, name: str, times: int = 2) -> Path:
    """A copy of the reference recipe re-measured by the real runner (in a fork, tests/forked.py) from a fixture log,
    `times` times: its evidence file then holds the per-step record and (from the second time on) a history of
    results."""
    target = registry / "recipes/gemma-4-31b/h100" / f"{name}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REFERENCE, target)
    env = dict(os.environ, OPENRECIPES_GPUS="8xNVIDIA H100 80GB HBM3", PYTHONPATH=str(ROOT))
    for _ in range(times):
        done = python_m("runner", ["remeasure", str(target), "--workdir", str(ROOT / "tests/runner"), "--from-log",
                                   str(RUNNER_LOG)], env=env, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def static_server(folder: Path, port: int):  # noqa: ANN201
    """A real HTTP server over a built site folder on 127.0.0.1:port; yields its base URL once it answers."""
    import time
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base, timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)


class Watch:
    """Console errors, page errors, dialogs and any request that is not to the local server; every request's URL.

    Requests are watched, not routed: routing every request through Playwright turns off the browser's HTTP and
    code caches for the context (each navigation fetched and compiled every script and the search index again)
    and sends each request through Python; a request to another host is recorded here and fails the test the
    same way (and finds no network on these machines)."""

    def __init__(self, base: str) -> None:
        self.host = urlsplit(base).netloc
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self._listening: list[tuple[object, str, object]] = []

    def attach(self, context, page) -> None:  # noqa: ANN001
        def request(r) -> None:  # noqa: ANN001
            self.requests.append(r.url)
            url = urlsplit(r.url)
            if url.scheme in ("http", "https", "ws", "wss") and url.netloc != self.host:
                self.outside.append(r.url)

        def dialog(d) -> None:  # noqa: ANN001
            self.dialogs.append(d.message)
            d.dismiss()

        self._listen(context, "request", request)
        self._listen(page, "console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self._listen(page, "pageerror", lambda e: self.errors.append(str(e)))
        self._listen(page, "dialog", dialog)

    def _listen(self, target, event: str, handler) -> None:  # noqa: ANN001
        target.on(event, handler)
        self._listening.append((target, event, handler))

    def detach(self) -> None:
        for target, event, handler in self._listening:
            target.remove_listener(event, handler)
        self._listening.clear()

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.outside == [], self.outside
        assert self.dialogs == [], self.dialogs


def watched(page, base: str):  # noqa: ANN001, ANN201
    """The page with a new Watch attached at `page.watch`."""
    page.watch = Watch(base)
    page.watch.attach(page.context, page)
    return page


def watched_page(browser, base: str, **options):  # noqa: ANN001, ANN201
    """A page in a browser context of its own (base_url=base and the given context options), its Watch attached at
    `page.watch`; `page.context` is the context to close."""
    return watched(browser.new_context(base_url=base, **options).new_page(), base)


class PagePool:
    """Open pages lent to one test at a time, one per site (base URL) per test process, made new again between tests.

    A new page costs Chromium about 1 core-second before it loads anything (a tab, a renderer process, Playwright's
    set-up): 1.46 core-s per page view in a new context against 0.47 in a kept page (measured on the committed site,
    2 cores), and most browser tests open one page. A lent page starts as a new one would: on about:blank with no
    listener, cookie, permission or storage of its site left (local and session storage, IndexedDB, Cache Storage,
    service workers), the test's viewport and colour scheme, the mouse at the corner, no other page in its context.
    What it keeps is the browser's HTTP and code caches, as a reader's browser does. A test that adds init
    scripts, routes or bindings asks new_page for a page of its own (fresh=True)."""

    LENDABLE = {"viewport", "color_scheme"}  # context options a kept page can take on
    KEPT = 3  # sites; the least recently used one's page is closed past that

    def __init__(self, browser) -> None:  # noqa: ANN001
        self.browser = browser
        self.idle: dict[str, object] = {}  # base URL -> page, most recently returned last

    def lend(self, base: str, viewport: dict | None = None, color_scheme: str = "light"):  # noqa: ANN201
        page = self.idle.pop(base, None)
        if page is None:
            page = self.browser.new_context(base_url=base).new_page()
        page.set_viewport_size(viewport or {"width": 1280, "height": 720})  # Playwright's default
        page.emulate_media(color_scheme=color_scheme)
        return watched(page, base)

    def give_back(self, base: str, page) -> None:  # noqa: ANN001
        """Takes the page back made new; a page that cannot be (closed, crashed, stuck) is closed instead."""
        page.watch.detach()
        try:
            self._renew(base, page)
        except Exception:  # noqa: BLE001 - any failure here only means the next test gets a new page
            page.context.close()
            return
        self.idle[base] = page
        while len(self.idle) > self.KEPT:
            self.idle.pop(next(iter(self.idle))).context.close()

    @staticmethod
    def _renew(base: str, page) -> None:  # noqa: ANN001
        for other in page.context.pages:
            if other is not page:
                other.close()
        if page.url.startswith(base):
            page.evaluate("() => { sessionStorage.clear(); localStorage.clear(); }")
        page.goto("about:blank")
        origin = base.rstrip("/")
        session = page.context.new_cdp_session(page)
        session.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        session.detach()
        page.context.clear_cookies()
        page.context.clear_permissions()
        page.mouse.move(0, 0)

    def close(self) -> None:
        for page in self.idle.values():
            page.context.close()
        self.idle.clear()


# The XSS probe: a recipe with <script>, onerror= and javascript: in every text field (test_site_safety.py, and
# in Chromium test_site_browser.py).

XSS_ID = "gemma-4-31b/h100/xss-probe"
PAYLOAD = ('<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
           '[c](javascript:window.__xss=3) <a href="javascript:window.__xss=5">a</a>\n```\n'
           '</div></code></pre><script>window.__xss=4</script>\n~~~\n<!-- x --> \x02wzxhzdk:0\x03 {{ 7*7 }} ')
# Fields that must be catalog keys, enums, dates or hashes: the loader refuses anything else there.
FIXED = {"model", "type", "instance", "status", "precision", "result", "configuration", "granularity", "method",
         "dispatcher", "date", "measured", "rows_sha256", "parquet_sha256", "sha256"}
URLS = {"url", "source"}


def _poison(value, key: str | None = None):  # noqa: ANN001, ANN202
    if isinstance(value, dict):
        return {k: _poison(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_poison(v, key) for v in value]
    if isinstance(value, str) and key not in FIXED:
        if key in URLS:
            # The loader refuses a javascript: URL in most URL fields now: those get an http(s) URL that tries to
            # break out of its attribute, followed by the payload as a note.
            return 'https://example.org/x?"><script>window.__xss=6</script> ' + PAYLOAD
        return PAYLOAD + value
    return value


def xss_recipe() -> dict:
    data = _poison(copy.deepcopy(reference_data()))
    data["env"] = {"XSS": PAYLOAD}
    data["patches"] = [{"file": PAYLOAD, "description": PAYLOAD}]
    data["author"]["url"] = 'https://example.org/x?"onmouseover="window.__xss=7'  # javascript: is refused on load
    return data


_PACKED_ROWS = re.compile(r'<template data-or-rows="[^"]*">(.*?)</template>', re.S)


def with_packed_rows(page: str) -> str:
    """A rendered page with the rows it serves as compact JSON (generator/site/rowdata.py, past a long table's first
    LIVE_ROWS) written out as HTML after it: what a test that counts rows or cells of the whole table reads."""
    from generator.site.rowdata import expand

    return page + "".join("".join(expand(m.group(1))) for m in _PACKED_ROWS.finditer(page))
