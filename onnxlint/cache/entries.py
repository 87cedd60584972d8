"""Per-model entries: a model's report stored under its key, with the stamps of its external-data files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from onnxlint.cache.folder import FORMAT, default_dir, load_entry, write_entry
from onnxlint.cache.keys import scan_key, stat_stamp
from onnxlint.cache.report_json import report_from_json, report_to_json

if TYPE_CHECKING:
    from onnxlint.config.settings import Settings
    from onnxlint.linting.report import FileReport


def _entry_path(cache_dir: Path, k: str) -> str:
    return os.path.join(cache_dir, f"v{FORMAT}", k[:2], f"{k}.json")  # a str: pathlib's joins are a cache hit's cost


def lookup(path: str | os.PathLike, settings: Settings, cache_dir: str | os.PathLike | None = None) -> FileReport | None:
    """The cached report of linting path with settings, or None (a miss: never cached, changed, corrupt)."""
    got = scan_key(path, settings)
    if got is None:
        return None
    hit = read_entry(Path(cache_dir) if cache_dir is not None else default_dir(), got[0], str(path))
    return None if hit is None else hit[0]


def read_entry(cache_dir: Path, k: str, filename: str) -> tuple[FileReport, list[list[Any]]] | None:
    """(the stored report of filename, its [external-data file, [size, mtime]] pairs as just checked) or None:
    a miss. Whatever the file holds, a bad entry is a miss (report_from_json checks it as data)."""
    try:
        data = load_entry(cache_dir, _entry_path(cache_dir, k), k)
        if data is None or not stamps_hold(data["external"]):
            return None
        return report_from_json(data["report"], filename), [[dep, stamp] for dep, stamp in data["external"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # missing, unreadable, truncated, forged or from another layout: a miss


def stamps_hold(external: list[list[Any]]) -> bool:
    """Every external-data file an entry names still has the size and mtime it had when the entry was made, and
    every location the model names through a symbolic link still leads to the same file."""
    for dep, stamp in external:
        if stamp and stamp[0] == _LEADS_TO:
            if os.path.realpath(dep) != stamp[1]:
                return False
        elif stat_stamp(dep) != stamp:
            return False
    return True


_LEADS_TO = "->"  # a stamp [_LEADS_TO, realpath]: the location as the model names it, and where it led


def store(path: str | os.PathLike, settings: Settings, report: FileReport,
          cache_dir: str | os.PathLike | None = None, external: Iterable[str | os.PathLike] | None = None) -> bool:
    """Remember report for path with settings; False when it was not stored (an error report, an unreadable
    file or cache folder). external: the model's external-data files when the caller knows them (else the
    model is scanned for them, parsing it only when its bytes mention an external location)."""
    got = scan_key(path, settings)
    return got is not None and store_entry(path, got, report, cache_dir, external) is not None


def store_entry(path: str | os.PathLike, got: tuple[str, bool, str], report: FileReport,
                cache_dir: str | os.PathLike | None, external: Iterable[str | os.PathLike] | None) -> list[list[Any]] | None:
    """Write the entry; the [external-data file, [size, mtime]] pairs it holds, or None when it was not stored.

    Only a report of the very bytes the key was computed from is stored: its digest (the blake2b of the bytes
    the linter parsed, FileReport.digest) must be the key's. A file swapped between hashing and linting (a
    checkout during the run) is not stored; a report that carries no digest is not either."""
    k, mentions_location, digest = got
    if report.error or report.digest != digest:
        return None
    if external is not None:
        ext = [os.fspath(p) for p in external]
    elif not mentions_location:
        ext = []
    else:
        found = external_files(path, digest)
        if found is None:
            return None
        ext = found
    stamps = [[e, stat_stamp(e)] if e == real else [e, [_LEADS_TO, real]]
              for e, real in ((e, os.path.realpath(e)) for e in ext)]
    entry = {"key": k, "external": stamps, "report": report_to_json(report)}
    root = Path(cache_dir) if cache_dir is not None else default_dir()
    stored = write_entry(root, _entry_path(root, k), json.dumps(entry, separators=(",", ":")).encode())
    return stamps if stored else None


def external_files(path: str | os.PathLike, digest: str | None = None) -> list[str] | None:
    """The external-data files the model names, resolved inside its folder (for their size and mtime), and
    each location as named (its folder joined with it) where that is not the file itself: a symbolic link, whose
    target may change. Parses the model (onnx): called only when its bytes spell `location`. None: unreadable or
    unparsable, or (digest given) its bytes are not those any more."""
    from onnxlint.model import loading

    try:
        mf = loading.load(Path(path), digest=digest is not None)
    except Exception:  # noqa: BLE001 - an unparsable model is not stored
        return None
    if digest is not None and mf.digest != digest:
        return None
    found = {os.fspath(t.path) for t in mf.external if not t.outside}
    found |= {os.path.normpath(os.path.join(os.path.abspath(Path(path).parent), t.location))
              for t in mf.external if not t.outside and t.location}
    return sorted(found)
