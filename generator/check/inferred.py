"""Rules: a recipe's `inferred` list names fields it sets, each once (models.Inferred says what an entry is)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from generator.check.context import RecipeContext


def _value(recipe: BaseModel, path: str) -> Any:
    """The value at a dotted field path, or None where a part names no field or an unset one."""
    value: Any = recipe
    for part in path.split("."):
        if not isinstance(value, BaseModel) or part not in type(value).model_fields:
            return None
        value = getattr(value, part)
    return value


def inferred_fields(ctx: RecipeContext) -> None:
    seen: set[str] = set()
    for i, item in enumerate(ctx.recipe.inferred):
        if item.field in seen:
            ctx.bad(f"{item.field} is listed as inferred twice", "inferred", i, "field")
        seen.add(item.field)
        if _value(ctx.recipe, item.field) is None:
            ctx.bad(f"{item.field} names no field this recipe sets (an unstated setting is null, not inferred)",
                    "inferred", i, "field")


RULES = (inferred_fields,)
