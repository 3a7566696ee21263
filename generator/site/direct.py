"""Generated pages as HTML directly: what Python-Markdown would make of them, without running it.

The generated page templates (all but the methodology page) are raw HTML blocks between ATX headings
("## Figures"), nothing else. Python-Markdown passes such blocks through unchanged, but parses every tag of
them to find where they end, which was most of a build's time at 1,000 recipes (benchmarks/site_scale.py).
`to_html` turns the headings into the <hN id> elements and table-of-contents tokens Python-Markdown's toc
extension makes (same slugs) and keeps the rest verbatim. It is safe because recipe text never starts a line
with "#": formatting.html_text and fence_safe escape a line-leading "#".

`search_view` is the same HTML without the sections marked data-search-exclude, which Material's search
plugin would skip anyway: it then has less to parse.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")
_EXCLUDED = re.compile(r'^<div class="or-section"[^>\n]* data-search-exclude>\n.*?^</div>$', re.M | re.S)


@dataclass(frozen=True)
class DirectHtml:
    html: str
    toc: list[dict[str, Any]] = field(default_factory=list)  # mkdocs' toc tokens: level, id, name, children
    ids: frozenset[str] = frozenset()


def slugify(text: str) -> str:
    """Python-Markdown's toc slugify (markdown.extensions.toc.slugify), on the heading's text."""
    value = unicodedata.normalize("NFKD", re.sub(r"<[^>]*>", "", text)).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def _nest(flat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    root: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []
    for token in flat:
        while stack and stack[-1]["level"] >= token["level"]:
            stack.pop()
        (stack[-1]["children"] if stack else root).append(token)
        stack.append(token)
    return root


def split_front_matter(markdown: str) -> tuple[str, str]:
    if markdown.startswith("---\n"):
        end = markdown.index("\n---\n", 4)
        return markdown[: end + 5], markdown[end + 5:]
    return "", markdown


def to_html(markdown: str) -> DirectHtml:
    """The body (front matter removed) of a generated page as HTML, with its toc tokens and heading ids."""
    _, body = split_front_matter(markdown)
    out: list[str] = []
    flat: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line in body.split("\n"):
        match = _HEADING.match(line)
        if match is None:
            out.append(line)
            continue
        level, text = len(match.group(1)), match.group(2)
        base = slugify(text)
        slug, n = base, 0
        while slug in seen:  # Python-Markdown's unique(): -1, -2, ...
            n += 1
            slug = f"{base}_{n}"
        seen.add(slug)
        out.append(f'<h{level} id="{slug}">{text}</h{level}>')
        flat.append({"level": level, "id": slug, "name": text, "children": []})
    ids = set(seen) | set(re.findall(r'\sid="([^"]+)"', body))
    return DirectHtml("\n".join(out).strip("\n"), _nest(flat), frozenset(ids))


def search_view(html: str) -> str:
    return _EXCLUDED.sub("", html)


# A shared link's view before its first paint: on a page with a recipes table and a query string, the table's rows
# and count stay invisible (openrecipes.css: .or-view-pending) until site_src/assets/js has applied the URL's
# filters, sort and prices (main.js removes the class; after 8 s this script does, should the module never run).
# In <head>, not in the page: a script in the content delayed Material's instant navigation's page set-up. The
# page script runs after the whole document is parsed, and Chromium paints a long document's first rows before.
VIEW_PENDING = ('<script>(function(){if(location.search.length<2)return;var e=document.documentElement;'
                'e.classList.add("or-view-pending");setTimeout(function(){e.classList.remove("or-view-pending")},8000)})()'
                '</script>')


# The page script is ES modules (site_src/assets/js): a browser learns main.js's imports only once it has parsed
# main.js, which waits for Material's bundle on the main thread, and theirs after that; DOMContentLoaded waits for
# all of them. Listed in <head>, every module is fetched and compiled while the document is still arriving (at
# 10,000 recipes DOMContentLoaded came ~100 ms sooner). Found from main.js's own tag, so its path prefix fits the page.
_PAGE_SCRIPT = re.compile(r'<script src="([^"<>]*?)assets/js/main\.js" type="module">')


def preload_page_modules(output: str, modules: list[str]) -> str:
    """A built page with a <link rel="modulepreload"> per page-script module (file names under assets/js/) at the
    end of its <head>; a page without the page script is returned as it is."""
    found = _PAGE_SCRIPT.search(output)
    if found is None or "</head>" not in output:
        return output
    links = "".join(f'<link rel="modulepreload" href="{found.group(1)}assets/js/{name}">' for name in modules)
    return output.replace("</head>", links + "</head>", 1)


def hold_view_until_applied(output: str) -> str:
    """A built page with VIEW_PENDING at the end of its <head>, where it has a recipes table."""
    if 'class="or-sortable"' not in output or "</head>" not in output:
        return output
    return output.replace("</head>", VIEW_PENDING + "</head>", 1)
