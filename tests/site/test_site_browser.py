"""The built site in Debian's Chromium (Playwright), served on localhost by a real http.server."""

from __future__ import annotations

import pytest
from sitehelpers import (
    GOLDEN_CARD,
    ROOT,
    XSS_ID,
    free_port,
    make_registry,
    remeasured,
    static_server,
    synthetic,
    xss_recipe,
)
from suitehelpers import mkdocs_build, site_project

pytestmark = pytest.mark.browser
REF = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13/"
REPORTED = "llama-3-70b/h100/mb-25.11-dgx-h100-64gpu-fp8-cs"  # a committed reported recipe
ROWS = 7  # the recipes of the test site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    tmp = tmp_path_factory.mktemp("browser")
    registry = make_registry(tmp / "reg", {
        "gemma-4-31b/h100/fast-dp2": synthetic(1500.5, count=16, name="fast"),
        "gemma-4-31b/h200/h200-run": synthetic(900.25, name="h200", gpu="H200"),
        "gemma-4-31b/h100/slow-run": synthetic(600.75, name="slow"),
        XSS_ID: xss_recipe(),
    })
    (registry / "recipes" / REPORTED).parent.mkdir(parents=True)
    (registry / "recipes" / f"{REPORTED}.yaml").write_bytes((ROOT / "recipes" / f"{REPORTED}.yaml").read_bytes())
    remeasured(registry, "remeasured")
    result = mkdocs_build(site_project(tmp, registry), tmp / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    port = free_port()
    with static_server(tmp / "out", port) as base:
        yield base


@pytest.fixture
def page(new_page, site):  # noqa: ANN001, ANN201
    return new_page(site)


def test_reference_card_reads_as_card_txt(page) -> None:  # noqa: ANN001
    page.goto(REF)
    blocks = page.eval_on_selector_all("#card h1, #card dt, #card dd, #card pre code",
                                       "els => els.map(e => e.tagName === 'CODE' ? e.innerText : e.innerText.trim())")
    assert "\n\n".join(b.rstrip("\n") for b in blocks) == GOLDEN_CARD.read_text().rstrip("\n")
    for value in ("1,178.10", "$1.62", "21.9% (N = 30,696,013,824 active parameters per token)", "2.19%", "5.69"):
        assert page.get_by_text(value, exact=True).first.is_visible()
    assert page.locator("#card a", has_text="cite").get_attribute("href") == "https://arxiv.org/abs/2610.17528"


def _tokens(page) -> list[float]:  # noqa: ANN001
    column = page.eval_on_selector_all("#or-recipes thead th", "els => els.map(e => e.innerText.trim())").index(
        "Tokens/s per GPU") + 1
    return page.eval_on_selector_all(f"#or-recipes tbody tr:not([hidden]) td:nth-child({column})",
                                     "els => els.map(e => parseFloat(e.dataset.sort))")


def test_sorting_by_tokens_reorders_rows(page) -> None:  # noqa: ANN001
    page.goto("recipes/")
    header = page.locator("#or-recipes th", has_text="Tokens/s per GPU")
    header.click()
    first = _tokens(page)
    header.click()
    second = _tokens(page)
    assert len(first) == ROWS and first != second
    assert sorted(first) in (first, first[::-1]) and second == first[::-1]
    page.locator("#or-recipes th", has_text="Recipe").click()
    names = page.eval_on_selector_all("#or-recipes tbody tr td:first-child", "els => els.map(e => e.innerText)")
    assert names in (sorted(names), sorted(names, reverse=True)) and _tokens(page) not in (first, second)


def test_gpu_filter_narrows_the_table(page) -> None:  # noqa: ANN001
    page.goto("recipes/")
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == ROWS
    page.select_option("select[data-or-filter=gpu_type]", "H200")
    rows = page.locator("#or-recipes tbody tr:not([hidden])")
    assert rows.count() == 1 and rows.first.get_attribute("data-gpu_type") == "H200"
    assert page.locator("[data-or-count]").inner_text() == f"1 of {ROWS} recipes"
    page.select_option("select[data-or-filter=gpu_type]", "")
    page.select_option("select[data-or-filter=gpu_count]", "16")
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == 1
    page.select_option("select[data-or-filter=gpu_count]", "")
    page.fill("[data-or-filter-text]", "slow")
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == 1


def test_filters_survive_instant_navigation(page) -> None:  # noqa: ANN001
    page.goto(REF)
    page.locator(".md-tabs a", has_text="All recipes").first.click()  # the tabs: data pages hide the sidebar
    page.wait_for_selector("#or-recipes[data-or-ready]")  # its script's set-up done (main.js), not only swapped in
    page.select_option("select[data-or-filter=gpu_type]", "H200")
    assert page.locator("#or-recipes tbody tr:not([hidden])").count() == 1


def test_search_finds_the_recipe(page) -> None:  # noqa: ANN001
    page.goto("")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    result = page.locator(".md-search-result__link[href*='attune-tp2-pp4-split13']").first
    # The index loads in a worker: a query typed before it is ready may go unanswered, so type again.
    for _ in range(30):
        page.fill("input.md-search__input", "")
        page.type("input.md-search__input", "attune")
        try:
            result.wait_for(timeout=1000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; retried
            continue
    assert result.is_visible()
    assert "Training Gemma-4-31B on H100" in page.locator(".md-search-result").inner_text()


def test_copy_button_copies_the_run_command(page, site) -> None:  # noqa: ANN001
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.rstrip("/"))
    page.goto(REF)
    page.locator("#card button[data-md-type=copy]").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    run = GOLDEN_CARD.read_text().split("\n\nexport CUDA_DEVICE_MAX_CONNECTIONS=1", 1)[1]
    assert copied.rstrip("\n") == ("export CUDA_DEVICE_MAX_CONNECTIONS=1" + run).rstrip("\n")


def test_model_chart_renders(page) -> None:  # noqa: ANN001
    page.goto("models/gemma-4-31b/")
    canvas = page.locator("canvas[data-or-chart-drawn]").first  # model pages have two charts (issue 17 item 8)
    canvas.wait_for()
    assert page.evaluate("() => !!Chart.getChart(document.querySelector('canvas[data-or-chart]'))")


def test_xss_probe_is_inert_in_the_browser(page) -> None:  # noqa: ANN001
    page.goto(f"recipes/{XSS_ID}/")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss === undefined")
    assert page.locator("#card h1").inner_text() == "Training Gemma-4-31B on H100"
    page.goto("recipes/")
    page.fill("[data-or-filter-text]", "script")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.fill("input.md-search__input", "xss")
    page.wait_for_timeout(1000)
    assert page.evaluate("window.__xss === undefined")


def test_published_rows_filter_apart_and_link_their_source(page) -> None:  # noqa: ANN001
    page.goto("recipes/")
    page.select_option("select[data-or-filter=origin]", "published")
    rows = page.locator("#or-recipes tbody tr:not([hidden])")
    assert rows.count() == 1 and rows.first.get_attribute("data-status") == "reported"
    source = rows.first.locator("a.or-source")
    assert source.is_visible() and source.get_attribute("href").startswith("https://github.com/NVIDIA-NeMo/")
    assert "(FP8 peak)" in rows.first.inner_text()
    page.select_option("select[data-or-filter=origin]", "measured here")
    statuses = page.eval_on_selector_all("#or-recipes tbody tr:not([hidden])", "els => els.map(e => e.dataset.status)")
    assert len(statuses) == ROWS - 1 and "reported" not in statuses


def test_evidence_charts_render(page) -> None:  # noqa: ANN001
    page.goto("recipes/gemma-4-31b/h100/remeasured/")
    for kind in ("steps", "history"):
        canvas = page.locator(f"canvas[data-or-chart-kind={kind}][data-or-chart-drawn]")
        canvas.wait_for()
        assert canvas.is_visible()
        points = page.evaluate(f"""() => Chart.getChart(document.querySelector('canvas[data-or-chart-kind={kind}]'))
                                   .data.datasets.map(d => d.data.length)""")
        assert points and all(n > 0 for n in points), points
    assert page.locator("#or-history tbody tr").count() == 3
