"""The cache folder: where it is, entries written atomically and read back, and `clean`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DEFAULT_DIR = ".onnxlint_cache"
ENV_DIR = "ONNXLINT_CACHE_DIR"
FORMAT = "1"  # entry layout; bump on any change to what an entry holds
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# onnxlint result cache (https://bford.info/cachedir/)\n"


def default_dir() -> Path:
    return Path(os.environ.get(ENV_DIR) or DEFAULT_DIR)


def load_entry(path: str | os.PathLike, k: str) -> dict[str, Any] | None:
    """An entry's JSON when it is one stored under key k (raises on an unreadable or truncated file)."""
    with open(path, "rb") as fh:
        data = json.loads(fh.read())
    return data if isinstance(data, dict) and data.get("key") == k else None


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


def write_entry(cache_dir: Path, target: str | os.PathLike, data: bytes) -> bool:
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
