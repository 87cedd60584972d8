"""GetCpuPreferredNodes (ort.cpu_preferred): small shape computations ORT keeps on CPU on purpose."""

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _place, _tables

import onnxlint.ort.partitioner as placement


def test_cpu_preferred_sees_constant_value_ints():
    # CenterCropPad's expansion: Gather(Shape(x), Constant(value_ints)) - a Constant node's value_ints is a small
    # initializer for ORT, so GetCpuPreferredNodes keeps the Gather on CPU (was predicted on CUDA)
    nodes = [h.make_node("Constant", [], ["axes"], name="c", value_ints=[1, 2]),
             h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "axes"], ["g"], name="gather"),
             h.make_node("Concat", ["g", "g"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["a", "b", "c"])], [vi("y", T.FLOAT, None)], opset=19)
    by, _ = _place(m)
    assert by["gather"].status == "deliberate" and by["concat"].status == "deliberate" and by["reshape"].status == "device"


def test_a_folded_value_whose_size_is_learnt_after_folding_counts_as_a_small_initializer():
    """fasterrcnn op11's image padding: Concat(CPU shape values, ConstantOfShape(folded)) -> ... -> Pad pads.
    onnx's inference cannot size the ConstantOfShape; ORT, re-inferring after folding it, can, so the Concat
    reads a small initializer and a CPU tensor and is CPU-preferred (was predicted on CUDA: 5 misses)."""
    nodes = [h.make_node("Shape", ["x"], ["sx"], name="shape_x"),
             h.make_node("Gather", ["sx", "i0"], ["g"], name="gather_x", axis=0),
             h.make_node("Abs", ["g"], ["a"], name="abs"),  # no data propagation through Abs
             h.make_node("ConstantOfShape", ["a"], ["ones"], name="cos", value=init("v", np.array([1], np.int64))),
             h.make_node("Shape", ["z"], ["sz"], name="shape_z"),
             h.make_node("Gather", ["sz", "i01"], ["nz"], name="gather_z", axis=0),
             h.make_node("Concat", ["nz", "ones"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["z", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 2]), vi("z", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)],
                   [init("i0", np.array([0], np.int64)), init("i01", np.array([0, 1], np.int64))], opset=17)
    extra = {"Abs": [[13, INF, ANY]], "ConstantOfShape": [[9, INF, ANY]]}
    by, _ = _place(m, "all", tables=_tables(cuda_extra=extra, cpu_extra=extra))
    assert by["cos"].status == "folded" and by["concat"].status == "deliberate" and by["concat"].ep == placement.CPU
