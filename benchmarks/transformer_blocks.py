#!/usr/bin/env python3
"""Transformer-shaped test graphs for the performance figures (bench_lint.py): blocks of 15 nodes (LayerNorm, Q/K
MatMuls, a Shape->Gather->Concat->Reshape subgraph, Softmax, a residual), an If last; IR 8, opset 17.

  python benchmarks/transformer_blocks.py NODES OUT.onnx [--d D]

Up to 200k nodes the model is built with onnx.helper (d=64: 100k nodes are a 115 MB file); above, by byte
templating (one block serialized, renamed per block: seconds, not minutes; d=8: 1M nodes are a ~88 MB file,
as the issue-43 figures were measured on). The models are generated, never committed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HELPER_MAX = 200_000  # above this many nodes the byte templating builds the model


def transformer(n_nodes: int, d: int = 64) -> onnx.ModelProto:
    """Blocks of 15 nodes: LayerNorm, Q/K MatMuls, a Shape->Gather->Concat->Reshape subgraph, Softmax; an If last."""
    nodes, inits = [], _shared_inits(d)
    x, b = "x", 0
    rng = np.random.default_rng(0)
    while len(nodes) < n_nodes:
        p = f"b{b}_"
        inits.append(nh.from_array(rng.standard_normal((d, d)).astype(np.float32), p + "w"))
        nodes += _block(p, x)
        x = p + "out"
        b += 1
    nodes.append(_final_if(x, d))
    return _model(nodes, inits, d)


def _shared_inits(d: int) -> list:
    return [nh.from_array(np.array([0], np.int64), "idx0"), nh.from_array(np.array([4, d // 4], np.int64), "tail"),
            nh.from_array(np.array([-1, d], np.int64), "flat"), nh.from_array(np.ones(d, np.float32), "gamma"),
            nh.from_array(np.zeros(d, np.float32), "beta")]


def _block(p: str, x: str) -> list:
    return [
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


def _final_if(x: str, d: int):
    then_g = h.make_graph([h.make_node("Identity", [x], ["t"], name="then_id")], "then", [],
                         [h.make_tensor_value_info("t", T.FLOAT, ["batch", d])])
    else_g = h.make_graph([h.make_node("Neg", [x], ["e"], name="else_neg")], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, ["batch", d])])
    return h.make_node("If", ["cond"], ["y"], name="final_if", then_branch=then_g, else_branch=else_g)


def _model(nodes: list, inits: list, d: int) -> onnx.ModelProto:
    g = h.make_graph(nodes, "transformer", [h.make_tensor_value_info("x", T.FLOAT, ["batch", d]),
                                            h.make_tensor_value_info("cond", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", d])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def transformer_bytes(n_nodes: int, path: Path, d: int = 16) -> int:
    """transformer(n_nodes, d) written by templating: block 1's serialized nodes and weight, renamed per block
    (fixed-width names, so every block has the same byte length). Returns the node count."""
    cur, prev = "b@@@@@@@_", "b%%%%%%%_"
    blocks = (n_nodes + 14) // 15
    rng = np.random.default_rng(0)

    def part(nodes: list, inits: list) -> bytes:
        g = h.make_graph(nodes, "", [], [], inits)
        g.ClearField("name")  # the header names the graph
        return g.SerializeToString()

    w = rng.standard_normal((d, d)).astype(np.float32)
    first_b = part(_block("b0000000_", "x"), [nh.from_array(w, "b0000000_w")])
    t = part(_block(cur, prev + "out"), [nh.from_array(w, cur + "w")])
    last = f"b{blocks - 1:07d}_out"
    header = _model([], _shared_inits(d), d)
    gbytes = [header.graph.SerializeToString(), first_b]
    cur_b, prev_b = cur.encode(), prev.encode()
    for b in range(1, blocks):
        gbytes.append(t.replace(cur_b, f"b{b:07d}_".encode()).replace(prev_b, f"b{b - 1:07d}_".encode()))
    gbytes.append(part([_final_if(last, d)], []))
    graph = onnx.GraphProto()
    graph.ParseFromString(b"".join(gbytes))
    header.graph.CopyFrom(graph)
    onnx.save(header, path)
    return len(graph.node)


def write(n_nodes: int, path: Path, d: int | None = None) -> int:
    """The n-node model written to path (helper-built up to HELPER_MAX nodes, d=64; templated above, d=8);
    returns its node count."""
    if n_nodes <= HELPER_MAX:
        m = transformer(n_nodes, d or 64)
        onnx.save(m, path)
        return len(m.graph.node)
    return transformer_bytes(n_nodes, path, d or 8)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nodes", type=int)
    ap.add_argument("out", type=Path)
    ap.add_argument("--d", type=int, default=None, help="hidden size (default: 64 helper-built, 8 templated)")
    args = ap.parse_args()
    n = write(args.nodes, args.out, args.d)
    print(f"{args.out}: {n} nodes, {args.out.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
