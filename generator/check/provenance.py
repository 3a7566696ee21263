"""Rule: a publication's recorded SHA-256 is that of the stored copy it names, where the repository holds that copy.

An importer records, beside the citation, the SHA-256 of the bytes it read and (where the file lay in the registry)
the path of that stored copy (`publication.stored_copy`, or `publication.read_from.stored_copy` where the figures
were read from a copy of the original); a later import keeps both on the entry of `publication.superseded` it
makes of the earlier citation. A copy edited after the import, or a hash pasted from another file, no
longer matches: the recipe's figures would be traceable to bytes nobody can produce.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from generator.check.context import RecipeContext
from generator.models import Publication, PublicationCopy, SupersededPublication
from generator.registry import RootNotFound, find_root

# path -> ((device, inode, size, mtime), SHA-256): a stored copy is hashed once per process while unchanged; the
# playbook's 2.9 MB page is named by 1,721 recipes.
_DIGESTS: dict[Path, tuple[tuple[int, int, int, int], str]] = {}


# (root, stored_copy) -> the file it resolves to inside the registry, or None (it leads out through a link): resolved
# once per process, as a warm check asks again for every recipe naming the same copy.
_RESOLVED: dict[tuple[Path, str], Path | None] = {}


def _resolved(root: Path, stored_copy: str) -> Path | None:
    key = (root, stored_copy)
    if key not in _RESOLVED:
        path = (root / stored_copy).resolve()
        _RESOLVED[key] = path if path.is_relative_to(root.resolve()) else None
    return _RESOLVED[key]


def stored_copy_digest(root: Path, stored_copy: str) -> str | None:
    """SHA-256 of the stored copy at `stored_copy` below `root`; None where the registry holds no such regular file
    (the rule applies only where the copy is present). A path leading out of the registry (a link) is held to no
    file: None."""
    path = _resolved(root, stored_copy)
    if path is None:
        return None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        known = _DIGESTS.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        with open(path, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None
    _DIGESTS[path] = (stamp, digest)
    return digest


# Found by its literal key (a fast scan); a match inside other text only binds one more file.
_NAMED_COPY = re.compile(rb"stored_copy:[ \t]*['\"]?([^'\"\s#]+)")


def named_copies(raw: bytes) -> list[str]:
    """The stored copies a file's bytes name (every `stored_copy:` key), without parsing it."""
    return sorted({m.group(1).decode("utf-8", errors="replace") for m in _NAMED_COPY.finditer(raw)})


def copy_parts(root: Path, raw: bytes) -> list[tuple[str, bytes | None]]:
    """What the check cache binds a file's result to besides its own bytes: the SHA-256 of each stored copy it names
    (absent: a part of its own)."""
    return [(f"stored copy {name}", None if (digest := stored_copy_digest(root, name)) is None else digest.encode())
            for name in named_copies(raw)]


Cited = Publication | PublicationCopy | SupersededPublication


def _cited_copies(publication: Publication) -> list[tuple[tuple[str | int, ...], Cited]]:
    """Every citation of the recipe that can name a copy read: the publication, the copy its figures were read from,
    and each earlier publication it superseded."""
    copies: list[tuple[tuple[str | int, ...], Cited]] = [(("publication",), publication)]
    if publication.read_from is not None:
        copies.append((("publication", "read_from"), publication.read_from))
    copies.extend((("publication", "superseded", i), earlier) for i, earlier in enumerate(publication.superseded))
    return copies


def copy_problem(root: Path, cited: Cited) -> tuple[str, str] | None:
    """(field, message) where a citation's recorded copy fails: a stored copy named without its hash, or a stored
    copy present in the registry whose SHA-256 is another; None otherwise (a copy the registry lacks is not held)."""
    if cited.stored_copy is None:
        return None
    if cited.sha256 is None:
        return "stored_copy", f"names the stored copy {cited.stored_copy} but no sha256 of it"
    digest = stored_copy_digest(root, cited.stored_copy)
    if digest is None or digest == cited.sha256:
        return None
    return "sha256", (f"the stored copy {cited.stored_copy} has SHA-256 {digest}, not the {cited.sha256} recorded: "
                      "the copy changed since the import, or the hash is another file's")


_ROOTS: dict[Path, Path | None] = {}  # a recipe's folder -> the registry holding it (a few hundred folders)


def _registry_of(folder: Path) -> Path | None:
    if folder not in _ROOTS:
        try:
            _ROOTS[folder] = find_root(folder)
        except RootNotFound:
            _ROOTS[folder] = None
    return _ROOTS[folder]


def stored_copy_sha256(ctx: RecipeContext) -> None:
    publication = ctx.recipe.publication
    if publication is None or not any(cited.stored_copy for _, cited in _cited_copies(publication)):
        return
    root = _registry_of(ctx.loaded.path.parent.absolute())
    if root is None:
        return  # a recipe outside any registry: no stored copy to hold it to
    for where, cited in _cited_copies(publication):
        found = copy_problem(root, cited)
        if found is not None:
            ctx.bad(found[1], *where, found[0])


RULES = (stored_copy_sha256,)
