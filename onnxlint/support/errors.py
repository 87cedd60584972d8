"""Errors that end a run with exit code 2 and one clear line."""

from __future__ import annotations

import re
from typing import Iterable


class InputError(Exception):
    """A file that cannot be linted: missing, unreadable, not an ONNX model."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class RuleError(Exception):
    """A malformed rule or config file; the text carries file:line."""


class UsageError(Exception):
    """Bad command-line usage."""


_CPP_FRAME = re.compile(r"/onnxruntime_src/\S+:\d+ [^(]*\([^)]*\)\s*")


def strip_cpp_frames(text: str) -> str:
    """ORT embeds the C++ source location and function signature in its messages; users need the rest."""
    return _CPP_FRAME.sub("", text)


def first_line(exc: BaseException, limit: int = 200) -> str:
    """An exception as one line of at most limit characters (its type's name when it has no text)."""
    text = str(exc).strip()
    return text.splitlines()[0][:limit] if text else type(exc).__name__


def clip(value: object, limit: int = 60) -> str:
    """Text of a file's (a rule file's key, a model's external-data location) as a message quotes it: its first
    limit characters, "…" saying the rest was cut (a 5,000-character key made a 5,000-character error line)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


def ort_message(exc: BaseException, limit: int = 240) -> str:
    """ORT's exception text without its C++ frames, one line."""
    return strip_cpp_frames(first_line(exc, 10_000))[:limit]


def did_you_mean(word: str, options: Iterable[object]) -> str:
    """' (did you mean 'x'?)' for the closest option, or '' when none is close."""
    import difflib  # only for a usage error's suggestion, not in every lint process

    close = difflib.get_close_matches(word, sorted(str(o) for o in options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
