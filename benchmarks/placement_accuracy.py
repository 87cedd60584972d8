#!/usr/bin/env python3
"""Predicted vs real CPU-kernel coverage on onnx's backend node tests (target ort-cpu, installed ORT).

For every single-node test model: does onnxlint predict that every node has a CPU kernel, and does
onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]) build? Prints agreement, false
alarms (predicted missing, session builds) and misses (predicted fine, NOT_IMPLEMENTED), with names.

  python benchmarks/placement_accuracy.py [--limit N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx.backend.test.case import node as node_cases

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from onnxlint import loading, placement  # noqa: E402
from onnxlint.graph import GraphIndex  # noqa: E402


def truth(model: onnx.ModelProto) -> str:
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return "ok"
    except Exception as exc:  # noqa: BLE001
        text = str(exc)
        return "missing" if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text else "other"


def predict(model: onnx.ModelProto, version: str) -> tuple[str, str]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001
        inferred = model
    pl = placement.simulate(GraphIndex(inferred), "ort-cpu", version)
    bad = [p for p in pl.nodes.values() if p.status == "unsupported"]
    return ("missing", "; ".join(f"{p.node.op_type}: {p.detail}" for p in bad)) if bad else ("ok", "")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    version = ort.__version__
    cases = node_cases.collect_testcases(None) if node_cases.collect_testcases.__code__.co_argcount else node_cases.collect_testcases()
    seen, rows = set(), []
    for case in cases:
        if case.name in seen or case.model is None:
            continue
        seen.add(case.name)
        rows.append(case)
        if args.limit and len(rows) >= args.limit:
            break
    agree = other = 0
    false_alarms, misses = [], []
    for case in rows:
        t = truth(case.model)
        if t == "other":
            other += 1  # the session fails for a reason that is not a missing kernel (bad test input, etc.)
            continue
        p, why = predict(case.model, version)
        if p == t:
            agree += 1
        elif p == "missing":
            false_alarms.append((case.name, why))
        else:
            misses.append(case.name)
    judged = agree + len(false_alarms) + len(misses)
    print(f"onnxruntime {version}: {judged} models judged ({other} fail for other reasons, not counted)")
    print(f"agreement {agree}/{judged} = {100.0 * agree / max(judged, 1):.2f}%  false alarms {len(false_alarms)}  misses {len(misses)}")
    for name, why in false_alarms:
        print(f"  false alarm: {name}: {why}")
    for name in misses:
        print(f"  miss: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
