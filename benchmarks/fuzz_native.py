#!/usr/bin/env python3
"""Fork-per-case fuzz over onnx's op schemas, looking for native crashes in what onnxlint calls.

    python benchmarks/fuzz_native.py [--ops Op1,Op2] [--limit N] [--lint]

For every op schema (every domain onnx knows, the latest version of each op) it builds one-node models whose
inputs are oddly typed (no type at all, a tensor type without an element type, a sequence, a scalar where a
tensor is expected, no shape, rank 0) and attributes missing or of the wrong kind, and runs onnx's C++ shape
inference (strict and lenient, with data propagation) and checker on each in a forked child: a child that dies
by a signal is a native crash, printed as `CRASH op case call signal`. With --lint, each crashing model is then
linted by the onnxlint CLI in a subprocess, which must report it in one line and exit 0, 1 or 2 (never die).

Exit 0: no crash, or every crash handled by onnxlint (--lint); 1: a crash onnxlint does not survive."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import TensorProto as T
from onnx import helper as h

CALLS = {
    "infer-strict": lambda b: onnx.shape_inference.infer_shapes(b, check_type=True, strict_mode=True),
    "infer-lenient": lambda b: onnx.shape_inference.infer_shapes(b, check_type=False, strict_mode=False),
    "infer-data-prop": lambda b: onnx.shape_inference.infer_shapes(b, data_prop=True),
    "checker": lambda b: onnx.checker.check_model(b, full_check=False),
}


def _untyped(name: str) -> onnx.ValueInfoProto:
    vi = onnx.ValueInfoProto()
    vi.name = name
    return vi


def _no_elem_type(name: str) -> onnx.ValueInfoProto:
    vi = onnx.ValueInfoProto()
    vi.name = name
    vi.type.tensor_type.SetInParent()
    return vi


def _sequence(name: str) -> onnx.ValueInfoProto:
    return h.make_tensor_sequence_value_info(name, T.FLOAT, None)


INPUT_KINDS = {
    "untyped": _untyped,
    "no-elem-type": _no_elem_type,
    "sequence": _sequence,
    "float-no-shape": lambda n: h.make_tensor_value_info(n, T.FLOAT, None),
    "float-rank0": lambda n: h.make_tensor_value_info(n, T.FLOAT, []),
    "int64-rank1": lambda n: h.make_tensor_value_info(n, T.INT64, [3]),
}


def cases(schema: onnx.defs.OpSchema):
    """(case name, model bytes) for one op schema."""
    n_in = max(len(schema.inputs), schema.min_input)
    n_out = max(len(schema.outputs), 1)
    opset = [h.make_opsetid(schema.domain, schema.since_version)]
    if schema.domain:
        opset.append(h.make_opsetid("", 21))
    for kind, make in INPUT_KINDS.items():
        for n in sorted({schema.min_input, n_in}):
            inputs = [make(f"x{i}") for i in range(n)]
            node = h.make_node(schema.name, [f"x{i}" for i in range(n)], [f"y{i}" for i in range(n_out)],
                               domain=schema.domain)
            graph = h.make_graph([node], "g", inputs, [_untyped(f"y{i}") for i in range(n_out)])
            model = h.make_model(graph, opset_imports=opset)
            yield f"{kind}/{n}in", model.SerializeToString()


def in_child(call: str, data: bytes) -> int | None:
    """The signal that killed the child running the call, or None when it returned or raised."""
    pid = os.fork()
    if pid == 0:
        try:
            CALLS[call](data)
        except BaseException:  # noqa: BLE001 - an exception is not a crash
            pass
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", help="comma-separated op types (default: every schema)")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many schemas")
    ap.add_argument("--lint", action="store_true", help="lint each crashing model with the onnxlint CLI")
    args = ap.parse_args()
    schemas = sorted(onnx.defs.get_all_schemas(), key=lambda s: (s.domain, s.name))
    if args.ops:
        wanted = set(args.ops.split(","))
        schemas = [s for s in schemas if s.name in wanted]
    if args.limit:
        schemas = schemas[: args.limit]
    crashes: list[tuple[str, str, str, int, bytes]] = []
    tried = 0
    for schema in schemas:
        try:
            made = list(cases(schema))
        except Exception:  # noqa: BLE001 - a schema helper cannot build: skipped
            continue
        for case, data in made:
            for call in CALLS:
                tried += 1
                sig = in_child(call, data)
                if sig is not None:
                    crashes.append((schema.name, case, call, sig, data))
                    print(f"CRASH {schema.domain or 'ai.onnx'}::{schema.name} {case} {call} signal {sig}", flush=True)
    print(f"{len(schemas)} schemas, {tried} calls, {len(crashes)} crashes (onnx {onnx.__version__})")
    if not args.lint or not crashes:
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        seen: set[bytes] = set()
        for op, case, _call, _sig, data in crashes:
            if data in seen:
                continue
            seen.add(data)
            path = Path(d) / f"{op}.onnx"
            path.write_bytes(data)
            proc = subprocess.run([sys.executable, "-m", "onnxlint", str(path), "--no-cache", "--no-progress"],
                                  capture_output=True, text=True, timeout=300)
            ok = proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr
            bad += not ok
            said = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines() if "crashed" in line]
            print(f"{'ok ' if ok else 'BAD'} lint {op} {case}: exit {proc.returncode}; {said[0] if said else proc.stderr[-200:]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
