"""dropout-inference (fixers/dropout.py): a training-mode Dropout as Identity, claimed only where nothing reads its mask."""

import numpy as np
from fix_cases import _model
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxlint


def test_fixable_claims_match_the_fixer():
    """A Dropout whose mask is read cannot become Identity: the finding is not marked fixable."""
    nodes = [h.make_node("Dropout", ["x", "ratio", "train"], ["y", "mask"], name="drop"),
             h.make_node("Cast", ["mask"], ["m"], name="use_mask", to=T.FLOAT)]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
               [h.make_tensor_value_info("y", T.FLOAT, [2, 3]), h.make_tensor_value_info("m", T.FLOAT, [2, 3])],
               [nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "train")])
    rep = onnxlint.lint(m)
    drop = [f for f in rep.findings if f.code == "OLX010"]
    assert drop and not drop[0].fixable
