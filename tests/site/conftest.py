"""The site tests' shared set-up: the committed registry's site (built once per run by tests/conftest.py) served;
Chromium; pages that watch for errors. Tests that need a registry of their own (a few synthetic recipes, an XSS
probe) keep building theirs, small.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sitehelpers import CHROMIUM, LAUNCH_ARGS, PagePool, free_port, static_server, watched_page
from suitehelpers import BuiltSite


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every `browser` test skips, saying why, where Debian's Chromium is missing; CI (.ci/run sets
    OPENRECIPES_REQUIRE_CHROMIUM=1) refuses to run them skipped."""
    browser = [item for item in items if item.get_closest_marker("browser")]
    if CHROMIUM.exists() or not browser:
        return
    if os.environ.get("OPENRECIPES_REQUIRE_CHROMIUM") == "1":
        raise pytest.UsageError(f"OPENRECIPES_REQUIRE_CHROMIUM=1 but {CHROMIUM} is missing: the browser tests would "
                                "be skipped (apt-get install chromium)")
    skip = pytest.mark.skip(reason=f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium; "
                                   "CI's .ci/run installs it)")
    for item in browser:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def committed_site_url(committed_site: BuiltSite) -> Iterator[str]:
    """The committed site served by a real http.server on localhost (one per test process)."""
    with static_server(committed_site.out, free_port()) as base:
        yield base


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium through Playwright, one per test process (each test opens contexts of its own: a launch and
    its first page cost ~2 s of CPU, paid once per process instead of once per browser test file)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def page_pool(browser: Any) -> Iterator[PagePool]:
    """Pages kept open between this process's browser tests (sitehelpers.PagePool)."""
    pool = PagePool(browser)
    yield pool
    pool.close()


@pytest.fixture
def new_page(browser: Any, page_pool: PagePool) -> Iterator[Callable[..., Any]]:
    """new_page(base_url, fresh=False, **context options): a page, its Watch at `page.watch`. With only a viewport
    and a colour scheme asked for, the first page of a site in a test is lent from the process's pool, made new;
    any other page is one in a context of its own (fresh=True asks for that: a test adding init scripts, routes or
    bindings). When the test ends, no page may have logged an error, opened a dialog or asked another host for
    anything."""
    opened: list[tuple[Any, str | None]] = []  # (page, base it was lent for, or None: its own context)

    def open_page(base: str, fresh: bool = False, **options: Any) -> Any:
        lent = {base for _, b in opened if b is not None}
        if fresh or base in lent or not set(options) <= PagePool.LENDABLE:
            opened.append((watched_page(browser, base, **options), None))
        else:
            opened.append((page_pool.lend(base, **options), base))
        return opened[-1][0]

    yield open_page
    for page, lent_for in opened:
        if lent_for is None:
            page.context.close()
        else:
            page_pool.give_back(lent_for, page)
    for page, _ in opened:
        page.watch.assert_clean()


# The committed registry and its one built site, for the browser tests that read them (a module that defines its
# own `registry`, `site`, `wide` or `phone` uses its own).
@pytest.fixture(scope="module")
def registry(committed):  # noqa: ANN001, ANN201
    return committed


@pytest.fixture(scope="module")
def site(committed_site_url: str) -> str:
    return committed_site_url


@pytest.fixture
def wide(new_page, site):  # noqa: ANN001, ANN201
    return new_page(site, viewport={"width": 1400, "height": 900})


@pytest.fixture
def phone(new_page, site):  # noqa: ANN001, ANN201
    return new_page(site, viewport={"width": 390, "height": 844})
