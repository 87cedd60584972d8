"""Errors that end a run with exit code 2 and one clear line."""

from __future__ import annotations

import re


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


def ort_message(exc: BaseException, limit: int = 240) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return strip_cpp_frames(text)[:limit]
