"""The installed distribution's version, for both CLIs' --version (`python -m generator`, `python -m runner`), looked
up only when asked: no CLI run pays for a lookup it was not asked for."""

from __future__ import annotations

import argparse
from pathlib import Path

DISTRIBUTION = "openrecipes"


def version() -> str:
    """The installed distribution's version; from a source checkout that was never installed, pyproject's, else
    "unknown"."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    import tomllib

    try:
        with (Path(__file__).resolve().parent.parent / "pyproject.toml").open("rb") as handle:
            return str(tomllib.load(handle)["project"]["version"]) + " (source checkout)"
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


class PrintVersion(argparse.Action):
    """--version: prints `template` ({prog}, {version}) and exits."""

    def __init__(self, option_strings: list[str], dest: str, template: str = "{prog} {version}",
                 **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")
        self.template = template

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(self.template.format(prog=parser.prog, version=version()))
        parser.exit()
