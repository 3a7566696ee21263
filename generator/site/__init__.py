"""The registry site: a pure renderer (recipes -> pages) that MkDocs' hook and the export verb share."""

from generator.site.render import Page, render_card, render_site

__all__ = ["Page", "render_card", "render_site"]
