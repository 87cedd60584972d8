"""Which files a command names: files, folders (walked for *.onnx) and globs, without following a symlink into
a loop. The CLI's cache hits need this and no more of loading (which defines the model-file types)."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
from pathlib import Path

from onnxlint.support.errors import InputError


class FolderPath(type(Path())):  # type: ignore[misc]
    """`-o out/`: the trailing separator says a folder, whether or not it exists yet (Path drops it)."""


def output_path(text: str) -> Path:
    """-o's argument: a FolderPath when it ends with a separator, else a Path."""
    return FolderPath(text) if text.endswith(("/", os.sep)) else Path(text)


def expand_paths(args: list[str]) -> list[Path]:
    """Files, directories (recursing for *.onnx) and globs; a path that does not exist is an input error.

    Recursive walks (a directory argument, `**` in a glob) never follow a symlink to a directory (a loop such
    as `a -> .` would never end), while the arguments themselves are followed. A folder that cannot be
    listed is an input error, never skipped in silence. FIFOs, devices and sockets are listed like files and
    refused by load() (one line per file) before anything opens them."""
    found: list[Path] = []
    for arg in args:
        p = Path(arg)
        st = _stat_arg(arg)
        if st is not None and stat.S_ISDIR(st.st_mode):
            hits = _walk_onnx(p)
            if not hits:
                raise InputError(arg, "no .onnx files found under this directory")
            found.extend(hits)
        elif st is not None:
            found.append(p)  # a FIFO, device or socket is refused by load(), per file, before any open()
        elif any(ch in arg for ch in "*?["):
            hits = _glob(arg)
            if not hits:
                raise InputError(arg, "no file matches this pattern")
            found.extend(hits)
        else:
            raise InputError(arg, "no such file or directory")
    unique, seen = [], set()
    cwd = os.getcwd()  # os.path.abspath would ask the OS for it once per file
    for p in found:
        key = os.path.normpath(os.path.join(cwd, p))
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def _stat_arg(arg: str) -> os.stat_result | None:
    """stat() of a command-line path; None when it does not exist (it may still be a glob)."""
    try:
        return os.stat(arg)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        raise InputError(arg, "permission denied (a folder on the way cannot be entered)") from None
    except (OSError, ValueError) as exc:  # ELOOP, ENAMETOOLONG, an embedded NUL
        raise InputError(arg, f"cannot access: {getattr(exc, 'strerror', None) or exc}") from None


def _scandir(d: str) -> list[os.DirEntry]:
    try:
        with os.scandir(d or ".") as it:
            return list(it)
    except PermissionError:
        raise InputError(d or ".", "permission denied: this folder cannot be listed") from None
    except OSError as exc:
        raise InputError(d or ".", f"cannot list this folder: {exc.strerror or exc}") from None


def _is_real_dir(e: os.DirEntry) -> bool:
    """A directory that is not a symlink (walks never follow those)."""
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _walk_onnx(root: Path) -> list[Path]:
    """Every *.onnx under root that is not a directory, without following symlinks to directories."""
    out: list[str] = []
    stack = [str(root)]
    while stack:
        d = stack.pop()
        for e in _scandir(d):
            if _is_real_dir(e):
                stack.append(e.path)
            elif e.name.endswith(".onnx") and not e.name.startswith(".onnxlint-"):  # not our own temporary files
                try:
                    if e.is_symlink() and e.is_dir():
                        continue  # a symlink to a folder: not followed
                except OSError:
                    pass  # a dangling link: kept, and reported as missing
                out.append(e.path)
    if os.altsep is None:  # POSIX: Path's own order (by parts), without comparing Path objects (slow per pair)
        return [Path(s) for s in sorted(out, key=lambda s: s.split(os.sep))]
    return sorted(Path(s) for s in out)


_MAGIC = re.compile(r"[*?[]")


def _glob(pattern: str) -> list[Path]:
    """glob.glob(pattern, recursive=True), except that `**` never descends through a symlink to a folder."""
    if "**" not in pattern:
        return sorted(Path(h) for h in glob.glob(pattern))  # depth bounded by the pattern: no loop possible
    parts = pattern.split(os.sep) if os.altsep is None else re.split(r"[\\/]", pattern)
    i = next(k for k, part in enumerate(parts) if _MAGIC.search(part))
    root = os.sep.join(parts[:i])
    if not root and pattern.startswith(os.sep):
        root = os.sep
    pats = [part for part in parts[i:] if part not in ("", ".")]
    end = len(pats)

    def closure(states: set[int]) -> set[int]:  # `**` matches zero folders too
        out, todo = set(), list(states)
        while todo:
            st = todo.pop()
            if st not in out:
                out.add(st)
                if st < end and pats[st] == "**":
                    todo.append(st + 1)
        return out

    hits: list[Path] = []
    if root and not os.path.isdir(root):
        return hits
    stack = [(root, closure({0}))]
    while stack:
        d, states = stack.pop()
        for e in _scandir(d):
            name = e.name
            nxt: set[int] = set()
            for st in states:
                if st == end:
                    continue
                pat = pats[st]
                if pat == "**":
                    if not name.startswith("."):
                        nxt.add(st)
                elif (not name.startswith(".") or pat.startswith(".")) and fnmatch.fnmatchcase(name, pat):
                    nxt.add(st + 1)
            if not nxt:
                continue
            nxt = closure(nxt)
            path = os.path.join(d, name) if d else name
            if end in nxt:
                hits.append(Path(path))
            if _is_real_dir(e) and any(st < end for st in nxt):
                stack.append((path, nxt))
    return sorted(set(hits))


def rule_files(directory: Path, recursive: bool = True) -> list[Path]:
    """The rule files of a folder: every *.yaml/*.yml regular file (a link to a file followed, dot-files
    included); a recursive walk never enters a linked folder (two links to `.` would never end). The rule
    loader reads exactly these and the result cache's key hashes exactly these: one function for both, so a
    file one reads can never be missing from the other."""
    found = directory.rglob("*") if recursive else directory.glob("*")
    return sorted(p for p in found if p.suffix in (".yaml", ".yml") and p.is_file())
