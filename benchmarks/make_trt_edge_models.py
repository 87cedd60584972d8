#!/usr/bin/env python3
"""One-node-deep models of what TensorRT's parser meets outside the single-op probes: model-local function bodies
(called, uncalled, reached through another function, an attribute-referenced `to`), network inputs and
initializers no node reads (or read only by a function call or inside an If branch), and ORT's RotaryEmbedding
with a 1-D position_ids.

    python benchmarks/make_trt_edge_models.py OUT_DIR
    python ../shared/tools/trt-parser-truth/trt_parse_truth.py edge.tsv OUT_DIR       # a TensorRT-RTX venv's python
    python benchmarks/trt_accuracy.py --truth 10.1+rtx1.7=edge.tsv --models OUT_DIR

2026-12-05, TensorRT-RTX 1.7.1.116: 24 models, the parser rejects 16; onnxlint agrees on 23, no false alarm; the
miss is a function body's Cast whose `to` refers to the function's attribute (not read). Before this round's
changes (6edad60): 12 (50 %), a false alarm (a Unique in a function nothing calls) and 11 misses."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OPSET = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), functions=(), opset=OPSET, ir=8):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=list(opset), functions=list(functions), ir_version=ir)


def fn(name, body, inputs=("a",), outputs=("b",), attributes=()):
    return h.make_function("local", name, list(inputs), list(outputs), body, OPSET, list(attributes))


def call(op, ins=("x",), outs=("y",), **attrs):
    return h.make_node(op, list(ins), list(outs), name=f"call_{op}", domain="local", **attrs)


def relu_main(extra_inputs=(), inits=(), functions=()):
    return model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2]), *extra_inputs], [vi("y", T.FLOAT, [2])],
                 inits, functions)


def rope(x_batch, pos_shape, dtype=T.FLOAT16):
    node = h.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], name="rope", domain="com.microsoft",
                       interleaved=0)
    npd = np.float16 if dtype == T.FLOAT16 else np.float32
    return model([node], [vi("x", dtype, [x_batch, 2, 3, 16]), vi("pos", T.INT64, pos_shape)],
                 [vi("y", dtype, [x_batch, 2, 3, 16])],
                 [nh.from_array(np.ones((8, 8), npd), "cos"), nh.from_array(np.zeros((8, 8), npd), "sin")],
                 opset=[h.make_opsetid("", 21), h.make_opsetid("com.microsoft", 1)], ir=10)


def models() -> dict[str, onnx.ModelProto]:
    cast = lambda to: h.make_node("Cast", ["a"], ["b"], to=to)  # noqa: E731
    io = ([vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])])
    out = {
        "fn_relu": model([call("F")], *io, functions=[fn("F", [h.make_node("Relu", ["a"], ["b"])])]),
        "fn_cast_string": model([call("F")], io[0], [vi("y", T.STRING, [2, 3])], functions=[fn("F", [cast(T.STRING)])]),
        "fn_cast_double": model([call("F")], io[0], [vi("y", T.DOUBLE, [2, 3])], functions=[fn("F", [cast(T.DOUBLE)])]),
        "fn_unique": model([call("F")], [vi("x", T.FLOAT, [6])], [vi("y", T.FLOAT, ["n"])],
                           functions=[fn("F", [h.make_node("Unique", ["a"], ["b"])])]),
        "fn_uncalled_cast_string": model([call("R")], *io, functions=[fn("R", [h.make_node("Relu", ["a"], ["b"])]),
                                                                       fn("S", [cast(T.STRING)])]),
        "fn_uncalled_unique": model([call("R")], *io, functions=[fn("R", [h.make_node("Relu", ["a"], ["b"])]),
                                                                  fn("U", [h.make_node("Unique", ["a"], ["b"])])]),
        "fn_through_function_cast_string": model([call("A")], io[0], [vi("y", T.STRING, [2, 3])],
                                                 functions=[fn("A", [call("B", ["a"], ["b"])]), fn("B", [cast(T.STRING)])]),
        "fn_attribute_ref_cast_string": model(
            [call("C", t=T.STRING)], io[0], [vi("y", T.STRING, [2, 3])],
            functions=[fn("C", [h.make_node("Cast", ["a"], ["b"])], attributes=["t"])]),
        "main_cast_string": model([h.make_node("Cast", ["x"], ["y"], to=T.STRING)], io[0], [vi("y", T.STRING, [2, 3])]),
        "unread_string_input": relu_main([vi("s", T.STRING, [1])]),
        "unread_int2_input": relu_main([vi("s", T.INT2, [1])]),
        "unread_uint64_input": relu_main([vi("s", T.UINT64, [1])]),
        "unread_uint16_initializer": relu_main(inits=[nh.from_array(np.zeros(3, np.uint16), "w")]),
        "unread_double_initializer": relu_main(inits=[nh.from_array(np.zeros(3, np.float64), "w")]),
        "unread_control": relu_main(),
        "uint16_initializer_read_by_a_call": model(
            [call("F", ["x", "w"])], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])],
            [nh.from_array(np.zeros(2, np.uint16), "w")], [fn("F", [h.make_node("Relu", ["a"], ["c"])], ["a", "b"], ["c"])]),
        "uint64_input_passed_through": model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2]), vi("u", T.UINT64, [2])],
                                             [vi("y", T.FLOAT, [2]), vi("u", T.UINT64, [2])]),
        "uint64_input_read_in_an_if_branch": model(
            [h.make_node("If", ["c"], ["y"], then_branch=h.make_graph([h.make_node("Cast", ["u"], ["t"], to=T.FLOAT)], "then", [],
                                                                      [vi("t", T.FLOAT, [2])]),
                         else_branch=h.make_graph([h.make_node("Relu", ["x"], ["e"])], "else", [], [vi("e", T.FLOAT, [2])]))],
            [vi("x", T.FLOAT, [2]), vi("c", T.BOOL, []), vi("u", T.UINT64, [2])], [vi("y", T.FLOAT, [2])]),
    }
    for name, xb, pos in (("1d_x_dynamic", "n", [1]), ("1d_x_static1", 1, [1]), ("1d_x_static2", 2, [1]),
                          ("2d_x_dynamic_pos_static", "n", [1, 3]), ("2d_both_dynamic", "n", ["m", 3]),
                          ("2d_both_static", 1, [1, 3])):
        out[f"rotary_position_ids_{name}"] = rope(xb, pos)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, m in models().items():
        onnx.save(m, folder / f"{name}.onnx")
    print(f"{len(models())} models in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
