"""A long recipes table's rows past the first LIVE_ROWS as compact JSON, read by site_src/assets/js/table.js.

Each row's HTML (recipe_row.html.j2, rendered as for the live rows) is split into its shape, the markup with every
attribute value but `class` and every non-blank text replaced by a slot, and its values, each distinct one once. The
page carries the few distinct shapes once and one array per row: [shape index, value, ...]. The values stay as the
template escaped them, so filling a shape's slots with them gives back the row's HTML byte for byte (`expand`, which
table.js does in the browser): the rows built from the JSON are the same <tr> elements, with the same hooks, as the
live ones. At 10,000 rows the all-recipes page went from 648 KB to about 400 KB gzip (benchmarks/site_scale.py):
the markup of every row was most of its weight even after gzip.
"""

from __future__ import annotations

import json
import re

# An attribute value (the class attribute is kept as markup: a handful of fixed names) or a text between tags.
_PART = re.compile(r'( class="[^"]*")|="([^"]*)"|>([^<]+)<')
_SLOT = re.compile("\x01(\\d+)\x02")


def split_row(html: str) -> tuple[str, list[str]]:
    """A row's HTML as (shape, values): the shape's slot \\x01i\\x02 takes values[i]."""
    values: list[str] = []
    where: dict[str, int] = {}

    def slot(value: str) -> str:
        if value not in where:
            where[value] = len(values)
            values.append(value)
        return f"\x01{where[value]}\x02"

    def part(match: re.Match[str]) -> str:
        kept, attribute, text = match.groups()
        if kept is not None or (text is not None and not text.strip()):
            return match.group(0)
        if attribute is not None:
            return '="' + slot(attribute) + '"'
        return ">" + slot(text) + "<"

    return _PART.sub(part, html), values


def compact_rows(parts: list[tuple[str, list[str]]]) -> str:
    """Rows (as split_row gives them) as the JSON table.js reads: {"shapes": [...], "rows": [[shape, values...]]}.
    No "<", ">" or "&" in the text (written as JSON escapes): it is served as the text of a <template> element, which
    it can then neither end nor change. (Not a <script type="application/json">: Material's instant navigation
    re-creates a page's scripts without their type, and so ran the data as code.)"""
    shapes: dict[str, int] = {}
    rows = [[shapes.setdefault(shape, len(shapes)), *values] for shape, values in parts]
    text = json.dumps({"shapes": list(shapes), "rows": rows}, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def expand(text: str) -> list[str]:
    """The rows' HTML back from compact_rows' JSON (what table.js builds in the browser)."""
    data = json.loads(text)
    return [_SLOT.sub(lambda m, row=row: row[int(m.group(1)) + 1], data["shapes"][row[0]]) for row in data["rows"]]
