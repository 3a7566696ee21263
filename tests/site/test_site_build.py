"""A real `mkdocs build --strict` (a process of its own, forked: suitehelpers.mkdocs_build) of a registry copy:
clean, offline, links resolve."""

from __future__ import annotations

import html
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from sitehelpers import ROOT, make_registry, synthetic
from suitehelpers import mkdocs_build, site_project

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    registry = make_registry(tmp / "reg", {
        "gemma-4-31b/h100/fast-dp2": synthetic(1500.5, count=16, name="fast"),
        "gemma-4-31b/h200/h200-run": synthetic(900.25, name="h200", gpu="H200"),
    })
    project = site_project(tmp, registry)
    out = tmp / "out"
    result = mkdocs_build(project, out)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    return out


# The run's one build of the committed site (tests/site/conftest.py), shared with the browser tests.
def test_the_committed_registry_builds_strict(committed_site) -> None:  # noqa: ANN001
    # committed_site asserts the build's exit code
    assert "WARNING" not in committed_site.log, committed_site.log[-4000:]
    assert (committed_site.out / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13/index.html").exists()
    # the link check of the whole site, every committed recipe included
    pages = list(committed_site.out.rglob("*.html"))
    assert len(pages) > 100
    missing = broken_links(committed_site.out)
    assert not missing, missing[:20]
    # nothing generated lands in the docs dir
    assert sorted(p.relative_to(ROOT / "site_src").as_posix() for p in (ROOT / "site_src").rglob("*.md")) == [
        "cluster.md", "contributing.md"]


def test_pages_exist(built: Path) -> None:
    for path in ("index.html", "recipes/index.html", "methodology/index.html", "schema/index.html",
                 "models/gemma-4-31b/index.html", "gpus/h100/index.html", "gpus/h200/index.html",
                 "recipes/gemma-4-31b/h100/fast-dp2/index.html", "recipes/gemma-4-31b/h100/fast-dp2.yaml",
                 "downloads/recipes.json", "downloads/recipes.csv", "downloads/recipe.schema.json",
                 "contributing/index.html"):
        assert (built / path).is_file(), path


def test_recipe_pages_are_not_in_the_nav(built: Path) -> None:
    home = (built / "index.html").read_text()
    nav = home[home.find("md-sidebar--primary"): home.find("md-sidebar--secondary")]
    assert "Methodology" in nav and "All recipes" in nav
    assert "attune-tp2-pp4-split13" not in nav and "fast-dp2" not in nav


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        for key in ("href", "src", "data", "poster", "srcset", "action"):
            if a.get(key):
                self.refs.append((tag, key, a[key] or ""))
        if tag == "link" and a.get("rel"):
            self.refs.append((tag, "rel:" + (a["rel"] or ""), a.get("href") or ""))


def _parse(path: Path) -> _Refs:
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_offline_no_external_script_style_or_font(built: Path) -> None:
    bad = []
    for page in built.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        refs = _parse(page).refs
        # The page's canonical URL (mkdocs.yml's site_url) names the published page; nothing is loaded from it.
        canonical = {value for tag, key, value in refs if tag == "link" and key == "rel:canonical"}
        for tag, key, value in refs:
            external = urlsplit(value).scheme in ("http", "https") or value.startswith("//")
            if external and value not in canonical and (tag in ("script", "img", "iframe", "source", "video", "audio") or
                             (tag == "link" and key in ("href",))):
                bad.append((page, tag, value))
        if re.search(r"fonts\.(googleapis|gstatic)\.com|cdn\.jsdelivr|unpkg\.com|cdnjs", text):
            bad.append((page, "text", "CDN host named"))
    for css in built.rglob("*.css"):
        for m in re.finditer(r"url\(([^)]*)\)|@import\s+([^;]+)", css.read_text(encoding="utf-8")):
            target = (m.group(1) or m.group(2)).strip("'\" ")
            if target.startswith(("http:", "https:", "//")):
                bad.append((css, "css", target))
    assert not bad, bad[:10]


_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"<([a-zA-Z][\w-]*)(\s[^>]*)?>")
_ATTR = re.compile(r"""([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?""")


def _fast_refs(text: str) -> tuple[list[tuple[str, str, str]], set[str]]:
    """(tag, attribute, value) of every href/src and the ids of one built page. A tag scanner, not HTMLParser: the
    committed site is ~45 MB of HTML and HTMLParser took minutes; our pages escape < in script data (\\u003c) and
    text (&lt;), so every '<name ...>' outside comments is a tag. test_the_fast_scanner_agrees_with_htmlparser
    holds it to HTMLParser's reading on real pages."""
    refs, ids = [], set()
    for m in _TAG.finditer(_COMMENT.sub("", text)):
        tag = m.group(1).lower()
        for a in _ATTR.finditer(m.group(2) or ""):
            key = a.group(1).lower()
            value = html.unescape(next((v for v in a.groups()[1:] if v is not None), ""))
            if key == "id" and value:
                ids.add(value)
            elif key in ("href", "src") and value:
                refs.append((tag, key, value))
    return refs, ids


def broken_links(built: Path) -> list[tuple[str, str]]:
    """Every href/src of every built page that does not resolve to a file (and anchor) of the site.

    The site's files and folders are listed once and links resolved lexically (os.path.normpath): Path.resolve()
    and a stat per link took most of the check's 17 s on the committed site. A build writes no symbolic links
    (asserted), so the lexical path is the real one."""
    root = os.path.realpath(built)
    files: set[str] = set()
    folders: set[str] = set()
    for folder, subfolders, names in os.walk(root):
        folders.add(folder)
        found = [os.path.join(folder, name) for name in [*names, *subfolders]]
        assert not [f for f in found if os.path.islink(f)], f"symbolic links in the built site under {folder}"
        files.update(os.path.join(folder, name) for name in names)
    missing = []
    parsed: dict[str, tuple[list[tuple[str, str, str]], set[str]]] = {}

    def read(page: str) -> tuple[list[tuple[str, str, str]], set[str]]:
        if page not in parsed:
            parsed[page] = _fast_refs(Path(page).read_text(encoding="utf-8"))
        return parsed[page]

    for page in sorted(f for f in files if f.endswith(".html")):
        for _tag, _key, value in read(page)[0]:
            parts = urlsplit(value)
            if parts.scheme or value.startswith(("//", "mailto:")) or not (parts.path or parts.fragment):
                continue
            base = root if parts.path.startswith("/") else os.path.dirname(page)  # 404.html links from the root
            target = os.path.normpath(os.path.join(base, unquote(parts.path.lstrip("/")))) if parts.path else page
            if target in folders:
                target = os.path.join(target, "index.html")
            if target not in files:
                missing.append((os.path.relpath(page, root), value))
                continue
            if parts.fragment and target.endswith(".html"):
                if parts.fragment not in read(target)[1] and parts.fragment != "__skip":
                    missing.append((os.path.relpath(page, root), value))
    return missing


def test_the_fast_scanner_agrees_with_htmlparser(built: Path) -> None:
    pages = sorted(built.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        slow = _parse(page)
        refs, ids = _fast_refs(page.read_text(encoding="utf-8"))
        assert refs == [r for r in slow.refs if r[1] in ("href", "src")], page
        assert ids == slow.ids, page


def test_every_internal_link_resolves(built: Path) -> None:
    missing = broken_links(built)
    assert not missing, missing[:20]


def test_exports(built: Path) -> None:
    import csv
    import json

    data = json.loads((built / "downloads/recipes.json").read_text())
    ids = [r["id"] for r in data["recipes"]]
    assert "gemma-4-31b/h100/attune-tp2-pp4-split13" in ids and len(ids) == 3
    ref = next(r for r in data["recipes"] if r["id"].endswith("split13"))
    assert abs(ref["derived"]["usd_per_million_tokens"] - 1.6229) < 1e-3
    rows = list(csv.DictReader((built / "downloads/recipes.csv").open()))
    assert {r["id"] for r in rows} == set(ids)
    schema = json.loads((built / "downloads/recipe.schema.json").read_text())
    assert schema["title"] == "OpenRecipes recipe"


def test_pages_preload_the_page_script_modules(built: Path) -> None:
    """Every page names each module of site_src/assets/js in a <link rel="modulepreload"> in its <head> (fetched while
    the document arrives, not after Material's bundle), with the relative path of its own main.js tag."""
    modules = sorted(p.name for p in (ROOT / "site_src/assets/js").glob("*.js"))
    assert "main.js" in modules and len(modules) > 3
    for rel in ("index.html", "recipes/index.html", "recipes/gemma-4-31b/h100/fast-dp2/index.html",
                "methodology/index.html"):
        page = built / rel
        text = page.read_text(encoding="utf-8")
        head = text[:text.index("</head>")]
        hrefs = re.findall(r'<link rel="modulepreload" href="([^"]+)">', head)
        assert sorted(h.rsplit("/", 1)[1] for h in hrefs) == modules, rel
        assert all((page.parent / h).resolve().is_file() for h in hrefs), (rel, hrefs)
        main = re.search(r'<script src="([^"]+main\.js)" type="module">', text).group(1)
        assert main in hrefs, rel


def test_sitemap_lists_every_page_one_line_each(built: Path) -> None:
    """site_theme/sitemap.xml: every page's URL (Material's instant navigation reads it), one <url> a line and no
    <lastmod>, which MkDocs set to the build date of every page: parsed on each page load's main thread."""
    import xml.etree.ElementTree as ET

    text = (built / "sitemap.xml").read_text(encoding="utf-8")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [loc.text for loc in ET.fromstring(text.encode()).findall("s:url/s:loc", ns)]
    pages = {p.parent.relative_to(built).as_posix() for p in built.rglob("index.html")}
    assert sorted(locs) == sorted(f"https://openrecipes.github.io/{p}/".replace("/./", "/") for p in pages)
    assert "<lastmod>" not in text
    assert all(line.startswith("<url><loc>") and line.endswith("</loc></url>") for line in text.splitlines()[2:-1])
