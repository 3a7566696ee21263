"""figures.comparable_mfu on the site: a recipe page shows 6N MFU over the dense BF16 peak and Megatron's count (with
the causal attention term) over the row's peak and BF16's, each labelled with its convention, and recipes.csv carries
the three as columns. Hand figures for a committed Llama-3-8B FP8 row (tests/test_figures_comparable_mfu.py holds
the count): 29,994 tokens/s per GPU on B200; 6N = 48,181,567,488 FLOPs a token over BF16's 2,250 TFLOP/s = 64.23%;
Megatron's 51,470,401,536 over FP8's 4,500 = 34.31%, over BF16 68.61%; the attention term 13.37% of 6N."""

from __future__ import annotations

import csv
import html
import io
import re

import yaml
from sitehelpers import ROOT, make_registry

from generator import figures
from generator.registry import load_registry
from generator.site import render_site

RECIPE = "llama-3-8b/b200/mb-25.09-dgx-b200-8gpu-fp8-cs"


def test_recipe_page_and_csv_carry_comparable_mfu(tmp_path) -> None:  # noqa: ANN001
    data = yaml.safe_load((ROOT / "recipes" / f"{RECIPE}.yaml").read_text(encoding="utf-8"))
    registry = load_registry(make_registry(tmp_path, {RECIPE: data}))
    pages = render_site(registry)
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", pages[f"recipes/{RECIPE}.md"].content)))
    assert "MFU over the BF16 peak 64.23%: 6N FLOPs a token over the GPU's dense BF16 peak, whatever the precision" in text
    assert ("MFU with causal attention 34.31% of the FP8 peak, 68.61% of the BF16 peak: Megatron's FLOP count (every "
            "matrix product and the causal attention term, 13.4% on top of 6N;") in text
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(pages["downloads/recipes.csv"].content))}
    loaded = next(x for x in registry.recipes if x.id == RECIPE)
    c = figures.comparable_mfu(loaded.recipe, registry.catalog)
    got = [float(rows[RECIPE][k]) for k in ("mfu_6n_bf16", "mfu_megatron", "mfu_megatron_bf16")]
    assert got == [c.six_n_bf16, c.megatron, c.megatron_bf16]
    assert [round(x, 4) for x in got] == [0.6423, 0.3431, 0.6861]
