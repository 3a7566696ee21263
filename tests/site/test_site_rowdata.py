"""The all-recipes table's rows past the first LIVE_ROWS as compact JSON (generator/site/rowdata.py): filling the
shapes gives back each row's HTML byte for byte, in Python and in Chromium (packed.js), and nothing in
the JSON can end or change the <template> element that carries it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape
from sitehelpers import free_port, make_registry, static_server, synthetic
from suitehelpers import mkdocs_build, site_project

from generator.registry import load_registry
from generator.site import render_site
from generator.site.rowdata import compact_rows, expand, split_row
from generator.site.tables import LIVE_ROWS

N = LIVE_ROWS + 12  # synthetic recipes, plus the reference: a dozen past the live rows
ROW = re.compile(r"<tr data-or-recipe=.*?</tr>", re.S)
PACKED = re.compile(r'<template data-or-rows="or-recipes">(.*?)</template>', re.S)


def _recipes() -> dict[str, dict]:
    return {f"gemma-4-31b/h100/p{i:03d}": synthetic(500.0 + i, count=16 if i % 5 == 0 else 8, name=f"p{i:03d}")
            for i in range(N)}


@pytest.fixture(scope="module")
def registry_root(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    return make_registry(tmp_path_factory.mktemp("rowdata"), _recipes())


@pytest.fixture(scope="module")
def page(registry_root) -> str:  # noqa: ANN001
    return render_site(load_registry(registry_root))["recipes.md"].content


def test_live_rows_then_every_other_row_as_json(page: str) -> None:
    live = ROW.findall(page.split("<tbody>", 1)[1].split("</tbody>", 1)[0])
    packed = expand(PACKED.search(page).group(1))
    assert len(live) == LIVE_ROWS and len(packed) == N + 1 - LIVE_ROWS
    ids = [re.match(r'<tr data-or-recipe="([^"]+)"', r).group(1) for r in live + packed]
    assert sorted(ids) == sorted([*_recipes(), "gemma-4-31b/h100/attune-tp2-pp4-split13"])
    # Served fastest first (tokens/s 500 + i): the JSON continues the live rows' order.
    tokens = [float(re.search(r'data-or-col="tokens" data-sort="([^"]*)"', r).group(1)) for r in live + packed]
    assert tokens == sorted(tokens, reverse=True)
    # A few shapes for all rows (the template's conditionals), each row's hooks in its shape.
    assert len(re.search(r'"shapes":\[(.*?)\],"rows"', PACKED.search(page).group(1)).group(1).split('","')) <= 4


def test_split_and_expand_give_the_rows_back(page: str) -> None:
    rows = ROW.findall(page)
    assert expand(compact_rows([split_row(r) for r in rows])) == rows


# Any text the template escapes, in attributes and between tags, comes back as it was; no "<", ">" or "&" in the JSON.
@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=3, max_size=3))
def test_any_escaped_text_round_trips(texts: list[str]) -> None:
    a, b, c = (str(escape(t)) for t in texts)
    row = f'<tr data-or-recipe="{a}" title="{b}">\n<td class="or-name"><a href="{a}/">{c}</a> <span>{b}</span></td>\n</tr>'
    text = compact_rows([split_row(row)])
    assert not set("<>&") & set(text) and expand(text) == [row]


@pytest.mark.browser
def test_chromium_builds_the_same_rows(new_page, registry_root, tmp_path_factory, page: str) -> None:  # noqa: ANN001
    served = [re.match(r'<tr data-or-recipe="([^"]+)"', r).group(1) for r in ROW.findall(page.split("<tbody>", 1)[1]
              .split("</tbody>", 1)[0]) + expand(PACKED.search(page).group(1))]
    out = tmp_path_factory.mktemp("rowdata-site")
    result = mkdocs_build(site_project(out, registry_root), out / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    with static_server(out / "site", free_port()) as base:
        browser = new_page(base)
        browser.goto("recipes/")
        assert browser.locator("template[data-or-rows]").count() == 0  # read, then taken out
        browser.click("button[data-or-show-all]")
        browser.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")
        rows = browser.evaluate("""() => OpenRecipes.shownRows('or-recipes').map(r => [
            r.dataset.orRecipe, r.querySelector('input[data-or-compare]').dataset.orCompare,
            ['tokens', 'usd', 'mfu', 'training', 'precision'].map(c => r.querySelectorAll(`td[data-or-col=${c}]`).length),
            r.cells.length])""")
        assert [r[0] for r in rows] == served and all(r[0] == r[1] for r in rows)
        assert all(r[2] == [1, 1, 1, 1, 1] and r[3] == rows[0][3] for r in rows)
        # a filter and a sort reach the rows from the JSON: the last one served is the slowest
        browser.fill("[data-or-filter-text]", served[-1].rsplit("/", 1)[1])
        browser.wait_for_selector("#or-recipes:not([data-or-filling])", state="attached")
        shown = browser.eval_on_selector_all("#or-recipes tbody tr:not([hidden])", "els => els.map(r => r.dataset.orRecipe)")
        assert shown == [served[-1]]
        # Reached by Material's instant navigation (which re-creates a page's scripts), every row is there too.
        browser.goto("recipes/gemma-4-31b/h100/attune-tp2-pp4-split13/")
        browser.locator(".md-tabs a", has_text="All recipes").first.click()
        browser.wait_for_function("document.querySelector('[data-or-filters]')?.dataset.orFilterReady === '1'")
        assert browser.evaluate("document.getElementById('or-recipes').orRows.length") == len(served)
        # The server stops when this block ends: the page closes first, with nothing in flight (a request the server
        # dropped on its way out would be a page error).
        browser.wait_for_load_state("networkidle")
        browser.context.close()
