"""The site's page kinds, one module each: what a page shows, as the context its template lays out.

home (index.md), recipes_index (recipes.md), model (models/), gpu (gpus/), recipe (recipes/<id>.md and the files
beside it), failed_layouts (the model page's failed layouts), methodology, schema, compare and downloads. Each
builds its pages from a generator.site.page.SiteRun; generator.site.render runs them in order."""
