"""`onnxlint clean`: remove the result cache folder, saying what went."""

from __future__ import annotations

import sys
from pathlib import Path

from onnxlint.support.errors import UsageError
from onnxlint.support.escape import text as esc


def run(cache_dir: Path | None) -> int:
    """Remove the cache folder (None: the default one); a folder that is not onnxlint's cache is left alone
    (exit 2), and so is anything in it onnxlint did not write, or a cache git tracks (it came with the checkout)."""
    from onnxlint import cache
    from onnxlint.cache.folder import committed

    d = Path(cache_dir) if cache_dir is not None else cache.default_dir()
    if not d.exists():
        print(f"onnxlint: no cache folder at {esc(str(d))}; nothing to remove")
        return 0
    if d.is_symlink():  # the folder it leads to may well be a cache: "no CACHEDIR.TAG" misled
        raise UsageError(f"{d}: is a symbolic link; clean never follows one: not removed (name the folder it leads to, "
                         "if that is the cache to remove)")
    if cache.is_cache(d) and committed(d):
        raise UsageError(f"{d}: git tracks this cache folder's CACHEDIR.TAG (it came with the repository, onnxlint did "
                         "not write it); not removed: remove it with `git rm -r`")
    kept: list[str] = []
    files = cache.clean(d, kept)
    if files is None:
        raise UsageError(f"{d}: not an onnxlint cache folder (no onnxlint CACHEDIR.TAG); not removed")
    if kept:  # only what onnxlint wrote goes: anything else put in the folder stays, and so does the folder
        shown = ", ".join(esc(k) for k in kept[:5]) + (f" and {len(kept) - 5} more" if len(kept) > 5 else "")
        print(f"onnxlint: removed {files} cache file(s) from {esc(str(d))}; kept {len(kept)} path(s) onnxlint did "
              f"not write: {shown}", file=sys.stderr)
        return 2
    print(f"onnxlint: removed cache folder {esc(str(d))} ({files} file(s))")
    return 0
