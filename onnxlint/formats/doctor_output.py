"""`onnxlint doctor` output: one line per check (✓/✗ with the fix), or JSON."""

from __future__ import annotations

import json
from typing import Any


def render(fmt: str, checks: list[Any]) -> str:
    if fmt == "json":
        return json.dumps({"ok": all(c.ok for c in checks), "checks": [c.as_json() for c in checks]}, indent=2) + "\n"
    return "\n".join(str(c) for c in checks) + "\n"
