"""The reference recipe's card, rendered by the pure renderer, reads exactly as card.txt."""

from __future__ import annotations

import pytest
from sitehelpers import GOLDEN_CARD, ROOT, card_text

from generator.site import formatting as fmt
from generator.site import render_card
from generator.site.render import environment

REFERENCE_ID = "gemma-4-31b/h100/attune-tp2-pp4-split13"


@pytest.fixture(scope="module")
def registry(committed):  # noqa: ANN001, ANN201
    return committed


def _reference(registry):
    return next(x for x in registry.recipes if x.id == REFERENCE_ID)


@pytest.mark.slow
def test_card_matches_golden_text(registry) -> None:
    html = render_card(environment(), _reference(registry), registry)
    assert card_text(html) == GOLDEN_CARD.read_text(encoding="utf-8").rstrip("\n")


def test_golden_is_the_shared_reference() -> None:
    shared = ROOT.parent / "shared/reference/card.txt"
    if not shared.exists():
        pytest.skip("../shared/reference is not next to this checkout (a CI clone)")
    assert GOLDEN_CARD.read_bytes() == shared.read_bytes()


@pytest.mark.slow
def test_author_cite_links_the_author_url(registry) -> None:
    html = render_card(environment(), _reference(registry), registry)
    assert 'ATTUNE (<a href="https://arxiv.org/abs/2610.17528" rel="nofollow noopener">cite</a>)' in html


@pytest.mark.slow
def test_recipe_page_embeds_the_card(committed_pages) -> None:  # noqa: ANN001
    pages = committed_pages
    page = pages[f"recipes/{REFERENCE_ID}.md"]
    assert card_text(page.content) == GOLDEN_CARD.read_text(encoding="utf-8").rstrip("\n")
    assert page.title == "Training Gemma-4-31B on H100 · TP2 PP4 DP1"
    for section in ("## Layout", "## Stack", "## Workload and dataset", "## Correctness", "## Notes", "## Source"):
        assert section in page.content
    # the pipeline split per stage: 13/16/16/15 of 60 layers
    for stage in ("0–12", "13–28", "29–44", "45–59"):
        assert stage in page.content


@pytest.mark.parametrize(("value", "expected"), [(1178.1, "1,178.10"), (743.4, "743.40"), (12.0, "12.00")])
def test_tokens_per_s(value: float, expected: str) -> None:
    assert fmt.tokens_per_s(value) == expected


def test_formatting_rules() -> None:
    assert fmt.usd(1.6229) == "$1.62"
    assert fmt.usd(1234.5) == "$1,234.50"
    assert fmt.mfu(0.21939, 30696013824) == "21.9% (N = 30,696,013,824 active parameters per token)"
    assert fmt.percent_value(2.19) == "2.19%"
    assert fmt.convergence(0.98649, 0.0091, 1, 1) == (
        "correlation 0.98649, final loss difference 0.0091, 1 pointwise failure over 1 step")
    assert fmt.gpus(16, "H200", 141, 8, None) == "16 x H200 141 GB (8 per node)"
    assert fmt.rows(None, "synthetic tokens", None, "x") == "synthetic tokens"


def test_unsafe_urls_do_not_become_links() -> None:
    for url in ("javascript:alert(1)", "data:text/html,x", "//evil.example", "JaVaScRiPt:alert(1)",
                "https://ok.example/a b", "vbscript:x"):
        assert fmt.safe_url(url) is None
    assert fmt.safe_url("https://arxiv.org/abs/2610.17528") == "https://arxiv.org/abs/2610.17528"


@pytest.mark.slow
def test_renderer_does_not_import_mkdocs() -> None:
    import subprocess
    import sys

    # Two models' recipes (measured and reported ones, every kind of page), not all 2,000-odd: the renderer imports at
    # module level (its one import inside a function is generator.site.live), so the size renders nothing else.
    code = ("import sys; from pathlib import Path; from generator.registry import load_registry; "
            "from generator.site import render_site; "
            "paths = [p for m in ('gemma-4-31b', 'llama-3-70b') for p in sorted(Path('recipes', m).rglob('*.yaml'))]; "
            "render_site(load_registry(Path('.'), paths)); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'material', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_every_page_is_markdown_with_a_title(committed_pages) -> None:  # noqa: ANN001
    pages = committed_pages
    for path, page in pages.items():
        if path.endswith(".md"):
            assert page.title and page.content.startswith("---\ntitle: ")
    assert {"index.md", "recipes.md", "methodology.md", "schema.md", "models/index.md", "gpus/index.md",
            "downloads/recipes.json", "downloads/recipes.csv", "downloads/recipe.schema.json"} <= set(pages)
