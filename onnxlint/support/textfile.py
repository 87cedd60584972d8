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


MAX_DIGITS = 1000  # an integer of a config or rule file: past Python's 4,300 digits, str() and repr() raise


def require_short_numbers(data: object, name: str) -> None:
    """RuleError naming the file when the parsed document holds an integer of more than MAX_DIGITS digits
    (YAML's and TOML's hex, octal and sexagesimal forms convert without Python's digit limit, and the value then
    fails where it is shown or compared). Each distinct container is looked at once."""
    limit = 10**MAX_DIGITS
    seen: set[int] = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, int) and not isinstance(x, bool):
            if abs(x) >= limit:
                raise RuleError(f"{name}: a value that cannot be read: an integer of more than {MAX_DIGITS:,} digits")
        elif isinstance(x, (dict, list, tuple)) and id(x) not in seen:
            seen.add(id(x))
            stack.extend([*x.keys(), *x.values()] if isinstance(x, dict) else x)
