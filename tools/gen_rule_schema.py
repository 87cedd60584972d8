#!/usr/bin/env python3
"""Write docs/rule-schema.json from onnxlint's predicate, target and fixer registries (never edit it by hand).

Editors validate rule files with it (YAML language servers: `# yaml-language-server: $schema=...`); onnxlint
validates every rule file it loads against the same schema object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxlint.rulefiles.rule_schema import rule_schema  # noqa: E402


def render() -> str:
    return json.dumps(rule_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    dest = ROOT / "docs" / "rule-schema.json"
    dest.write_text(render())
    print(dest)
