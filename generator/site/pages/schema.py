"""The recipe schema page (schema.md), from the committed schema/recipe.schema.yaml (parsed once per content)."""

from __future__ import annotations

import hashlib
from typing import Any

import jinja2

from generator.registry import Registry
from generator.site import schema_doc, views
from generator.site.page import DOWNLOADS, Page, as_direct, markdown_page
from generator.site.serve import Memo


def page(env: jinja2.Environment, registry: Registry, memo: Memo) -> Page:
    """schema.md: one row per field of the committed schema."""
    rows = schema_doc.field_rows(parsed_schema(registry, memo))
    body = env.get_template("schema.md.j2").render(
        rows=rows, schema_href=views.href("schema.md", f"{DOWNLOADS}/recipe.schema.json"))
    return as_direct(Page(markdown_page("Recipe schema", body, hide=["toc"]), "Recipe schema", in_nav=True))


def parsed_schema(registry: Registry, memo: Memo) -> dict[str, Any]:
    """The committed recipe schema, parsed once per content (the schema page and its JSON download share it)."""
    text = (registry.root / "schema" / "recipe.schema.yaml").read_bytes()
    return memo.get(("schema", hashlib.sha256(text).hexdigest()), lambda: schema_doc.parse_schema(text))
