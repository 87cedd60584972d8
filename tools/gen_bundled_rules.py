#!/usr/bin/env python3
"""Write onnxlint/data/bundled-rules.json: the built-in rules (rules/*.yaml) parsed and validated, with each
rule file's digest (never edit it by hand).

A process with no cached rule set (--no-cache, a fresh CI checkout, a pool worker, the Python API) reads this
copy instead of parsing and validating the YAML, as long as every bundled rule file still has the digest
recorded here; an edited rule file is parsed as before. tests/test_rule_schema.py fails when the copy is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxlint.rulefiles.ruleset import BUNDLED_RULES, bundled_rules_json, load_ruleset  # noqa: E402
from onnxlint.support import resources  # noqa: E402


def render() -> str:
    return bundled_rules_json(load_ruleset(bundled=False).rules, resources.rules_dir())


if __name__ == "__main__":
    dest = resources.data_dir() / BUNDLED_RULES
    dest.write_text(render(), encoding="utf-8")
    print(dest)
