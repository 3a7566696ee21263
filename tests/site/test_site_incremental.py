"""What makes a rebuild under `mkdocs serve` fast must not change what it builds: memoised renders equal fresh
ones after edits, recipes.json is exactly json.dumps' output, a dirty build's search index is the whole site's,
and the index tables stay off the search index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from sitehelpers import make_registry, synthetic
from suitehelpers import mkdocs_build, site_project

from generator.registry import load_registry
from generator.site import render_site
from generator.site.live import merge_search_entries, write_if_changed
from generator.site.serve import ServeState

FAST = "gemma-4-31b/h100/fast-dp2"
SLOW = "gemma-4-31b/h200/slow-run"


def _fresh(root: Path) -> dict[str, str]:
    return {path: page.content for path, page in render_site(load_registry(root), state=ServeState()).items()}


def _edit(path: Path, change) -> None:  # noqa: ANN001
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


@pytest.mark.slow
def test_memoised_render_equals_a_fresh_one_after_edits(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", {FAST: synthetic(1500.5, count=16, name="fast"),
                                            SLOW: synthetic(900.25, name="slow", gpu="H200")})
    state = ServeState()  # what the hook keeps between mkdocs serve rebuilds
    render_site(load_registry(root), state=state)  # warms the memo
    edits = [
        # a figure: its rows move in every table, the home page's best changes, its page and exports change
        lambda d: d["result"].update(tokens_per_s_per_gpu=4321.5),
        # text shown only on its page and in recipes.json
        lambda d: d["author"].update(name="someone else <b>"),
        # the layout label: in every table row
        lambda d: d["layout"].update(label="renamed layout"),
    ]
    for i, change in enumerate(edits):
        _edit(root / "recipes" / f"{FAST}.yaml", change)
        warm = {path: page.content for path, page in render_site(load_registry(root), state=state).items()}
        assert warm == _fresh(root), f"edit {i}: a memoised page differs from a fresh render"
        render_site(load_registry(root), state=state)  # memo warm again for the next edit
    # a recipe leaving the registry takes its rows and pages with it
    (root / "recipes" / f"{SLOW}.yaml").unlink()
    warm = {path: page.content for path, page in render_site(load_registry(root), state=state).items()}
    assert warm == _fresh(root)
    assert not any("slow-run" in path for path in warm)
    assert "slow-run" not in warm["recipes.md"]
    # and a catalog edit (the instance price) misses every memo entry of the recipes priced by it
    catalog = root / "catalog/instances.yaml"
    catalog.write_text(catalog.read_text().replace("usd_per_hour: 55.04", "usd_per_hour: 110.08"))
    render_site(load_registry(root), state=state)
    assert {p: pg.content for p, pg in render_site(load_registry(root), state=state).items()} == _fresh(root)


def test_memo_keeps_only_what_the_last_render_used(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", {FAST: synthetic(1500.5, count=16, name="fast")})
    state = ServeState()
    render_site(load_registry(root), state=state)
    before = len(state.memo.store)
    for value in (1.5, 2.5, 3.5):
        _edit(root / "recipes" / f"{FAST}.yaml", lambda d, v=value: d["result"].update(tokens_per_s_per_gpu=v))
        render_site(load_registry(root), state=state)
    assert len(state.memo.store) == before  # no growth across edits: stale entries are dropped


def test_recipes_json_is_what_json_dumps_writes(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", {FAST: synthetic(1500.5, count=16, name="fast")})
    text = render_site(load_registry(root))["downloads/recipes.json"].content
    assert text == json.dumps(json.loads(text), indent=1) + "\n"
    empty = make_registry(tmp_path / "empty", keep_reference=False)
    text = render_site(load_registry(empty))["downloads/recipes.json"].content
    assert text == json.dumps({"recipes": []}, indent=1) + "\n"


def test_merge_search_entries(tmp_path: Path) -> None:
    previous = tmp_path / "search_index.json"
    previous.write_text(json.dumps({"config": {}, "docs": [
        {"location": "", "title": "Home", "text": "old home"},
        {"location": "a/", "title": "A", "text": "a"},
        {"location": "a/#section", "title": "S", "text": "a section"},
        {"location": "b/", "title": "B", "text": "old b"},
        {"location": "gone/", "title": "Gone", "text": "removed page"},
    ]}))
    new = [{"location": "", "title": "Home", "text": "new home"}, {"location": "b/", "title": "B", "text": "new b"},
           {"location": "c/", "title": "C", "text": "new page"}]
    merged = merge_search_entries(previous, {"", "b/", "c/", "d/"}, new, ["./", "a/", "b/", "c/", "d/"])
    assert [(e["location"], e["text"]) for e in merged] == [
        ("", "new home"),  # built: replaced (Material's own carry-over dropped every page when "" was built)
        ("a/", "a"), ("a/#section", "a section"),  # not built: kept, sections and all
        ("b/", "new b"), ("c/", "new page"),  # built
    ]  # "d/" built with no entries (search: exclude), "gone/" left the site
    # after a clean build there is no previous index: the build's own entries, in site order
    assert merge_search_entries(tmp_path / "missing.json", {"", "b/"}, new[:2], ["b/", ""]) == [new[1], new[0]]
    # a build of every page takes nothing from an earlier index (here a stale one still lying in the site dir)
    assert merge_search_entries(previous, {"", "a/"}, new[:1], ["./", "a/"]) == new[:1]


def test_write_if_changed_rewrites_only_changed_text(tmp_path: Path) -> None:
    target = write_if_changed(tmp_path, "a/page.md", "one")
    stamp = target.stat().st_mtime_ns
    assert write_if_changed(tmp_path, "a/page.md", "one").stat().st_mtime_ns == stamp
    target.write_text("edited behind its back")  # a changed file is noticed (its mtime moved), and put right
    assert write_if_changed(tmp_path, "a/page.md", "one").read_text() == "one"
    assert write_if_changed(tmp_path, "a/page.md", "two").read_text() == "two"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    registry = make_registry(tmp / "reg", {FAST: synthetic(1500.5, count=16, name="fast")})
    out = tmp / "out"
    result = mkdocs_build(site_project(tmp, registry), out)
    assert result.returncode == 0, result.stderr[-4000:]
    return out


@pytest.mark.slow
def test_index_tables_are_off_the_search_index(built: Path) -> None:
    docs = json.loads((built / "search/search_index.json").read_text())["docs"]
    by_page: dict[str, str] = {}
    for entry in docs:
        page = entry["location"].split("#")[0]
        by_page[page] = by_page.get(page, "") + entry["title"] + " " + entry["text"] + " "
    # the recipe's own page is indexed, with its layout label (in its title) ...
    assert "fast layout" in by_page[f"recipes/{FAST}/"]
    # ... the tables listing it are not (the all-recipes page, its model's and GPU's pages, the home page's latest
    # recipes; the home page's one-line-per-model "best" table stays searchable)
    for page in ("recipes/", "models/gemma-4-31b/", "gpus/h100/"):
        assert page in by_page, page
        assert "fast layout" not in by_page[page], page
    assert "Latest recipes" in by_page[""] and "fast-dp2" not in by_page[""]
    # the tables are still on those pages
    assert "fast layout" in (built / "recipes/index.html").read_text()
