"""Other frameworks as runner citizens: the glue that starts them from a recipe's `run`, on the same rows.

Each module here is run as ``python3 -m runner.frameworks.<name> RECIPE [options]`` (torchtitan, transformers). It
reads the recipe and its model card (``common.make_framework_plan``, no torch), builds the framework's model from the card's
shapes, feeds it the rows of runner/engine/streams.py (the same stream, seed and order as the bundled engine) and
leaves the framework's own log for the runner's parsers (runner/logs/). torch and the framework are imported only
when it runs; a missing package is named with the wheel to install.
"""
