"""The all-recipes table windowed after "Show all" (site_src/assets/js/rowwindow.js), in Chromium at 10,000 rows:
a sort over every row puts the right rows first and last (read after scrolling to the end), a compare tick
survives its row leaving the document and coming back, the CSV has every row in the table's order, an own price
reaches the rows that scroll into view, Tab walks on through the rows, and at 390 px the rows on screen stay
distinct. The site is a real build of a small registry whose all-recipes page then carries 10,000 rows: the rows
past the built ones are copies of a built row (another id, name and tokens/s each) packed as the generator packs
them (generator/site/rowdata.py), so that the page script reads them as it reads any served page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sitehelpers import free_port, make_registry, static_server, synthetic
from suitehelpers import mkdocs_build, site_project

from generator.site.rowdata import compact_rows, split_row

pytestmark = pytest.mark.browser
TOTAL = 10_000
BUILT = 20  # synthetic recipes built, plus the reference
ROW = re.compile(r'<tr data-or-recipe="gemma-4-31b/h100/b000".*?</tr>', re.S)
TOKENS = re.compile(r'(data-or-col="tokens" data-sort=")[^"]*(">)[^<]*(<)')


def _copy_tokens(i: int) -> float:
    """Distinct tokens/s for copy i, in no order of i."""
    return 600.0 + (i * 7919) % 9973 + i / 100_000


def _copies(row: str) -> list[str]:
    out = []
    for i in range(TOTAL - BUILT - 1):
        html = row.replace("b000", f"w{i:05d}")
        tokens = _copy_tokens(i)
        out.append(TOKENS.sub(lambda m, t=tokens: f"{m.group(1)}{t!r}{m.group(2)}{t:,.2f}{m.group(3)}", html, count=1))
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    tmp = tmp_path_factory.mktemp("window")
    recipes = {f"gemma-4-31b/h100/b{i:03d}": synthetic(500.0 + i * 3.5, name=f"b{i:03d}") for i in range(BUILT)}
    result = mkdocs_build(site_project(tmp, make_registry(tmp / "reg", recipes)), tmp / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    page = tmp / "out/recipes/index.html"
    html = page.read_text()
    assert "<template data-or-rows" not in html  # all built rows live: the copies are the only packed rows
    packed = compact_rows([split_row(r) for r in _copies(ROW.search(html).group(0))])
    page.write_text(html.replace("</table>", f'</table><template data-or-rows="or-recipes">{packed}</template>', 1))
    with static_server(tmp / "out", free_port()) as base:
        yield base


def _all_rows(page) -> list[tuple[str, float]]:  # noqa: ANN001
    """(id, tokens/s) of every row the table holds, read through its documented accessor."""
    return [tuple(r) for r in page.evaluate("""() => OpenRecipes.shownRows('or-recipes').map(r =>
        [r.dataset.orRecipe, parseFloat(r.querySelector('[data-or-col=tokens]').dataset.sort)])""")]


def _in_body(page) -> list[str]:  # noqa: ANN001
    return page.eval_on_selector_all("#or-recipes tbody tr[data-or-recipe]:not([hidden])",
                                     "els => els.map(r => r.dataset.orRecipe)")


# Two frames and the task after them: the window follows a scroll in the frame after it, and corrects itself to the
# rows' measured height after the frame that laid them out.
SETTLE = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() =>
    requestAnimationFrame(() => setTimeout(done, 0)), 0))))"""


def _scroll_to(page, y: str) -> None:  # noqa: ANN001
    page.evaluate(f"window.scrollTo(0, {y})")
    page.evaluate(SETTLE)
    page.evaluate(SETTLE)


def _show_all(page) -> None:  # noqa: ANN001
    page.goto("recipes/")
    page.wait_for_function("document.querySelector('[data-or-filters]')?.dataset.orFilterReady === '1'")
    page.click("button[data-or-show-all]")
    page.wait_for_selector("#or-recipes[data-or-windowed]", state="attached")
    page.evaluate(SETTLE)


def test_sort_over_every_row_first_and_last_after_scrolling_to_the_end(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, viewport={"width": 1400, "height": 900})
    _show_all(page)
    rows = _all_rows(page)
    assert len(rows) == TOTAL and len({rid for rid, _ in rows}) == TOTAL
    assert 0 < len(_in_body(page)) < 150  # windowed: a screen and its margins, not 10,000 rows
    page.click("#or-recipes th[data-or-sort=tokens] button")  # served fastest first: the first click reverses
    page.evaluate(SETTLE)
    slowest_first = [rid for rid, _ in sorted(rows, key=lambda r: r[1])]
    assert [rid for rid, _ in _all_rows(page)] == slowest_first
    shown = _in_body(page)  # where "Show all" left the page: a run of the order around there
    start = slowest_first.index(shown[0])
    assert shown == slowest_first[start:start + len(shown)]
    _scroll_to(page, "0")
    assert _in_body(page)[0] == slowest_first[0]
    _scroll_to(page, "document.scrollingElement.scrollHeight")
    shown = _in_body(page)
    assert shown[-1] == slowest_first[-1] and 0 < len(shown) < 150
    assert shown == slowest_first[-len(shown):]
    # The last row is on screen, just above the end of the page: the spacers stood for the rows' true height.
    box = page.evaluate("""() => { const rows = document.querySelectorAll('#or-recipes tbody tr[data-or-recipe]');
        const r = rows[rows.length - 1].getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight]; }""")
    assert 0 <= box[0] < box[1] <= box[2]


def test_compare_tick_survives_scrolling_away(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, viewport={"width": 1400, "height": 900})
    _show_all(page)
    _scroll_to(page, "0")
    first = _in_body(page)[0]
    box = f'#or-recipes input[data-or-compare="{first}"]'
    page.check(box)
    _scroll_to(page, "document.scrollingElement.scrollHeight / 2")
    assert first not in _in_body(page)
    assert page.evaluate("""() => { const r = OpenRecipes.shownRows('or-recipes')[0];
        return [r.isConnected, r.querySelector('input[data-or-compare]').checked]; }""") == [False, True]
    _scroll_to(page, "0")
    assert page.is_checked(box) and f"compare={first.replace('/', '%2F')}" in page.url


def test_csv_has_every_row_in_the_tables_order(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, viewport={"width": 1400, "height": 900})
    _show_all(page)
    page.click("#or-recipes th[data-or-sort=name] button")
    page.evaluate(SETTLE)
    order = [rid for rid, _ in _all_rows(page)]
    with page.expect_download() as download:
        page.click('button[data-or-csv="or-recipes"]')
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0].startswith("id,") and len(lines) == TOTAL + 1
    ids = [line.split(",", 1)[0] for line in lines[1:]]
    assert ids == order and ids == sorted(ids, key=str.lower)
    tokens = {rid: t for rid, t in _all_rows(page)}
    head = lines[0].split(",").index("tokens_per_s_per_gpu")
    assert all(float(line.split(",")[head]) == tokens[line.split(",", 1)[0]] for line in lines[1:])


def test_own_price_reaches_the_rows_scrolled_into_view(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, viewport={"width": 1400, "height": 900})
    _show_all(page)
    page.locator("[data-or-decide] summary").click()
    page.fill("input[data-or-price=H100]", "3")
    page.evaluate(SETTLE)
    _scroll_to(page, "document.scrollingElement.scrollHeight")
    cells = page.evaluate("""() => [...document.querySelectorAll('#or-recipes tbody tr[data-or-recipe]')].map(r =>
        [parseFloat(r.querySelector('[data-or-col=tokens]').dataset.sort),
         parseFloat(r.querySelector('[data-or-col=usd]').dataset.sort), r.querySelector('[data-or-col=usd]').innerText])""")
    assert cells
    for tokens, usd, text in cells:  # generator/figures.py: (price / 1 GPU) / (tokens/s * 3600) * 1e6
        expected = 3.0 / (tokens * 3600.0) * 1e6
        shown = f"${expected:,.3f}" if expected < 0.1 else f"${expected:,.2f}"  # formatting.usd_short
        assert usd == pytest.approx(expected, rel=1e-12) and text == shown


def test_tab_walks_on_through_the_rows(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, viewport={"width": 1400, "height": 900})
    _show_all(page)
    before = _in_body(page)
    page.focus(f'#or-recipes input[data-or-compare="{before[-1]}"]')  # the last row the window holds
    where = []
    for _ in range(20):  # each row's tick and links, one stop each
        page.keyboard.press("Tab")
        page.evaluate(SETTLE)
        where.append(page.evaluate("""() => { const row = document.activeElement.closest('#or-recipes tr[data-or-recipe]');
            return row ? row.dataset.orRecipe : null; }"""))
    order = [rid for rid, _ in _all_rows(page)]
    places = [order.index(rid) if rid else -1 for rid in where]
    start = order.index(before[-1])
    # Focus never left the table's rows, went forward row by row, and reached rows the window did not hold at first.
    assert min(places) >= start and places == sorted(places) and places[-1] - start >= 3
    assert where[-1] not in before


def test_phone_rows_stay_distinct(new_page, site) -> None:  # noqa: ANN001
    page = new_page(site, viewport={"width": 390, "height": 844})
    _show_all(page)
    _scroll_to(page, "document.scrollingElement.scrollHeight / 3")
    boxes = page.evaluate("""() => [...document.querySelectorAll('#or-recipes tbody tr[data-or-recipe]')].map(r => {
        const b = r.getBoundingClientRect(); return [b.top, b.bottom, r.querySelector('.or-rowmeta').innerText]; })
        .filter(b => b[1] > 0 && b[0] < window.innerHeight)""")
    assert len(boxes) >= 10
    assert boxes[0][0] <= 120 and boxes[-1][1] >= 844  # rows cover the screen below the header
    for above, below in zip(boxes, boxes[1:], strict=False):
        assert below[0] >= above[1] - 0.5 and above[1] - above[0] >= 20 and above[2]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
