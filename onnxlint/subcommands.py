"""`onnxlint placement`, `onnxlint verify`, `onnxlint doctor`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from onnxlint.errors import InputError, UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _load_index(path: Path):
    from onnxlint import loading

    mf = loading.load(path)
    return mf, loading.index_model(mf)


def _partition(path: Path, target: str, ort_version: str | None) -> dict:
    from onnxlint import engine
    from onnxlint.ruleset import load_ruleset

    mf, index = _load_index(path)
    ctx = engine.LintContext(mf, index, engine.Options(targets={target}, ort_version=ort_version), load_ruleset())
    pl = ctx.placement(target)
    nodes = [{"node": p.node.location, "op_type": p.node.op_type, "domain": p.node.domain, "ep": p.ep,
              "status": p.status, "reason": p.reason, "detail": p.detail, "deliberate": p.deliberate}
             for p in sorted(pl.nodes.values(), key=lambda p: p.node.index)]
    summary = pl.summary()
    summary["line"] = pl.summary_line()
    summary["boundary_values"] = [{"value": b.value, "direction": b.direction, "bytes": b.bytes} for b in pl.boundaries]
    return {"filename": str(path), "target": target, "ort_version": pl.ort_version, "kernel_tables": pl.table_versions,
            "notes": pl.notes, "nodes": nodes, "summary": summary}


def placement(argv) -> int:
    p = _Parser(prog="onnxlint placement", description="Predict, per node, which execution provider ORT assigns.")
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--target", default="ort-cuda", choices=["ort-cuda", "ort-cpu"])
    p.add_argument("--ort-version")
    p.add_argument("--format", default="text", choices=["text", "json"])
    args = p.parse_args(argv)
    from onnxlint import loading

    results, errors = [], 0
    for path in loading.expand_paths([str(m) for m in args.models]):
        try:
            results.append(_partition(path, args.target, args.ort_version))
        except InputError as exc:
            print(f"onnxlint: error: {exc}", file=sys.stderr)
            errors += 1
    if args.format == "json":
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(f"{r['filename']}: {r['target']} (ORT {r['ort_version']}): {r['summary']['line']}")
            for note in r["notes"]:
                print(f"  note: {note}")
            for n in r["nodes"]:
                if n["status"] != "device":
                    print(f"  {n['node']}: {n['op_type']} -> {n['ep'] or 'NO PROVIDER'} [{n['status']}] {n['detail']}")
    return 2 if errors else 0


def verify(argv) -> int:
    from onnxlint import verify as verify_mod

    return verify_mod.main(argv)


def doctor(argv) -> int:
    from onnxlint import verify as verify_mod

    return verify_mod.doctor(argv)
