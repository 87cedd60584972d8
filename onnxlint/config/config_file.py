"""Configuration: `[tool.onnxlint]` in the nearest pyproject.toml or a `.onnxlint.yaml`, searched upward.

The search starts at the model's folder and stops at the repository root (the nearest folder holding
`.git`); it goes above it only when asked (find_for(..., above_repo=True)). Outside a repository it goes up
to the filesystem root, but a config file there that is owned by another user (not the current user, not
root) is an error, never applied in silence. A config file that cannot be read or parsed (bad TOML or YAML,
not UTF-8, `tool = "x"`, a setting of the wrong type) is a RuleError naming the file (exit 2), never "no
config". Config.path is the file in force (absolute), None when none applies. A config file found in a
repository must be in it (not a link out of it), and so must the rules it names.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from onnxlint.rules.severity import SEVERITIES
from onnxlint.support import worktree
from onnxlint.support.errors import RuleError, first_line
from onnxlint.support.textfile import read_text, require_short_numbers
from onnxlint.targets import names as target_names
from onnxlint.targets.base import VersionError, parse_version

KEYS = {"select", "ignore", "extend-select", "targets", "severity", "per-file-ignores", "rules", "fail-on",
        "ort-version", "trt-version", "ort-optimization", "exclude", "extend-exclude", "force-exclude",
        "respect-gitignore"}
OPTIMIZATION_LEVELS = ("disabled", "basic", "all")
# entries of one list setting: 100,000 exclude patterns (a 1.4 MB config) made a walk of 2,000 files take 112 s
MAX_ENTRIES = 1000
# characters of one code, pattern, path or version: one 2 MB exclude pattern cost 6 s and 490 MB to compile, a 5 MB
# per-file-ignores pattern 10 s and 800 MB, and a 5 MB select code was quoted whole in its one error line
MAX_CHARS = 4096
# characters of all the path patterns of one config (exclude, extend-exclude, per-file-ignores' keys): 1,000
# patterns of 4,096 characters took 17 s to compile (per-file-ignores' `*a*a...`), and each model paid 0.24 s
# matching them; 128 Ki is 1,000 patterns of 131 characters, compiled within about half a second
MAX_PATTERN_CHARS = 1 << 17


@dataclass
class Config:
    path: Path | None = None
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    targets: list[str] | None = None
    severity: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    rules: list[Path] = field(default_factory=list)
    fail_on: str | None = None
    ort_version: str | None = None
    trt_version: str | None = None
    ort_optimization: str | None = None  # the session's graph optimization level (disabled, basic, all)
    # what a folder walk leaves out (model.excludes): exclude replaces the defaults, extend-exclude adds;
    # patterns relative to this file's folder. None: not set here
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    force_exclude: bool | None = None  # files named on the command line honour the excludes too (pre-commit)
    respect_gitignore: bool | None = None

    def describe(self) -> str:
        """One line naming the configuration in force, for the text summary and logs."""
        if self.path is None:
            return "config: none (defaults)"
        where = " [tool.onnxlint]" if self.path.name == "pyproject.toml" else ""
        return f"config: {self.path}{where}"

    def ignored_for(self, filename: str) -> list[str]:
        out = []
        base = self.path.parent if self.path else Path.cwd()
        try:
            rel = Path(filename).resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            rel = Path(filename).as_posix()
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(filename).name, pattern):
                out.extend(codes)
        return out


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _codes(value, where: str) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError(f"{where}: expected a list of rule codes or prefixes, got {_show(value)}")
    if not all(v.strip() for v in value):  # "" is a prefix of every code: `ignore = ["OLX013", ""]` ignored all
        raise RuleError(f"{where}: holds an empty entry (as a code prefix it would name every rule), got {_show(value)}")
    return value


def _patterns(data: dict, key: str, path: Path) -> list[str] | None:
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() and "\0" not in v for v in value):
        raise RuleError(f"{path}: {key} must be a list of path patterns, got {_show(data[key])}")
    return value


def _flag(data: dict, key: str, path: Path) -> bool | None:
    if key not in data:
        return None
    if not isinstance(data[key], bool):
        raise RuleError(f"{path}: {key} must be true or false, got {_show(data[key])}")
    return bool(data[key])


def _version(data: dict, key: str, path: Path) -> str | None:
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not str(value).strip():
        raise RuleError(f"{path}: {key} must be a version such as \"1.17\", got {_show(value)}")
    text = str(value).strip()
    if not (key == "ort-version" and text == "installed"):  # as the command line's --ort-version/--trt-version
        try:
            parse_version(text, "ORT" if key == "ort-version" else "TensorRT")
        except VersionError as exc:
            raise RuleError(f"{path}: {key}: {exc}") from None
    return text


def parse(data: dict, path: Path) -> Config:
    path = Path(path)
    if not isinstance(data, dict):
        what = "[tool.onnxlint] must be a table of settings" if path.suffix == ".toml" else \
            "the config must be a mapping of settings"
        raise RuleError(f"{path}: {what}, got {_show(data)}")
    for k in data:
        if k not in KEYS:
            name = f"'{k}'" if isinstance(k, str) and len(k) <= 60 else _show(k)
            raise RuleError(f"{path}: unknown onnxlint setting {name} (known: {', '.join(sorted(KEYS))})")
    for k, v in data.items():  # every path is matched against every pattern, every finding against every code
        for value in [v, *v.values()] if isinstance(v, dict) else [v]:
            if isinstance(value, (list, dict)) and len(value) > MAX_ENTRIES:
                raise RuleError(f"{path}: {k} has {len(value):,} entries, more than the {MAX_ENTRIES:,} a setting may hold")
            texts = [value] if isinstance(value, str) else value if isinstance(value, (list, dict)) else ()
            long = next((t for t in texts if isinstance(t, str) and len(t) > MAX_CHARS), None)
            if long is not None:
                raise RuleError(f"{path}: {k} holds an entry of {len(long):,} characters, more than the {MAX_CHARS:,} "
                                "a code, pattern, path or version may have")
    cfg = Config(path=Path(os.path.abspath(path)))
    if "select" in data:
        cfg.select = _codes(data["select"], f"{path}: select")
    cfg.extend_select = _codes(data.get("extend-select", []), f"{path}: extend-select")
    cfg.ignore = _codes(data.get("ignore", []), f"{path}: ignore")
    if "targets" in data:
        cfg.targets = _codes(data["targets"], f"{path}: targets")
        for t in cfg.targets:
            if t not in target_names():
                raise RuleError(f"{path}: unknown target {_show(t)}")
    sev = data.get("severity", {})
    if not isinstance(sev, dict):
        raise RuleError(f"{path}: severity must map rule codes to info, warning or error, got {_show(sev)}")
    for code, level in sev.items():
        if not isinstance(code, str):
            raise RuleError(f"{path}: severity keys must be rule codes, got {_show(code)}")
        if not isinstance(level, str) or level not in SEVERITIES:
            raise RuleError(f"{path}: severity for {code} must be info, warning or error, got {_show(level)}")
    cfg.severity = dict(sev)
    pfi = data.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise RuleError(f"{path}: per-file-ignores must map glob patterns to rule codes, got {_show(pfi)}")
    for k in pfi:
        if not isinstance(k, str):
            raise RuleError(f"{path}: per-file-ignores keys must be glob patterns, got {_show(k)}")
    cfg.per_file_ignores = {k: _codes(v, f"{path}: per-file-ignores.{k}") for k, v in pfi.items()}
    rules = data.get("rules", [])
    if isinstance(rules, str):
        rules = [rules]
    if not isinstance(rules, list) or not all(isinstance(r, str) and r.strip() and "\0" not in r for r in rules):
        raise RuleError(f"{path}: rules must be a folder or file path, or a list of them, got {_show(data.get('rules'))}")
    cfg.rules = [(path.parent / r) for r in rules]
    if "fail-on" in data:
        if not isinstance(data["fail-on"], str) or data["fail-on"] not in SEVERITIES:
            raise RuleError(f"{path}: fail-on must be info, warning or error, got {_show(data['fail-on'])}")
        cfg.fail_on = data["fail-on"]
    cfg.ort_version = _version(data, "ort-version", path)
    cfg.trt_version = _version(data, "trt-version", path)
    if "ort-optimization" in data:
        if data["ort-optimization"] not in OPTIMIZATION_LEVELS:
            raise RuleError(f"{path}: ort-optimization must be one of {', '.join(OPTIMIZATION_LEVELS)}, "
                            f"got {_show(data['ort-optimization'])}")
        cfg.ort_optimization = data["ort-optimization"]
    cfg.exclude = _patterns(data, "exclude", path)
    cfg.extend_exclude = _patterns(data, "extend-exclude", path) or []
    cfg.force_exclude = _flag(data, "force-exclude", path)
    cfg.respect_gitignore = _flag(data, "respect-gitignore", path)
    total = sum(map(len, (*(cfg.exclude or ()), *cfg.extend_exclude, *cfg.per_file_ignores)))
    if total > MAX_PATTERN_CHARS:
        raise RuleError(f"{path}: exclude, extend-exclude and per-file-ignores hold {total:,} characters of patterns, "
                        f"more than the {MAX_PATTERN_CHARS:,} a config's patterns may hold in all")
    return cfg


def _toml_section(path: Path, text: str | None = None) -> dict | None:
    """The [tool.onnxlint] table of a pyproject.toml, None when it has none; RuleError naming the file when
    it cannot be read or parsed, or when `tool` or `tool.onnxlint` is not a table. tomllib is imported here,
    only when a pyproject.toml exists (a process without one does not pay for it); Python 3.10 has no tomllib, its `tomli` is the
    same parser (a dependency there)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    if text is None:
        text = read_text(path, "config")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{path}: TOML syntax error: {exc}") from None
    except ValueError as exc:  # an integer past Python's 4,300 digits for a conversion
        raise RuleError(f"{path}: a value that cannot be read: {first_line(exc)}") from None
    except RecursionError:  # tomllib recurses per nesting level: arrays nested thousands deep exhaust the stack
        if "onnxlint" not in text:
            return None  # not onnxlint's file to judge: it holds no [tool.onnxlint]
        raise RuleError(f"{path}: nested too deeply to parse (arrays or tables thousands of levels deep)") from None
    require_short_numbers(data.get("tool"), str(path))
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise RuleError(f"{path}: 'tool' must be a table ([tool]), got {_show(tool)}")
    if "onnxlint" not in tool:
        return None
    section = tool["onnxlint"]
    if not isinstance(section, dict):
        raise RuleError(f"{path}: [tool.onnxlint] must be a table of settings, got {_show(section)}")
    return section


def load_file(path: Path) -> Config:
    """A config file named by the user (or found by find_for): `.toml` is a pyproject.toml whose
    [tool.onnxlint] table is read (none: defaults, path still recorded); anything else is YAML. yaml is
    imported only here (a run without a YAML config never loads it)."""
    path = Path(path)
    text = read_text(path, "config")
    if path.suffix == ".toml":
        data = _toml_section(path, text) or {}
    else:
        from onnxlint.support import yaml_safe

        data = yaml_safe.load(text, str(path))
        if data is None:
            data = {}
    return parse(data, path)


def repo_root(directory: Path) -> Path | None:
    """The nearest folder at or above directory that holds `.git` (a folder, or a file for worktrees)."""
    root = worktree.root(_realpath(os.fspath(directory)), _ROOTS)
    return None if root is None else Path(root)


# Per folder, once per process (a walk asks for every folder of a tree): a committed tree 1,200 folders deep made
# the walk ask each folder's every ancestor, each a system call on a deep path (minutes). A folder is answered from
# its parent's answer. find_for.cache_clear() forgets them.
_REAL: dict[str, str] = {}
_ROOTS: dict[str, str | None] = {}


def _realpath(path: str) -> str:
    """os.path.realpath, from the parent's when the path is absolute and normal and its last part no link."""
    if not os.path.isabs(path) or path != os.path.normpath(path):
        return os.path.realpath(path)  # relative (to a folder that may change) or with `..` after a link
    hit = _REAL.get(path)
    if hit is None:
        parent, name = os.path.split(path)
        hit = os.path.join(_REAL[parent], name) if parent in _REAL and name and not os.path.islink(path) \
            else os.path.realpath(path)
        _REAL[path] = hit
    return hit


def _check_owner(path: Path) -> None:
    """Outside a repository, a config file must belong to the current user or to root."""
    if not hasattr(os, "geteuid"):
        return
    try:
        owner = os.stat(path).st_uid
    except OSError:
        return
    if owner not in (os.geteuid(), 0):
        raise RuleError(f"{path}: config file owned by another user (uid {owner}), outside any repository; "
                        "not applied: pass it with --config to use it, or remove it")


def _check_inside(path: Path, root: Path | None, where: str = "the repository") -> None:
    """A config file found in a repository must be in it: a symbolic link leading out of it (to a token file, a
    .netrc) is never read, since its error would quote what it holds into a CI log. where: what root is."""
    real = Path(os.path.realpath(path))
    if root is not None and root not in real.parents:
        raise RuleError(f"{path}: a symbolic link to a file outside {where} ({root}); not read: pass the "
                        "file with --config to use it, or remove the link")


def _inside(path: Path | str, root: Path) -> bool:
    return worktree.inside(os.path.realpath(path), os.fspath(root))


def _check_rules_inside(cfg: Config, root: Path, where: str = "the repository") -> None:
    """A config file found in a repository names rules in it: a rules path, or a rule file in a rules folder (a
    link), that leads out of it is never read. Its error would quote what the file holds into a CI log, and
    `rules = "/"` would walk the whole file system. where: what root is."""
    from onnxlint.model.paths import rule_files

    for r in cfg.rules:
        if not _inside(r, root):
            raise RuleError(f"{cfg.path}: rules {os.fspath(r)!r} lead outside {where} ({root}); not read: pass "
                            "them with --rules to use them")
        if os.path.isdir(r):
            for f in rule_files(r):
                if not _inside(f, root):
                    raise RuleError(f"{f}: a symbolic link to a file outside {where} ({root}); not read: "
                                    "pass the folder with --rules to use it, or remove the link")


def find_for(directory: Path, above_repo: bool = False) -> Config:
    """Nearest config at or above directory, up to the repository root unless above_repo; an empty
    Config (path None) when there is none. See the module docstring for the rules."""
    return _find_for(Path(_realpath(os.fspath(directory))), bool(above_repo))


_NONE: dict[tuple[str, bool], Config] = {}  # folders at or below a repository root: the config in force there


@lru_cache(maxsize=256)
def _find_for(d: Path, above_repo: bool) -> Config:
    root = repo_root(d)
    trusted = root is not None  # d is at or below the root (the nearest .git above it) until the loop passes it
    chain: list[str] = []  # the folders looked at while trusted: they share the answer
    cand = d
    found: Config | None = None
    while True:
        known = _NONE.get((str(cand), above_repo)) if trusted else None
        if known is not None:
            found = known
            break
        if trusted:
            chain.append(str(cand))
        found = _config_in(cand, trusted, root)
        if found is not None:
            break
        if cand == root:
            if not above_repo:
                break
            trusted = False
        if cand.parent == cand:
            break
        cand = cand.parent
    found = found if found is not None else Config()
    for c in chain:
        _NONE[(c, above_repo)] = found
    return found


def _no_repository_bound(cand: Path) -> tuple[Path, str]:
    """What bounds a config file found where there is no repository at all (a checkout without .git: a source
    archive, a CI checkout made without git): the working folder, where the file lies in it (the run is
    started in the checkout), else the file's own folder."""
    cwd = Path(_realpath(os.getcwd()))
    if cand == cwd or cwd in cand.parents:
        return cwd, "the working folder, with no repository around it"
    return cand, "the folder that holds it, with no repository around it"


def _config_in(cand: Path, trusted: bool, root: Path | None) -> Config | None:
    """The config file in folder cand, None when it has none."""
    bound, where = (root, "the repository") if trusted else _no_repository_bound(cand) if root is None else (None, "")
    y = cand / ".onnxlint.yaml"
    found = None
    if y.is_file():
        if not trusted:
            _check_owner(y)
        _check_inside(y, bound, where)
        found = load_file(y)
        t = cand / "pyproject.toml"
        if t.is_file() and (bound is None or _inside(t, bound)):  # the hidden file would win unseen over the
            try:  # team's settings beside it; a pyproject.toml not in force is never an error of this run's
                section = _toml_section(t)
            except RuleError:
                section = None
            if section is not None:
                raise RuleError(f"{y}: a [tool.onnxlint] in {t.name} beside it holds settings too; keep one of them")
    else:
        t = cand / "pyproject.toml"
        if t.is_file():
            _check_inside(t, bound, where)
            section = _toml_section(t)
            if section is not None:
                if not trusted:
                    _check_owner(t)
                found = parse(section, t)
    if found is not None and bound is not None:
        _check_rules_inside(found, bound, where)
    return found


def _cache_clear() -> None:
    _find_for.cache_clear()
    _REAL.clear()
    _ROOTS.clear()
    _NONE.clear()


find_for.cache_clear = _cache_clear  # type: ignore[attr-defined]
