"""Screenshots of the built site in Chromium, the first screen of each page at 1400 and 390 px.

    .venv/bin/python benchmarks/site_screenshots.py SITE_DIR OUT_DIR

SITE_DIR is a built site (for example from the committed registry, as tests/site/conftest.py builds it once per test run). Pages:
home, all recipes (also with a budget and a filter, and after "Show all" scrolled to its middle), the reference recipe
(also at a price of one's own), a recipe with inferred values and one's comparable MFU rows, a model page
(its top, its run planner for 64 H100 at $2.10 and 1T tokens, its charts), failed layouts, a GPU page and its
scaling chart, the methodology, layouts nobody measured (a model family's, the run planner's, a GPU page's, a model
the advisor refuses) and a compare
view of three recipes (also one of three that are not like with like). For each
shot it prints whether the page scrolls sideways (document wider than the window), the issue's phone promise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from site_scale import static_server  # benchmarks/: the static server of site_scale.py

REF_ID = "gemma-4-31b/h100/attune-tp2-pp4-split13"
PLAN = "plan.gpu=H100&plan.n=64&p.H100=2.10&budget=1T"
PAGES = {
    "home": "",
    "recipes": "recipes/",
    "recipes-budget": "recipes/?budget=1T&training=lora",
    "recipes-shared": "recipes/?gpu_type=H100&text=fp8&sort=usd&dir=asc",  # a shared link's view
    "recipe": f"recipes/{REF_ID}/",
    "recipe-priced": f"recipes/{REF_ID}/?{PLAN}",
    "model": "models/llama-3-70b/",
    "model-plan": f"models/llama-3-70b/?{PLAN}#plan-a-run",
    "model-charts": "models/llama-3-70b/#tokenss-per-gpu-against-gpu-count",
    "model-failed": "models/playbook-llama-80b/#what-failed-next-to-what-worked",
    # The best-layout tables, their figures first (on a phone, with the cue naming the columns out of view).
    "model-best": "models/llama-3-70b/",
    "gpu-best": "gpus/h100/",
    # The top of a model page with failed layouts: the link to them, before the first table.
    "model-failed-top": "models/playbook-llama-8b/",
    "gpu": "gpus/h100/",
    "gpu-charts": "gpus/h100/#tokenss-per-gpu-against-gpu-count",
    "methodology": "methodology/",
    # MLPerf Training's time-to-train rows: a recipe page, an AMD GPU page, the model page where they meet NeMo's
    "recipe-mlperf": "recipes/llama-2-70b/mi355x/mlperf-v5.1-amd-mi355x-epyc-9575f-pytorch/",
    "recipe-mlperf-ttt": "recipes/llama-2-70b/mi355x/mlperf-v5.1-amd-mi355x-epyc-9575f-pytorch/#time-to-train",
    "gpu-amd": "gpus/mi355x/",
    "model-mlperf": "models/llama-2-70b/",
    "model-mlperf-plan": f"models/llama-2-70b/?{PLAN}#plan-a-run",
    "recipes-mlperf": "recipes/?model=Llama-2-70B&gpu_type=H100",
    # After "Show all", scrolled into the middle of the windowed table (rowwindow.js).
    "recipes-all": "recipes/",
    # A card with inferred values (its last rows), and a page's figures with the comparable MFU rows.
    "recipe-inferred": "recipes/llama-3-8b/gb200/mb-25.09-dgx-gb200-8gpu-fp8-mx/",
    "recipe-figures": "recipes/llama-3-8b/b200/mb-25.09-dgx-b200-8gpu-fp8-cs/#figures",
    # A publication's MFU beside ours, each with its FLOP count a token (DGX Cloud's 62.47% against our 52.04%).
    "recipe-published-mfu": "recipes/llama-3.1-8b/h100/dgxc-unstated-pretrain-8gpu-bf16/#figures",
    # Search, opened and answered: the index is fetched when the reader reaches for it (search-on-demand.js).
    "search": "methodology/",
    # The reference (8 H100, 8,192 tokens per row) against MPT-30B's fastest H100 recipes (32 and 16 GPUs at 2,048):
    # not like with like, and the nearest like-with-like MPT-30B recipe offered for each.
    # Frameworks side by side: named from the stated text (kept under the name), each figure's runs and what its
    # convergence check compared against; our own three frameworks, and MLPerf's rows beside NVIDIA's summaries.
    "model-frameworks": "models/llama-3.2-1b/#frameworks-side-by-side",
    "model-frameworks-mlperf": "models/llama-2-70b/#frameworks-side-by-side",
    "compare-unlike": f"compare/?ids={REF_ID},mpt-30b/h100/foundry-bf16-s2048-32gpu-gbs1344,"
                      "mpt-30b/h100/foundry-bf16-s2048-16gpu-gbs480",
    # Layouts nobody measured (the layout advisor's, PREDICTED): a model family's section, the run planner's question
    # beside its answer and its predicted table after the measured recipes, a GPU page's section, a refused model.
    "model-predicted": "models/llama-3.1-70b/#layouts-nobody-measured-predicted",
    "model-plan-family": f"models/llama-3.1-70b/?{PLAN}#plan-a-run",
    "model-plan-predicted": f"models/llama-3.1-70b/?{PLAN}",
    "gpu-predicted": "gpus/h100/#layouts-nobody-measured-predicted",
    "model-refused": "models/mixtral-8x7b/#layouts-nobody-measured-predicted",
}
# What a shot does on its page before it is taken (JavaScript, awaited).
ACTIONS = {
    "recipes-all": """async () => {
        document.querySelector('button[data-or-show-all]').click();
        await new Promise(r => setTimeout(r, 300));
        const t = document.getElementById('or-recipes').getBoundingClientRect();
        window.scrollTo(0, window.scrollY + t.top + t.height / 2);
    }""",
    "recipe-inferred": """() => {
        const dts = [...document.querySelectorAll('#card dt')].filter(d => d.textContent === 'Inferred');
        dts[dts.length - 1].scrollIntoView({block: 'end'}); }""",
    "compare-unlike": """async () => {
        for (let i = 0; i < 50 && document.querySelectorAll('[data-or-nearest]').length < 2; i++)
            await new Promise(r => setTimeout(r, 100));
    }""",
    "model-plan-predicted": """() => {
        document.querySelector('[data-or-planner-predicted]').scrollIntoView({block: 'start'}); window.scrollBy(0, -60); }""",
    "model-best": """() => { document.getElementById('or-best').scrollIntoView({block: 'start'}); window.scrollBy(0, -90); }""",
    "gpu-best": """() => { document.getElementById('or-best').scrollIntoView({block: 'start'}); window.scrollBy(0, -90); }""",
    "model-failed": """() => {
        document.querySelector('details.or-failed-list').open = true;
        document.getElementById('or-failed-distinct').scrollIntoView({block: 'start'}); }""",
    "search": """async () => {
        const toggle = document.getElementById('__search'), input = document.querySelector('.md-search__input');
        toggle.checked = true;
        toggle.dispatchEvent(new Event('change', {bubbles: true}));
        input.focus();
        input.value = 'attune';
        input.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true}));
        for (let i = 0; i < 150 && !document.querySelector('.md-search-result__item'); i++)
            await new Promise(r => setTimeout(r, 100));
    }""",
}
WIDTHS = {1400: 900, 390: 844}


def _compare_ids(page) -> list[str]:  # noqa: ANN001
    """Three recipes of the all-recipes table, as a user would tick them (the first rows shown)."""
    page.goto("recipes/")
    return page.eval_on_selector_all("#or-recipes tbody tr:not([hidden])", "rs => rs.slice(0, 3).map(r => r.dataset.orRecipe)")


def shoot(site: Path, out: Path, only: list[str] | None = None) -> list[str]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    server, port = static_server(site)
    lines = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            for width, height in WIDTHS.items():
                context = browser.new_context(base_url=f"http://127.0.0.1:{port}/",
                                              viewport={"width": width, "height": height})
                page = context.new_page()
                pages = dict(PAGES, compare="compare/?ids=" + ",".join(_compare_ids(page)))
                pages = {k: v for k, v in pages.items() if not only or k in only}
                for name, url in pages.items():
                    page.goto(url)
                    page.wait_for_load_state("networkidle")
                    # charts drawn (Chart.js is fetched by a page with a chart, after its table's set-up), rows filled
                    page.wait_for_function("""() => [...document.querySelectorAll('canvas[data-or-chart]')]
                        .every(c => c.hasAttribute('data-or-chart-drawn'))""", timeout=10000)
                    if name in ACTIONS:
                        page.evaluate(ACTIONS[name])
                    page.wait_for_timeout(400)
                    wide = page.evaluate("document.scrollingElement.scrollWidth")
                    path = out / f"{name}-{width}.png"
                    page.screenshot(path=str(path))
                    lines.append(f"{path.name}: document {wide} px wide in a {width} px window"
                                 f"{' (scrolls sideways)' if wide > width else ''}")
                context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="+", metavar="NAME", help=f"only these shots, of: {', '.join(PAGES)}, compare")
    args = parser.parse_args()
    print("\n".join(shoot(args.site, args.out, args.only)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
