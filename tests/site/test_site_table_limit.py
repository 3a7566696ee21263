"""The all-recipes table past its per-keystroke row limit (table.js LIMIT), in Chromium: the count names every
match, at most LIMIT rows are shown until "Show all" (then every match, windowed: read through OpenRecipes.shownRows),
and sorting then filtering orders all matches, not only the rows on screen. Without JavaScript the page is the
static table of its first LIVE_ROWS rows (the rest are packed JSON for the script; the downloads hold every one)."""

from __future__ import annotations

import re

import pytest
from sitehelpers import ROOT, free_port, make_registry, static_server, synthetic
from suitehelpers import mkdocs_build, site_project

from generator.site.tables import LIVE_ROWS

pytestmark = pytest.mark.browser
N = 90  # synthetic recipes, plus the reference: more than LIMIT
JS = (ROOT / "site_src/assets/js/table.js").read_text()
LIMIT = int(re.search(r"LIMIT = (\d+);", JS).group(1))


def _recipes() -> dict[str, dict]:
    # Tokens/s spread so that the order by tokens differs from the order by name; 16-GPU recipes every third.
    return {f"gemma-4-31b/h100/r{i:03d}": synthetic(500.0 + (i * 37) % N * 10 + i / 100, count=16 if i % 3 == 0 else 8,
                                                    name=f"r{i:03d}") for i in range(N)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    tmp = tmp_path_factory.mktemp("limit")
    registry = make_registry(tmp / "reg", _recipes())
    result = mkdocs_build(site_project(tmp, registry), tmp / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    port = free_port()
    with static_server(tmp / "out", port) as base:
        yield base


def _settled(page) -> None:  # noqa: ANN001
    page.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")


def _shown(page, column: str) -> list[str]:  # noqa: ANN001
    index = page.eval_on_selector_all("#or-recipes thead th", "els => els.map(e => e.innerText.trim())").index(column) + 1
    return page.eval_on_selector_all(f"#or-recipes tbody tr:not([hidden]) td:nth-child({index})",
                                     "els => els.map(e => e.dataset.sort || e.innerText.trim())")


def test_limit_count_and_show_all(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site)
    page.goto("recipes/")
    _settled(page)
    total = N + 1
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == LIMIT
    assert page.locator("[data-or-count]").inner_text() == f"{total} of {total} recipes (first {LIMIT} shown)"
    button = page.locator("button[data-or-show-all]")
    assert button.is_visible() and button.inner_text() == f"Show all {total} matching recipes"
    button.click()
    _settled(page)
    assert page.evaluate("OpenRecipes.shownRows('or-recipes').length") == total
    assert page.locator("[data-or-count]").inner_text() == f"{total} of {total} recipes"
    assert not button.is_visible()
    # a new filter shows its first matches again, with the control for the rest
    page.fill("[data-or-filter-text]", "r0")
    _settled(page)
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == LIMIT
    assert page.locator("[data-or-count]").inner_text() == f"{N} of {total} recipes (first {LIMIT} shown)"
    # a filter with fewer matches than the limit shows them all, no control
    page.fill("[data-or-filter-text]", "r01")
    _settled(page)
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == 10 and not button.is_visible()


def test_sort_then_filter_orders_every_match(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site)
    page.goto("recipes/")
    _settled(page)
    data = _recipes()
    header = page.locator("#or-recipes th", has_text="Tokens/s per GPU")
    header.click()
    _settled(page)
    first = [float(x) for x in _shown(page, "Tokens/s per GPU")]
    descending = first[0] > first[-1]
    every = sorted([d["result"]["tokens_per_s_per_gpu"] for d in data.values()] + [1178.1], reverse=descending)
    assert first == every[:LIMIT]  # the top of ALL recipes, not of the rows shown before the sort
    # then filter to the 16-GPU recipes: the rows shown are the first of those matches in that order
    page.select_option("select[data-or-filter=gpu_count]", "16")
    _settled(page)
    matches = sorted([d["result"]["tokens_per_s_per_gpu"] for d in data.values() if d["gpu"]["count"] == 16],
                     reverse=descending)
    assert [float(x) for x in _shown(page, "Tokens/s per GPU")] == matches[:LIMIT]
    assert page.locator("[data-or-count]").inner_text().startswith(f"{len(matches)} of {N + 1} recipes")
    # and sorting again while filtered reverses the matches, all of them
    header.click()
    _settled(page)
    assert [float(x) for x in _shown(page, "Tokens/s per GPU")] == matches[::-1][:LIMIT]


def test_without_javascript_the_whole_table_shows(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, java_script_enabled=False)
    page.goto("recipes/")
    assert page.locator("#or-recipes tbody tr:visible").count() == LIVE_ROWS < N + 1
    assert page.locator("button[data-or-show-all]").count() == 0
