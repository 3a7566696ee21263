"""The all-recipes page (recipes.md): every recipe in one table, with its filters and the downloads."""

from __future__ import annotations

from generator.site import tables
from generator.site.page import DATA_PAGE, Page, SiteRun, as_direct, markdown_page
from generator.site.pages.downloads import download_links


def page(run: SiteRun) -> Page:
    """recipes.md."""
    recipes = run.registry.recipes
    rows = [tables.row(run, loaded, "recipes.md") for loaded in recipes]
    body = run.env.get_template("recipes.md.j2").render(
        table=tables.table(run, recipes, "recipes.md", "or-recipes"), filters=tables.filter_options(rows),
        downloads=download_links("recipes.md"))
    return as_direct(Page(markdown_page("All recipes", body, hide=DATA_PAGE), "All recipes", in_nav=True))
