"""The schema reference page's rows, read from the committed schema/recipe.schema.yaml."""

from __future__ import annotations

import re
from typing import Any

import yaml

_UNIT = re.compile(r",? in ([A-Za-z$/%][^.;()]*?)(?:[.;(]|$)")


def parse_schema(data: bytes) -> dict[str, Any]:
    # The C loader where PyYAML has it: the schema is large, and the site parses it on every rebuild it changes.
    return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _type(node: dict[str, Any], defs: dict[str, Any]) -> tuple[str, dict[str, Any] | None, bool]:
    """(type text, object schema to descend into, whether it is a list of those)."""
    if "anyOf" in node:
        parts = [_type(option, defs) for option in node["anyOf"]]
        inner = next(((obj, many) for _, obj, many in parts if obj is not None), (None, False))
        return " | ".join(text for text, _, _ in parts), inner[0], inner[1]
    ref_name = node["$ref"].rsplit("/", 1)[-1] if "$ref" in node else None
    node = _resolve(node, defs)
    if "enum" in node:
        return " | ".join(str(v) for v in node["enum"]), None, False
    kind = node.get("type", "any")
    if kind == "object" and "properties" in node:
        return f"object ({ref_name or node.get('title', '')})", node, False
    if kind == "object":
        extra = node.get("additionalProperties")
        value = _type(extra, defs)[0] if isinstance(extra, dict) else "any"
        return f"map of {value}", None, False
    if kind == "array":
        text, obj, _ = _type(node.get("items", {}), defs)
        return f"list of {text}", obj, obj is not None
    if "format" in node:
        return f"{kind} ({node['format']})", None, False
    return str(kind), None, False


def unit(description: str) -> str:
    if "(0-1)" in description:
        return "fraction (0-1)"
    match = _UNIT.search(description)
    return match.group(1).strip() if match else ""


def field_rows(schema: dict[str, Any]) -> list[dict[str, str]]:
    """Every field, depth first: path (lists as name[]), type, required, unit, description."""
    defs = schema.get("$defs", {})
    rows: list[dict[str, str]] = []

    def walk(obj: dict[str, Any], prefix: str) -> None:
        required = set(obj.get("required", []))
        for name, node in obj.get("properties", {}).items():
            text, inner, many = _type(node, defs)
            description = node.get("description") or _resolve(node, defs).get("description", "")
            path = f"{prefix}{name}"
            rows.append({"path": path, "type": text, "required": "yes" if name in required else "no",
                         "unit": unit(description), "description": description})
            if inner is not None:
                walk(inner, f"{path}[]." if many else f"{path}.")

    walk(schema, "")
    return rows
