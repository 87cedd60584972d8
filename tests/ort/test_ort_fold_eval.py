"""fold_eval computes what onnx.reference computes, op by op, dtype included (it replaces it on the lint path)."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

from onnxlint.ort.optimizer import fold_eval

I64 = np.int64


def _reference(node, opset, inputs):
    names = [n for n in node.input if n]
    graph = h.make_graph([node], "g", [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                                      for n, a in zip(names, inputs) if a is not None],
                         [h.make_tensor_value_info(o, T.UNDEFINED, None) for o in node.output])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, {n: a for n, a in zip(names, inputs) if a is not None})


def _node(op, n_inputs, **attrs):
    return h.make_node(op, [f"i{k}" for k in range(n_inputs)], ["y"], **attrs)


rng = np.random.default_rng(7)
CASES = [
    ("Identity", 17, {}, [np.arange(6, dtype=I64)]),
    ("Cast", 17, {"to": T.FLOAT}, [np.array([3, -2], I64)]),
    ("Cast", 17, {"to": T.INT64}, [np.array([2.7, -2.7, 0.5], np.float32)]),
    ("Cast", 17, {"to": T.BOOL}, [np.array([0, 2], I64)]),
    ("Reshape", 14, {}, [np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.array([0, -1, 2], I64)]),
    ("Reshape", 14, {"allowzero": 1}, [np.zeros((0, 3), np.float32), np.array([3, 0], I64)]),
    ("Unsqueeze", 13, {}, [np.array(5, I64), np.array([0], I64)]),
    ("Unsqueeze", 13, {}, [np.arange(6, dtype=I64).reshape(2, 3), np.array([-1, 0], I64)]),
    ("Unsqueeze", 11, {"axes": [0, 3]}, [np.arange(6, dtype=I64).reshape(2, 3)]),
    ("Squeeze", 13, {}, [np.arange(3, dtype=I64).reshape(1, 3, 1), np.array([-1], I64)]),
    ("Squeeze", 13, {}, [np.arange(3, dtype=I64).reshape(1, 3, 1)]),
    ("Squeeze", 11, {"axes": [0]}, [np.arange(3, dtype=I64).reshape(1, 3)]),
    ("Concat", 13, {"axis": 0}, [np.array([1], I64), np.array([2, 3], I64), np.array([], I64)]),
    ("Concat", 13, {"axis": -1}, [np.ones((2, 1), np.float32), np.zeros((2, 2), np.float32)]),
    ("ConstantOfShape", 17, {"value": nh.from_array(np.array([7], I64))}, [np.array([2, 3], I64)]),
    ("ConstantOfShape", 17, {}, [np.array([3], I64)]),
    ("Gather", 13, {"axis": 0}, [np.array([4, 5, 6], I64), np.array(-1, I64)]),
    ("Gather", 13, {"axis": 1}, [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[0, 3], [-2, 1]], I64)]),
    ("Gather", 13, {}, [np.array([4, 5, 6], I64), np.array([2, 0], np.int32)]),
    ("Add", 14, {}, [np.array([1, 2], I64), np.array(3, I64)]),
    ("Sub", 14, {}, [np.array([[1.5], [2.0]], np.float32), np.array([0.5, 1.0], np.float32)]),
    ("Mul", 14, {}, [np.array([3, -4], np.int32), np.array([-2, 5], np.int32)]),
    ("Div", 14, {}, [np.array([7, -7, 7, -7, 6], I64), np.array([2, 2, -2, -2, 3], I64)]),
    ("Div", 14, {}, [np.array([1.0, -3.0], np.float32), np.array([4.0, 2.0], np.float32)]),
    ("Mod", 13, {}, [np.array([7, -7, 7, -7], I64), np.array([3, 3, -3, -3], I64)]),
    ("Mod", 13, {"fmod": 1}, [np.array([7, -7, 7, -7], I64), np.array([3, 3, -3, -3], I64)]),
    ("Mod", 13, {"fmod": 1}, [np.array([5.5, -5.5], np.float32), np.array([2.0, 2.0], np.float32)]),
    ("Equal", 19, {}, [np.array([1, 2, 3], I64), np.array([1, 0, 3], I64)]),
    ("Less", 13, {}, [np.array([1.0, 2.0], np.float32), np.array([2.0, 2.0], np.float32)]),
    ("Greater", 13, {}, [np.array([1, 3], I64), np.array(2, I64)]),
    ("Where", 16, {}, [np.array([True, False]), np.array([1, 2], I64), np.array([9, 9], I64)]),
    ("Expand", 13, {}, [np.array([[1], [2]], I64), np.array([2, 3], I64)]),
    ("Expand", 13, {}, [np.array([1.0, 2.0], np.float32), np.array([3, 1, 1], I64)]),
    ("Range", 11, {}, [np.array(0, I64), np.array(10, I64), np.array(3, I64)]),
    ("Range", 11, {}, [np.array(10, I64), np.array(0, I64), np.array(-4, I64)]),
    ("Range", 11, {}, [np.array(5, I64), np.array(0, I64), np.array(1, I64)]),
    ("Range", 11, {}, [np.array(1, np.int32), np.array(-8, np.int32), np.array(-3, np.int32)]),
    ("Slice", 13, {}, [np.arange(10, dtype=I64), np.array([2], I64), np.array([-1], I64)]),
    ("Slice", 13, {}, [np.arange(10, dtype=I64), np.array([-1], I64), np.array([-100], I64), np.array([0], I64),
                       np.array([-1], I64)]),
    ("Slice", 13, {}, [np.arange(10, dtype=I64), np.array([100], I64), np.array([2], I64), np.array([0], I64),
                       np.array([-3], I64)]),
    ("Slice", 13, {}, [np.arange(12, dtype=I64).reshape(3, 4), np.array([1, 0], I64), np.array([9223372036854775807, 4], I64),
                       np.array([-1, 0], I64), np.array([2, 1], I64)]),
    ("Slice", 9, {"starts": [1], "ends": [1000], "axes": [0]}, [np.arange(5, dtype=I64)]),
    ("Tile", 13, {}, [np.array([[1, 2]], I64), np.array([2, 2], I64)]),
    ("Transpose", 13, {"perm": [1, 0, 2]}, [np.arange(24, dtype=np.float32).reshape(2, 3, 4)]),
    ("Transpose", 13, {}, [np.arange(6, dtype=I64).reshape(2, 3)]),
    ("Neg", 13, {}, [np.array([1, -2], I64)]),
    ("Abs", 13, {}, [np.array([-1.5, 2.0], np.float32)]),
    ("Ceil", 13, {}, [np.array([-1.5, 2.2], np.float32)]),
    ("Floor", 13, {}, [np.array([-1.5, 2.2], np.float64)]),
    ("Sqrt", 13, {}, [np.array([4.0, 2.0], np.float32)]),
    ("Not", 13, {}, [np.array([True, False])]),
]
for _ in range(40):  # random shape arithmetic: Div/Mod/Slice on signed values
    a = rng.integers(-50, 50, size=5).astype(I64)
    b = rng.integers(1, 9, size=5).astype(I64) * rng.choice([-1, 1], size=5)
    CASES.append(("Div", 14, {}, [a, b]))
    CASES.append(("Mod", 13, {}, [a, b]))
    st, en, sp = (int(x) for x in rng.integers(-12, 12, size=3))
    CASES.append(("Slice", 13, {}, [np.arange(8, dtype=I64), np.array([st], I64), np.array([en], I64), np.array([0], I64),
                                    np.array([sp or 1], I64)]))


@pytest.mark.parametrize("op, opset, attrs, inputs", CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_matches_onnx_reference(op, opset, attrs, inputs):
    node = _node(op, len(inputs), **attrs)
    got = fold_eval.evaluate(node, opset, inputs)
    want = _reference(node, opset, inputs)
    assert got is not None, f"{op} not computed"
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w), (g, w)


def test_what_it_does_not_compute_is_left_to_the_caller():
    assert fold_eval.evaluate(_node("ReduceMax", 1), 13, [np.ones(3, np.float32)]) is None  # not an op here
    assert fold_eval.evaluate(_node("Div", 2), 14, [np.array([1], I64), np.array([0], I64)]) is None  # no division by 0
    assert fold_eval.evaluate(_node("Gather", 2), 13, [np.array([1, 2], I64), np.array(5, I64)]) is None  # out of range
    assert fold_eval.evaluate(_node("Reshape", 2), 14, [np.arange(6, dtype=I64), np.array([4, -1], I64)]) is None
    assert fold_eval.evaluate(_node("Reshape", 2), 14, [np.zeros(0, np.float32), np.array([0, 0], I64)]) is None
    # float Range lengths depend on rounding (onnx.reference and ORT differ): left to the caller
    assert fold_eval.evaluate(_node("Range", 3), 11, [np.array(x, np.float32) for x in (0.82177013, 6.42177, 0.7)]) is None
    # a result no shape computation has is never allocated (a lying value_info must not cost terabytes)
    big = np.array([1 << 40], I64)
    assert fold_eval.evaluate(_node("ConstantOfShape", 1), 17, [big]) is fold_eval.TOO_LARGE
    assert fold_eval.evaluate(_node("Expand", 2), 13, [np.ones(1, np.float32), big]) is fold_eval.TOO_LARGE
    assert fold_eval.evaluate(_node("Tile", 2), 13, [np.ones(1, np.float32), big]) is fold_eval.TOO_LARGE
    assert fold_eval.evaluate(_node("Range", 3), 11, [np.array(x, I64) for x in (0, 1 << 40, 1)]) is fold_eval.TOO_LARGE
    assert fold_eval.evaluate(h.make_node("Add", ["a", "b"], ["y"], domain="com.microsoft"), 1,
                              [np.ones(1, np.float32)] * 2) is None


def test_by_reference_runs_the_ops_evaluate_leaves_to_onnx_reference():
    """An op evaluate does not compute (Max) is run by onnx.reference, in the node's domain; a node it cannot run
    (an unknown op) answers None, as does a custom domain's op."""
    node = h.make_node("Max", ["a", "b"], ["y"])
    a, b = np.array([1, 5, 3], I64), np.array([4, 2, 6], I64)
    assert fold_eval.evaluate(node, 13, [a, b]) is None
    got = fold_eval.by_reference(node, "ai.onnx", 13, {"a": a, "b": b})
    assert got is not None and np.array_equal(got[0], [4, 5, 6]) and got[0].dtype == I64
    assert fold_eval.by_reference(h.make_node("NoSuchOp", ["a"], ["y"]), "ai.onnx", 13, {"a": a}) is None
    assert fold_eval.by_reference(h.make_node("Max", ["a", "b"], ["y"], domain="custom"), "custom", 1, {"a": a, "b": b}) is None
