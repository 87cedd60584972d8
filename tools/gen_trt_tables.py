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

TRT_TYPES = {"FP32": "float", "FLOAT32": "float", "FP16": "float16", "FLOAT16": "float16", "BF16": "bfloat16",
             "BFLOAT16": "bfloat16", "INT32": "int32", "INT64": "int64", "INF64": "int64", "INT8": "int8",
             "UINT8": "uint8", "BOOL": "bool", "FP8": "float8e4m3fn", "INT4": "int4", "DOUBLE": "double"}
_ROW = re.compile(r"^\|\s*([A-Za-z][\w]*)\s*\|\s*([YN])\s*\|?(.*)$")


def parse_operators_md(text: str) -> dict:
    """onnx-tensorrt docs/operators.md -> {'opset_range', 'data_types', 'ops': {op: {supported, types, restrictions}}}."""
    ops: dict[str, dict] = {}
    opset = re.search(r"opset (\d+) to opset (\d+)", text, re.I) or re.search(r"up to Opset (\d+)", text, re.I)
    lo, hi = (int(opset.group(1)), int(opset.group(2))) if opset and opset.lastindex == 2 else (7, int(opset.group(1)) if opset else None)
    types_line = re.search(r"supports the following ONNX data types: ([^\n]+)", text)
    listed = re.split(r",|and", types_line.group(1).rstrip(".")) if types_line else []
    data_types = sorted({TRT_TYPES[t.strip().upper()] for t in listed if t.strip().upper() in TRT_TYPES})
    casts_int64 = bool(re.search(r"cast down INT64 to INT32", text))
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m or m.group(1) == "Operator":
            continue
        op, flag, rest = m.group(1), m.group(2), m.group(3)
        cells = [c.strip() for c in rest.split("|")]
        types = [TRT_TYPES[t.strip().upper()] for t in (cells[0].split(",") if cells else []) if t.strip().upper() in TRT_TYPES]
        restriction = " ".join(c for c in cells[1:] if c).strip()
        ops[op] = {"supported": flag == "Y", "types": types, "restrictions": restriction.replace("<br />", " ").replace("<br/>", " ")}
    return {"opset_min": lo, "opset_max": hi, "data_types": data_types, "casts_int64": casts_int64, "ops": ops}


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
