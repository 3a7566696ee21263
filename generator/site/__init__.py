"""The registry site: a pure renderer (recipes -> pages) that MkDocs' hook and the export verb share."""

from generator.site.page import Page
from generator.site.pages.recipe import render_card
from generator.site.render import render_site

__all__ = ["Page", "render_card", "render_site"]
