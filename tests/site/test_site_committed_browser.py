"""The committed registry's site (every recipe) in Chromium: figures in view, sorting, test hooks, the recipe
page's hierarchy, your own prices and cost to train, compare, charts, URL state, accessibility. Each test names the
item of issue 17 it covers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sitehelpers import no_sideways_scroll, open_folds, serious_axe_violations, watched_page

from generator.site import formatting as fmt
from generator.site import views
from generator.site.pages import compare as compare_page
from generator.site.pages import recipe as recipe_page
from generator.site.rowdata import expand
from generator.site.tables import LIVE_ROWS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
REF_ID = "gemma-4-31b/h100/attune-tp2-pp4-split13"
DATA_PAGES = ["", "recipes/", "models/deepseek-v3/", "models/gemma-4-31b/", "gpus/h100/", "gpus/gb200/"]
FIGURE_COLS = ("tokens", "usd", "mfu")


def _show_all(page) -> None:  # noqa: ANN001
    button = page.locator("button[data-or-show-all]")
    if button.count() and button.is_visible():
        button.click()
    page.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")


def _every_row_laid_out(page, table: str, read: str) -> dict[str, object]:  # noqa: ANN001
    """`read` (a JavaScript function of a row) for every row of a table, each read while laid out in the document: the
    page scrolled through the table most of a screen at a time (a windowed table holds only the rows near the
    viewport), each step read two frames and a task after its scroll (rowwindow.js follows a scroll in the frame
    after it). One call into the page for the whole walk: a round trip per step was most of these tests' time."""
    return page.evaluate(f"""async () => {{
        const settle = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0))));
        const read = {read}, out = {{}};
        window.scrollTo(0, 0);
        for (;;) {{
            await settle();
            for (const r of document.querySelectorAll('{table} tbody tr[data-or-recipe]:not([hidden])'))
                out[r.dataset.orRecipe] = read(r);
            if (window.scrollY + window.innerHeight >= document.scrollingElement.scrollHeight - 1) return out;
            window.scrollBy(0, Math.round(window.innerHeight * 0.8));
        }}
    }}""")


@pytest.fixture(scope="module")
def all_recipes_laid_out(browser, site) -> dict[str, dict]:  # noqa: ANN001
    """Every row of the all-recipes table after "Show all", read while laid out at 1400 px (one walk for the tests
    below): its height and line height, the name cell's link title and text, and the tokens/s, $ and MFU cells. A
    tall window at the tested width: the windowed body then lays out ~130 rows a step, not ~25."""
    page = watched_page(browser, site, viewport={"width": 1400, "height": 4000})
    try:
        page.goto("recipes/")
        _show_all(page)
        rows = _every_row_laid_out(page, "#or-recipes", """r => ({
            height: r.getBoundingClientRect().height, line: parseFloat(getComputedStyle(r.cells[0]).lineHeight),
            title: r.cells[0].querySelector('a').title, name: r.cells[0].innerText.trim(),
            figures: ['tokens', 'usd', 'mfu'].map(c => r.querySelector(`[data-or-col=${c}]`).innerText.trim())})""")
    finally:
        page.context.close()
    page.watch.assert_clean()
    return rows


def _column(page, table: str, key: str, attr: str = "data-sort") -> list[str]:  # noqa: ANN001
    """A column's values (by its header's data-or-sort key) over the table's shown rows, top to bottom (read through
    OpenRecipes.shownRows: a windowed table holds only the rows near the viewport in the document)."""
    return page.evaluate("""([table, key, attr]) => {
        const t = document.querySelector(table);
        const i = [...t.tHead.rows[0].cells].findIndex(th => th.dataset.orSort === key);
        return OpenRecipes.shownRows(t.id).map(r => attr ? r.cells[i].getAttribute(attr)
                                                         : r.cells[i].textContent.trim());
    }""", [table, key, attr])


# Item 1: figures in view.

def test_item1_every_figure_column_in_view_at_1400(wide) -> None:  # noqa: ANN001
    for url in DATA_PAGES:
        wide.goto(url)
        tables = wide.locator("table.or-sortable")
        assert tables.count() >= 1, url
        for i in range(tables.count()):
            box = tables.nth(i).evaluate("""t => ({right: t.getBoundingClientRect().right,
                cols: [...t.querySelectorAll('th[data-or-sort]')].map(th => th.getBoundingClientRect().right),
                view: document.documentElement.clientWidth,
                wrap: t.parentElement.scrollWidth - t.parentElement.clientWidth})""")
            assert box["wrap"] <= 0 and box["right"] <= box["view"], (url, box)
            assert all(right <= box["view"] for right in box["cols"]), (url, box)


def test_item1_rows_are_one_line_with_compact_names(all_recipes_laid_out, wide, registry) -> None:  # noqa: ANN001
    rows = all_recipes_laid_out
    assert len(rows) == len(registry.recipes)
    by_id = {x.id: x for x in registry.recipes}
    for rid, row in rows.items():
        # One line of text plus padding: no cell wraps (names are cut with an ellipsis, never broken mid-word).
        assert row["height"] < 2 * row["line"], row
        assert row["title"] == rid, row
        assert row["name"] == views.compact_name(by_id[rid]), row
    # The page of the recipe carries its full id.
    wide.goto(f"recipes/{REF_ID}/")
    assert REF_ID in wide.locator("body").inner_text()


def test_item1_figures_at_meaningful_precision_from_python(all_recipes_laid_out, registry) -> None:  # noqa: ANN001
    cells = {rid: row["figures"] for rid, row in all_recipes_laid_out.items()}
    assert len(cells) == len(registry.recipes)
    for loaded in registry.recipes:
        f = views.recipe_figures(loaded, registry.catalog)
        tokens, usd, mfu = cells[loaded.id]
        # a time-to-train figure (MLPerf's) carries its label, no other figure does
        ttt = loaded.recipe.result.time_to_train is not None
        assert tokens.endswith(" " + views.TTT_LABEL) == ttt, loaded.id
        tokens = tokens.removesuffix(" " + views.TTT_LABEL)
        assert tokens == fmt.short(f.tokens_per_s), loaded.id
        assert usd == fmt.usd_short(f.usd), loaded.id
        assert mfu == fmt.mfu_cell(f.mfu, f.mfu_peak), loaded.id
        assert not tokens.endswith(".00"), loaded.id


def _fastest_by_key(registry, keep, other) -> dict[tuple, tuple[float, set[str], int]]:  # noqa: ANN001
    """Independently of tables.best_layouts: per (other, GPU count, training kind, precision, sequence, time to train
    or not) the highest tokens/s per GPU, the recipes that reach it and how many recipes the key has."""
    out: dict[tuple, tuple[float, set[str], int]] = {}
    for x in registry.recipes:
        r = x.recipe
        if not keep(r):
            continue
        training = r.workload.training.value if r.workload.training else None
        kind = {"lora": "LoRA", "sft": "SFT", "pre-training": "pre-training"}.get(training, "not stated")
        key = (other(r), str(r.gpu.count), kind, r.workload.precision.value.upper(), fmt.integer(r.workload.row_tokens),
               r.result.time_to_train is not None)
        tps = r.result.tokens_per_s_per_gpu
        best, ids, n = out.get(key, (-1.0, set(), 0))
        ids = {x.id} if tps > best else ids | {x.id} if tps == best else ids
        out[key] = (max(best, tps), ids, n + 1)
    return out


@pytest.mark.parametrize(("url", "keep", "other"), [
    ("models/llama-3-70b/", lambda r: r.model == "Llama-3-70B", lambda r: r.gpu.type),
    ("gpus/h100/", lambda r: r.gpu.type == "H100", lambda r: r.model),
])
def test_issue18_pages_lead_with_the_best_layout_per_gpu_count(wide, phone, registry, url, keep, other) -> None:  # noqa: ANN001
    expected = _fastest_by_key(registry, keep, other)
    wide.goto(url)
    # The best-layout table comes before the page's recipe table.
    order = wide.evaluate("""() => { const b = document.querySelector('#or-best'), g = document.querySelector('#or-group');
        return !!b && !!g && !!(b.compareDocumentPosition(g) & Node.DOCUMENT_POSITION_FOLLOWING); }""")
    assert order, url
    rows = wide.evaluate("""() => [...document.querySelectorAll('#or-best tbody tr')].map(r => ({
        cells: [...r.cells].map(c => c.innerText.trim()), id: r.cells[8].querySelector('a').title}))""")
    assert len(rows) == len(expected), (url, len(rows), len(expected))
    for row in rows:
        what, gpus, tokens, _mfu, kind, precision, sequence, _label, _name, of = row["cells"]
        # a time-to-train figure carries its label (views.TTT_LABEL): a line of its own beside a steady-state one
        ttt = tokens.endswith(" " + views.TTT_LABEL)
        tokens = tokens.removesuffix(" " + views.TTT_LABEL)
        best, ids, count = expected[(what, gpus, kind, precision, sequence, ttt)]
        assert row["id"] in ids and tokens == fmt.short(best), (url, row)
        assert of == str(count), (url, row, count)
    box = wide.evaluate("""() => { const t = document.querySelector('#or-best');
        return {right: t.getBoundingClientRect().right, view: document.documentElement.clientWidth,
                wrap: t.parentElement.scrollWidth - t.parentElement.clientWidth}; }""")
    assert box["wrap"] <= 0 and box["right"] <= box["view"], (url, box)
    phone.goto(url)
    assert phone.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), url


@pytest.mark.parametrize("url", ["models/llama-3-70b/", "gpus/h100/"])
def test_issue42_on_a_phone_the_best_layout_table_starts_with_its_figures_and_says_it_scrolls(phone, url) -> None:  # noqa: ANN001
    """Issue 42: tokens/s per GPU sat at 844-956 px of a 350 px box with no cue. It is in view (its header's right edge
    inside the box), and a cue above the table names the columns out of view, and goes once they are scrolled in."""
    phone.goto(url)
    box = phone.evaluate("""() => { const t = document.getElementById('or-best'), w = t.parentElement;
        const edge = w.getBoundingClientRect().right;
        const head = [...t.tHead.rows[0].cells].find(c => c.textContent.trim() === 'Tokens/s per GPU');
        const cue = w.previousElementSibling;
        return {tokens: head.getBoundingClientRect().right <= edge, scrolls: w.scrollWidth > w.clientWidth,
                cue: cue && cue.matches('[data-or-scroll-cue]') && !cue.hidden ? cue.textContent : null}; }""")
    assert box["tokens"] and box["scrolls"], box
    assert box["cue"] and box["cue"].startswith("Scrolls sideways") and "Fastest recipe" in box["cue"], box
    phone.evaluate("() => { const w = document.getElementById('or-best').parentElement; w.scrollLeft = w.scrollWidth; }")
    phone.wait_for_function("() => document.getElementById('or-best').parentElement.previousElementSibling.hidden")


def test_issue42_compare_fits_two_recipes_on_a_phone(phone) -> None:  # noqa: ANN001
    phone.goto(f"compare/?ids={REF_ID},llama-3-70b/h100/mb-25.11-dgx-h100-64gpu-fp8-cs")
    phone.wait_for_selector("#or-compare-table")
    fit = phone.evaluate("""() => { const t = document.getElementById('or-compare-table'), w = t.parentElement;
        return w.scrollWidth <= w.clientWidth + 1; }""")
    assert fit


def test_a_group_table_over_1000_rows_says_it_shows_the_first_and_shows_all(wide, registry) -> None:  # noqa: ANN001
    """gpus/h100/ holds more than 1,000 recipes: the page says it shows the first LIVE_ROWS, links to the all-recipes table
    filtered to H100 (same recipes), and "Show all" puts every one in, which a later sort keeps."""
    h100 = {x.id for x in registry.recipes if x.recipe.gpu.type == "H100"}
    assert len(h100) > 1000
    wide.goto("gpus/h100/")
    note = wide.locator("[data-or-partial=or-group]")
    assert f"first {LIVE_ROWS} of its {len(h100):,} recipes" in note.inner_text()
    assert wide.locator("#or-group tbody tr:not([hidden])").count() == LIVE_ROWS
    link = note.locator("a").evaluate("a => a.href")  # resolved against the page
    assert link.endswith("/recipes/?gpu_type=H100"), link
    note.locator("button[data-or-show-all]").click()
    shown = wide.evaluate("OpenRecipes.shownRows('or-group').map(r => r.dataset.orRecipe)")
    assert len(shown) == len(h100) and set(shown) == h100
    assert note.inner_text().startswith(f"All {len(h100):,} recipes shown. Rows far off screen")
    wide.locator("#or-group th[data-or-sort=name] button").click()
    assert wide.evaluate("OpenRecipes.shownRows('or-group').length") == len(h100)  # the sort kept every row
    wide.goto(link)
    assert wide.locator("[data-or-count]").inner_text().startswith(f"{len(h100)} of {len(registry.recipes)} recipes")


def test_item1_headers_stick_while_scrolling(wide) -> None:  # noqa: ANN001
    wide.goto("recipes/")
    header = wide.locator("#or-recipes thead th").first
    start = header.bounding_box()["y"]
    wide.mouse.wheel(0, 1500)
    wide.wait_for_timeout(200)
    assert wide.evaluate("window.scrollY") > 1000
    y = header.bounding_box()["y"]
    assert start > 200 and 0 <= y <= 80, (start, y)


def test_item1_stack_fields_by_their_proper_names(wide) -> None:  # noqa: ANN001
    wide.goto(f"recipes/{REF_ID}/")
    labels = wide.eval_on_selector_all("#stack ~ .or-section th, #stack + * th, details th",
                                       "els => els.map(e => e.innerText.trim())")
    for name in ("PyTorch", "CUDA", "NCCL", "DeepEP", "Megatron-LM", "Megatron-Bridge", "Transformer Engine"):
        assert name in labels, labels
    for bad in ("Pytorch", "Cuda", "Nccl", "Deepep", "Megatron lm"):
        assert bad not in labels


# Item 3: sorting right.

def test_item3_served_order_kept_and_one_header_marked(wide) -> None:  # noqa: ANN001
    wide.goto("recipes/")
    _show_all(wide)
    tokens = [float(v) for v in _column(wide, "#or-recipes", "tokens")]
    assert tokens == sorted(tokens, reverse=True)
    marked = wide.eval_on_selector_all("#or-recipes th[aria-sort]",
                                       "els => els.map(e => [e.dataset.orSort, e.getAttribute('aria-sort')])")
    assert marked == [["tokens", "descending"]]


@pytest.mark.parametrize(("key", "best"), [("usd", "ascending"), ("mfu", "descending"), ("params", "descending"),
                                           ("tokens", "descending")])
def test_item3_first_click_best_first_unknown_last(wide, key: str, best: str) -> None:  # noqa: ANN001
    wide.goto("recipes/")
    _show_all(wide)
    header = wide.locator(f"#or-recipes th[data-or-sort={key}] button")
    if key == "tokens":  # already sorted best-first: another column first, so that the click is a first click
        wide.locator("#or-recipes th[data-or-sort=name] button").click()
    for direction in (best, "descending" if best == "ascending" else "ascending"):
        header.click()
        _show_all(wide)
        values = _column(wide, "#or-recipes", key)
        known = [float(v) for v in values if v != ""]
        assert known and values[: len(known)] == [v for v in values if v != ""], "unknown values must come last"
        assert known == sorted(known, reverse=direction == "descending"), (key, direction)
        marked = wide.eval_on_selector_all("#or-recipes th[aria-sort]", "els => els.map(e => e.dataset.orSort)")
        assert marked == [key]
        assert wide.locator(f"#or-recipes th[data-or-sort={key}]").get_attribute("aria-sort") == direction


# Item 11: test hooks.

def test_item11_rows_and_figure_cells_carry_hooks(wide, registry) -> None:  # noqa: ANN001
    ids = {x.id for x in registry.recipes}
    wide.goto("recipes/")
    # A table of more than 1,000 rows keeps the rows out of view out of the document (openrecipes.js DETACH): the
    # served page carries every row's hooks (live rows and, past them, the same rows as compact JSON: rowdata), and
    # "Show all" brings them all in.
    served = wide.evaluate("async () => await (await fetch(location.href)).text()")
    packed = re.search(r'<template data-or-rows="or-recipes">(.*?)</template>', served, re.S)
    served_rows = served + "".join(expand(packed.group(1)))
    assert set(re.findall(r'<tr[^>]* data-or-recipe="([^"]+)"', served_rows)) == ids
    _show_all(wide)
    rows = wide.evaluate("""() => OpenRecipes.shownRows('or-recipes').map(r => [r.dataset.orRecipe,
        ['tokens', 'usd', 'mfu'].map(c => r.querySelectorAll(`td[data-or-col="${c}"]`).length)])""")
    assert {r[0] for r in rows} == ids and len(rows) == len(ids)
    assert all(counts == [1, 1, 1] for _, counts in rows)
    for url in DATA_PAGES[2:]:
        wide.goto(url)
        found = wide.eval_on_selector_all("table.or-sortable tbody tr", "els => els.map(r => r.dataset.orRecipe)")
        assert found and set(found) <= ids
        assert wide.locator("table.or-sortable tbody tr td[data-or-col=tokens]").count() == len(found)


# Item 2: the recipe page's hierarchy.

def _boxes(page, selectors: list[str]) -> list[dict]:  # noqa: ANN001
    return [page.locator(sel).first.bounding_box() for sel in selectors]


def test_item2_title_status_tiles_evidence_then_card_on_a_phone(phone, registry) -> None:  # noqa: ANN001
    phone.goto(f"recipes/{REF_ID}/")
    order = ["#card h1", ".or-lead__status .or-status", ".or-tiles", ".or-evidence", "#card dl dt"]
    boxes = _boxes(phone, order)
    assert all(b is not None for b in boxes)
    ys = [b["y"] for b in boxes]
    assert ys == sorted(ys), dict(zip(order, ys, strict=True))
    # Every headline figure on the first screen of a 390 x 844 phone.
    for key in ("tokens", "usd", "mfu", "gpu_hours", "cv"):
        tile = phone.locator(f"[data-or-tile={key}]")
        box = tile.bounding_box()
        assert tile.is_visible() and box["y"] + box["height"] <= 844, (key, box)
    assert phone.locator(".or-lead__status .or-status").inner_text() == "verified"
    assert phone.locator(".or-lead__date").inner_text() == "verified 2026-10-21"
    loaded = next(x for x in registry.recipes if x.id == REF_ID)
    f = views.recipe_figures(loaded, registry.catalog)
    assert phone.locator("[data-or-tile=tokens] .or-tile__value").inner_text() == fmt.short(f.tokens_per_s)
    assert phone.locator("[data-or-tile=usd] .or-tile__value").inner_text() == fmt.usd_short(f.usd)


def test_item2_card_text_unchanged_and_detail_folds(wide) -> None:  # noqa: ANN001
    from sitehelpers import GOLDEN_CARD

    wide.goto(f"recipes/{REF_ID}/")
    blocks = wide.eval_on_selector_all("#card h1, #card dt, #card dd, #card pre code",
                                       "els => els.map(e => e.tagName === 'CODE' ? e.innerText : e.innerText.trim())")
    assert "\n\n".join(b.rstrip("\n") for b in blocks) == GOLDEN_CARD.read_text().rstrip("\n")
    folds = wide.eval_on_selector_all("details.or-fold", "els => els.map(d => [d.querySelector('h2').id, d.open])")
    state = dict(folds)
    assert state["figures"] and state["layout"] and not state["source"] and not state["correctness"], folds
    assert wide.evaluate("document.documentElement.scrollHeight") < 9000  # was 14,700 px
    # The evidence summary: pass/fail and its key number per test, each a link that opens its folded detail.
    items = wide.locator(".or-evidence__item")
    assert items.count() == 3
    assert "1.62e-2 against a bound of 4.07e-2" in items.nth(0).inner_text()
    assert "correlation 0.98649" in items.nth(2).inner_text()
    items.nth(1).locator("a").click()
    target = wide.locator("#component-test-2")
    target.wait_for()
    assert target.is_visible() and wide.evaluate("document.getElementById('correctness').closest('details').open")


def test_item2_reported_recipe_says_where_from(wide) -> None:  # noqa: ANN001
    wide.goto("recipes/llama-3-70b/h100/mb-25.11-dgx-h100-64gpu-fp8-cs/")
    assert wide.locator(".or-lead__status .or-status").inner_text() == "reported"
    assert wide.locator(".or-lead__date").inner_text() == "published in release 25.11"
    assert wide.locator("[data-or-tile=mfu] .or-tile__label").inner_text() == "MFU (FP8 peak)"


# Item 9: fixes.

@pytest.mark.parametrize(("scheme", "expected"), [("dark", "slate"), ("light", "default")])
def test_item9_colour_scheme_follows_the_os(new_page, site, scheme: str, expected: str) -> None:  # noqa: ANN001
    pg = new_page(site, viewport={"width": 1400, "height": 900}, color_scheme=scheme)
    pg.goto("recipes/")
    assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == expected
    assert pg.locator("form[data-md-component=palette] label:not([hidden])").first.is_visible()  # the toggle overrides it
    # Status badges keep their contrast in either scheme (theme variables, not fixed light colours).
    colours = pg.evaluate("""() => { const b = document.querySelector('.or-status');
        const s = getComputedStyle(b); return [s.color, s.backgroundColor]; }""")
    assert colours[0] != colours[1]


def test_item9_search_snippets_keep_label_and_value_apart(wide) -> None:  # noqa: ANN001
    wide.goto("")
    docs = wide.evaluate("fetch('search/search_index.json').then(r => r.json()).then(j => j.docs)")
    model = next(d for d in docs if d["location"].startswith("models/deepseek-v3/") and "Layers" in d["text"])
    assert "Layers 61" in model["text"] and "Hidden size 7,168" in model["text"], model["text"][:300]
    assert not any("Layers6" in d["text"] or "Hidden size7" in d["text"] for d in docs)
    # In the search box, a result reads with its spaces.
    wide.locator("label.md-search__icon, .md-search__input").first.click()
    result = wide.locator(".md-search-result__item", has_text="Hidden size")
    for _ in range(30):
        wide.fill("input.md-search__input", "")
        wide.type("input.md-search__input", "hidden size")
        try:
            result.first.wait_for(timeout=1000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; the index loads in a worker
            continue
    assert "Hidden size7" not in result.first.inner_text()


# The search index on demand (site_theme/partials/search-on-demand.js): no page view fetches the 2.5 MB index until
# the reader reaches for search, and then search answers what was typed while it loaded.

def _index_requests(page) -> list[str]:  # noqa: ANN001
    return [url for url in page.watch.requests if url.endswith("/search/search_index.json")]


def _wait_for_result(page, href_part: str) -> None:  # noqa: ANN001
    page.locator(f".md-search-result__link[href*='{href_part}']").first.wait_for(timeout=15000)


@pytest.mark.parametrize("reach", ["click", "slash"])
def test_search_index_is_fetched_when_the_reader_reaches_for_search(wide, reach: str) -> None:  # noqa: ANN001
    wide.goto("methodology/")
    wide.wait_for_load_state("load")
    wide.wait_for_timeout(500)  # Material's start-up, where it used to request the index
    assert _index_requests(wide) == []
    if reach == "click":
        wide.locator(".md-search__input").click()
    else:
        wide.keyboard.press("/")  # Material's shortcut focuses the search box
    wide.keyboard.type("attune")  # at once: the query waits for the index
    _wait_for_result(wide, "attune-tp2-pp4-split13")
    assert len(_index_requests(wide)) == 1, wide.watch.requests


def test_search_index_is_fetched_when_the_phone_opens_search(phone) -> None:  # noqa: ANN001
    phone.goto("")
    phone.wait_for_load_state("load")
    assert _index_requests(phone) == []
    phone.locator("label.md-header__button[for=__search]").click()
    phone.keyboard.type("attune")
    _wait_for_result(phone, "attune-tp2-pp4-split13")
    assert len(_index_requests(phone)) == 1, phone.watch.requests


def test_search_links_open_search_or_highlight_at_once(wide) -> None:  # noqa: ANN001
    wide.goto("?q=attune")  # a shared search: Material opens the box with the query
    _wait_for_result(wide, "attune-tp2-pp4-split13")
    wide.goto(f"recipes/{REF_ID}/?h=attention")  # a search result's link: its terms highlighted in the page
    marks = wide.locator("mark[data-md-highlight]")
    marks.first.wait_for(timeout=15000)
    assert marks.first.inner_text().lower() == "attention"


def test_item9_contributing_code_blocks_render_as_blocks(wide) -> None:  # noqa: ANN001
    wide.goto("contributing/")
    blocks = wide.eval_on_selector_all("li pre code", "els => els.map(e => e.innerText.trim())")
    assert "python -m generator new gemma-4-31b h100 my-layout" in blocks
    assert "python -m generator check recipes/gemma-4-31b/h100/my-layout.yaml" in blocks
    assert "```" not in wide.locator("article").inner_text()


def test_item9_interleaved_stage_table_for_vpp(wide, registry) -> None:  # noqa: ANN001
    rid = "llama-3-70b/h100/mb-25.09-dgx-h100-64gpu-fp8-cs"  # 80 layers, PP 8, VPP 5
    wide.goto(f"recipes/{rid}/")
    rows = wide.eval_on_selector_all("#or-stages tbody tr",
                                     "els => els.map(r => [...r.cells].map(c => c.innerText.trim()))")
    assert rows[0] == ["0", "0–1, 16–17, 32–33, 48–49, 64–65", "10"]
    assert rows[7] == ["7", "14–15, 30–31, 46–47, 62–63, 78–79", "10"]
    assert "Interleaved schedule, VPP 5" in wide.locator("#pipeline-stages ~ p").first.inner_text()


def test_item9_stage_tables_cover_every_layer_once(registry) -> None:
    for loaded in registry.recipes:
        stages = recipe_page.pipeline_stages(loaded, registry.catalog)
        if not stages:
            continue
        layers = registry.catalog.models[loaded.recipe.model].architecture.layers
        seen = []
        for stage in stages:
            for span in stage["layers"].split(", "):
                a, b = (int(v) for v in span.split("–"))
                seen.extend(range(a, b + 1))
        assert sorted(seen) == list(range(layers)), loaded.id
        assert len(stages) == loaded.recipe.layout.pp
        if loaded.recipe.layout.vpp > 1:
            # A chunk that holds only the embedding or the loss lists no span (tests/site/test_stage_table.py).
            assert all(len(s["layers"].split(", ")) <= loaded.recipe.layout.vpp for s in stages), loaded.id


# Item 10: accessibility, by axe-core. The committed site's home and methodology pages are checked here only (the
# time-to-train and planner tests check the pages their work changed beyond these).

AXE_PAGES = ["", "recipes/", f"recipes/{REF_ID}/", "models/deepseek-v3/", "gpus/h100/", "methodology/",
             f"compare/?ids={REF_ID},llama-3-70b/h100/mb-25.11-dgx-h100-64gpu-fp8-cs"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_item10_no_serious_or_critical_axe_violations(new_page, site, scheme: str) -> None:  # noqa: ANN001
    """Each page loaded once per colour scheme, every fold opened, checked at 390 px, then widened to 1400 px and
    checked again (sitehelpers.serious_axe_violations). At each width the page scrolls no wider than the window."""
    page = new_page(site, viewport={"width": 390, "height": 900}, color_scheme=scheme)
    assert serious_axe_violations(page, AXE_PAGES, prepare=open_folds, at_width=no_sideways_scroll) == []


# Item 7: shareable state in the URL, CSV of the rows in view.

def _shown_ids(page) -> list[str]:  # noqa: ANN001
    return page.evaluate("OpenRecipes.shownRows('or-recipes').map(r => r.dataset.orRecipe)")


def test_item7_filters_and_sort_come_from_the_url(wide) -> None:  # noqa: ANN001
    wide.goto("recipes/?gpu_type=H100&text=fp8&sort=usd&dir=asc")
    _show_all(wide)
    assert wide.input_value("select[data-or-filter=gpu_type]") == "H100"
    assert wide.input_value("[data-or-filter-text]") == "fp8"
    # "q" would be Material's search query: a shared filtered view opened its search dialog over the table.
    assert not wide.evaluate("document.getElementById('__search').checked")
    assert wide.locator("#or-recipes th[data-or-sort=usd]").get_attribute("aria-sort") == "ascending"
    rows = wide.evaluate("OpenRecipes.shownRows('or-recipes').map(r => [r.dataset.gpu_type, "
                         "r.textContent.toLowerCase().includes('fp8'), r.querySelector('[data-or-col=usd]').dataset.sort])")
    assert rows and all(gpu == "H100" and has for gpu, has, _ in rows)
    usd = [v for _, _, v in rows]
    known = [float(v) for v in usd if v]
    assert known == sorted(known) and usd[: len(known)] == [v for v in usd if v]


def test_item7_a_changed_view_survives_a_reload(wide) -> None:  # noqa: ANN001
    wide.goto("recipes/")
    wide.select_option("select[data-or-filter=model]", "Llama-3-70B")
    wide.fill("[data-or-filter-text]", "gb200")
    wide.locator("#or-recipes th[data-or-sort=mfu] button").click()
    url = wide.url
    assert "model=Llama-3-70B" in url and "text=gb200" in url and "sort=mfu" in url and "dir=desc" in url
    # The table fills in slices after a load or a filter change: read it once it is whole (on a loaded machine a
    # read mid-fill saw one row fewer).
    wide.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")
    before = _shown_ids(wide)
    assert before
    wide.reload()
    wide.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")
    assert _shown_ids(wide) == before
    assert wide.input_value("select[data-or-filter=model]") == "Llama-3-70B"
    wide.select_option("select[data-or-filter=model]", "")
    assert "model=" not in wide.url


def test_item7_csv_of_the_rows_in_view_matches_python(wide, registry) -> None:  # noqa: ANN001
    import csv
    import io

    wide.goto("recipes/?gpu_type=H100&sort=tokens&dir=asc")
    _show_all(wide)
    order = _shown_ids(wide)
    with wide.expect_download() as info:
        wide.locator("button[data-or-csv=or-recipes]").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))
    assert [r["id"] for r in rows] == order and len(order) == sum(x.recipe.gpu.type == "H100" for x in registry.recipes)
    by_id = {x.id: x for x in registry.recipes}
    for r in rows:
        loaded = by_id[r["id"]]
        f = views.recipe_figures(loaded, registry.catalog)
        assert float(r["tokens_per_s_per_gpu"]) == f.tokens_per_s
        assert (float(r["usd_per_million_tokens"]) if r["usd_per_million_tokens"] else None) == f.usd
        assert (float(r["mfu"]) if r["mfu"] else None) == f.mfu
        assert r["layout"] == loaded.recipe.layout.label and r["gpu_count"] == str(loaded.recipe.gpu.count)
        # what the MFU is against: the precision's peak for reported rows (BF16 for measured ones), 4N for LoRA
        w = loaded.recipe.workload
        assert (r["precision"], r["training"]) == (w.precision.value, w.training.value if w.training else "")
        assert r["mfu_peak"] == (f.derived.peak_precision or "")
    # Text cells are neutralised as recipes.csv's are (formatting.csv_text, csv_cell).
    for text in ("=HYPERLINK(1)", "+1", "-1", "@SUM(1)", "\tx", "plain", 'a,"b"', "a;=cmd()", "a|=1", "a\t+1",
                 "TP2 PP4 DP1;=cmd|' /C calc'!A0;", "\t=1", 'a; "=1'):
        cell = wide.evaluate("t => OpenRecipes.csvCell(OpenRecipes.csvText(t))", text)
        assert cell == fmt.csv_cell(fmt.csv_text(text)), (text, cell)


def test_item7_sort_in_the_url_on_a_model_page(wide) -> None:  # noqa: ANN001
    wide.goto("models/llama-3-70b/?sort=usd&dir=asc")
    assert wide.locator("#or-group th[data-or-sort=usd]").get_attribute("aria-sort") == "ascending"
    values = _column(wide, "#or-group", "usd")
    known = [float(v) for v in values if v]
    assert known == sorted(known) and values[len(known):] == [""] * (len(values) - len(known))


# Items 4-5: your own prices, cost to train. The browser's figures against generator.figures' for every recipe.

OWN_PRICES = {"A100": 1.79, "A100-40GB": 1.29, "H100-96GB": 3.15, "B200": 5.25, "B300": 6.1, "GB200": 7.3,
              "GB300": 8.45, "H100": 2.99, "H200": 3.77, "L40S": 1.25, "MI300X": 2.6, "MI325X": 2.85, "MI350X": 3.4,
              "MI355X": 3.9, "H200-NVL": 3.5}


def _catalog_price(registry, gpu_type: str) -> float | None:  # noqa: ANN001
    offers = [i.usd_per_hour / i.gpu_count for i in registry.catalog.instances.values() if i.gpu_type == gpu_type]
    return min(offers) if offers else None


def _all_rows(page) -> dict[str, dict]:  # noqa: ANN001
    """Every row of the all-recipes table as shown after "Show all", read through OpenRecipes.shownRows (the window
    holds only the rows near the viewport; the train column shows where the table has data-or-budget-on)."""
    _show_all(page)
    return page.evaluate("""() => Object.fromEntries(
      OpenRecipes.shownRows('or-recipes').map(r => {
        const u = r.querySelector('[data-or-col=usd]'), t = r.querySelector('[data-or-col=train]');
        return [r.dataset.orRecipe, {usd: u.dataset.sort, usdText: u.innerText.trim(), hours: t.dataset.gpuHours,
                                     days: t.dataset.days, dollars: t.dataset.usd,
                                     shown: document.getElementById('or-recipes').hasAttribute('data-or-budget-on')}]; }))""")


def test_item4_own_prices_equal_python_on_every_recipe(wide, registry) -> None:  # noqa: ANN001
    from generator import figures

    assert {x.recipe.gpu.type for x in registry.recipes} <= set(OWN_PRICES)
    query = "&".join(f"p.{k}={v}" for k, v in OWN_PRICES.items())
    wide.goto(f"recipes/?{query}")
    rows = _all_rows(wide)
    assert len(rows) == len(registry.recipes)
    for loaded in registry.recipes:
        tps = loaded.recipe.result.tokens_per_s_per_gpu
        expected = figures.usd_per_million_tokens(OWN_PRICES[loaded.recipe.gpu.type], 1, tps)
        assert float(rows[loaded.id]["usd"]) == expected, loaded.id
        assert rows[loaded.id]["usdText"] == fmt.usd_short(expected), loaded.id
    # The inputs show them; each carries its hook.
    for gpu_type, price in OWN_PRICES.items():
        assert float(wide.input_value(f"input[data-or-price='{gpu_type}']")) == price


def test_item4_catalog_prefill_typing_persistence(wide, registry) -> None:  # noqa: ANN001
    from generator import figures

    wide.goto("recipes/")
    h100 = wide.locator("input[data-or-price=H100]")
    assert float(h100.input_value()) == _catalog_price(registry, "H100")
    assert "read 20" in wide.locator("label.or-price", has=h100).text_content()  # the source and its date
    # Served figures (the catalog's) are Python's before any price is typed.
    served = _all_rows(wide)
    for loaded in registry.recipes:
        usd = views.recipe_figures(loaded, registry.catalog).usd
        assert (float(served[loaded.id]["usd"]) if served[loaded.id]["usd"] else None) == usd, loaded.id
    wide.locator("[data-or-decide] summary").click()
    h100.fill("1.5")
    wide.wait_for_function("location.search.includes('p.H100=1.5')")  # replaceState, then Playwright hears of it
    assert "p.H100=1.5" in wide.url
    rows = _all_rows(wide)
    for loaded in (x for x in registry.recipes if x.recipe.gpu.type == "H100"):
        tps = loaded.recipe.result.tokens_per_s_per_gpu
        assert float(rows[loaded.id]["usd"]) == figures.usd_per_million_tokens(1.5, 1, tps)
    # Kept in this browser: another page (no price in its URL) prices with it, in its table and a recipe's tile.
    wide.goto("models/llama-3-70b/")
    loaded = next(x for x in registry.recipes if x.recipe.model == "Llama-3-70B" and x.recipe.gpu.type == "H100")
    cell = wide.locator(f"tr[data-or-recipe='{loaded.id}'] [data-or-col=usd]")
    tps = loaded.recipe.result.tokens_per_s_per_gpu
    assert float(cell.get_attribute("data-sort")) == figures.usd_per_million_tokens(1.5, 1, tps)
    assert "p.H100=1.5" in wide.url
    wide.goto(f"recipes/{REF_ID}/")
    ref = next(x for x in registry.recipes if x.id == REF_ID)
    assert wide.locator("[data-or-tile=usd] .or-tile__value").inner_text() == fmt.usd_short(
        figures.usd_per_million_tokens(1.5, 1, ref.recipe.result.tokens_per_s_per_gpu))
    # Back to the catalog's price: the served figures again.
    wide.goto("recipes/")
    wide.locator("[data-or-reset-prices]").click()
    assert "p.H100" not in wide.url
    assert _all_rows(wide) == served


def test_item4_a_catalog_price_shows_to_its_stated_decimals(wide, registry) -> None:  # noqa: ANN001
    """Issue 42: a price field showed '3.43088125' (AWS's $27.44705 for 8 A100): it shows the price to the decimals
    AWS states (3.43088); the page still computes with the exact price, and that text typed back is no price of
    one's own."""
    wide.goto("recipes/")
    a100 = wide.locator("input[data-or-price=A100]")
    per_gpu = _catalog_price(registry, "A100")
    assert repr(per_gpu) == "3.43088125" and a100.input_value() == "3.43088"
    assert float(a100.get_attribute("data-or-default")) == per_gpu
    shown = wide.eval_on_selector_all("input[data-or-price]", "els => els.map(e => e.value)")
    assert all(len(v.split(".")[1]) <= 6 for v in shown if "." in v), shown
    served = _all_rows(wide)
    wide.locator("[data-or-decide] summary").click()
    a100.fill("3.43")
    wide.wait_for_function("location.search.includes('p.A100=3.43')")
    a100.fill("3.43088")  # the catalog's, as the field shows it: the served figures again
    wide.wait_for_function("!location.search.includes('p.A100')")
    assert _all_rows(wide) == served
    assert wide.evaluate("localStorage.getItem('openrecipes.prices.v1')") in (None, "{}")
    wide.locator("[data-or-reset-prices]").click()
    assert a100.input_value() == "3.43088"


def test_item5_cost_to_train_equals_python_on_every_recipe(wide, registry) -> None:  # noqa: ANN001
    from generator import figures

    wide.goto("recipes/?p.B200=5.25")
    assert wide.evaluate("document.querySelector('[data-or-decide]').open")  # a price of your own opens the panel
    wide.fill("input[data-or-budget]", "1T")
    wide.wait_for_function("location.search.includes('budget=1T')")
    assert "budget=1T" in wide.url
    rows = _all_rows(wide)
    for loaded in registry.recipes:
        r = loaded.recipe
        hours = figures.gpu_hours_for_tokens(1e12, r.result.tokens_per_s_per_gpu)
        row = rows[loaded.id]
        assert float(row["hours"]) == hours, loaded.id
        assert float(row["days"]) == figures.wall_clock_days(hours, r.gpu.count), loaded.id
        price = 5.25 if r.gpu.type == "B200" else _catalog_price(registry, r.gpu.type)
        assert (float(row["dollars"]) if row["dollars"] else None) == (
            figures.training_usd(hours, price) if price is not None else None), loaded.id
    assert wide.locator("#or-recipes th[data-or-sort=train]").is_visible()
    # On a model page, from the URL.
    wide.goto("models/gemma-4-31b/?budget=2e12")
    cell = wide.locator(f"tr[data-or-recipe='{REF_ID}'] [data-or-col=train]")
    ref = next(x for x in registry.recipes if x.id == REF_ID)
    tps = ref.recipe.result.tokens_per_s_per_gpu
    assert float(cell.get_attribute("data-gpu-hours")) == figures.gpu_hours_for_tokens(2e12, tps)
    assert "GPU-h" in cell.inner_text() and cell.is_visible()
    assert wide.evaluate("OpenRecipes.parseTokens('500B')") == 5e11


# Item 6: compare.

def test_item6_tick_recipes_and_compare_them_side_by_side(wide, registry) -> None:  # noqa: ANN001
    wide.goto("recipes/")
    _show_all(wide)
    picks = [REF_ID, "llama-3-70b/h100/mb-25.11-dgx-h100-64gpu-fp8-cs", "llama-3-70b/gb200/mb-25.09-dgx-gb200-64gpu-fp8-mx"]
    for rid in picks:  # scrolled to, as a reader would: the windowed table holds only the rows near the viewport
        assert wide.evaluate("rid => OpenRecipes.revealRow('or-recipes', rid)", rid)
        wide.locator(f"input[data-or-compare='{rid}']").check()
    wide.wait_for_function("location.search.includes('compare=')")
    assert "compare=" in wide.url  # the selection is in the URL
    fourth = wide.locator("input[data-or-compare]:not(:checked)").first.get_attribute("data-or-compare")
    wide.locator(f"input[data-or-compare='{fourth}']").check()
    assert wide.locator("input[data-or-compare]:not(:checked):not([disabled])").count() == 0  # four at most
    wide.locator(f"input[data-or-compare='{fourth}']").uncheck()
    wide.reload()
    _show_all(wide)
    assert sorted(wide.evaluate("""() => OpenRecipes.shownRows('or-recipes').map(r => r.querySelector('input[data-or-compare]'))
        .filter(e => e.checked).map(e => e.dataset.orCompare)""")) == sorted(picks)
    wide.locator("[data-or-compare-open]").click()
    wide.wait_for_selector("#or-compare-table")
    assert "compare/?ids=" in wide.url
    cols = wide.eval_on_selector_all("#or-compare-table thead th[data-or-compare-col]",
                                     "els => els.map(e => e.dataset.orCompareCol)")
    assert cols == picks
    # Every value is Python's text (compare_page.compare_record); a row is marked exactly when its values differ.
    rows = wide.eval_on_selector_all("#or-compare-table tbody tr[data-or-field]", """els => els.map(r => [r.dataset.orField,
        r.classList.contains('or-diff'), [...r.querySelectorAll('td')].map(c => c.textContent)])""")
    by_id = {x.id: x for x in registry.recipes}
    records = [compare_page.compare_record(by_id[rid], views.recipe_figures(by_id[rid], registry.catalog), registry.catalog)
               for rid in picks]
    expected = {}
    for rec in records:
        for section, pairs in rec["sections"]:
            for label, text in pairs:
                expected.setdefault(f"{section}: {label}", {})[rec["id"]] = text
    assert {field for field, _, _ in rows} == set(expected)
    for field, marked, values in rows:
        want = [expected[field].get(rid, "–") for rid in picks]
        assert values == want, field
        assert marked == (len(set(want)) > 1), field
    assert ("Recipe: Model", True, ["Gemma-4-31B", "Llama-3-70B", "Llama-3-70B"]) in [tuple(r) for r in rows]
    # The view's address is the comparison: a reload (or a shared link) shows it again.
    wide.reload()
    wide.wait_for_selector("#or-compare-table")
    assert wide.locator("#or-compare-table tbody tr.or-diff").count() == sum(marked for _, marked, _ in rows)


def test_item6_compare_ignores_ids_that_are_not_recipe_ids(wide) -> None:  # noqa: ANN001
    wide.goto(f"compare/?ids={REF_ID},../../etc/passwd,<script>")
    wide.wait_for_timeout(300)
    assert wide.locator("#or-compare-table").count() == 0
    assert wide.locator("[data-or-compare-empty]").is_visible()


# Item 8: charts that inform.

def _chart_points(page, kind: str) -> list[list[dict]]:  # noqa: ANN001
    """[every point, the frontiers' points]: one dataset per like group, and a frontier line per group."""
    return page.evaluate(f"""() => {{ const sets = Chart.getChart(document.querySelector('canvas[data-or-chart-kind={kind}]'))
        .data.datasets, pick = (d) => d.data.map(p => ({{x: p.x, y: p.y, href: p.href || null, front: p.front,
        group: p.group}}));
        return [sets.filter(d => !d.orFront).flatMap(pick), sets.filter(d => d.orFront).flatMap(pick)]; }}""")


def test_item8_model_page_scaling_and_pareto_charts(wide, registry) -> None:  # noqa: ANN001
    wide.goto("models/gpt-oss-120b/")
    for kind in ("scaling", "cost"):
        wide.locator(f"canvas[data-or-chart-kind={kind}][data-or-chart-drawn]").wait_for()
    group = [x for x in registry.recipes if x.recipe.model == "GPT-OSS-120B"]
    scaling = _chart_points(wide, "scaling")[0]
    assert sorted((p["x"], p["y"]) for p in scaling) == sorted(
        (x.recipe.gpu.count, round(x.recipe.result.tokens_per_s_per_gpu, 2)) for x in group)
    cost, front = _chart_points(wide, "cost")
    priced = [(views.recipe_figures(x, registry.catalog).usd, x.recipe.result.tokens_per_s_per_gpu) for x in group]
    priced = [(round(u, 4), round(t, 2)) for u, t in priced if u is not None]
    assert sorted((p["x"], p["y"]) for p in cost) == sorted(priced)
    # The frontier: per like group (training kind and precision), exactly the points no other point of the group
    # beats on both cost and speed.
    grouped = [(p["x"], p["y"], p["group"]) for p in cost]
    dominated = {p for p in grouped if any(q != p and q[2] == p[2] and q[0] <= p[0] and q[1] >= p[1] for q in grouped)}
    assert sorted((p["x"], p["y"], p["group"]) for p in front) == sorted(set(grouped) - dominated)
    # Each point is a link to its recipe: clicking one opens it.
    hrefs = {p["href"] for p in scaling}
    assert len(hrefs) == len(group) and all(h.startswith("../../recipes/gpt-oss-120b/") for h in hrefs)
    wide.locator("canvas[data-or-chart-kind=cost]").scroll_into_view_if_needed()
    target = wide.evaluate("""() => { const c = Chart.getChart(document.querySelector('canvas[data-or-chart-kind=cost]'));
        const el = c.getDatasetMeta(0).data[0], box = c.canvas.getBoundingClientRect();
        return {x: box.left + el.x, y: box.top + el.y, href: c.data.datasets[0].data[0].href}; }""")
    wide.mouse.click(target["x"], target["y"])
    wide.wait_for_url("**/recipes/gpt-oss-120b/**")
    assert wide.url.rstrip("/").endswith(target["href"].replace("../../", "").rstrip("/"))


def test_item8_gpu_page_has_scaling_not_the_constant_cost_curve(wide) -> None:  # noqa: ANN001
    wide.goto("gpus/h100/")
    wide.locator("canvas[data-or-chart-kind=scaling][data-or-chart-drawn]").wait_for()
    assert wide.locator("canvas[data-or-chart-kind=cost]").count() == 0  # $ against tokens/s is y = k/x on one GPU type


@pytest.mark.parametrize("width", [390, 1400])
def test_item8_scatter_charts_keep_their_plot_beside_a_long_legend(new_page, site, width: int) -> None:  # noqa: ANN001
    """The H100 page's scaling chart has a legend entry per like group (65): at either width the plot keeps its
    height (it was a line under a cut legend on a phone) and every entry is laid out inside the legend."""
    page = new_page(site, viewport={"width": width, "height": 900})
    for url in ("gpus/h100/", "models/llama-3-70b/"):
        page.goto(url)
        page.locator("canvas[data-or-chart-drawn]").first.wait_for()
        page.wait_for_function("[...document.querySelectorAll('canvas[data-or-chart]')].every(c => c.hasAttribute("
                               "'data-or-chart-drawn'))")
        charts = page.evaluate("""() => [...document.querySelectorAll('canvas[data-or-chart]')].map(c => {
            const ch = Chart.getChart(c), legend = ch.legend;
            return {kind: c.dataset.orChartKind, plot: ch.chartArea.bottom - ch.chartArea.top,
                    items: legend.legendItems.length, sets: ch.data.datasets.length,
                    laid: legend.legendHitBoxes.filter(b => b.top >= legend.top && b.top + b.height <= legend.bottom + 1).length,
                    width: c.getBoundingClientRect().width}; })""")
        assert charts, url
        for chart in charts:
            assert chart["plot"] >= 200, (url, chart)
            assert chart["items"] == chart["sets"] == chart["laid"], (url, chart)
            assert chart["width"] <= width, (url, chart)


def test_item8_history_on_a_time_axis(wide) -> None:  # noqa: ANN001
    rid = "llama-3.2-3b/h200/engine-sdpa-8k"
    wide.goto(f"recipes/{rid}/")
    if wide.locator("canvas[data-or-chart-kind=history]").count() == 0:
        pytest.skip("this recipe has one measurement")
    wide.locator("canvas[data-or-chart-kind=history][data-or-chart-drawn]").wait_for()
    points = wide.evaluate("""() => { const c = Chart.getChart(document.querySelector('canvas[data-or-chart-kind=history]'));
        return [c.options.scales.x.title.text, c.data.datasets[0].data.map(p => p.x)]; }""")
    assert points[0] == "date measured"
    xs = points[1]
    assert xs == sorted(xs) and all(x > 19000 for x in xs)  # days since 1970: 2022 onwards
