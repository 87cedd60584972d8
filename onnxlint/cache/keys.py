"""Cache keys: the bytes of the model, of the settings, config and rule files, and the installed package."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from onnxlint.cache.folder import FORMAT
from onnxlint.config.deployment import GENAI_CONFIG
from onnxlint.support import digest as digests
from onnxlint.support.reading import TEXT_LIMIT

if TYPE_CHECKING:
    from onnxlint.config.settings import Settings

_CHUNK = 1 << 20


def stat_stamp(path: str | os.PathLike) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [None, None]
    return [st.st_size, st.st_mtime_ns]


_DIGESTS: dict[tuple[str, int, int], str | None] = {}


def file_digest(path: str | os.PathLike) -> str | None:
    """blake2b of a rule or config file's bytes, once per process per (path, size, mtime): the rule set's key
    and every settings key hash the same rule files."""
    st = stat_stamp(path)
    k = (os.fspath(path), st[0], st[1])
    if k in _DIGESTS:
        return _DIGESTS[k]
    got = scan(path, limit=TEXT_LIMIT)  # past the read guard's limit for text, the file is refused unread anyway
    digest = None if got is None else got[0]
    if st[1] is not None and time.time_ns() - st[1] > 2_000_000_000:  # older than the mtime's granularity: racy-clean
        _DIGESTS[k] = digest
    return digest


def scan(path: str | os.PathLike, limit: int | None = None) -> tuple[str, bool] | None:
    """(blake2b of the file's bytes, whether they spell b'location' anywhere: external data is named so).

    None for anything but a readable regular file: a FIFO would block and a device never ends (opened
    non-blocking and checked with fstat, as loading.load does; the linter then reports the file). None too,
    unread, for a file over limit bytes (a model over protobuf's limit: loading refuses it unread, and so
    hashing gigabytes first would be all that one line costs); and when it grows past limit while it is read."""
    seen = False
    tail = b""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (limit is not None and st.st_size > limit):
            return None
        h = digests.new()
        budget = limit if limit is not None else 2**62
        if st.st_size < _CHUNK:  # most models: read whole, no file object (a 200-model hit run reads them all)
            parts = []
            block = max(st.st_size + 1, 1 << 16)  # a file that says size 0 (procfs) is still read in blocks
            while True:  # until read() says end of file: a short read is not the end on every file system
                part = os.read(fd, block)
                if not part:
                    break
                parts.append(part)
                budget -= len(part)
                if budget < 0:
                    return None
            data = b"".join(parts)
            h.update(data)
            return h.hexdigest(), b"location" in data
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                budget -= len(chunk)
                if budget < 0:
                    return None
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


def enc(text: str) -> bytes:
    """Text for the hash: a file name that is not UTF-8 (lone surrogates in Python) is hashed as its bytes."""
    return text.encode("utf-8", "surrogateescape")


def walk_files(root: Path, suffixes: tuple[str, ...] | None = None) -> list[str]:
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
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif suffixes is None or e.name.endswith(suffixes):
                    out.append(e.path)
            except OSError:
                continue
    return sorted(out)


_PACKAGE_STAMP: str | None = None


def package_stamp() -> str:
    """onnxlint's version, the size and mtime of every file of the installed package (code, data tables,
    bundled rules), and the onnx/onnxruntime distributions installed. Computed once per process."""
    global _PACKAGE_STAMP
    if _PACKAGE_STAMP is None:
        from onnxlint import __version__

        pkg = Path(__file__).resolve().parent.parent  # the onnxlint package
        h = digests.new()
        h.update(enc(f"onnxlint {__version__} format {FORMAT} python {sys.version_info[:2]}\n"))
        cut = len(str(pkg)) + 1
        for f in walk_files(pkg):
            h.update(enc(f"{f[cut:]}\0{stat_stamp(f)}\n"))  # the path inside the package (cut, not relpath: cheaper)
        h.update(enc("\0".join(_distributions())))
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


def rule_files(settings: Settings) -> list[str]:
    """Every rule file the rule loader reads for settings (ruleset.load_ruleset), found as it finds them
    (paths.rule_files): the bundled folder's own files, then each rule folder's walk or the file given."""
    from onnxlint.model.paths import rule_files as files_of
    from onnxlint.support import resources

    files: list[str] = []
    try:
        files += [str(p) for p in files_of(resources.rules_dir(), recursive=False)]
    except FileNotFoundError:
        files.append("<no bundled rules>")
    for d in settings.rule_dirs:
        d = Path(d)
        if d.is_file():
            files.append(str(d))
        elif d.is_dir():
            files += [str(p) for p in files_of(d)]
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
    h = digests.new()
    h.update(enc(package_stamp()))
    h.update(enc(_settings_repr(settings)))
    h.update(enc(f"\0cwd {os.getcwd()}"))  # relative rule folders and per-file-ignores resolve from here
    cfg_path = getattr(settings.config, "path", None)
    h.update(enc(f"\0config {cfg_path} {file_digest(cfg_path) if cfg_path else None}"))
    for f in rule_files(settings):
        h.update(enc(f"\0rule {f} {file_digest(f) if not f.startswith('<') else None}"))
    digest = h.hexdigest()
    _STATIC[id(settings)] = (settings, digest)
    return digest


def key(path: str | os.PathLike, settings: Settings) -> str | None:
    """The cache key of linting path with settings; None when the file cannot be read."""
    got = scan_key(path, settings)
    return None if got is None else got[0]


# a model file over this is refused unread by loading (protobuf's limit); it is not hashed either
MODEL_LIMIT = 2**31 - 1


def scan_key(path: str | os.PathLike, settings: Settings, cwd: str | None = None) -> tuple[str, bool, str] | None:
    """(key, whether the bytes spell `location`, blake2b of the bytes: what a report of them must carry to be
    stored under the key); cwd: os.getcwd() when the caller has it (one per run)."""
    scanned = scan(path, MODEL_LIMIT)
    if scanned is None:
        return None
    h = digests.new()
    h.update(enc(settings_fingerprint(settings)))
    absolute = os.path.normpath(os.path.join(cwd, path)) if cwd is not None else os.path.abspath(path)
    h.update(enc(f"\0{os.fspath(path)}\0{absolute}\0{scanned[0]}"))
    if settings.config.per_file_ignores:  # its patterns match the resolved path: a symbolic link's target counts
        h.update(enc(f"\0real {os.path.realpath(absolute)}"))
    genai = os.path.join(os.path.dirname(absolute), GENAI_CONFIG)  # it picks the targets
    if os.path.isfile(genai):
        h.update(enc(f"\0genai {file_digest(genai)}"))
    return h.hexdigest(), scanned[1], scanned[0]
