"""The release table (ort.releases): the model limits and behaviours each ORT release line reads from it."""

from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _place


def test_model_newer_than_the_release_is_one_finding():
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Relu", ["a"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=26, ir=13)
    by, pl = _place(m)  # 1.24.4 loads opset <= 25
    assert [p.status for p in by.values()] == ["refused", "skipped"] and by["r1"].reason == "model-opset"
    assert pl.refused and "opset 26" in pl.refused
    m.ir_version = 11
    by, _ = _place(m, version="1.20.2")
    assert by["r1"].reason == "model-ir"  # 1.20 loads IR <= 10
    by, _ = _place(m, version="1.31.1")
    assert by["r1"].status == "device"
