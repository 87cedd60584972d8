"""blake2b as every digest onnxlint keeps computes it (result-cache keys, the bytes of a model, a rule file):
32 bytes. `_blake2` is built into CPython; hashlib's blake2b would load OpenSSL first, which a cached run does
not otherwise pay for (benchmarks/README.md, start-up)."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b

SIZE = 32  # bytes of every digest


def new() -> "blake2b":
    """A hash to feed piece by piece."""
    return blake2b(digest_size=SIZE)


def hexdigest(data: bytes) -> str:
    return blake2b(data, digest_size=SIZE).hexdigest()


__all__ = ["SIZE", "blake2b", "hexdigest", "new"]
