#!/usr/bin/env python3
"""Generate onnxlint/data/kernels/ort-<version>-<ep>.json from upstream facts. Never edit those files by hand.

  # from ORT's docs/OperatorKernels.md (kept verbatim under data/upstream/ort/)
  python tools/gen_kernel_tables.py md data/upstream/ort/OperatorKernels@001d12d2.cuda.md \
      --ort-version 1.24 --source "microsoft/onnxruntime@001d12d2 docs/OperatorKernels.md"

  # from the live registry of an installed onnxruntime (any interpreter that has it)
  python tools/gen_kernel_tables.py live --python /path/to/python

A CPU wheel's registry lists CPU kernels only; a GPU wheel on a machine with a GPU lists CUDA too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxlint import kernels  # noqa: E402

OUT = ROOT / "onnxlint" / "data" / "kernels"


def write(ep: str, version: str, source: str, table: dict) -> Path:
    short = kernels.EP_SHORT.get(ep, ep.lower())
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"ort-{version}-{short}.json"
    doc = {"ep": ep, "ort_version": version, "source": source, "ops": table["ops"], "params": table.get("params", {})}
    path.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    md = sub.add_parser("md", help="parse an OperatorKernels.md")
    md.add_argument("path", type=Path)
    md.add_argument("--ort-version", required=True)
    md.add_argument("--source", required=True)
    md.add_argument("--ep", action="append", help="only these providers (default: every section)")
    live = sub.add_parser("live", help="read an installed onnxruntime's registry")
    live.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)

    if args.cmd == "md":
        tables = kernels.parse_operator_kernels_md(args.path.read_text(encoding="utf-8"))
        for ep, table in tables.items():
            if args.ep and ep not in args.ep:
                continue
            print(write(ep, args.ort_version, args.source, table))
    else:
        version, tables = kernels.live_registry(args.python)
        for ep, table in tables.items():
            print(write(ep, version, f"live registry of onnxruntime=={version} (get_all_opkernel_def)", table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
