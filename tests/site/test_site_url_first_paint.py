"""The all-recipes table opened from a shared link, in Chromium: no frame paints its rows before the link's
filters and sort apply (generator.site.direct.VIEW_PENDING, main.js), and a sort after "Show all" places only the
first rows in its frame, then brings every match back in the new order (table.js place)."""

from __future__ import annotations

import re

import pytest
from sitehelpers import ROOT, free_port, make_registry, static_server, synthetic
from suitehelpers import mkdocs_build, site_project

pytestmark = pytest.mark.browser
N = 90  # synthetic recipes, plus the reference: more than LIMIT
LIMIT = int(re.search(r"LIMIT = (\d+);", (ROOT / "site_src/assets/js/table.js").read_text()).group(1))
# Each frame before the page settles: whether the table's rows were visible in it, and whether the page script
# had set the table up (filters and the URL's sort apply in that same task).
FRAMES = """(() => {
  window.__frames = [];
  const tick = () => requestAnimationFrame(() => {
    const t = document.getElementById('or-recipes');
    const rows = !!(t && t.tBodies[0] && t.tBodies[0].rows.length);
    const visible = rows && !document.documentElement.classList.contains('or-view-pending');
    window.__frames.push([visible, !!(t && t.dataset.orSortReady)]);
    if (!(visible && t.dataset.orSortReady)) tick();
  });
  tick();
})()"""


def _recipes() -> dict[str, dict]:
    return {f"gemma-4-31b/h100/r{i:03d}": synthetic(500.0 + (i * 37) % N * 10 + i / 100, name=f"r{i:03d}")
            for i in range(N)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    tmp = tmp_path_factory.mktemp("first-paint")
    registry = make_registry(tmp / "reg", _recipes())
    result = mkdocs_build(site_project(tmp, registry), tmp / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    with static_server(tmp / "out", free_port()) as base:
        yield base


def _tokens(page) -> list[float]:  # noqa: ANN001
    # Through OpenRecipes.shownRows: after "Show all" the table is windowed (rowwindow.js).
    return page.evaluate("""() => OpenRecipes.shownRows('or-recipes')
        .map(r => parseFloat(r.querySelector('[data-or-col=tokens]').dataset.sort))""")


def test_shared_link_paints_its_view_first(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, fresh=True)  # an init script
    page.add_init_script(FRAMES)
    page.goto("recipes/?text=r01&sort=tokens&dir=asc")
    page.wait_for_function("window.__frames.some(f => f[0] && f[1])")
    frames = page.evaluate("window.__frames")
    assert [f for f in frames if f[0] and not f[1]] == []  # never the unfiltered table
    assert not page.evaluate("document.documentElement.classList.contains('or-view-pending')")
    shown = _tokens(page)
    expected = sorted(d["result"]["tokens_per_s_per_gpu"] for rid, d in _recipes().items() if "/r01" in rid)
    assert shown == expected and len(shown) == 10


def test_without_a_query_nothing_is_held(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site)
    page.goto("recipes/")
    assert "or-view-pending" in page.content()  # the head script is there, and did nothing
    assert not page.evaluate("document.documentElement.classList.contains('or-view-pending')")
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == LIMIT


def test_sort_after_show_all_places_the_first_rows_then_every_row(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site)
    page.goto("recipes/")
    page.click("button[data-or-show-all]")
    page.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")
    total = N + 1
    assert len(_tokens(page)) == total
    # In the click's task (what its frame paints): at most the first LIMIT rows in the body.
    in_frame = page.evaluate("""() => {
        document.querySelector('#or-recipes th[data-or-sort=tokens] button').click();
        return document.getElementById('or-recipes').tBodies[0].rows.length; }""")
    assert 0 < in_frame <= LIMIT
    page.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")
    shown = _tokens(page)
    # Served best (highest tokens/s) first, marked so: the first click reverses it.
    assert len(shown) == total and shown == sorted(shown)
