"""registry.display_path and the depth rule compute pathlib's absolute().relative_to() on strings (a third of a warm
re-check was pathlib objects); whatever the paths, they answer as pathlib does."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.registry import _parts_below, display_path

PART = st.sampled_from(["recipes", "a", "b.yaml", "..", ".", "main", "work", "x y", "é"])
PATH = st.builds(lambda absolute, parts: Path("/" if absolute else ".", *parts), st.booleans(),
                 st.lists(PART, max_size=5))


def _pathlib(path: Path, base: Path) -> tuple[str, tuple[str, ...] | None]:
    try:
        rel = path.absolute().relative_to(base.absolute())
    except ValueError:
        return str(path), None
    return str(rel), rel.parts


@settings(max_examples=400, deadline=None, derandomize=True)
@given(PATH, PATH)
def test_display_path_and_parts_answer_as_pathlib(path: Path, base: Path) -> None:
    shown, parts = _pathlib(path, base)
    assert display_path(path, base) == shown
    assert _parts_below(path, base) == parts


def test_the_working_folder_itself(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    assert display_path(Path("recipes/m/g/r.yaml"), Path(".")) == "recipes/m/g/r.yaml"
    assert display_path(tmp_path / "recipes/m/g/r.yaml", Path(".")) == "recipes/m/g/r.yaml"
    assert _parts_below(Path("elsewhere.yaml"), Path("recipes")) is None
