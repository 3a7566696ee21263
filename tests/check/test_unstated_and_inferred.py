"""What a source does not state stays unstated: `layout.recompute: null` passes check and reads "not stated" on the
card; `inferred` lists the fields a recipe infers, each naming a field the recipe sets, once, with its reason."""

from __future__ import annotations

from pathlib import Path

from recipe_edits import edited_registry
from suitehelpers import check_registry

from generator.registry import load_registry
from generator.site import views

# A Megatron-Bridge row of release 25.09: its table has no precision column, so its precision is inferred.
MB_2509 = "recipes/deepseek-v3/b200/mb-25.09-dgx-b200-256gpu-fp8-cs-tokendrop.yaml"


def test_recompute_not_stated_passes_check_and_reads_not_stated(tmp_path: Path) -> None:
    registry = load_registry(edited_registry(tmp_path, MB_2509, []))
    assert registry.problems == [] and check_registry(registry) == []
    loaded = registry.recipes[0]
    assert loaded.recipe.layout.recompute is None
    assert ("Recompute", "not stated") in views.layout_rows(loaded, registry.catalog)
    assert [i.field for i in loaded.recipe.inferred] == ["layout.sequence_parallel", "workload.precision",
                                                         "layout.pipeline_layout"]


def test_an_inferred_field_the_recipe_does_not_set_is_a_located_problem(tmp_path: Path) -> None:
    registry = load_registry(edited_registry(tmp_path, MB_2509, [
        ("- field: workload.precision\n", "- field: workload.dataset\n")]))
    problems = check_registry(registry)
    assert [(p.field, p.message) for p in problems] == [
        ("inferred.1.field", "workload.dataset names no field this recipe sets (an unstated setting is null, not "
                             "inferred)")]
    text = (tmp_path / MB_2509).read_text(encoding="utf-8").splitlines()
    assert text[problems[0].line - 1].strip() == "- field: workload.dataset"


def test_a_field_listed_twice_and_a_malformed_path_are_refused(tmp_path: Path) -> None:
    registry = load_registry(edited_registry(tmp_path / "twice", MB_2509, [
        ("- field: workload.precision\n", "- field: layout.sequence_parallel\n")]))
    assert [p.message for p in check_registry(registry)] == ["layout.sequence_parallel is listed as inferred twice"]
    registry = load_registry(edited_registry(tmp_path / "bad", MB_2509, [
        ("- field: workload.precision\n", "- field: Workload precision\n")]))
    assert [p.field for p in registry.problems] == ["inferred[1].field"]


def test_recompute_stated_as_none_is_not_the_same_as_not_stated(tmp_path: Path) -> None:
    registry = load_registry(edited_registry(tmp_path, MB_2509, [
        ("  recompute: null\n", "  recompute:\n    granularity: none\n")]))
    assert check_registry(registry) == []
    assert ("Recompute", "none") in views.layout_rows(registry.recipes[0], registry.catalog)


def test_a_moe_recipe_without_a_dispatcher_has_not_stated_it(committed) -> None:  # noqa: ANN001
    """Only a dense model has no MoE dispatcher: a mixture-of-experts recipe that names none shows "not stated"."""
    def dispatcher(loaded) -> str:  # noqa: ANN001
        return dict(views.layout_rows(loaded, committed.catalog))["MoE dispatcher"]

    def moe(loaded) -> bool:  # noqa: ANN001
        card = committed.catalog.models[loaded.recipe.model]
        return card.architecture is not None and card.architecture.moe is not None

    silent_moe = [x for x in committed.recipes if moe(x) and x.recipe.layout.dispatcher is None]
    dense = [x for x in committed.recipes if not moe(x)]
    assert silent_moe and dense
    assert {dispatcher(x) for x in silent_moe} == {"not stated"}
    assert {dispatcher(x) for x in dense if x.recipe.layout.dispatcher is None} == {"none (dense model)"}
