"""Recipe text is inert everywhere: a recipe with <script>, onerror= and javascript: in every text field."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sitehelpers import ROOT, XSS_ID, make_registry, xss_recipe
from suitehelpers import mkdocs_build, site_project

from generator.registry import load_registry
from generator.site import render_site


def xss_registry(tmp: Path) -> Path:
    return make_registry(tmp, {XSS_ID: xss_recipe()})


def test_the_probe_loads(tmp_path: Path) -> None:
    registry = load_registry(xss_registry(tmp_path / "reg"))
    assert not registry.problems, registry.problems
    assert XSS_ID in {x.id for x in registry.recipes}


class _Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on"):
                self.bad.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action", "formaction", "data") and value and \
                    value.strip().lower().startswith(("javascript:", "data:", "vbscript:")):
                self.bad.append(f"<{tag} {name}={value!r}>")
        if tag in ("img", "iframe", "object", "embed") and any(n == "src" and v == "x" for n, v in attrs):
            self.bad.append(f"<{tag} src=x>")
        self.in_script = tag == "script"
        # A JSON data block (the planner's rows, chart points) may carry recipe text as data: it is never run, its
        # <, > and & are written as \u escapes (generator.site.page.json_script) so it cannot close the element, and the site's
        # scripts put such text into the page only as text (test_site_scripts_insert_no_markup).
        self.json_data = self.in_script and dict(attrs).get("type") == "application/json"

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if not self.in_script or "__xss" not in data:
            return
        if not self.json_data:
            self.bad.append("script body from recipe text")
            return
        try:
            json.loads(data)
        except ValueError:
            self.bad.append("a JSON data block that does not parse (its text escaped it)")
        if "<" in data or ">" in data:
            self.bad.append("recipe text with < or > unescaped in a JSON data block")


def _audit(html: str) -> list[str]:
    audit = _Audit()
    audit.feed(html)
    return audit.bad


def test_rendered_markdown_is_inert(tmp_path: Path) -> None:
    pages = render_site(load_registry(xss_registry(tmp_path / "reg")))
    page = pages[f"recipes/{XSS_ID}.md"].content
    assert "<script>window" not in page and "<img src=x" not in page
    assert page.count("&lt;script&gt;") > 20
    assert "```" not in page.split("---", 2)[2] and "\x02" not in page


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("xss")
    project = site_project(tmp, xss_registry(tmp / "reg"))
    result = mkdocs_build(project, tmp / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp / "out"


@pytest.mark.slow
def test_built_site_is_inert(built: Path) -> None:
    page = built / "recipes" / XSS_ID / "index.html"
    html = page.read_text(encoding="utf-8")
    assert "window.__xss" in html  # the text is there, shown as text
    assert _audit(html) == []
    for other in built.rglob("*.html"):
        assert _audit(other.read_text(encoding="utf-8")) == [], other
    index = (built / "search/search_index.json").read_text(encoding="utf-8")
    assert "<script>window" not in index


def test_site_scripts_insert_no_markup() -> None:
    """The site's own scripts build the page with DOM nodes and textContent: recipe text from a JSON data block can
    only ever be text. One exception, named here: packed.js's parse gives a <template> the rows' HTML back from
    generator/site/rowdata.py's JSON, whose values are the row template's own escaped output (test_site_rowdata
    holds the round trip to the rendered rows byte for byte, fuzzed with hostile text). No other script parses a
    string as markup or code."""
    allowed = {("packed.js", "innerHTML"): "  holder.innerHTML = markup;"}
    scripts = sorted((ROOT / "site_src/assets/js").glob("*.js"))
    assert scripts
    found = {}
    for script in scripts:
        for line in script.read_text(encoding="utf-8").splitlines():
            for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                         "createContextualFragment", "DOMParser"):
                if sink in line and not line.lstrip().startswith("//"):
                    assert (script.name, sink) not in found, (script.name, sink, line)
                    found[(script.name, sink)] = line
    assert found == allowed
