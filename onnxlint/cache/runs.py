"""The run cache: the reports of a run over several models as one entry, and what a run printed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from onnxlint.cache.entries import read_entry, stamps_hold, store_entry
from onnxlint.cache.folder import FORMAT, default_dir, load_entry, write_entry
from onnxlint.cache.keys import enc, scan_key_bytes
from onnxlint.cache.report_json import report_from_json, report_to_json
from onnxlint.support import digest as digests

if TYPE_CHECKING:
    from onnxlint.config.settings import Settings
    from onnxlint.linting.report import FileReport


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

    Stored reports are data, checked (report_from_json) and rendered by the output formats like fresh ones:
    what a run printed is never kept and printed again (a cache folder's writer would decide the output and the
    exit code). lint_misses must give reports that carry the digest of the bytes they linted (FileReport.digest,
    linter.lint_paths(digest=True)): only such a report is stored, under the key of those bytes."""

    def __init__(self, files: Sequence[Path], settings_of: Callable[[Path], Settings],
                 cache_dir: str | os.PathLike | None = None, prefetch: int = 0):
        self.files = files
        self.dir = Path(cache_dir) if cache_dir is not None else default_dir()
        cwd = os.getcwd()
        # the bytes hashed, kept (up to prefetch bytes in all) for the linter of a miss: it parses what was hashed
        # instead of reading and hashing the file again (loading.load's `prefetched`)
        self.prefetched: dict[Path, tuple[bytes, str, os.stat_result]] = {}
        self.keys: list[tuple[str, bool, str] | None] = []
        for f in files:
            got = scan_key_bytes(f, settings_of(f), cwd, prefetch)
            self.keys.append(None if got is None else got[0])
            if got is not None and got[1] is not None:
                self.prefetched[f] = (got[1][0], got[0][2], got[1][1])
                prefetch -= len(got[1][0])
        self.run_key = _run_key(self.keys) if len(files) > 1 else None
        self.externals: list[list[list[Any]] | None] = [None] * len(files)  # per file: the stamps its entry holds

    def reports(self, lint_misses: Callable[[list[Path]], list[FileReport]]) -> list[FileReport]:
        files, keys, d = self.files, self.keys, self.dir
        if self.run_key is not None:
            stored = _read_run(d, self.run_key, files)
            if stored is not None:
                self.externals = [stamps for _, stamps in stored]
                self.prefetched.clear()
                return [report for report, _ in stored]
        out: list[FileReport | None] = []
        externals = self.externals
        misses: list[int] = []
        for i, k in enumerate(keys):
            hit = read_entry(d, k[0], str(files[i])) if k is not None else None
            out.append(hit[0] if hit is not None else None)
            externals[i] = hit[1] if hit is not None else None  # checked just now or, below, taken when stored
            if hit is None:
                misses.append(i)
            else:
                self.prefetched.pop(files[i], None)
        if misses:
            try:
                linted = lint_misses([files[i] for i in misses])
            except KeyboardInterrupt as exc:  # what was finished: the hits and the misses linted so far
                from onnxlint.support.interrupt import interrupted

                done = dict(zip(misses, getattr(exc, "files", [])))
                raise interrupted(exc, [r if r is not None else done[i] for i, r in enumerate(out)
                                        if r is not None or i in done]) from None
            if [res.filename for res in linted] != [str(files[i]) for i in misses]:  # paired by position below
                raise RuntimeError("the lint of the cache's misses reported other files than it was given")
            for i, res in zip(misses, linted):
                out[i] = res
                k = keys[i]
                if k is not None:
                    externals[i] = store_entry(files[i], k, res, d, None)
        if self.run_key is not None and all(e is not None for e in externals):
            _write_run(d, self.run_key, out, externals)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]


def _run_key(keys: list[tuple[str, bool, str] | None], kind: str = "run") -> str | None:
    """The key of an entry about all these files together; None when a file could not be read."""
    if any(k is None for k in keys):
        return None
    h = digests.new()
    h.update(enc(kind + "\0" + "\0".join(k[0] for k in keys)))  # type: ignore[index]
    return h.hexdigest()


def _run_path(cache_dir: Path, k: str) -> str:
    return os.path.join(cache_dir, f"v{FORMAT}", "runs", f"{k}.json")


def _read_run(cache_dir: Path, k: str, files: Sequence[Path]) -> list[tuple[FileReport, list[list[Any]]]] | None:
    """Each file's (report, external-data stamps as just checked), or None: a miss."""
    try:
        data = load_entry(cache_dir, _run_path(cache_dir, k), k)
        if data is None or len(data["files"]) != len(files) or not all(stamps_hold(e["external"]) for e in data["files"]):
            return None
        return [(report_from_json(entry["report"], str(f)), entry["external"]) for entry, f in zip(data["files"], files)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def _write_run(cache_dir: Path, k: str, reports: list[FileReport], externals: list[list[list[Any]]]) -> bool:
    """The stamps are those each per-file entry holds, never taken again here: an external file that changed
    while the misses were linted must make the run entry miss, as it makes that model's own entry miss."""
    files = [{"external": stamps, "report": report_to_json(r)} for r, stamps in zip(reports, externals)]
    return write_entry(cache_dir, _run_path(cache_dir, k), json.dumps({"key": k, "files": files}, separators=(",", ":")).encode())
