"""A result cache like ruff's: an unchanged model linted with unchanged settings is not linted again.

Key (blake2b, hex): the model file's bytes, its path (findings and per-file-ignores name it), the settings (every
field of `Settings` and its `Config`, and the config file's bytes), the bytes of every rule file in force
(built-in and extra, hashed as bytes: never parsed), the installed package (`__version__`, and the size and
mtime of every file of the onnxlint package, data tables included, so an editable checkout invalidates on edit)
and the onnx/onnxruntime distributions installed (their dist-info names carry the versions).

External data is never read: the entry records the size and mtime (ns) of each external-data file the model
names, and a lookup whose stat() of them differs is a miss.

Value: the `FileReport` as JSON (findings, notes, placement lines). Reports with an error are not stored (an
unreadable or half-written file must be looked at again). A run over several models also stores their reports
together, as one run entry keyed by all their keys in order (`runs/`): a repeat over an unchanged folder opens
one file, not one per model, and still hashes every model, so nothing but the bytes decides a hit. What such a
run printed (text and exit code) is kept beside it (`shown/`), keyed by the same keys and the output's options,
so an unchanged repeat prints it again without decoding or rendering a report.

Folder: `.onnxlint_cache/` in the current directory, like ruff's `.ruff_cache/`: per project, visible, easy to
delete (`onnxlint clean`) and to keep between CI runs (cache the folder by path), and the per-file-ignores and
relative paths in findings are project-relative anyway. `$ONNXLINT_CACHE_DIR` or `--cache-dir` moves it. The
folder gets a `.gitignore` (`*`) and a `CACHEDIR.TAG` so version control and backup tools skip it. An
unwritable folder disables the cache silently.

Entries are written to a temporary file in the same folder and renamed over the entry (atomic on POSIX and
Windows), so concurrent runs never see half an entry; two writers of one key write the same bytes. A corrupt,
truncated or foreign entry is ignored (a miss) and rewritten.

The hit path imports neither onnx nor yaml (nor numpy): computing the key needs only os, json and hashing.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

try:  # _blake2 is built in; hashlib would load OpenSSL (~7 ms) for nothing
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b

if TYPE_CHECKING:
    from onnxlint.report import FileReport
    from onnxlint.settings import Settings

DEFAULT_DIR = ".onnxlint_cache"
ENV_DIR = "ONNXLINT_CACHE_DIR"
FORMAT = "1"  # entry layout; bump on any change to what an entry holds
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# onnxlint result cache (https://bford.info/cachedir/)\n"
_CHUNK = 1 << 20


def default_dir() -> Path:
    return Path(os.environ.get(ENV_DIR) or DEFAULT_DIR)


# ----------------------------------------------------------------------------- key


def _stat_stamp(path: str | os.PathLike) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [None, None]
    return [st.st_size, st.st_mtime_ns]


_DIGESTS: dict[tuple[str, int, int], str | None] = {}


def _file_digest(path: str | os.PathLike) -> str | None:
    """blake2b of a rule or config file's bytes, once per process per (path, size, mtime): the rule set's key
    and every settings key hash the same rule files."""
    st = _stat_stamp(path)
    k = (os.fspath(path), st[0], st[1])
    if k in _DIGESTS:
        return _DIGESTS[k]
    got = _scan(path)
    digest = None if got is None else got[0]
    if st[1] is not None and time.time_ns() - st[1] > 2_000_000_000:  # older than the mtime's granularity: racy-clean
        _DIGESTS[k] = digest
    return digest


def _scan(path: str | os.PathLike) -> tuple[str, bool] | None:
    """(blake2b of the file's bytes, whether they spell b'location' anywhere: external data is named so).

    None for anything but a readable regular file: a FIFO would block and a device never ends (opened
    non-blocking and checked with fstat, as loading.load does; the linter then reports the file)."""
    h = blake2b(digest_size=32)
    seen = False
    tail = b""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size < _CHUNK:  # most models: read whole, no file object (a 200-model hit run reads them all)
            parts = []
            block = max(st.st_size + 1, 1 << 16)  # a file that says size 0 (procfs) is still read in blocks
            while True:  # until read() says end of file: a short read is not the end on every file system
                part = os.read(fd, block)
                if not part:
                    break
                parts.append(part)
            data = b"".join(parts)
            h.update(data)
            return h.hexdigest(), b"location" in data
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                h.update(chunk)
                if not seen:
                    seen = b"location" in tail + chunk[:8] or b"location" in chunk
                    tail = chunk[-8:]
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return h.hexdigest(), seen


def _enc(text: str) -> bytes:
    """Text for the hash: a file name that is not UTF-8 (lone surrogates in Python) is hashed as its bytes."""
    return text.encode("utf-8", "surrogateescape")


def _walk_files(root: Path, suffixes: tuple[str, ...] | None = None) -> list[str]:
    out: list[str] = []
    stack = [str(root)]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if e.name == "__pycache__" or e.name.startswith("."):
                continue
            try:
                if e.is_dir():
                    stack.append(e.path)
                elif suffixes is None or e.name.endswith(suffixes):
                    out.append(e.path)
            except OSError:
                continue
    return sorted(out)


_PACKAGE_STAMP: str | None = None


def _package_stamp() -> str:
    """onnxlint's version, the size and mtime of every file of the installed package (code, data tables,
    bundled rules), and the onnx/onnxruntime distributions installed. Computed once per process."""
    global _PACKAGE_STAMP
    if _PACKAGE_STAMP is None:
        from onnxlint import __version__

        pkg = Path(__file__).resolve().parent
        h = blake2b(digest_size=32)
        h.update(_enc(f"onnxlint {__version__} format {FORMAT} python {sys.version_info[:2]}\n"))
        cut = len(str(pkg)) + 1
        for f in _walk_files(pkg):
            h.update(_enc(f"{f[cut:]}\0{_stat_stamp(f)}\n"))  # the path inside the package (relpath costs 10x)
        h.update(_enc("\0".join(_distributions())))
        _PACKAGE_STAMP = h.hexdigest()
    return _PACKAGE_STAMP


_DISTS = ("onnx-", "onnxruntime-", "onnxruntime_gpu-", "tensorrt-")


def _distributions() -> list[str]:
    """dist-info folder names (name-version.dist-info) of the runtimes whose behaviour lint results depend
    on: onnx (shape inference, checker), onnxruntime (default kernel tables), TensorRT. No import."""
    found = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found += [n for n in names if n.endswith((".dist-info", ".egg-info")) and n.lower().startswith(_DISTS)]
    return sorted(set(found))


def _rule_files(settings: Settings) -> list[str]:
    """Every rule file the ruleset loads (a superset: every *.yaml/*.yml under the folders)."""
    from onnxlint import resources

    files: list[str] = []
    try:
        files += _walk_files(resources.rules_dir(), (".yaml", ".yml"))
    except FileNotFoundError:
        files.append("<no bundled rules>")
    for d in settings.rule_dirs:
        d = Path(d)
        if d.is_file():
            files.append(str(d))
        elif d.is_dir():
            files += _walk_files(d, (".yaml", ".yml"))
        else:
            files.append(f"<missing {d}>")
    return files


def _settings_repr(settings: Settings) -> str:
    """Every field of Settings and of its Config (dataclass reprs are stable: fields in declaration order)."""
    return repr(settings)


_STATIC: dict[int, tuple[Any, str]] = {}


def settings_fingerprint(settings: Settings) -> str:
    """The part of the key that does not depend on the model: settings, config file, rule files, package.

    Computed once per Settings object (the CLI builds one per config file)."""
    hit = _STATIC.get(id(settings))
    if hit is not None and hit[0] is settings:
        return hit[1]
    h = blake2b(digest_size=32)
    h.update(_enc(_package_stamp()))
    h.update(_enc(_settings_repr(settings)))
    h.update(_enc(f"\0cwd {os.getcwd()}"))  # relative rule folders and per-file-ignores resolve from here
    cfg_path = getattr(settings.config, "path", None)
    h.update(_enc(f"\0config {cfg_path} {_file_digest(cfg_path) if cfg_path else None}"))
    for f in _rule_files(settings):
        h.update(_enc(f"\0rule {f} {_file_digest(f) if not f.startswith('<') else None}"))
    digest = h.hexdigest()
    _STATIC[id(settings)] = (settings, digest)
    return digest


def key(path: str | os.PathLike, settings: Settings) -> str | None:
    """The cache key of linting path with settings; None when the file cannot be read."""
    got = _key(path, settings)
    return None if got is None else got[0]


def _key(path: str | os.PathLike, settings: Settings, cwd: str | None = None) -> tuple[str, bool] | None:
    """(key, whether the bytes spell `location`); cwd: os.getcwd() when the caller has it (one per run)."""
    scanned = _scan(path)
    if scanned is None:
        return None
    h = blake2b(digest_size=32)
    h.update(_enc(settings_fingerprint(settings)))
    absolute = os.path.normpath(os.path.join(cwd, path)) if cwd is not None else os.path.abspath(path)
    h.update(_enc(f"\0{os.fspath(path)}\0{absolute}\0{scanned[0]}"))
    if settings.config.per_file_ignores:  # its patterns match the resolved path: a symbolic link's target counts
        h.update(_enc(f"\0real {os.path.realpath(absolute)}"))
    return h.hexdigest(), scanned[1]


# ----------------------------------------------------------------------------- entries


def _entry_path(cache_dir: Path, k: str) -> str:
    return os.path.join(cache_dir, f"v{FORMAT}", k[:2], f"{k}.json")  # a str: pathlib's joins cost a hit ~10 %


def report_to_json(report: FileReport) -> dict[str, Any]:
    return {"filename": report.filename, "error": report.error, "notes": list(report.notes),
            "placement": dict(report.placement), "findings": [dict(vars(f)) for f in report.findings]}


def report_from_json(data: dict[str, Any]) -> FileReport:
    from onnxlint.report import FileReport, Finding

    fields = _finding_fields()
    findings = []
    for f in data["findings"]:
        if f.keys() != fields:
            raise KeyError("finding fields")  # another layout: a miss
        obj = object.__new__(Finding)  # Finding(**f) without the keyword binding: a third of a hit's time
        obj.__dict__.update(f)
        findings.append(obj)
    return FileReport(filename=data["filename"], error=data["error"], notes=list(data["notes"]),
                      placement=dict(data["placement"]), findings=findings)


_FIELDS: Any = None


def _finding_fields() -> Any:
    """Finding's field names (a keys view compares as a set): a stored finding must have exactly these."""
    global _FIELDS
    if _FIELDS is None:
        from dataclasses import fields

        from onnxlint.report import Finding

        _FIELDS = {f.name: None for f in fields(Finding)}.keys()
    return _FIELDS


def lookup(path: str | os.PathLike, settings: Settings, cache_dir: str | os.PathLike | None = None) -> FileReport | None:
    """The cached report of linting path with settings, or None (a miss: never cached, changed, corrupt)."""
    got = _key(path, settings)
    if got is None:
        return None
    hit = _read(Path(cache_dir) if cache_dir is not None else default_dir(), got[0])
    return None if hit is None else hit[0]


def _read(cache_dir: Path, k: str) -> tuple[FileReport, list[list[Any]]] | None:
    """(the stored report, its [external-data file, [size, mtime]] pairs as just checked) or None: a miss."""
    try:
        data = _load_entry(_entry_path(cache_dir, k), k)
        if data is None or not _stamps_hold(data["external"]):
            return None
        return report_from_json(data["report"]), [[dep, stamp] for dep, stamp in data["external"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, unreadable, truncated or from another layout: a miss


def _load_entry(path: str | os.PathLike, k: str) -> dict[str, Any] | None:
    """An entry's JSON when it is one stored under key k (raises on an unreadable or truncated file)."""
    with open(path, "rb") as fh:
        data = json.loads(fh.read())
    return data if isinstance(data, dict) and data.get("key") == k else None


def _stamps_hold(external: list[list[Any]]) -> bool:
    """Every external-data file an entry names still has the size and mtime it had when the entry was made, and
    every location the model names through a symbolic link still leads to the same file."""
    for dep, stamp in external:
        if stamp and stamp[0] == _LEADS_TO:
            if os.path.realpath(dep) != stamp[1]:
                return False
        elif _stat_stamp(dep) != stamp:
            return False
    return True


_LEADS_TO = "->"  # a stamp [_LEADS_TO, realpath]: the location as the model names it, and where it led


def store(path: str | os.PathLike, settings: Settings, report: FileReport,
          cache_dir: str | os.PathLike | None = None, external: Iterable[str | os.PathLike] | None = None) -> bool:
    """Remember report for path with settings; False when it was not stored (an error report, an unreadable
    file or cache folder). external: the model's external-data files when the caller knows them (else the
    model is scanned for them, parsing it only when its bytes mention an external location)."""
    got = _key(path, settings)
    return got is not None and _store(path, got, report, cache_dir, external) is not None


def _store(path: str | os.PathLike, got: tuple[str, bool], report: FileReport, cache_dir: str | os.PathLike | None,
           external: Iterable[str | os.PathLike] | None) -> list[list[Any]] | None:
    """Write the entry; the [external-data file, [size, mtime]] pairs it holds, or None when it was not stored."""
    if report.error:
        return None
    k, mentions_location = got
    if external is not None:
        ext = [os.fspath(p) for p in external]
    elif not mentions_location:
        ext = []
    else:
        found = external_files(path)
        if found is None:
            return None
        ext = found
    stamps = [[e, _stat_stamp(e)] if e == real else [e, [_LEADS_TO, real]]
              for e, real in ((e, os.path.realpath(e)) for e in ext)]
    entry = {"key": k, "external": stamps, "report": report_to_json(report)}
    root = Path(cache_dir) if cache_dir is not None else default_dir()
    stored = _write(root, _entry_path(root, k), json.dumps(entry, separators=(",", ":")).encode())
    return stamps if stored else None


def external_files(path: str | os.PathLike) -> list[str] | None:
    """The external-data files the model names, resolved inside its folder (for their size and mtime), and
    each location as named (its folder joined with it) where that is not the file itself: a symbolic link, whose
    target may change. Parses the model (onnx): called only when its bytes spell `location`. None: unreadable or
    unparsable."""
    from onnxlint import loading

    try:
        mf = loading.load(Path(path))
    except Exception:  # noqa: BLE001 - an unparsable model is not stored
        return None
    found = {os.fspath(t.path) for t in mf.external if not t.outside}
    found |= {os.path.normpath(os.path.join(os.path.abspath(Path(path).parent), t.location))
              for t in mf.external if not t.outside and t.location}
    return sorted(found)


def _prepare(cache_dir: Path) -> None:
    if not cache_dir.is_dir():
        cache_dir.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", "# created by onnxlint\n*\n"), ("CACHEDIR.TAG", _TAG)):
        p = cache_dir / name
        if not p.exists():
            _atomic_write(p, text.encode())


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


def _write(cache_dir: Path, target: str | os.PathLike, data: bytes) -> bool:
    """Write an entry (a model's, a run's, a rule set's) at target inside cache_dir; False when it cannot be."""
    try:
        _prepare(cache_dir)
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(target, data)
        return True
    except OSError:
        return False  # read-only checkout, full disk: lint still works, uncached


def clean(cache_dir: str | os.PathLike | None = None) -> bool:
    """Delete the cache folder; only one onnxlint made (it holds our CACHEDIR.TAG). True when removed."""
    import shutil

    d = Path(cache_dir) if cache_dir is not None else default_dir()
    tag = d / "CACHEDIR.TAG"
    try:
        if not tag.read_text(encoding="utf-8").startswith(_TAG.splitlines()[0]) or "onnxlint" not in tag.read_text(encoding="utf-8"):
            return False
    except OSError:
        return False
    shutil.rmtree(d, ignore_errors=True)
    return not d.exists()


# ----------------------------------------------------------------------------- rule set


def _ruleset_entry(rule_dirs: Sequence[str | os.PathLike], cache_dir: str | os.PathLike | None) -> tuple[str, Path]:
    """(key, entry path) of the rule set of rule_dirs: the rule files' bytes, the package and the cwd."""
    dirs = tuple(Path(d) for d in rule_dirs)
    h = blake2b(digest_size=32)
    h.update(_enc(f"ruleset\0{_package_stamp()}\0cwd {os.getcwd()}"))

    class _Dirs:  # _rule_files only reads .rule_dirs
        rule_dirs = dirs

    for f in _rule_files(_Dirs):  # type: ignore[arg-type]
        h.update(_enc(f"\0rule {f} {_file_digest(f) if not f.startswith('<') else None}"))
    k = h.hexdigest()
    d = Path(cache_dir) if cache_dir is not None else default_dir()
    return k, d / f"v{FORMAT}" / "rulesets" / f"{k}.json"


def _read_ruleset(k: str, path: Path) -> list[dict[str, Any]] | None:
    try:
        data = _load_entry(path, k)
        if data is not None and isinstance(data["rules"], list):
            from onnxlint.rule_json import rule_fields

            return [rule_fields(r) for r in data["rules"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def cached_ruleset(rule_dirs: Sequence[str | os.PathLike], load: Callable[[tuple[Path, ...]], Any],
                   cache_dir: str | os.PathLike | None = None) -> Any:
    """The RuleSet of rule_dirs (built-in rules included) from a JSON copy in the cache folder, keyed by the
    rule files' bytes and the package; on a miss load(rule_dirs) parses and validates the YAML and the result
    is stored. A hit does not parse YAML (onnxlint.ruleset, which it imports, still imports yaml and, through
    the rule schema, onnx: a caller that must stay light uses rule_index). JSON, not pickle: an entry is data,
    never code. A rule's match loses its per-key line numbers (only validation reports them, and a stored
    rule set was valid)."""
    dirs = tuple(Path(d) for d in rule_dirs)
    k, path = _ruleset_entry(dirs, cache_dir)
    stored = _read_ruleset(k, path)
    if stored is not None:
        try:
            from onnxlint.ruleset import RuleSet, rule_from_json

            return RuleSet([rule_from_json(r) for r in stored])
        except (KeyError, TypeError):
            pass  # a field renamed since: parse again
    ruleset = load(dirs)
    from onnxlint.ruleset import rule_to_json

    try:
        body = json.dumps({"key": k, "rules": [rule_to_json(r) for r in ruleset.rules]}, separators=(",", ":"))
    except (TypeError, ValueError):
        return ruleset  # something in a rule is not JSON: not cached
    _write(path.parent.parent.parent, path, body.encode())
    return ruleset


class RuleInfo:
    """A stored rule's fields as attributes (id, name, severity, targets, summary, explanation, fix, tags, ...):
    what check_selection and the output formats read of a Rule, without importing onnxlint.ruleset."""

    def __init__(self, fields: dict[str, Any]):
        self.__dict__.update(fields)
        self.default = bool(fields.get("default", True))
        self.id = str(fields["id"])

    def __repr__(self) -> str:
        return f"RuleInfo({self.id})"


class RuleIndex:
    """The rules of a stored rule set, read without parsing YAML or importing the rule schema (and so onnx):
    what a run whose models are all cache hits needs of its rules (selection checks, report.rules)."""

    def __init__(self, rules: list[RuleInfo]):
        self.rules = rules

    def by_id(self) -> dict[str, RuleInfo]:
        return {r.id: r for r in self.rules}

    def knows(self, code: str) -> bool:
        return any(r.id.startswith(code) for r in self.rules)


def rule_index(rule_dirs: Sequence[str | os.PathLike], cache_dir: str | os.PathLike | None = None) -> RuleIndex | None:
    """The stored rule set of rule_dirs (see cached_ruleset) as a RuleIndex, or None when none is stored for
    the rule files as they are now (then the caller loads them, through cached_ruleset, which stores it)."""
    k, path = _ruleset_entry(rule_dirs, cache_dir)
    stored = _read_ruleset(k, path)
    if stored is None:
        return None
    try:
        return RuleIndex([RuleInfo(r) for r in stored])
    except (KeyError, TypeError):
        return None


# ----------------------------------------------------------------------------- wiring


def lint_with_cache(files: Sequence[Path], settings_of: Callable[[Path], Settings],
                    lint_misses: Callable[[list[Path]], list[FileReport]],
                    cache_dir: str | os.PathLike | None = None) -> list[FileReport]:
    """Reports for files in their order: cached ones looked up, the others linted by lint_misses (called
    once, with the misses in order, only when there are any: a run of hits never imports onnx) and stored."""
    return CachedRun(files, settings_of, cache_dir).reports(lint_misses)


class CachedRun:
    """One run over files with the cache: every file hashed once, up front (the key of the bytes linted below,
    should a file change meanwhile).

    Several files are also stored together, as one run entry keyed by all their keys in order: a second run
    over an unchanged folder opens one entry instead of one per model (a fifth of a 200-model hit run's time).
    Each model is still hashed, so the key of every file is its bytes exactly as for a single file; a run whose
    files differ in any way reads the per-file entries, as before.

    What the run printed is kept too (`shown`/`remember_shown`), keyed by all the files' keys and the view (the
    output format and its options): an unchanged repeat prints the stored text and exit code without decoding a
    report or rendering it again (half of what a 200-model hit costs beyond the process start)."""

    def __init__(self, files: Sequence[Path], settings_of: Callable[[Path], Settings],
                 cache_dir: str | os.PathLike | None = None):
        self.files = files
        self.dir = Path(cache_dir) if cache_dir is not None else default_dir()
        cwd = os.getcwd()
        self.keys = [_key(f, settings_of(f), cwd) for f in files]
        self.run_key = _run_key(self.keys) if len(files) > 1 else None
        self.externals: list[list[list[Any]] | None] = [None] * len(files)  # per file: the stamps its entry holds

    def reports(self, lint_misses: Callable[[list[Path]], list[FileReport]]) -> list[FileReport]:
        files, keys, d = self.files, self.keys, self.dir
        if self.run_key is not None:
            stored = _read_run(d, self.run_key, files)
            if stored is not None:
                self.externals = [stamps for _, stamps in stored]
                return [report for report, _ in stored]
        out: list[FileReport | None] = []
        externals = self.externals
        misses: list[int] = []
        for i, k in enumerate(keys):
            hit = _read(d, k[0]) if k is not None else None
            out.append(hit[0] if hit is not None else None)
            externals[i] = hit[1] if hit is not None else None  # checked just now or, below, taken when stored
            if hit is None:
                misses.append(i)
        if misses:
            linted = lint_misses([files[i] for i in misses])
            for i, res in zip(misses, linted):
                out[i] = res
                k = keys[i]
                if k is not None:
                    externals[i] = _store(files[i], k, res, d, None)
        if self.run_key is not None and all(e is not None for e in externals):
            _write_run(d, self.run_key, out, externals)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]

    def _shown_key(self, view: str) -> str | None:
        return _run_key(self.keys, f"shown\0{view}") if self.files else None

    def shown(self, view: str) -> tuple[str, int] | None:
        """(text, exit code) this run printed before in view, its models and external data unchanged; or None."""
        k = self._shown_key(view)
        if k is None:
            return None
        try:
            data = _load_entry(_shown_path(self.dir, k), k)
            if data is None or not _stamps_hold(data["external"]):
                return None
            text, rc = data["text"], data["rc"]
            return (text, rc) if isinstance(text, str) and rc in (0, 1) else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def remember_shown(self, view: str, text: str, rc: int) -> bool:
        """Keep what reports() led to: only when every model's report is stored (none had an error), with the
        external-data stamps those entries hold."""
        k = self._shown_key(view)
        if k is None or rc not in (0, 1) or any(e is None for e in self.externals):
            return False
        stamps = [pair for e in self.externals for pair in e]  # type: ignore[union-attr]
        data = json.dumps({"key": k, "external": stamps, "text": text, "rc": rc}, separators=(",", ":"))
        return _write(self.dir, _shown_path(self.dir, k), data.encode())


def _shown_path(cache_dir: Path, k: str) -> str:
    return os.path.join(cache_dir, f"v{FORMAT}", "shown", k[:2], f"{k}.json")


def _run_key(keys: list[tuple[str, bool] | None], kind: str = "run") -> str | None:
    """The key of an entry about all these files together (kind: a run entry, or what a run printed in a view);
    None when a file could not be read."""
    if any(k is None for k in keys):
        return None
    h = blake2b(digest_size=32)
    h.update(_enc(kind + "\0" + "\0".join(k[0] for k in keys)))  # type: ignore[index]
    return h.hexdigest()


def _run_path(cache_dir: Path, k: str) -> str:
    return os.path.join(cache_dir, f"v{FORMAT}", "runs", f"{k}.json")


def _read_run(cache_dir: Path, k: str, files: Sequence[Path]) -> list[tuple[FileReport, list[list[Any]]]] | None:
    """Each file's (report, external-data stamps as just checked), or None: a miss."""
    try:
        data = _load_entry(_run_path(cache_dir, k), k)
        if data is None or len(data["files"]) != len(files) or not all(_stamps_hold(e["external"]) for e in data["files"]):
            return None
        return [(report_from_json(entry["report"]), entry["external"]) for entry in data["files"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_run(cache_dir: Path, k: str, reports: list[FileReport], externals: list[list[list[Any]]]) -> bool:
    """The stamps are those each per-file entry holds, never taken again here: an external file that changed
    while the misses were linted must make the run entry miss, as it makes that model's own entry miss."""
    files = [{"external": stamps, "report": report_to_json(r)} for r, stamps in zip(reports, externals)]
    return _write(cache_dir, _run_path(cache_dir, k), json.dumps({"key": k, "files": files}, separators=(",", ":")).encode())
