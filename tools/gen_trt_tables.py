#!/usr/bin/env python3
"""Generate the docs-only tables onnxlint/data/tensorrt/docs/trt-<version>.json from onnx-tensorrt's
docs/operators.md. Never edit those by hand.

These are what onnx-tensorrt documents, not what its parser does: onnxlint uses them only for versions whose
parser cannot run here (10.0, 10.1), and for the restriction texts shown as detail. Versions with a table measured
from the real parser (tools/gen_trt_support.py, onnxlint/data/tensorrt/trt-<version>.json) use that one.

  python tools/gen_trt_tables.py data/upstream/tensorrt/onnx-tensorrt-operators-*.md
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxlint.tensorrt import parse_operators_md  # noqa: E402

SOURCES = {}
for line in (ROOT / "data/upstream/tensorrt/SOURCES.md").read_text().splitlines():
    m = re.match(r"- ([\d.]+-GA) ([0-9a-f]{40})", line)
    if m:
        SOURCES[m.group(1)] = m.group(2)


def main(paths) -> int:
    out = ROOT / "onnxlint" / "data" / "tensorrt" / "docs"
    out.mkdir(parents=True, exist_ok=True)
    for p in map(Path, paths):
        branch = re.search(r"operators-([\d.]+-GA)", p.name).group(1)
        table = parse_operators_md(p.read_text(encoding="utf-8"))
        table["version"] = branch.replace("-GA", "")
        table["verified"] = "docs"
        table["source"] = f"onnx/onnx-tensorrt@{SOURCES.get(branch, '?')} docs/operators.md ({branch})"
        dest = out / f"trt-{table['version']}.json"
        dest.write_text(json.dumps(table, sort_keys=True, indent=0) + "\n")
        print(dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
