"""Reading a user's config or rule file as text, with one clear error. Its own module so that reading a
pyproject.toml imports neither yaml nor anything else heavy."""

from __future__ import annotations

import os
from pathlib import Path

from onnxlint.support import reading
from onnxlint.support.errors import RuleError


def read_text(path: str | os.PathLike, what: str = "file", limit: int = reading.TEXT_LIMIT) -> str:
    """A config or rule file's text: a regular file within limit bytes (support.reading), UTF-8 (a BOM is
    allowed); anything else is a RuleError naming the file."""
    path = Path(path)
    try:
        data = reading.read_regular(path, reading.within(limit, f"a {what} file"))
    except reading.Refused as exc:
        raise RuleError(f"{path}: cannot read {what}: {exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise RuleError(f"{path}:{line}: {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
