"""Writing a recipe and its evidence sidecar so that an interruption at any point leaves both old or both new.

How, in order (each step's failure leaves the registry as it was unless it says otherwise):

1. Refusals, before anything is measured: a recipe outside a registry's recipes/ folder, a symlinked recipe or
   sidecar (the message names the target to re-measure instead), a file with more than one hard link (a rename
   would silently split it from its other names), a read-only file or folder, and a staging folder on another
   file system than the recipe (a rename across them is not atomic).
2. Staging: the new files are written and fsynced under ``<root>/.openrecipes-runs/staging/<pid>-<token>/``,
   mirroring their place under the root. Nothing is ever written into recipes/ but by rename, so a killed run
   strands no temporary file there; the staging folders of dead processes are removed at the next start.
3. Check: the staged recipe with its staged sidecar (the mirror keeps the recipe's id) goes through
   ``generator.check.check_recipe``; any problem the recipe did not already have refuses the write with check's
   own message (one it had is reported, not blamed on the measurement).
4. Commit, with SIGINT and SIGTERM blocked (``signal.pthread_sigmask``, and handlers that only record, in case
   another thread takes the signal): each file is compared with the bytes read at the start (a hand edit made
   meanwhile is never overwritten), then the sidecar is renamed into place, then the recipe, each followed by an
   fsync of its folder. If the second rename fails, the first is undone from a staged copy of the old file. A
   signal that arrived meanwhile takes effect once both files are written, and the messages say so.
5. Only SIGKILL or a power loss can land between the two renames. The new sidecar therefore embeds the sidecar
   it replaces and the sha256 of the old and the new recipe text (``generator.evidence.chained``); check holds a
   recipe whose bytes are the old text to the embedded old sidecar, so ``python -m generator check`` passes in
   that state too, and the next remeasure (or convergence --write) of the recipe reports the interrupted write
   and rolls the sidecar back (`rollback_change`). For --as-new (no recipe there yet) the same kill leaves a sidecar
   with no recipe beside it: check ignores it, and the next --as-new of that name replaces it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import shutil
import signal
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from generator import evidence
from generator.registry import RECIPES_DIR, fsync_folder

RUNS_DIR = ".openrecipes-runs"
STAGING_DIR = "staging"
DEFAULT_MODE = 0o644
_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Every file this process has written into a registry, in order: an interruption anywhere later is reported with
# what was written (runner/cli.py), never as "nothing written".
WRITTEN: list[Path] = []


class LockHeld(Exception):
    pass


class WriteRefused(Exception):
    """A file the runner will not write (symlink, hard links, read-only, outside the registry)."""


class Changed(Exception):
    """A file differs from what was read at the start: someone edited it meanwhile; nothing was written."""


class CommitFailed(Exception):
    """An OSError during the commit; the message says exactly which files were written."""


class InterruptedAfterCommit(Exception):
    """Ctrl-C (or SIGTERM) arrived during the commit; it took effect after every file was written."""

    def __init__(self, written: list[Path]) -> None:
        super().__init__(f"interrupted after the write completed ({', '.join(p.name for p in written)} written)")
        self.written = written


@dataclass(frozen=True)
class FileChange:
    """One file of a commit: its new bytes (None: remove it), the bytes that must be there now (None: no file),
    and its permission bits."""

    path: Path
    new: bytes | None
    old: bytes | None
    mode: int = DEFAULT_MODE


def runs_dir(root: Path) -> Path:
    return root / RUNS_DIR


@contextlib.contextmanager
def recipe_lock(root: Path, recipe: Path) -> Iterator[Path]:
    """An exclusive flock per recipe file under the registry's runs folder; the kernel drops it when the holder dies
    (no stale locks)."""
    locks = runs_dir(root) / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(str(recipe.absolute()).encode()).hexdigest()[:16]
    path = locks / f"{recipe.stem}-{digest}.lock"
    handle = path.open("a+")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise LockHeld(
                f"{recipe}: another remeasure of this recipe is running ({holder}); wait for it to finish "
                f"(the lock is {path} and is released when that process ends)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield path
    finally:
        handle.close()


# --- refusals ------------------------------------------------------------------------------------------------


def refuse_outside(path: Path, root: Path) -> None:
    """The file must lie in the registry's recipes/ folder (its folders resolved, the file itself not)."""
    base = (root / RECIPES_DIR).resolve()
    where = path.parent.resolve() / path.name
    if not where.is_relative_to(base):
        raise WriteRefused(f"{path} is not inside the registry's {base}; nothing is written outside it")


def refuse_unwritable(path: Path, what: str) -> None:
    """An existing file the runner may replace by rename: a regular file, one link, writable."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        raise WriteRefused(f"{path} is a symlink to {target}: a rename would replace the link, not its target; "
                           f"re-measure {target} itself (the {what} is written beside the file it describes)")
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{path} is not a regular file")
    if st.st_nlink > 1:
        raise WriteRefused(f"{path} has {st.st_nlink} hard links: replacing it would split it from its other names; "
                           f"make it a single file (cp it over itself after removing the other links) first")
    if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise WriteRefused(f"{path} is read-only; nothing written (make it writable to re-measure it)")


def refuse_folder(folder: Path) -> None:
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise WriteRefused(f"{folder} is not writable; nothing written")


# --- staging -------------------------------------------------------------------------------------------------


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (another user's process counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(root: Path) -> list[Path]:
    """Removes the staging folders of processes that are gone (killed mid-write); returns them."""
    base = runs_dir(root) / STAGING_DIR
    removed = []
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            pid = entry.name.split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    return removed


class Staging:
    """A private folder under the runs folder where the new files are written before they are renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = runs_dir(root) / STAGING_DIR / f"{os.getpid()}-{secrets.token_hex(4)}"

    def __enter__(self) -> Staging:
        self.folder.mkdir(parents=True)
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def place(self, path: Path) -> Path:
        """Where `path` is staged: its place under the root, mirrored (so the staged recipe keeps its id)."""
        return self.folder / path.absolute().relative_to(self.root.absolute())

    def write(self, path: Path, data: bytes, mode: int, suffix: str = "") -> Path:
        staged = self.place(path)
        staged = staged.with_name(staged.name + suffix)
        staged.parent.mkdir(parents=True, exist_ok=True)
        if os.stat(staged.parent).st_dev != os.stat(_nearest_existing(path.parent)).st_dev:
            raise WriteRefused(f"{self.folder} and {path.parent} are on different file systems: the runner writes a "
                               f"recipe by an atomic rename from {runs_dir(self.root)}, which needs them on one")
        write_synced(staged, data, mode)
        return staged


def _nearest_existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def write_synced(path: Path, data: bytes, mode: int) -> None:
    """A new file with `data`, its permission bits and its bytes on disk (fsync) before it is renamed anywhere."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def current_bytes(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def mode_of(path: Path, default: int = DEFAULT_MODE) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return default


# --- commit --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """SIGINT and SIGTERM wait until the block ends (pthread_sigmask for this thread; handlers that only record
    for a signal another thread takes). Afterwards they act as they would have: KeyboardInterrupt, termination."""
    arrived: list[int] = []
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    for s in _SIGNALS:
        signal.signal(s, lambda signum, frame: arrived.append(signum))
    try:
        yield arrived
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a pending signal is delivered here
        for s in dict.fromkeys(arrived):  # recorded by the stand-in handlers, not left pending
            signal.raise_signal(s)


def stage(changes: list[FileChange], staging: Staging) -> list[Path | None]:
    """Writes each change's new bytes into the staging folder (fsynced); None for a removal."""
    return [staging.write(c.path, c.new, c.mode) if c.new is not None else None for c in changes]


def commit(changes: list[FileChange], staged: list[Path | None], staging: Staging,
           announce: Callable[[list[Path]], None]) -> list[Path]:
    """Applies the staged changes in order under held signals; `announce` is called with the written paths once
    all are in place (still under held signals, so its message is out before a Ctrl-C acts).
    Raises Changed (nothing written), CommitFailed (says what was written), InterruptedAfterCommit."""
    backups = [staging.write(c.path, c.old, c.mode, ".old") if c.old is not None and len(changes) > 1 else None
               for c in changes]
    written: list[Path] = []
    try:
        with _signals_held():
            for c in changes:
                if current_bytes(c.path) != c.old:
                    raise Changed(f"{c.path} changed while it was being measured (edited meanwhile?); nothing "
                                  "written. Run again.")
            for i, c in enumerate(changes):
                try:
                    _apply(c, staged[i])
                except OSError as exc:
                    raise CommitFailed(_failure(c, exc, changes, written, backups)) from None
                written.append(c.path)
                WRITTEN.append(c.path)
            announce(written)
    except KeyboardInterrupt:
        if len(written) == len(changes):
            raise InterruptedAfterCommit(written) from None
        raise
    return written


def _apply(change: FileChange, staged: Path | None) -> None:
    if staged is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(change.path)
    else:
        os.replace(staged, change.path)
    fsync_folder(change.path.parent)


def _failure(failed: FileChange, exc: OSError, changes: list[FileChange], written: list[Path],
             backups: list[Path | None]) -> str:
    """Undoes the renames already made (from the staged copies of the old files) and says what is on disk now."""
    reason = f"{failed.path}: {exc.strerror or exc}"
    undone, left = [], []
    for c in changes[: len(written)]:
        backup = backups[changes.index(c)]
        try:
            _apply(FileChange(c.path, c.old, c.new, c.mode), backup)
            undone.append(c.path.name)
        except OSError:
            left.append(c.path.name)
    if not left:
        note = f" ({', '.join(undone)} put back as it was)" if undone else ""
        return f"{reason}; nothing written{note}"
    return (f"{reason}; {', '.join(left)} was written but {failed.path.name} was not, and putting it back failed: "
            "`python -m generator check` still passes (the new evidence embeds the old one for the old recipe "
            "text); the next remeasure of this recipe rolls it back")


# --- an interrupted write found later ------------------------------------------------------------------------


def rollback_change(recipe: Path) -> tuple[FileChange, str] | None:
    """When the recipe's sidecar was renamed into place by a write that was killed before the recipe's rename:
    the change that restores the sidecar the recipe was measured with, and what happened, in words."""
    try:
        found = evidence.load(recipe)
        raw = current_bytes(recipe)
        which = evidence.describing(found.data, raw) if found else None
    except (evidence.EvidenceError, OSError):
        return None
    if found is None or which is None or not which.interrupted:
        return None
    measured = (found.data.get("result") or {}).get("measured") if isinstance(found.data.get("result"), dict) else None
    restored = evidence.dumps(which.data).encode() if which.data is not None else None
    what = (f"{recipe}: an earlier remeasure was killed after writing {found.path.name} and before writing the "
            f"recipe (its measurement of {measured} is not in the recipe); "
            + ("its evidence is rolled back to the one this recipe was measured with" if restored is not None
               else f"{found.path.name} is removed (the recipe had no evidence before)"))
    return FileChange(found.path, restored, found.text.encode(), mode_of(found.path)), what
