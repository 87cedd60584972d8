"""Where onnxlint may write: never over a model it reads or that model's external data, and only over a
regular file.

Every path a command writes (`-o` for a report or a fixed model, `--baseline`) is checked here before the run
writes anything: `-o weights.data` would replace a model's weights with a report, `--baseline model.onnx
--update-baseline` the model with JSON, and `-o` onto a FIFO or a device would block or be replaced by a
regular file. Reports and the baseline are written here too (replace_text): whole, and never through a link.
The result cache writes only in a folder it made (cache.folder)."""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable

from onnxlint.support import worktree
from onnxlint.support.errors import UsageError


def check_target(dest: Path, inputs: Iterable[Path], option: str, replaced_by: str) -> None:
    """UsageError when writing dest (what option names; replaced_by: what would be written) would destroy an
    input model or one of its external-data files, or replace something that is not a regular file. A link is
    judged by where it leads."""
    dest = Path(dest)
    try:
        st = os.stat(dest)
    except FileNotFoundError:
        return  # a new file: nothing it could replace (its folder is the caller's to check)
    except OSError as exc:
        raise UsageError(f"{option} {dest}: cannot be checked: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        return  # a folder: the caller decides (a fix writes into it; a report refuses it)
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{option} {dest}: is not a regular file (a FIFO, a device or a socket); not replaced")
    real = os.path.realpath(dest)
    for model in inputs:
        if os.path.realpath(model) == real:
            raise UsageError(f"{option} {dest}: is the model {model}, being read; {replaced_by} would overwrite it")
        # only in the model's folder or below can its external data be, or in the real folder of the file a linked
        # model leads to (loading.external: where ORT reads it too)
        folders = {os.path.realpath(Path(model).parent), os.path.dirname(os.path.realpath(model))}
        if any(worktree.inside(real, f) for f in folders) and real in _external_files(model):
            raise UsageError(f"{option} {dest}: is the external data file of {model}; {replaced_by} would destroy its "
                             "weights")


def same_file(a: Path, b: Path) -> bool:
    """Whether a and b are one file (a link, a hard link, another spelling); False when a does not exist."""
    try:
        return a.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_folder(dest: Path, option: str) -> None:
    """UsageError unless the folder dest is written in (dest itself when it is one) exists and is writable."""
    parent = dest if dest.is_dir() else dest.parent
    if not parent.is_dir():
        raise UsageError(f"{option} {dest}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{option} {dest}: folder {parent} is not writable")


# the folders this run made for its output (`--fix -o out/`), removed again when nothing was written in them
_MADE: list[str] = []


def make_folder(folder: Path) -> None:
    """Make the output folder `folder` (its parent exists); remove_made_empty() removes it if it stays empty."""
    folder.mkdir()
    _MADE.append(os.path.abspath(folder))


def remove_made_empty() -> None:
    """The folders make_folder made that are still empty (each fix refused, or nothing to fix): a run leaves
    nothing it made and did not use. rmdir removes only an empty folder, never one a file was put in meanwhile."""
    while _MADE:
        try:
            os.rmdir(_MADE.pop())
        except OSError:
            pass


def replace_text(dest: Path, text: str | Iterable[str]) -> None:
    """Write a report or baseline whole or not at all, never through a link: a new temporary file (O_EXCL, a name
    nobody chose) in dest's folder, renamed over dest. A repository can commit `onnxlint.sarif` or
    `baseline.json` as a link to a file outside it: the link is replaced, the file it leads to left as it was.
    text may come in pieces (a report rendered as it is written); dest is replaced once the last is written. The
    temporary file is locked while written; one a run killed while writing dest left is removed (remove_stale)."""
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(dest), suffix=".tmp", dir=dest.parent)
    held = os.dup(fd)  # locked until the file is renamed or removed: never stale to another run's remove_stale
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            lock(held)
            os.chmod(tmp, _mode_for(dest))  # mkstemp makes 0600
            fh.writelines((text,) if isinstance(text, str) else text)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    finally:
        os.close(held)
    remove_stale(dest)  # what a run killed while writing dest left (a placement report streams for minutes)


# a temporary file of onnxlint's naming (replace_text's, fixers.write's) left this long ago, and held by no process, is
# what a run killed while writing it (SIGKILL: the OOM killer, a CI runner's last resort) left behind: the next write
# of that file removes it
STALE_AFTER = 600


# how a file onnxlint may remove is opened to look at it: never through a link, never waiting on a FIFO
READ_OWN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def lock(fd: int) -> bool:
    """An exclusive flock on fd's file, not waiting (False: another open of it holds one). The kernel drops it
    when the holder's process ends, however it ends. True where there is no flock (Windows): nothing is removed
    there (remove_stale)."""
    if sys.platform == "win32":
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def hold(path: Path | str) -> int | None:
    """A descriptor of path holding its lock (close it to let go), for a temporary file of onnxlint's written by
    name (a rename gave it a new inode): never stale to another run's remove_unheld. None: it cannot be opened."""
    try:
        fd = os.open(path, READ_OWN)
    except OSError:
        return None
    lock(fd)
    return fd


def remove_stale(dest: Path) -> list[str]:
    """Remove, beside dest, the temporary files of the name a write of dest gives (`.<name>.` and mkstemp's 8
    characters, `.tmp`: replace_text's, fixers.write's) that are regular files of this user, unchanged for
    STALE_AFTER seconds and locked by no process (a writing one holds its lock from the file's creation to its
    rename). Returns their names."""
    return remove_unheld(dest.parent, re.compile(re.escape(temp_prefix(dest)) + r"[a-z0-9_]{8}\.tmp"))


def remove_unheld(folder: Path, own: re.Pattern[str]) -> list[str]:
    """Remove the files in folder whose whole name matches own (a naming only onnxlint gives its temporary files)
    that are regular files of this user, unchanged for STALE_AFTER seconds and locked by no process (their writer
    holds a lock from the file's creation to its rename or removal). Returns their names. Nothing on Windows."""
    if sys.platform == "win32":
        return []
    removed = []
    try:
        entries = [e for e in os.scandir(folder) if own.fullmatch(e.name)]
    except OSError:
        return []
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or time.time() - st.st_mtime < STALE_AFTER:
                continue
            fd = os.open(entry.path, READ_OWN)
            try:
                if lock(fd) and os.path.samestat(os.fstat(fd), st):
                    os.unlink(entry.path)
                    removed.append(entry.name)
            finally:
                os.close(fd)
        except OSError:
            continue  # gone meanwhile, or not ours to open: left as it is
    return removed


def temp_prefix(dest: Path) -> str:
    """The start of a temporary file's name beside dest: dest's name, cut short (a name of 250 bytes, legal, made
    a temporary name past the file system's 255 and the write failed, "File name too long")."""
    return f".{dest.name[:48]}."


def check_report_folder(dest: Path, option: str) -> None:
    """UsageError when a relative report path passes through a linked folder of the working folder's tree (the
    repository's files): a committed `reports` link to a folder outside would take `-o reports/lint.sarif` there.
    An absolute path, or one that leaves the working folder with `..`, is the caller's own choice."""
    if dest.is_absolute():
        return
    here = Path()
    for part in dest.parent.parts:
        if part == "..":
            return
        here = here / part
        if os.path.islink(here):
            raise UsageError(f"{option} {dest}: folder {here} is a symbolic link; a report is not written through a "
                             "link (name the folder it leads to)")


def _mode_for(dest: Path) -> int:
    """The replaced file's permission bits, as open() keeps them (a baseline committed 0600 stays so); a new file,
    or a link being replaced (never what it leads to), gets what open() would make."""
    try:
        st = os.lstat(dest)
    except OSError:
        st = None
    # its permission bits, never a set-id bit (a report or baseline is no program)
    return stat.S_IMODE(st.st_mode) & 0o777 if st is not None and stat.S_ISREG(st.st_mode) else 0o666 & ~umask()


def umask() -> int:
    """The process umask, read without changing it where the system says it (Linux /proc): setting it to learn
    it would race with other threads of a host that calls onnxlint.fix."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


_SEEN: dict[tuple[str, int, int], set[str]] = {}


def _external_files(model: Path) -> set[str]:
    """The real paths of the external-data files the model names inside its folder (any tensor: initializers,
    Constant values, attributes, sparse parts); none when it cannot be read (the lint reports that). Parsed
    once per file version (an in-place fix of a folder checks every model against every other)."""
    from onnxlint.model import loading
    from onnxlint.support.errors import InputError

    try:
        st = os.stat(model)
    except OSError:
        return set()
    k = (os.path.realpath(model), st.st_size, st.st_mtime_ns)
    if k not in _SEEN and stat.S_ISREG(st.st_mode) and not _names_a_location(model):
        _SEEN[k] = set()
    if k not in _SEEN:
        try:
            mf = loading.load(Path(model))
            _SEEN[k] = {os.path.realpath(t.path) for t in mf.external if not t.outside}
        except InputError:
            _SEEN[k] = set()
    return _SEEN[k]


def _names_a_location(model: Path) -> bool:
    """Whether the file's bytes hold "location", the key of every external-data entry (onnx's and ORT's readers
    ask for no other): a model without it names no data file and is not parsed to learn so (an existing `-o` file
    or baseline beside the models parsed each one again in full, seconds for models of hundreds of MB). True
    when it cannot be told (the parse decides)."""
    import mmap

    try:
        with open(model, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return mm.find(b"location") != -1
    except (OSError, ValueError):  # ValueError: an empty file, which mmap refuses
        return True
