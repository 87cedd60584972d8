"""Errors that end a run with exit code 2 and one clear line."""

from __future__ import annotations


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
