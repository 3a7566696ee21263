"""Every importer states no more than its source: recompute null where the source is silent, workload.training
where the source's section states the kind (absent where it does not), and every inferred value listed with its
reason. Counted over the committed recipes, which are the importers' output (each importer's own test re-imports)."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

from suitehelpers import read_yaml

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def reported() -> dict[str, dict]:
    out = {}
    for path in sorted(ROOT.glob("recipes/*/*/*.yaml")):
        recipe = read_yaml(path)
        if recipe["status"] == "reported":
            out[str(path.relative_to(ROOT))] = recipe
    return out


def _by_prefix(prefix: str) -> dict[str, dict]:
    return {p: r for p, r in reported().items() if Path(p).name.startswith(prefix)}


def test_recompute_is_null_where_the_source_is_silent() -> None:
    """Megatron-Bridge, AutoModel and the playbook state no recompute: 287 + 13 + 1,721 recipes. torchtitan's
    captions and llm-foundry's table state activation checkpointing: stated there (torchtitan's one H200 setup read
    from the train config is listed as inferred)."""
    silent = {"mb-": 287, "automodel-": 13, "pb-": 1721}
    for prefix, count in silent.items():
        recipes = _by_prefix(prefix)
        assert len(recipes) == count, prefix
        assert all(r["layout"]["recompute"] is None for r in recipes.values()), prefix
    for prefix in ("titan-", "foundry-"):
        assert all(r["layout"]["recompute"] is not None for r in _by_prefix(prefix).values()), prefix


def test_training_is_written_where_the_section_states_it() -> None:
    mb = Counter(r["workload"].get("training") for r in _by_prefix("mb-").values())
    assert mb == {"pre-training": 277, "sft": 5, "lora": 5}
    automodel = Counter(r["workload"].get("training") for r in _by_prefix("automodel-").values())
    assert automodel == {"pre-training": 7, "lora": 6}
    # The playbook's figure, torchtitan's benchmarks and llm-foundry's table do not name the kind: not stated.
    for prefix in ("pb-", "titan-", "foundry-"):
        assert all("training" not in r["workload"] for r in _by_prefix(prefix).values()), prefix


def test_the_25_09_precision_is_listed_as_inferred() -> None:
    """Release 25.09's table has no precision column: its 26 recipes (after superseding) infer it from a footnote."""
    inferred = {p: r for p, r in _by_prefix("mb-").items()
                if any(i["field"] == "workload.precision" for i in r.get("inferred", []))}
    assert len(inferred) == 26
    assert {r["publication"]["release"] for r in inferred.values()} == {"25.09"}
    reasons = {i["reason"] for r in inferred.values() for i in r["inferred"] if i["field"] == "workload.precision"}
    assert all(reason.startswith("the 25.09 table has no Precision column") for reason in reasons)


def test_torchtitans_pipeline_micro_batches_are_listed_as_inferred() -> None:
    titan = _by_prefix("titan-")
    piped = {p: r for p, r in titan.items() if r["layout"]["pp"] > 1}
    assert piped
    for path, recipe in piped.items():
        fields = {i["field"] for i in recipe["inferred"]}
        assert {"layout.gradient_accumulation", "layout.rows_per_microbatch"} <= fields, path
        ga = next(i for i in recipe["inferred"] if i["field"] == "layout.gradient_accumulation")
        assert f"{recipe['layout']['pp']} micro-batches per step" in ga["reason"]
    for path, recipe in titan.items():
        if recipe["layout"]["pp"] == 1:
            assert not any(i["field"].startswith("layout.gradient") for i in recipe.get("inferred", [])), path
