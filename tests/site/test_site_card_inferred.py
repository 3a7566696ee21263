"""A recipe's card lists what its recipe infers (`inferred:`, field and reason), after its other rows; the reference
recipe infers nothing, and its card stays as card.txt (test_site_card)."""

from __future__ import annotations

import yaml
from sitehelpers import ROOT, card_text, make_registry

from generator.registry import load_registry
from generator.site import render_card
from generator.site.render import environment

# A committed Megatron-Bridge 25.09 recipe: its table states neither sequence parallelism nor the precision's scaling.
RECIPE = "llama-3-8b/gb200/mb-25.09-dgx-gb200-8gpu-fp8-mx"


def test_card_lists_each_inferred_field_with_its_reason(tmp_path) -> None:  # noqa: ANN001
    data = yaml.safe_load((ROOT / "recipes" / f"{RECIPE}.yaml").read_text(encoding="utf-8"))
    stated = [(x["field"], x["reason"]) for x in data["inferred"]]
    assert [field for field, _ in stated] == ["layout.sequence_parallel", "workload.precision"]
    registry = load_registry(make_registry(tmp_path, {RECIPE: data}))
    loaded = next(x for x in registry.recipes if x.id == RECIPE)
    blocks = card_text(render_card(environment(), loaded, registry)).split("\n\n")
    pairs = list(zip(blocks[1::2], blocks[2::2], strict=False))  # (label, value) after the title
    assert [value for label, value in pairs if label == "Inferred"] == [f"{f}: {r}" for f, r in stated]
    assert pairs[-len(stated):] == [("Inferred", f"{f}: {r}") for f, r in stated]  # after every other row


def test_a_recipe_without_inferred_values_has_no_such_row(tmp_path) -> None:  # noqa: ANN001
    registry = load_registry(make_registry(tmp_path))
    (reference,) = registry.recipes
    assert not reference.recipe.inferred
    assert "Inferred" not in card_text(render_card(environment(), reference, registry))
