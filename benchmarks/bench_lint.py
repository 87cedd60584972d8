#!/usr/bin/env python3
"""Lint speed against the floor (onnx.load without external data), the checker and ORT session creation.

  python benchmarks/bench_lint.py [--sizes 1000,10000,100000] [--no-ort] [--no-20gb]

Builds transformer-shaped models (MatMul/Add/LayerNormalization/Softmax attention blocks with Reshape shape
subgraphs and an If), a model whose external data is a 20 GB sparse file, and takes the real models in
../shared/corpus/models when present. Each measurement runs in its own process so peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "models"

MEASURE = r"""
import json, resource, sys, time, io, contextlib
what, path = sys.argv[1], sys.argv[2]
import onnx
if what == "lint":
    from onnxlint.cli import main, get_ruleset
    get_ruleset(())  # rule files are parsed once per run, not per model: keep it out of the per-model time
elif what == "ort":
    import onnxruntime as ort
t0 = time.perf_counter()
if what == "load":
    onnx.load(path, load_external_data=False)
elif what == "lint":
    with contextlib.redirect_stdout(io.StringIO()):
        main([path, "--format", "json", "--no-progress"])
elif what == "checker":
    onnx.checker.check_model(onnx.load(path, load_external_data=False))
elif what == "ort":
    so = ort.SessionOptions(); so.log_severity_level = 4
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
dt = time.perf_counter() - t0
# VmHWM, not ru_maxrss: ru_maxrss survives exec and would report the parent's peak
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"s": dt, "rss_mb": hwm / 1024}))
"""


def transformer(n_nodes: int, d: int = 64) -> onnx.ModelProto:
    """Blocks of ~20 nodes: LayerNorm, Q/K/V MatMuls, a Shape->Gather->Concat->Reshape subgraph, Softmax, an If."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    inits.append(nh.from_array(np.array([0], np.int64), "idx0"))
    inits.append(nh.from_array(np.array([-1, 4, d // 4], np.int64), "tail"))
    inits.append(nh.from_array(np.array([-1, d], np.int64), "flat"))
    inits.append(nh.from_array(np.ones(d, np.float32), "gamma"))
    inits.append(nh.from_array(np.zeros(d, np.float32), "beta"))
    x = "x"
    b = 0
    while len(nodes) < n_nodes:
        p = f"b{b}_"
        w = nh.from_array(rng.standard_normal((d, d)).astype(np.float32), p + "w")
        inits.append(w)
        nodes += [
            h.make_node("LayerNormalization", [x, "gamma", "beta"], [p + "ln"], name=p + "ln", axis=-1),
            h.make_node("MatMul", [p + "ln", p + "w"], [p + "q"], name=p + "q"),
            h.make_node("MatMul", [p + "ln", p + "w"], [p + "k"], name=p + "k"),
            h.make_node("Shape", [p + "q"], [p + "shape"], name=p + "shape"),
            h.make_node("Gather", [p + "shape", "idx0"], [p + "bs"], name=p + "gather", axis=0),
            h.make_node("Concat", [p + "bs", "tail"], [p + "newshape"], name=p + "concat", axis=0),
            h.make_node("Reshape", [p + "q", p + "newshape"], [p + "qh"], name=p + "reshape_q"),
            h.make_node("Reshape", [p + "k", p + "newshape"], [p + "kh"], name=p + "reshape_k"),
            h.make_node("Transpose", [p + "kh"], [p + "kt"], name=p + "kt", perm=[0, 2, 1]),
            h.make_node("MatMul", [p + "qh", p + "kt"], [p + "att"], name=p + "att"),
            h.make_node("Softmax", [p + "att"], [p + "sm"], name=p + "softmax", axis=-1),
            h.make_node("MatMul", [p + "sm", p + "qh"], [p + "ctx"], name=p + "ctx"),
            h.make_node("Reshape", [p + "ctx", "flat"], [p + "ctx2"], name=p + "reshape_ctx"),
            h.make_node("Add", [p + "ctx2", x], [p + "res"], name=p + "residual"),
            h.make_node("Relu", [p + "res"], [p + "out"], name=p + "relu"),
        ]
        x = p + "out"
        b += 1
    then_g = h.make_graph([h.make_node("Identity", [x], ["t"], name="then_id")], "then", [], [h.make_tensor_value_info("t", T.FLOAT, ["batch", d])])
    else_g = h.make_graph([h.make_node("Neg", [x], ["e"], name="else_neg")], "else", [], [h.make_tensor_value_info("e", T.FLOAT, ["batch", d])])
    nodes.append(h.make_node("If", ["cond"], ["y"], name="final_if", then_branch=then_g, else_branch=else_g))
    g = h.make_graph(nodes, "transformer", [h.make_tensor_value_info("x", T.FLOAT, ["batch", d]),
                                            h.make_tensor_value_info("cond", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", d])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def sparse_external(dirpath: Path, size: int = 20 * 10**9) -> Path:
    w = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[size // 4])
    w.data_location = onnx.TensorProto.EXTERNAL
    for k, v in (("location", "big.data"), ("offset", "0"), ("length", str(size))):
        e = w.external_data.add()
        e.key, e.value = k, v
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"], name="add")], "big",
                     [h.make_tensor_value_info("x", T.FLOAT, [size // 4])], [h.make_tensor_value_info("y", T.FLOAT, [size // 4])], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    p = dirpath / "big20gb.onnx"
    onnx.save(m, p)
    with open(dirpath / "big.data", "wb") as fh:
        fh.truncate(size)
    return p


def measure(what: str, path: Path, repeat: int = 1, timeout: float = 300) -> dict:
    best = None
    for _ in range(repeat):
        try:
            proc = subprocess.run([sys.executable, "-c", MEASURE, what, str(path)], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"s": float("inf"), "rss_mb": float("nan"), "error": f"over {timeout:.0f} s"}
        if proc.returncode != 0:
            return {"s": float("nan"), "rss_mb": float("nan"), "error": proc.stderr.strip().splitlines()[-1][:100]}
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        best = r if best is None or r["s"] < best["s"] else best
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--no-20gb", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        models = []
        for n in (int(s) for s in args.sizes.split(",") if s):
            p = tmp / f"transformer_{n}.onnx"
            m = transformer(n)
            onnx.save(m, p)
            models.append((f"synthetic {len(m.graph.node) + 2} nodes", p))
        if not args.no_20gb:
            models.append(("20 GB external data (sparse)", sparse_external(tmp)))
        if CORPUS.is_dir():
            models += [(f"corpus {p.name}", p) for p in sorted(CORPUS.glob("*.onnx"))]
        for label, p in models:
            load = measure("load", p, args.repeat)
            lint = measure("lint", p, args.repeat)
            chk = measure("checker", p, 1)
            ortm = {"s": float("nan"), "rss_mb": float("nan")} if args.no_ort or "20 GB" in label else measure("ort", p, 1)
            rows.append((label, load, lint, chk, ortm))
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, onnx {onnx.__version__}")
    print(f"{'model':<46} {'load s':>8} {'lint s':>8} {'lint/load':>9} {'checker s':>9} {'ORT s':>8} {'ORT/lint':>8} {'lint RSS MB':>11}")
    for label, load, lint, chk, ortm in rows:
        ratio = lint["s"] / load["s"] if load["s"] > 0 else float("nan")
        vs_ort = ortm["s"] / lint["s"] if lint["s"] > 0 else float("nan")
        print(f"{label:<46} {load['s']:8.3f} {lint['s']:8.3f} {ratio:9.1f} {chk['s']:9.3f} {ortm['s']:8.3f} {vs_ort:8.1f} {lint['rss_mb']:11.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
