"""OpenRecipes runner: re-measure a recipe on GPU hardware and write the figures back."""
