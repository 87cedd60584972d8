#!/usr/bin/env python3
"""Predicted vs real CPU-kernel coverage on onnx's backend node tests (target ort-cpu, installed ORT).

For every single-node test model: does onnxlint predict that every node has a CPU kernel (or that the
release refuses the model's opset/IR version), and does onnxruntime.InferenceSession(model,
providers=["CPUExecutionProvider"]) build? Prints agreement, false alarms (predicted missing, session builds)
and misses (predicted fine, NOT_IMPLEMENTED / refused), with names. The CUDA benchmark
(cuda_placement_accuracy.py --cpu) runs this too.

  python benchmarks/placement_accuracy.py [--limit N] [--ort-version V]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx.backend.test.case import node as node_cases

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import onnxlint.ort.partitioner as placement  # noqa: E402
from onnxlint.model.graph import GraphIndex  # noqa: E402

REFUSED = ("Unsupported model IR version", "ValidateOpsetForDomain", "is under development")


def truth(model: onnx.ModelProto) -> str:
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return "ok"
    except Exception as exc:  # noqa: BLE001
        text = str(exc)
        if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text or any(r in text for r in REFUSED):
            return "missing"
        return "other"


def predict(model: onnx.ModelProto, version: str) -> tuple[str, str]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001
        inferred = model
    pl = placement.simulate(GraphIndex(inferred), "ort-cpu", version)
    if pl.refused:
        return "missing", pl.refused
    bad = [p for p in pl.nodes.values() if p.status == "unsupported"]
    return ("missing", "; ".join(f"{p.node.op_type}: {p.detail}" for p in bad)) if bad else ("ok", "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--ort-version", default=None, help="kernel tables to predict with (default: the installed onnxruntime)")
    args = ap.parse_args(argv)
    version = args.ort_version or ort.__version__
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
    print(f"CPU EP, onnxruntime {ort.__version__} (tables {version}): {judged} models judged ({other} fail for other reasons, not counted)")
    print(f"agreement {agree}/{judged} = {100.0 * agree / max(judged, 1):.2f}%  false alarms {len(false_alarms)}  misses {len(misses)}")
    for name, why in false_alarms:
        print(f"  false alarm: {name}: {why}")
    for name in misses:
        print(f"  miss: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
