"""Git LFS pointers: what a checkout without Git LFS holds where a model should be.

A pointer is a small text file (under 1024 bytes by the LFS spec) that starts with the spec's version line and
names the object by its sha256 and size; the model itself is fetched by `git lfs pull`. It is not a corrupt
model, and not one onnxlint could check: the lint reports it as OLX009 (an error: a gate must not pass on a
model it never saw), and commands that need the model (placement, verify, --fix) refuse it in one line.
"""

from __future__ import annotations

import os
import re

from onnxlint.support.errors import InputError

SPEC_LINE = b"version https://git-lfs.github.com/spec/v1"
MAX_POINTER = 1024  # bytes: the LFS spec's limit for a pointer file
FETCH = "fetch the LFS objects: git lfs install && git lfs pull (GitHub Actions: actions/checkout with `lfs: true`)"
_OID = re.compile(rb"^oid sha256:([0-9a-f]{64})$", re.M)
_SIZE = re.compile(rb"^size (\d{1,20})$", re.M)


class LfsPointer(InputError):
    """The file is a Git LFS pointer, not the model it names."""

    def __init__(self, path: str, oid: str, size: int | None):
        self.oid, self.size = oid, size
        super().__init__(path, f"a Git LFS pointer{' to ' + describe_size(size) if size is not None else ''}, not "
                               f"the model: {FETCH}")


def pointer(data: bytes) -> tuple[str, int | None] | None:
    """(the object's sha256, its size in bytes or None) when data is an LFS pointer, else None."""
    if len(data) >= MAX_POINTER or not data.startswith(SPEC_LINE):
        return None
    oid = _OID.search(data)
    size = _SIZE.search(data)
    return (oid.group(1).decode() if oid else "", int(size.group(1)) if size else None)


def is_pointer_file(path: str | os.PathLike) -> bool:
    """Whether the file at path is an LFS pointer: read only when it is a regular file of a pointer's size."""
    return pointer_file(path) is not None


def pointer_file(path: str | os.PathLike) -> tuple[str, int | None] | None:
    """pointer() of the file at path, read only when it is a regular file of a pointer's size; None otherwise."""
    from onnxlint.support import reading

    try:
        return pointer(reading.read_regular(path, reading.within(MAX_POINTER - 1, "a Git LFS pointer")))
    except reading.Refused:
        return None


def describe_size(size: int | None) -> str:
    """`a 94.3 MB object` as a message says it."""
    if size is None:
        return "an object of unknown size"
    return f"a {size / 1e6:.1f} MB object" if size >= 100_000 else f"a {size:,} byte object"


def check(data: bytes, display: str) -> None:
    """Raise LfsPointer when the bytes read for a model are an LFS pointer."""
    got = pointer(data)
    if got is not None:
        raise LfsPointer(display, got[0], got[1])
