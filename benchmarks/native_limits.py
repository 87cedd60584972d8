#!/usr/bin/env python3
"""What each call into onnx's C++ code costs, against the limits a call runs under (onnxlint.model.loading.native:
CALL_CPU_SECONDS, CALL_MEMORY + CALL_MEMORY_PER_BYTE a byte of input).

  python benchmarks/native_limits.py MODEL.onnx [MODEL.onnx ...]

For each model, each call the lint makes on it (strict inference and data propagation on the weight-less bytes
the lint sends, the checker on the file's bytes, and the version converter where the opset is below 11) runs
alone in a new process, without the limits, on its input read from a file. Printed: the call's CPU time and the
memory it added (the process's peak resident size, reset once its input is read and onnx's schemas are built,
minus its size then; the limit is on address space, which malloc's mappings make about the same), each with the
share of its limit it uses.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def _one(call: str, payload: Path) -> None:
    """In the measuring process: run one call on the bytes in payload, print {cpu, added_mb, result}."""
    from onnx.onnx_cpp2py_export import shape_inference as C
    from onnx.onnx_cpp2py_export import version_converter as V

    data = payload.read_bytes()
    onnx.defs.has("Relu")  # onnx's schema registry, built before (the lint's worker is forked after it)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident size, from now
    start, before = _status_kb("VmRSS"), resource.getrusage(resource.RUSAGE_SELF)
    try:
        {"strict": lambda: C.infer_shapes(data, True, True, False),
         "data-prop": lambda: C.infer_shapes(data, False, False, True),
         "checker": lambda: onnx.checker.check_model(data),
         "converter": lambda: V.convert_version(data, 11)}[call]()
        result = "ok"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        result = type(exc).__name__
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(json.dumps({"cpu": cpu, "added_mb": (_status_kb("VmHWM") - start) / 1024, "result": result}))


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--one", nargs=2, metavar=("CALL", "PAYLOAD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _one(args.one[0], Path(args.one[1]))
        return 0
    from onnx.onnx_cpp2py_export import shape_inference as C

    from onnxlint.model.loading import native, weightless_bytes

    print(f"onnx {onnx.__version__}; limits: {native.CALL_CPU_SECONDS} s CPU, {native.CALL_MEMORY >> 20} MB + "
          f"{native.CALL_MEMORY_PER_BYTE} B a byte of input")
    print(f"{'model':28} {'call':10} {'input MB':>9} {'CPU s':>7} {'of limit':>8} {'MB added':>9} {'of limit':>8}  result")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            raw = path.read_bytes()
            model = onnx.load_from_string(raw)
            data = weightless_bytes(model)
            inputs = {"strict": data, "data-prop": C.infer_shapes(data, False, False, False), "checker": raw}
            if next((i.version for i in model.opset_import if i.domain in ("", "ai.onnx")), 0) < 11:
                inputs["converter"] = data
            for call, payload in inputs.items():
                file = Path(tmp) / call
                file.write_bytes(payload)
                out = subprocess.run([sys.executable, __file__, "--one", call, str(file)], capture_output=True, text=True,
                                     check=True).stdout
                got = json.loads(out)
                allowance = native.CALL_MEMORY + native.CALL_MEMORY_PER_BYTE * len(payload)
                print(f"{path.name[:28]:28} {call:10} {len(payload) / 1e6:9.2f} {got['cpu']:7.2f} "
                      f"{got['cpu'] / native.CALL_CPU_SECONDS:8.1%} {got['added_mb']:9.1f} "
                      f"{got['added_mb'] * 2**20 / allowance:8.1%}  {got['result']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
