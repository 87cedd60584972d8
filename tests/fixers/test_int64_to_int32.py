"""int64-to-int32 (fixers/int64_to_int32.py, unsafe): INT64 inputs and constants as INT32 where the values fit."""

import numpy as np
import onnx
from fix_cases import _model, _ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnxlint import fixers


def test_int64_graph_input_unsafe_fix_where_values_fit(tmp_path):
    nodes = [h.make_node("Gather", ["table", "idx"], ["y"], name="lookup", axis=0)]
    m = _model(nodes, [h.make_tensor_value_info("idx", T.INT64, [4])], [h.make_tensor_value_info("y", T.FLOAT, [4, 2])],
               [nh.from_array(np.arange(10, dtype=np.float32).reshape(5, 2), "table")])
    req = [fixers.FixRequest("int64-to-int32", "input:idx", "tensorrt")]
    fixed, applied, skipped = fixers.apply(m, req, unsafe=False)
    assert skipped == ["int64-to-int32"] and not applied
    fixed, applied, _ = fixers.apply(m, req, unsafe=True)
    assert applied == ["int64-to-int32"] and fixed.graph.input[0].type.tensor_type.elem_type == T.INT32
    onnx.checker.check_model(fixed, full_check=True)
    idx = np.array([0, 4, 2, 1])
    np.testing.assert_array_equal(_ort(m, {"idx": idx.astype(np.int64)})[0], _ort(fixed, {"idx": idx.astype(np.int32)})[0])
