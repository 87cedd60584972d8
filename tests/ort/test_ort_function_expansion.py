"""Function expansion (ort.function_expansion): a node no EP has a kernel for, placed by its function body."""

from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _place, _tables

import onnxlint.ort.partitioner as placement


def test_castlike_to_float4e2m1_expands_into_a_cast_no_provider_has():
    # ORT has no CastLike kernel, expands it into Cast-25 for the node's types; neither EP casts float4e2m1
    bad = make_model([h.make_node("CastLike", ["x", "t"], ["y"], name="n")], [vi("x", T.FLOAT4E2M1, [3]), vi("t", T.FLOAT, [0])],
                     [vi("y", T.FLOAT, [3])], opset=25, ir=11)
    ok = make_model([h.make_node("CastLike", ["x", "t"], ["y"], name="n")], [vi("x", T.FLOAT, [3]), vi("t", T.FLOAT16, [0])],
                    [vi("y", T.FLOAT16, [3])], opset=25, ir=11)
    p = _place(bad)[0]["n"]
    assert (p.status, p.reason) == ("unsupported", "function-body") and "float4e2m1" in p.detail
    p = _place(ok)[0]["n"]
    assert (p.status, p.reason, p.ep) == ("expanded", "function", placement.CUDA)


def test_bernoulli_body_is_built_for_its_types():
    # Bernoulli's body depends on its dtype (context-dependent function); RandomUniformLike-22 has no kernel here
    m = make_model([h.make_node("Bernoulli", ["x"], ["y"], name="n")], [vi("x", T.DOUBLE, [10])], [vi("y", T.DOUBLE, [10])], opset=22,
                   ir=10)
    p = _place(m)[0]["n"]
    assert (p.status, p.reason) == ("unsupported", "function-body") and "RandomUniformLike" in p.detail
    tables = _tables(cuda_extra={"RandomUniformLike": [[22, INF, ANY]], "Greater": [[13, INF, ANY]]})
    p = _place(m, tables=tables)[0]["n"]
    assert p.status == "expanded"
