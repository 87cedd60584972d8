"""The cache folder: where it is, entries written atomically and read back, and `clean`."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

from onnxlint.support import reading, worktree

DEFAULT_DIR = ".onnxlint_cache"
ENV_DIR = "ONNXLINT_CACHE_DIR"
FORMAT = "1"  # entry layout; bump on any change to what an entry holds
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# onnxlint result cache (https://bford.info/cachedir/)\n"


def default_dir() -> Path:
    """$ONNXLINT_CACHE_DIR, else `.onnxlint_cache` in the current folder where that lies in a git work tree, else
    (a checkout without .git: a source archive, a CI checkout made without git) a folder for the current one in the
    user's cache home. A `.onnxlint_cache/` that came with such a checkout was written by whoever chose its files,
    and without git nothing tells it from onnxlint's own (`committed`)."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    cwd = os.getcwd()
    got = _DEFAULT.get(cwd)
    if got is None:
        home = None if worktree.root(os.path.realpath(cwd), {}) is not None else _user_cache_home()
        got = _DEFAULT[cwd] = Path(DEFAULT_DIR) if home is None else \
            home / "onnxlint" / hashlib.blake2b(os.fsencode(os.path.realpath(cwd)), digest_size=8).hexdigest()
    return got


_DEFAULT: dict[str, Path] = {}  # the current folder -> its default cache folder


def _user_cache_home() -> Path | None:
    """$XDG_CACHE_HOME, %LOCALAPPDATA% (Windows) or ~/.cache; None when there is no home to put it in (the cache
    then stays in the current folder, as in a work tree)."""
    for var in ("XDG_CACHE_HOME", "LOCALAPPDATA"):
        value = os.environ.get(var)
        if value and os.path.isabs(value):
            return Path(value)
    try:
        return Path.home() / ".cache"
    except (RuntimeError, KeyError):
        return None


MAX_ENTRY_BYTES = 256 << 20  # an entry over this is not read (a miss): a forged one must not cost a run its memory
_GITIGNORE = "# created by onnxlint\n*\n"
# what onnxlint writes inside its folder: entries (the key in hex) and, for a moment, their temporary files
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.json")
_TEMP_NAME = re.compile(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp")
_OWNED: dict[str, bool] = {}  # folders known to be onnxlint's cache in this process


def is_cache(cache_dir: str | os.PathLike) -> bool:
    """Whether cache_dir is a folder onnxlint made for its cache: it holds onnxlint's CACHEDIR.TAG, a regular
    file (never a link) with exactly the bytes onnxlint writes. Nothing is read from or written to any other."""
    try:
        st = os.lstat(os.path.join(cache_dir, "CACHEDIR.TAG"))
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(_TAG):
            return False
        with open(os.path.join(cache_dir, "CACHEDIR.TAG"), "rb") as fh:
            return fh.read(len(_TAG) + 1) == _TAG.encode()
    except OSError:
        return False


def _claim(cache_dir: Path) -> bool:
    """Whether entries may be written in cache_dir: it is onnxlint's cache, or it did not exist and onnxlint has
    just made it. An existing folder that is not onnxlint's cache (a project, $HOME, an empty folder made by
    someone else) is never marked or filled: the run is then uncached.

    A new folder appears with its tag: it is made under a temporary name beside it, tagged, then renamed into
    place (a concurrent run sees no folder, or a tagged one)."""
    d = os.path.abspath(cache_dir)
    if d in _OWNED:
        return True
    made = False
    if not os.path.lexists(d):
        parent = os.path.dirname(os.path.abspath(d))
        tmp = os.path.join(parent, f".{os.path.basename(os.path.abspath(d))}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            os.makedirs(parent, exist_ok=True)
            os.mkdir(tmp)
            for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", _GITIGNORE)):
                with open(os.path.join(tmp, name), "x", encoding="utf-8") as fh:
                    fh.write(text)
            os.rename(tmp, d)  # fails when d appeared meanwhile (another run's, or not a cache: checked below)
            made = True
        except OSError:
            pass
        finally:
            if os.path.isdir(tmp) and not os.path.islink(tmp):
                for name in ("CACHEDIR.TAG", ".gitignore"):
                    try:
                        os.unlink(os.path.join(tmp, name))
                    except OSError:
                        pass
                try:
                    os.rmdir(tmp)
                except OSError:
                    pass
    if not is_cache(d) or (not made and committed(d)):
        return False
    _OWNED[d] = True
    return True


def committed(cache_dir: str | os.PathLike) -> bool:
    """Whether git tracks cache_dir's tag: a cache that came with a checkout was written by whoever chose the
    repository's files (a report saying a model is clean, under the key of that model's bytes), so nothing is read
    from or written to it. Outside a work tree no git is asked; inside one, git failing to answer (not installed,
    a repository it will not read) counts as tracked. git runs with the repository's fsmonitor hook off."""
    if worktree.root(os.path.abspath(cache_dir), {}) is None:
        return False
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    try:
        out = subprocess.run(["git", "-c", "core.fsmonitor=false", "-C", os.fspath(cache_dir), "ls-files", "-z", "--",
                              "CACHEDIR.TAG"], stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return True
    return out.returncode != 0 or bool(out.stdout)


def load_entry(cache_dir: Path, path: str | os.PathLike, k: str) -> dict[str, Any] | None:
    """An entry's JSON when it is one stored under key k in onnxlint's cache folder cache_dir, within
    MAX_ENTRY_BYTES; None otherwise (raises on an unreadable or truncated file). Nesting too deep for the
    JSON decoder is a miss too."""
    d = os.path.abspath(cache_dir)
    if d not in _OWNED:
        if not is_cache(d) or committed(d):
            return None
        _OWNED[d] = True
    if not _unlinked(d, path):
        return None
    try:  # the read guard: a FIFO or a device named like an entry is a miss, never opened blocking
        raw = reading.read_regular(path, reading.within(MAX_ENTRY_BYTES, "a cache entry"))
    except reading.Refused as exc:
        if str(exc) == "no such file or directory":
            raise FileNotFoundError(path) from None
        return None
    try:
        data = json.loads(raw)
    except RecursionError:
        return None
    return data if isinstance(data, dict) and data.get("key") == k else None


def _atomic_write(target: Path, data: bytes) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def write_entry(cache_dir: Path, target: str | os.PathLike, data: bytes) -> bool:
    """Write an entry (a model's, a run's, a rule set's) at target inside cache_dir; False when it cannot be
    (cache_dir is not onnxlint's cache, a read-only checkout, a full disk: lint still works, uncached)."""
    try:
        if not _claim(cache_dir):
            return False
        target = Path(target)
        if not _unlinked(cache_dir, target):
            return False
        _make_below(cache_dir, target.parent)
        _atomic_write(target, data)
        return True
    except OSError:
        return False


def _make_below(cache_dir: str | os.PathLike, folder: str | os.PathLike) -> None:
    """The folders from cache_dir down to folder, cache_dir itself never: gone (`onnxlint clean` in another process,
    since this one claimed it), it is not made again untagged, where every later run took it for a folder that is
    not onnxlint's cache (uncached, and `onnxlint clean` refused it). OSError then: this entry is not stored."""
    at = os.path.abspath(cache_dir)
    for part in os.path.relpath(os.path.abspath(folder), at).split(os.sep):
        at = os.path.join(at, part)
        try:
            os.mkdir(at)
        except FileExistsError:
            pass


def _unlinked(cache_dir: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Whether path lies in cache_dir with no symbolic link from there down, itself included. A repository can
    commit links where the cache's own folders are (`v1/eb`, `v1/runs`: git ignores them, and a checkout puts
    the links in their place): an entry written or read through one would be outside the cache."""
    at = os.path.abspath(cache_dir)
    rel = os.path.relpath(os.path.abspath(path), at)
    if rel == os.curdir or rel.split(os.sep, 1)[0] == os.pardir:
        return False
    for part in rel.split(os.sep):
        at = os.path.join(at, part)
        if os.path.islink(at):
            return False
    return True


def clean(cache_dir: str | os.PathLike | None = None, kept: list[str] | None = None) -> int | None:
    """Delete what onnxlint wrote in its cache folder: entries and temporary files under its v<N> folders, then
    the tag and .gitignore and the folder itself once nothing else is left. Links are never followed and never
    removed; a file onnxlint would not have written stays (listed in kept), and so does the folder, still tagged.

    The number of files removed, or None when cache_dir is not onnxlint's cache, or is one git tracks (committed:
    whoever chose the repository's files wrote it): nothing is touched."""
    d = Path(cache_dir) if cache_dir is not None else default_dir()
    _OWNED.pop(os.path.abspath(d), None)
    if not is_cache(d) or os.path.islink(d) or committed(d):
        return None
    removed = 0
    for _ in range(_CLEAN_PASSES):
        left: list[str] = []
        removed += _clean_pass(d, left)
        if left:  # what onnxlint did not write stays, and the folder with it, still tagged
            break
        removed += _unlink(os.fspath(d / "CACHEDIR.TAG"), left)
        try:
            os.rmdir(d)
            break
        except OSError:  # a run that was writing put an entry in it since: the folder is tagged again and cleaned
            # once more (untagged, with entries, every later run took it for not onnxlint's cache); the files made
            # again are counted by the pass that removes them for good
            removed -= _tag(d)
    else:
        left = [os.fspath(d)]
    if kept is not None:
        kept.extend(left)
    return removed


_CLEAN_PASSES = 5  # a run writing while the folder is cleaned: its entries are taken by another pass


def _tag(d: Path) -> int:
    """Tag d again (its CACHEDIR.TAG and .gitignore, each where missing); how many files were made."""
    made = 0
    for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", _GITIGNORE)):
        with contextlib.suppress(OSError), open(d / name, "x", encoding="utf-8") as fh:
            fh.write(text)
            made += 1
    return made


def _clean_pass(d: Path, left: list[str]) -> int:
    """Remove onnxlint's entries and temporary files in d, and its .gitignore once nothing else is left; the
    number removed. What stays is listed in left."""
    removed = 0
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except OSError:  # tagged, but it cannot be listed (entered, not read): nothing removed, the folder kept
        left.append(os.fspath(d))
        return 0
    for entry in entries:
        if entry.name in ("CACHEDIR.TAG", ".gitignore"):
            continue
        if _VERSION_NAME.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            removed += _clean_tree(entry.path, left)
        elif _TEMP_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            removed += _unlink(entry.path, left)
        else:
            left.append(entry.path)
    gitignore = d / ".gitignore"
    if not left:  # else the folder stays a cache, tag and .gitignore included
        if not os.path.lexists(gitignore):
            ours = True
        else:  # through the read guard: a FIFO named .gitignore is not ours, and never opened blocking
            try:
                ours = not os.path.islink(gitignore) and reading.read_regular(
                    gitignore, reading.within(len(_GITIGNORE), "onnxlint's .gitignore")) == _GITIGNORE.encode()
            except reading.Refused:
                ours = False
        if not ours:
            left.append(os.fspath(gitignore))
        elif os.path.lexists(gitignore):
            removed += _unlink(os.fspath(gitignore), left)
    return removed


_VERSION_NAME = re.compile(r"v[0-9]+")


def _clean_tree(folder: str, left: list[str]) -> int:
    """Remove onnxlint's entries and temporary files under folder (never through a link), then every folder
    left empty; anything else stays, listed in left. A loop, not a recursion: a committed tree thousands of
    folders deep is walked like any other (a folder that cannot be listed stays, listed)."""
    removed = 0
    stack: list[tuple[str, bool]] = [(folder, False)]
    while stack:
        d, listed = stack.pop()
        if listed:  # its contents are done: remove it if they all went
            try:
                os.rmdir(d)
            except OSError:
                pass  # not empty: what stays in it is listed
            continue
        stack.append((d, True))
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            left.append(d)
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, False))
            elif (_ENTRY_NAME.fullmatch(entry.name) or _TEMP_NAME.fullmatch(entry.name)) and \
                    entry.is_file(follow_symlinks=False):
                removed += _unlink(entry.path, left)
            else:
                left.append(entry.path)
    return removed


def _unlink(path: str, left: list[str]) -> int:
    try:
        os.unlink(path)
        return 1
    except OSError:
        left.append(path)
        return 0
