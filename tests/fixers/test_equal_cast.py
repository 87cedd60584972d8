"""equal-cast (fixers/equal_cast.py): a Cast so both Equal inputs share one dtype."""

import numpy as np
import onnx
from fix_cases import _model, _ort
from onnx import TensorProto as T
from onnx import helper as h


def _equal_in_if_body():
    then = h.make_graph([h.make_node("Equal", ["a", "b"], ["eq"], name="eq_in_body")], "then", [],
                        [h.make_tensor_value_info("eq", T.BOOL, [3])])
    other = h.make_graph([h.make_node("Identity", ["c"], ["eq2"], name="id_else")], "else", [],
                         [h.make_tensor_value_info("eq2", T.BOOL, [3])])
    nodes = [h.make_node("If", ["cond"], ["y"], name="branch", then_branch=then, else_branch=other)]
    return _model(nodes, [h.make_tensor_value_info("cond", T.BOOL, []), h.make_tensor_value_info("a", T.INT64, [3]),
                          h.make_tensor_value_info("b", T.INT32, [3]), h.make_tensor_value_info("c", T.BOOL, [3])],
                  [h.make_tensor_value_info("y", T.BOOL, [3])])


def test_equal_inside_an_if_body_is_fixed(tmp_path, cli, lint_json):
    p = tmp_path / "if_equal.onnx"
    onnx.save(_equal_in_if_body(), p)
    _, before = lint_json(p)
    hit = [f for f in before if f["code"] == "OLX015"]
    assert hit and hit[0]["fixable"] and ":then_branch" in hit[0]["node"]
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text and "fix not written" not in text, text
    fixed = onnx.load(p)
    onnx.checker.check_model(fixed, full_check=True)
    body = next(a.g for a in fixed.graph.node[0].attribute if a.name == "then_branch")
    assert [n.op_type for n in body.node] == ["Cast", "Equal"]
    _, after = lint_json(p)
    assert not any(f["code"] == "OLX015" for f in after)
    a, b = np.array([1, 2, 3], np.int64), np.array([1, 0, 3], np.int32)
    out = _ort(fixed, {"cond": np.array(True), "a": a, "b": b, "c": np.zeros(3, bool)})[0]
    np.testing.assert_array_equal(out, a == b)
