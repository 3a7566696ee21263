import hashlib
from pathlib import Path

from suitehelpers import REFERENCE, ROOT

# The reference recipe must stay byte-identical to shared/reference (issue 2).
SHARED = ROOT.parent / "shared/reference/recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
# sha256 of the shared file, pinned so that a clone without ../shared still checks the bytes
PINNED = "4c0f501e44f8f227c4b6d9fac38b18b53f1445e3c8850365697698031857fa05"


def test_reference_bytes_match_shared_copy() -> None:
    digest = hashlib.sha256(REFERENCE.read_bytes()).hexdigest()
    assert digest == PINNED, digest
    if SHARED.exists():
        assert REFERENCE.read_bytes() == SHARED.read_bytes()


def test_reference_loads_and_checks_clean() -> None:
    from suitehelpers import check_registry

    from generator.registry import load_registry

    registry = load_registry(ROOT, [REFERENCE])
    assert [r.id for r in registry.recipes] == ["gemma-4-31b/h100/attune-tp2-pp4-split13"]
    assert check_registry(registry) == []
    recipe = registry.recipes[0].recipe
    assert recipe.result.tokens_per_s_per_gpu == 1178.1
    assert recipe.layout.layer_split.first == 13 and recipe.layout.layer_split.last == 15
    assert Path(registry.recipes[0].display) == Path("recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml")
