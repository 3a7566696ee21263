"""OpenRecipes generator: load, check and render the recipe registry."""
