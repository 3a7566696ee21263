"""Reported recipes on the site: badge and source link, a filter of their own, MFU against the precision's peak
(labelled), model pages comparing published layouts across releases and systems; speed-up against a named reference."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from sitehelpers import card_text, make_registry, reference_data, synthetic, with_packed_rows

from generator import figures
from generator.registry import load_registry
from generator.site import formatting as fmt
from generator.site import render_site, views


@pytest.fixture(scope="module")
def registry(committed):  # noqa: ANN001, ANN201
    return committed


@pytest.fixture(scope="module")
def pages(committed_pages):  # noqa: ANN001, ANN201
    return committed_pages


def _reported(registry, model: str, gpu: str):  # noqa: ANN001, ANN202
    return sorted((x for x in registry.recipes if x.recipe.model == model and x.recipe.gpu.type == gpu
                   and x.recipe.status.value == "reported"), key=lambda x: x.id)


@pytest.mark.slow
def test_reported_rows_link_their_source_and_filter_apart(registry, pages) -> None:  # noqa: ANN001
    table = with_packed_rows(pages["recipes.md"].content)
    reported = [x for x in registry.recipes if x.recipe.status.value == "reported"]
    measured = [x for x in registry.recipes if x.recipe.status.value != "reported"]
    assert len(reported) >= 80 and measured
    assert table.count(f'data-origin="{views.ORIGIN_PUBLISHED}"') == len(reported)
    assert table.count(f'data-origin="{views.ORIGIN_MEASURED}"') == len(measured)
    assert '<select data-or-filter="origin">' in table
    row_of = {}  # each link -> the first table row that has it
    for row in re.findall(r"<tr\b.*?</tr>", table, re.S):
        for link in re.findall(r'href="([^"]+)"', row):
            row_of.setdefault(link, row)
    for x in reported:
        row = row_of[views.href("recipes.md", views.recipe_src(x))]
        assert '<span class="or-status or-status--reported">reported</span>' in row
        assert f'<a class="or-source" href="{x.recipe.publication.url}"' in row
        assert f">{x.recipe.publication.release or ''}</td>" in row  # AutoModel's table names no release


@pytest.mark.slow
def test_reported_mfu_is_against_the_precisions_peak_and_says_so(registry, pages) -> None:  # noqa: ANN001
    cat = registry.catalog
    table = with_packed_rows(pages["recipes.md"].content)  # the whole table once, not once per recipe
    cells = set(re.findall(r">([^<>]*)</td>", table))  # every cell's text, for one look-up a recipe
    for x in registry.recipes:
        if x.recipe.status.value != "reported":
            continue
        r = x.recipe
        key = figures.PRECISION_PEAK[r.workload.precision.value]
        peak = getattr(cat.gpus[r.gpu.type].peak_flops, key)
        expected = figures.mfu(r.result.active_params.count, r.result.tokens_per_s_per_gpu, peak,
                               frozen_base=figures.frozen_base(r))  # LoRA: 4N, not 6N
        f = views.recipe_figures(x, cat)
        if r.result.mfu_note:
            continue
        assert f.mfu == pytest.approx(expected) and f.mfu_peak == key
        card = card_text(pages[views.recipe_src(x)].content)
        assert f"{fmt.percent(expected)} of the {key.upper()} dense peak (N = " in card, x.id
        assert f"{fmt.percent(expected)} ({key.upper()} peak)" in cells
    # and a measured recipe's MFU stays unlabelled, against BF16 (the reference card)
    ref = next(x for x in registry.recipes if x.id.endswith("attune-tp2-pp4-split13"))
    assert views.recipe_figures(ref, cat).mfu_peak is None


@pytest.mark.slow
def test_reported_recipe_page_names_its_publication(registry, pages) -> None:  # noqa: ANN001
    reported = _reported(registry, "Llama-3-70B", "H100")
    with_release = next(x for x in reported if x.recipe.publication.release)
    without = next(x for x in reported if not x.recipe.publication.release)  # AutoModel's table names none
    for x, where in ((with_release, "release {r}, {s}, line {n}"), (without, "{s}, line {n}")):
        pub = x.recipe.publication
        where = where.format(r=pub.release, s=pub.system, n=pub.line)
        page = pages[views.recipe_src(x)].content
        assert (f'Figures taken from <a href="{pub.url}" rel="nofollow noopener">{pub.url.rsplit("/", 1)[-1]}</a> '
                f"({where}), not re-measured here.") in page, x.id


def _cells_adjacent(html: str) -> str:
    """The page with the space the templates put between table cells (for readable search snippets) taken out."""
    return re.sub(r"</(td|th)> <(td|th)", r"</\1><\2", html)


@pytest.mark.slow
def test_model_page_compares_layouts_across_releases_and_systems(registry, pages) -> None:  # noqa: ANN001
    page = _cells_adjacent(pages["models/llama-3-70b.md"].content)
    section = page[page.index("## Layouts across releases and systems"):page.index("## Tokens/s per GPU against")]
    header = re.search(r"<thead><tr><th>GPUs</th><th>System</th><th>Precision</th>(.*?)</tr></thead>", section).group(1)
    releases = re.findall(r"<th>([^<]+)</th>", header)
    assert releases == sorted(releases, key=lambda r: tuple(map(int, r.split(".")))) and len(releases) >= 3
    h100 = _reported(registry, "Llama-3-70B", "H100")
    fp8 = [x for x in h100 if x.recipe.workload.precision.value == "fp8-cs" and x.recipe.gpu.count == 64]
    assert len({x.recipe.publication.release for x in fp8}) >= 3  # the same line published in three releases
    row = next(r for r in section.split("<tr>") if r.startswith("<td>64 x H100</td><td>DGX-H100</td><td>fp8-cs</td>"))
    cells = re.findall(r"<td>(.*?)</td>", row, flags=re.S)[3:]
    assert len(cells) == len(releases)
    by_release = {x.recipe.publication.release: x for x in fp8}
    previous = None
    for release, cell in zip(releases, cells, strict=True):
        x = by_release.get(release)
        if x is None:
            assert cell == ""
            continue
        tps = x.recipe.result.tokens_per_s_per_gpu
        assert f'href="{views.href("models/llama-3-70b.md", views.recipe_src(x))}">{fmt.short(tps)}</a>' in cell
        assert f"<small>{x.recipe.layout.label}</small>" in cell
        if previous is not None:
            change = fmt.signed_percent(figures.speedup(previous, tps))
            assert f'<span class="or-change">{change}</span>' in cell
        previous = tps
    # the other systems are lines of the same table
    for gpu in ("GB200", "GB300"):
        assert f"<td>64 x {gpu}</td><td>DGX-{gpu}</td>" in section


def test_speedup_against_the_named_reference(tmp_path: Path) -> None:
    baseline = synthetic(743.4, name="miles")
    tuned = copy.deepcopy(reference_data())
    tuned["correctness"]["reference"] = "gemma-4-31b/h100/miles-tp4-pp2 (miles' layout, TP 4 PP 2)"
    tuned["author"]["name"] = "tuned"
    registry = load_registry(make_registry(tmp_path / "reg", {
        "gemma-4-31b/h100/miles-tp4-pp2": baseline, "gemma-4-31b/h100/tuned": tuned}))
    assert not registry.problems, registry.problems
    pages = render_site(registry)
    assert fmt.speedup(743.4, 1178.1, figures.speedup(743.4, 1178.1)) == "743.4 \u2192 1,178.1, +58%"
    model = _cells_adjacent(pages["models/gemma-4-31b.md"].content)
    assert ('<td><a href="../../recipes/gemma-4-31b/h100/tuned/">tuned</a> (TP2 PP4 DP1)</td>'
            '<td><a href="../../recipes/gemma-4-31b/h100/miles-tp4-pp2/">miles-tp4-pp2</a> (miles layout)</td>'
            '<td class="or-num">743.4 \u2192 1,178.1, +58%</td>') in model
    recipe = pages["recipes/gemma-4-31b/h100/tuned.md"].content
    assert "Against its reference recipe, <a href=\"../miles-tp4-pp2/\">miles-tp4-pp2</a> (miles layout): " \
           "743.4 \u2192 1,178.1, +58% tokens/s per GPU." in recipe
    # prose that names no recipe of the registry (the reference recipe's own) gives no comparison
    assert "## Against the reference recipe" in model
    assert model.count("\u2192") == 1
