"""`onnxlint doctor` output: one line per check (✓/✗ with the fix), or JSON."""

from __future__ import annotations

from typing import Any

from onnxlint.support.escape import dumps, joined
from onnxlint.support.escape import text as esc


def render(fmt: str, checks: list[Any]) -> str:
    """What the checks found comes from the environment (library paths, onnxruntime's messages): escaped as
    any other untrusted text."""
    if fmt == "json":
        return dumps({"ok": all(c.ok for c in checks), "checks": [c.as_json() for c in checks]}, indent=2) + "\n"
    return joined([esc(str(c)) for c in checks])
