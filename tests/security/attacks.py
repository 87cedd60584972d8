"""Models and names that attack the gate, built here (never committed): shared by the attack tests of every class
and by test_gate_modes, which runs them through pre-commit and the Action's steps."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

# every class escape.text covers: C0, C1, DEL, a line separator, bidi, zero-width space/joiners, BOM, tag
# characters, soft hyphen, a variation selector, a Hangul filler, a reserved default-ignorable
HIDDEN = ("\x1b]0;title\x07", "\x9b", "\x7f", "\u2028", "\u202e", "\u2066", "\u200b", "\u200c", "\u200d", "\ufeff",
          "\U000e0041\U000e007f", "\u00ad", "\ufe0f", "\u3164", "\u2065", "\U000e0100")
NASTY = "drop" + "".join(HIDDEN) + "out\n::error file=README.md::PWNED"


def dropout(name: str = "d") -> onnx.ModelProto:
    """A training-mode Dropout: an error (OLX010) with a safe fix."""
    g = h.make_graph([h.make_node("Dropout", ["x", "r", "t"], ["y"], name=name)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("r", T.FLOAT, []),
                      h.make_tensor_value_info("t", T.BOOL, [])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8)


def _if_on(nodes: list, cond: str, inits: list, opset: int) -> onnx.ModelProto:
    """An If whose condition is `cond`: the static model of ORT's constant folding needs cond's value."""
    then = h.make_graph([h.make_node("Identity", ["inp"], ["t"], name="then_id")], "then", [],
                        [h.make_tensor_value_info("t", T.FLOAT, [1])])
    other = h.make_graph([h.make_node("Neg", ["inp"], ["e"], name="else_neg")], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, [1])])
    g = h.make_graph([*nodes, h.make_node("If", [cond], ["y"], name="if", then_branch=then, else_branch=other)], "g",
                     [h.make_tensor_value_info("inp", T.FLOAT, [1])], [h.make_tensor_value_info("y", T.FLOAT, [1])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8 if opset < 20 else 9)


def regex_model(chars: int = 40, nodes: int = 1) -> onnx.ModelProto:
    s = nh.from_array(np.array("a" * chars, dtype=object), "s")
    regexes = [h.make_node("RegexFullMatch", ["s"], [f"m{k}"], name=f"re{k}", pattern="(a+)+b") for k in range(nodes)]
    ands = [h.make_node("And", ["m0", f"m{k}"], [f"m0_{k}"], name=f"and{k}") for k in range(1, nodes)]
    return _if_on(regexes + ands, f"m0_{nodes - 1}" if nodes > 1 else "m0", [s], 20)


def roi_model(sampling_ratio: int = 100_000) -> onnx.ModelProto:
    inits = [nh.from_array(np.ones((1, 1, 4, 4), np.float32), "X"),
             nh.from_array(np.array([[0, 0, 3, 3]], np.float32), "rois"), nh.from_array(np.array([0], np.int64), "bi")]
    nodes = [h.make_node("RoiAlign", ["X", "rois", "bi"], ["r"], name="roi", output_height=1, output_width=1,
                         sampling_ratio=sampling_ratio),
             h.make_node("ReduceSum", ["r"], ["s"], name="sum", keepdims=0), h.make_node("Cast", ["s"], ["c"], name="c", to=T.BOOL)]
    return _if_on(nodes, "c", inits, 16)


def constant_of_shape_model(side: int = 20000) -> onnx.ModelProto:
    """A ConstantOfShape whose shape onnx's inference does not know (an Abs of a constant), read by a ReduceMax; and a
    Reshape whose shape folds (OLX309, fixable by fold-shapes): --fix runs fold-shapes over the whole model."""
    k = nh.from_array(np.array([side, side], np.int64), "k")
    nodes = [h.make_node("Abs", ["k"], ["s"], name="abs"),
             h.make_node("ConstantOfShape", ["s"], ["z"], name="cos", value=nh.from_array(np.array([1.0], np.float32))),
             h.make_node("ReduceMax", ["z"], ["m"], name="max", keepdims=0), h.make_node("Add", ["inp", "m"], ["y2"], name="add"),
             h.make_node("Shape", ["inp"], ["xs"], name="shape"), h.make_node("Reshape", ["inp", "xs"], ["y"], name="reshape")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("inp", T.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4]), h.make_tensor_value_info("y2", T.FLOAT, [1, 4])], [k])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)




def hostile_model() -> onnx.ModelProto:
    """Hostile names on a node (name, op type, domain) and on the values it reads and writes; a Dropout in
    training mode (a finding whose line names the node) and a custom-domain op (a finding quoting op type and
    domain)."""
    nodes = [h.make_node("Dropout", ["x", "r", "t"], [NASTY + "v"], name=NASTY, domain=""),
             h.make_node(NASTY + "Op", [NASTY + "v"], ["y"], name="custom" + NASTY, domain="evil" + "\u202e\u200b")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3]), h.make_tensor_value_info("r", T.FLOAT, []),
                                          h.make_tensor_value_info("t", T.BOOL, [])], [h.make_tensor_value_info("y", T.FLOAT, [2, 3])]),
                     opset_imports=[h.make_opsetid("", 13), h.make_opsetid("evil\u202e\u200b", 1)], ir_version=8)
    return m
