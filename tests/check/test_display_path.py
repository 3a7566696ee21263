"""registry.display_path and the depth rule compute pathlib's absolute().relative_to() on strings (a third of a warm
re-check was pathlib objects); whatever the paths, they answer as pathlib does."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generator import evidence
from generator.registry import _absolute, _parts_below, display_path, recipe_files

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
    assert _parts_below(_absolute(path), _absolute(base)) == parts


def test_the_working_folder_itself(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    assert display_path(Path("recipes/m/g/r.yaml"), Path(".")) == "recipes/m/g/r.yaml"
    assert display_path(tmp_path / "recipes/m/g/r.yaml", Path(".")) == "recipes/m/g/r.yaml"
    assert _parts_below(_absolute(Path("elsewhere.yaml")), _absolute(Path("recipes"))) is None


NAME = st.text(alphabet="ab-._ é", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(NAME)
def test_the_sidecar_path_on_strings_is_pathlibs(name: str) -> None:
    """evidence.text_path_for (the warm re-check's) names the sidecar pathlib's with_name(stem + SUFFIX) does."""
    for recipe in (Path(name), Path("/r/recipes/m/g") / name, Path("recipes") / name):
        assert evidence.text_path_for(str(recipe)) == str(recipe.with_name(recipe.stem + evidence.SUFFIX))


def test_the_walk_lists_files_in_pathlibs_order(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The walk sorts strings as pathlib sorts Paths (part by part): "m-x" sorts before "m/..." as strings, after it
    as parts; files of a folder and its subfolders interleave by name. From "." as from an absolute root."""
    names = ["m/g/a.yaml", "m-x/g/a.yaml", "m/g-2/b.yml", "m/g/a-b.yaml", "m/g/a.b.yaml", "m.z/a.YAML", "m/zz.yaml",
             "m/a/b/c.yaml", "n/readme.md"]
    for name in names:
        (tmp_path / "recipes" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "recipes" / name).write_text("")
    expected = sorted((tmp_path / "recipes").rglob("*.[yY]*[lL]"))
    assert recipe_files(tmp_path) == expected
    assert len(expected) == len(names) - 1
    monkeypatch.chdir(tmp_path / "recipes")
    assert recipe_files(tmp_path, [Path(".")]) == sorted(p.relative_to(tmp_path / "recipes") for p in expected)
    assert all(".." not in str(p) and not str(p).startswith(".") for p in recipe_files(tmp_path, [Path(".")]))
