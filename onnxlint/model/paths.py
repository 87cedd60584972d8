"""Which files a command names: files, folders (walked for *.onnx) and globs, without following a symlink into
a loop, leaving out what `excludes.Walk` excludes (.gitignore, hidden and virtual-environment folders, the
user's patterns). The CLI's cache hits need this and no more of loading (which defines the model-file types)."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
from pathlib import Path

from onnxlint.model.excludes import Walk
from onnxlint.support.errors import InputError


class FolderPath(type(Path())):  # type: ignore[misc]
    """`-o out/`: the trailing separator says a folder, whether or not it exists yet (Path drops it)."""


def output_path(text: str) -> Path:
    """-o's argument: a FolderPath when it ends with a separator, else a Path."""
    return FolderPath(text) if text.endswith(("/", os.sep)) else Path(text)


def expand_paths(args: list[str], walk: Walk | None = None, literal: bool = False) -> list[Path]:
    """Files, directories (recursing for *.onnx) and globs; a path that does not exist is an input error.

    Recursive walks (a directory argument, `**` in a glob) never follow a symlink to a directory (a loop such
    as `a -> .` would never end), while the arguments themselves are followed. A folder that cannot be
    listed is an input error, never skipped in silence. FIFOs, devices and sockets are listed like files and
    refused by load() (one line per file) before anything opens them.

    walk: what folder walks and glob matches leave out (default: `excludes.Walk()`, hidden and
    virtual-environment folders and .gitignore); a file named as an argument is left out only with its
    force_exclude (pre-commit names every staged file). literal: every argument is a path, never a pattern (the
    file names pre-commit passes: a staged `a[1].onnx` is that file, not also `a1.onnx`)."""
    walk = walk if walk is not None else Walk()
    found: list[Path] = []
    for arg in args:
        p = Path(arg)
        # a pattern is expanded even where a file of that very name exists (which is linted too): a committed
        # `models/*.onnx` must not stand in for every model the pattern names
        pattern = not literal and any(ch in arg for ch in "*?[")
        if os.path.islink(arg) and not os.path.exists(arg) and not pattern:
            # a dangling link (git-annex content not fetched) or a loop: that model's own error when it is read,
            # never the run's (a walk's files come through here again, and one such link ended the whole run)
            if walk.excluded_named(os.path.abspath(arg)) is None:
                found.append(p)
            continue
        st = _stat_arg(arg)
        hits: list[Path] = []
        left_out: list[str] = []
        if st is not None and stat.S_ISDIR(st.st_mode):
            hits = _walk_onnx(p, walk, left_out)
            if not hits and not pattern:
                why = f": {_left_out(left_out)}" if left_out else ""
                raise InputError(arg, f"no .onnx files found under this directory{why}")
            found.extend(hits)
        elif st is not None:
            if walk.excluded_named(os.path.abspath(arg)) is None:
                found.append(p)  # a FIFO, device or socket is refused by load(), per file, before any open()
        if pattern:
            hits, left_out = [], []
            matched = _glob(arg)
            if not matched:
                if st is not None:
                    continue
                raise InputError(arg, "no file matches this pattern")
            root = _glob_root(arg)
            for h in matched:
                if h.is_dir():  # a folder the pattern names is walked, as when a shell passes it; a link to one
                    if h.is_symlink():  # is not followed, as in any walk
                        left_out.append("folder: a link to a folder, not followed")
                    else:
                        hits.extend(_walk_onnx(h, walk, left_out))
                    continue
                why_not = _glob_hit_excluded(walk, os.path.abspath(h), root)
                if why_not:
                    left_out.append(f"model: {why_not}")
                else:
                    hits.append(h)
            if not hits and st is None:
                raise InputError(arg, f"every match of this pattern is excluded: {_left_out(left_out)}")
            found.extend(hits)
        elif st is None:
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


def _left_out(reasons: list[str]) -> str:
    """`2 folders and 1 model left out (exclude pattern '.*/', .gitignore); ...`: what the user would look for.
    reasons: `folder: why` or `model: why` per entry left out."""
    kinds: dict[str, int] = {}
    whys: dict[str, None] = {}
    for r in reasons:
        kind, why = r.split(": ", 1)
        kinds[kind] = kinds.get(kind, 0) + 1
        whys[why] = None
    counted = " and ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(kinds.items()))
    return (f"{counted} left out ({', '.join(sorted(whys))}); name a file to lint it anyway, or see --exclude and "
            "--respect-gitignore")


def _glob_hit_excluded(walk: Walk, path: str, root: str) -> str | None:
    """Why a glob's match is left out: as a walk from the pattern's literal folder (root) would leave it out,
    judged for each folder on the way and for the file."""
    rel = os.path.relpath(path, root)
    if rel.startswith(os.pardir):
        return walk.excluded(path, False)
    d = root
    for part in rel.split(os.sep)[:-1]:
        d = os.path.join(d, part)
        why = walk.excluded(d, True)
        if why is not None:
            return why
    return walk.excluded(path, False)


def _glob_root(pattern: str) -> str:
    """The folder a glob's literal part names (absolute): `exports/**/*.onnx` -> exports."""
    parts = pattern.split(os.sep) if os.altsep is None else re.split(r"[\\/]", pattern)
    literal = []
    for part in parts[:-1]:
        if _MAGIC.search(part):
            break
        literal.append(part)
    return os.path.abspath(os.sep.join(literal) if literal or not pattern.startswith(os.sep) else os.sep)


def _walk_onnx(root: Path, walk: Walk, left_out: list[str]) -> list[Path]:
    """Every *.onnx (any case: `M.ONNX` too) under root that is not a directory, without following symlinks to
    directories nor entering a folder the walk excludes (left_out gets why for each folder and model left out)."""
    out: list[str] = []
    stack = [(str(root), os.path.abspath(root))]
    while stack:
        d, absolute = stack.pop()
        for e in _scandir(d):
            if _is_real_dir(e):
                if e.name == ".git":  # git's own folder, whatever the excludes say (as git and ruff do)
                    continue
                full = os.path.join(absolute, e.name)
                why = walk.excluded(full, True)
                if why is None:
                    stack.append((e.path, full))
                else:
                    left_out.append(f"folder: {why}")
            elif e.name[-5:].lower() == ".onnx" and not _OWN_TEMPORARY.fullmatch(e.name):  # `M.ONNX` is a model too
                try:
                    if e.is_symlink() and e.is_dir():
                        continue  # a symlink to a folder: not followed
                except OSError:
                    pass  # a dangling link: kept, and reported as missing
                why = walk.excluded(os.path.join(absolute, e.name), False)
                if why is None:
                    out.append(e.path)
                else:
                    left_out.append(f"model: {why}")
    if os.altsep is None:  # POSIX: Path's own order (by parts), without comparing Path objects (slow per pair)
        return [Path(s) for s in sorted(out, key=lambda s: s.split(os.sep))]
    return sorted(Path(s) for s in out)


_MAGIC = re.compile(r"[*?[]")
# the names tempfile.mkstemp gives the numeric check's and verify's copies (prefix, 8 of its characters, suffix;
# a check child's session file is named after its parent's copy, `.s.` and 8 more): those alone are left out of a
# walk, not every model whose name starts like them
_OWN_TEMPORARY = re.compile(r"\.onnxlint-(?:check\.|verify\.|verify-)[a-z0-9_]{8}(?:\.s\.[a-z0-9_]{8})?\.onnx")


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
    found: list[Path] = []
    stack = [os.fspath(directory)]
    while stack:  # a loop, not pathlib's recursive rglob: a rules folder 1,200 folders deep was a RecursionError
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except PermissionError:
            continue  # as rglob: a folder that cannot be listed holds no rule file
        for e in entries:
            p = Path(e.path)
            if recursive and _is_real_dir(e):
                stack.append(e.path)
            elif p.suffix in (".yaml", ".yml") and p.is_file():
                found.append(p)
    return sorted(found)
