"""Which paths a folder walk leaves out, as ruff's does: excluded folders (`.venv`, `node_modules`, hidden ones),
the user's `exclude` / `extend-exclude` patterns, and what git ignores.

Patterns (the command line's, relative to the current folder; a config file's, relative to that file's folder):
a pattern without `/` matches a file or folder name anywhere (`venv`, `*.tmp.onnx`); one with `/` matches the
path from its base (`models/legacy`, `exports/**/draft_*.onnx`); a trailing `/` matches folders only (`.*/`:
every hidden folder). `*` and `?` stay within one name, `**` spans folders. A folder that matches is not entered.

.gitignore: inside a git work tree, git itself says what it ignores (`git ls-files --others --ignored
--exclude-standard --directory`, once per repository: nested .gitignore files, negations, .git/info/exclude and
the user's global excludes all as git reads them; a tracked file is never ignored). Outside a repository no
.gitignore applies, as for git. git runs with the repository's fsmonitor hook turned off: the repository under
review never starts a command of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Protocol

from onnxlint.support import worktree

# What a walk skips unless the user's `exclude` replaces it (`extend-exclude` adds to it): hidden folders
# (.git, .venv, .tox, .cache ...), virtual environments by their usual names and wherever pip installs packages.
DEFAULT_EXCLUDE: tuple[str, ...] = (".*/", "venv/", "node_modules/", "site-packages/", "__pypackages__/")


@dataclass(frozen=True)
class Pattern:
    text: str  # as the user wrote it (for messages)
    base: str  # absolute folder an anchored pattern is relative to
    regex: Matcher  # a compiled regex, or a _Glob where a regex of it would backtrack
    anchored: bool  # holds a `/` (besides a trailing one): matched against the path from base
    dir_only: bool


def _compile(rx: str, flags: int = 0) -> re.Pattern[str]:
    """re.compile without its FutureWarning on a class holding `[`, `--`, `&&`, `~~` or `||` (a pattern such as
    `[[a]x.onnx`): Python reads them literally, as the class means, and the warning would be a raw stderr line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(rx, flags)


def _tokens(glob: str) -> list[tuple[str, str]]:
    """A glob over `/`-separated paths as (kind, regex) tokens: a character (`c`, `?`, a `[...]` class) or a star
    (`*` within one name, `**` across folders, `**/` zero or more folders)."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i):
            out.append(("**/", "(?:.*/)?"))
            i += 3
        elif glob.startswith("**", i):
            out.append(("**", ".*"))
            i += 2
        elif c == "*":
            out.append(("*", "[^/]*"))
            i += 1
        elif c == "?":
            out.append(("c", "[^/]"))
            i += 1
        elif c == "[":
            j = glob.find("]", i + 2 if glob[i + 1:i + 2] in ("!", "]") else i + 1)
            if j < 0:
                out.append(("c", re.escape(c)))
                i += 1
            else:
                body = glob[i + 1:j].replace("\\", "\\\\")
                cls = "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
                try:
                    _compile(cls)
                except re.error:  # a range such as [z-a]: it matches nothing (as git's)
                    cls = "(?!)"
                out.append(("c", cls))
                i = j + 1
        else:
            out.append(("c", re.escape(c)))
            i += 1
    return out


def _translate(glob: str) -> str:
    """A glob over `/`-separated paths as a regex: `*`, `?`, `[...]` within one name, `**` across folders."""
    return "".join(rx for _, rx in _tokens(glob))


class _Glob:
    """A glob with two or more stars, matched in time linear in the path (a regex of them backtracks: 12 stars
    of `*a` against a 35-letter name took 13 s): the set of pattern positions reachable after each character
    (as a Thompson NFA), held as the bits of an int, so that a character costs a few operations on it, not one a
    position (a config's 4,096-character `*a*a...b`, every position live against a name of `a`s, took a second
    a name; 31 of them on 300 files ran past 5 minutes). .match(text) is a whole-text match, like the regex's
    `\\Z`."""

    def __init__(self, tokens: list[tuple[str, str]]):
        self.end = end = len(tokens)
        by_rx: dict[str, int] = {}  # a character token's regex -> the bits of its positions
        self.star = self.dstar = self.dslash = 0
        for k, (kind, rx) in enumerate(tokens):
            if kind == "c":
                by_rx[rx] = by_rx.get(rx, 0) | 1 << k
            elif kind == "*":
                self.star |= 1 << k
            elif kind == "**":
                self.dstar |= 1 << k
            else:  # `**/`: bit k of the inside set is being inside it (past its next `/`, the token after it)
                self.dslash |= 1 << k
        self.skip = self.star | self.dstar | self.dslash  # stars match nothing too
        self.classes = [(_compile(rx, re.S), bits) for rx, bits in by_rx.items()]
        self.masks: dict[str, int] = {}  # a character -> the positions of the tokens it matches
        self.accept = 1 << end

    def _closure(self, states: int) -> int:
        """states and the positions each reaches through stars matching nothing: a run of star positions above
        a state is crossed by one addition's carry (and the position after the run is reached)."""
        skip = self.skip
        return states | ((skip + (states & skip)) ^ skip)

    def _mask(self, ch: str) -> int:
        got = self.masks.get(ch)
        if got is None:
            got = 0
            for rx, bits in self.classes:
                if rx.match(ch):
                    got |= bits
            self.masks[ch] = got
        return got

    def match(self, text: str) -> bool:
        star, dstar, dslash = self.star, self.dstar, self.dslash
        states, inside = self._closure(1), 0
        for ch in text:
            nxt = (states & self._mask(ch)) << 1 | states & dstar
            entering = states & dslash
            if ch == "/":
                nxt |= (entering | inside) << 1
            else:
                nxt |= states & star
            inside |= entering
            if not nxt and not inside:
                return False
            states = self._closure(nxt)
        return bool(states & self.accept)


class Matcher(Protocol):
    def match(self, text: str, /) -> Any: ...


def _matcher(glob: str) -> Matcher:
    tokens = _tokens(glob)
    if sum(k != "c" for k, _ in tokens) >= 2:
        return _Glob(tokens)
    return _compile("".join(rx for _, rx in tokens) + r"\Z", re.S)


def compile_pattern(text: str, base: str) -> Pattern:
    """One exclude pattern, relative to base (an absolute folder)."""
    body = text.replace(os.sep, "/") if os.sep != "/" else text
    dir_only = body.endswith("/")
    body = body.rstrip("/")
    while body.startswith("./"):
        body = body[2:]
    anchored = "/" in body
    body = body.lstrip("/")
    return Pattern(text, base, _matcher(body), anchored, dir_only)


def compile_all(texts: Iterable[str], base: str) -> tuple[Pattern, ...]:
    return tuple(compile_pattern(t, base) for t in texts if t and t.strip())


def _relative(path: str, base: str) -> str | None:
    """path (absolute, normalised) from base, `/`-separated; None when it is not under base."""
    if path == base:
        return ""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    rel = path[len(prefix):]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def matches(patterns: Iterable[Pattern], path: str, is_dir: bool) -> Pattern | None:
    """The first pattern that excludes this one path (absolute, normalised), its ancestors not considered."""
    name = os.path.basename(path)
    for p in patterns:
        if p.dir_only and not is_dir:
            continue
        if p.anchored:
            rel = _relative(path, p.base)
            if rel and p.regex.match(rel):
                return p
        elif p.regex.match(name):
            return p
    return None


def matches_with_parents(patterns: Iterable[Pattern], path: str, stop: str) -> Pattern | None:
    """The pattern that excludes path or one of its folders below stop (an absolute folder): how a file named on
    the command line is judged with force-exclude (a walk never enters an excluded folder, so it judges names
    one level at a time)."""
    patterns = tuple(patterns)
    got = matches(patterns, path, False)
    if got is not None:
        return got
    rel = _relative(path, stop)
    if not rel:
        return None
    parts = rel.split("/")[:-1]
    d = stop
    for part in parts:
        d = os.path.join(d, part)
        got = matches(patterns, d, True)
        if got is not None:
            return got
    return None


# ----------------------------------------------------------------------------- git


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):  # set by a hook around us: it names another repo
        env.pop(k, None)
    return env


@lru_cache(maxsize=64)
def git_ignored(root: str) -> frozenset[str] | None:
    """What git ignores in the work tree at root (relative `/`-separated paths, folders with a trailing `/`,
    untracked only), or None when git cannot say (not installed, not a repository it will read)."""
    cmd = ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C", root, "ls-files", "-z",
           "--others", "--ignored", "--exclude-standard", "--directory"]
    try:
        out = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=_git_env(), timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return frozenset(p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


@dataclass
class Walk:
    """What a folder walk leaves out. config_patterns(folder): the `exclude` (None: not set) and
    `extend-exclude` patterns of the config in force for that folder; cli and extend: the command line's
    `--exclude` and `--extend-exclude`. In force: `--exclude`, else the config's `exclude`, else
    DEFAULT_EXCLUDE; then the config's `extend-exclude` and `--extend-exclude` (ruff's precedence). notes
    collects what the user should know (git could not say what it ignores)."""

    cli: tuple[Pattern, ...] | None = None
    extend: tuple[Pattern, ...] = ()
    config_patterns: Callable[[str], tuple[tuple[Pattern, ...] | None, tuple[Pattern, ...]]] | None = None
    respect_gitignore: bool = True
    force_exclude: bool = False
    notes: list[str] = field(default_factory=list)
    _repos: dict[str, str | None] = field(default_factory=dict)  # folder -> its work tree's root (None: none)
    _defaults: tuple[Pattern, ...] = field(default_factory=tuple)

    def patterns(self, folder: str) -> tuple[Pattern, ...]:
        """Every pattern in force for an entry of folder (absolute)."""
        configured, extended = self.config_patterns(folder) if self.config_patterns is not None else (None, ())
        if self.cli is not None:
            base = self.cli
        elif configured is not None:
            base = configured
        else:
            if not self._defaults:
                self._defaults = compile_all(DEFAULT_EXCLUDE, os.sep)
            base = self._defaults
        return base + extended + self.extend

    def excluded(self, path: str, is_dir: bool) -> str | None:
        """Why a walk leaves path (absolute, normalised) out: `exclude pattern 'x'`, `.gitignore`, or None."""
        folder = os.path.dirname(path)
        hit = matches(self.patterns(folder), path, is_dir)
        if hit is not None:
            return f"exclude pattern {hit.text!r}"
        if self.respect_gitignore and self._git_ignores(path, is_dir):
            return ".gitignore"
        return None

    def excluded_named(self, path: str) -> str | None:
        """With force_exclude, why a file named on the command line is left out (its folders below the current
        folder judged too), or None. .gitignore is not asked: a hook passes the files git tracks."""
        if not self.force_exclude:
            return None
        cwd = os.getcwd()
        hit = matches_with_parents(self.patterns(os.path.dirname(path)), path, cwd if _relative(path, cwd) else
                                   os.path.dirname(path))
        return f"exclude pattern {hit.text!r}" if hit is not None else None

    def _root(self, folder: str) -> str | None:
        return worktree.root(folder, self._repos)  # from the parent's answer: a walk asks for every folder

    def _git_ignores(self, path: str, is_dir: bool) -> bool:
        root = self._root(os.path.dirname(path))
        if root is None:
            return False
        ignored = git_ignored(root)
        if ignored is None:
            note = f".gitignore not applied under {root}: git could not list what it ignores there"
            if note not in self.notes:
                self.notes.append(note)
            return False
        rel = _relative(path, root)
        # the path itself only: a walk never enters an ignored folder, and one named on the command line is
        # walked (as ruff does), so what git reports whole (`build/`) is not asked about from inside
        return rel is not None and rel != "" and (rel in ignored or (is_dir and rel + "/" in ignored))


