"""MatMulAddFusion (ort.optimizer.matmul_add_fusion)."""

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _place, _removed, _tables

import onnxlint.ort.partitioner as placement


def test_matmul_add_becomes_one_gemm_only_with_a_valid_bias():
    def model(bias_shape):
        nodes = [h.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"), h.make_node("Add", ["mm", "b"], ["y"], name="add")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, None)],
                          [init("w", np.ones((4, 3), np.float32)), init("b", np.ones(bias_shape, np.float32))], opset=13)

    assert set(_removed(model((3,)))) == {"add"}  # the MatMul stands for the Gemm: it is still placed
    assert set(_removed(model((1, 3)))) == {"add"}
    assert not _removed(model((2, 2, 3)))  # a bias Gemm cannot broadcast: both stay


def test_a_fused_matmul_still_counts_for_placement_and_copies():
    """Asin (no CUDA kernel) -> MatMul -> Add(bias) -> Asin: the Gemm runs on CUDA between two CPU nodes, so
    two Memcpy boundaries, as with any other CUDA op there."""
    tables = _tables(cuda_extra={"MatMul": [[13, INF, ANY]], "Add": [[14, INF, ANY]]},
                     cpu_extra={"Asin": [[7, INF, ANY]], "MatMul": [[13, INF, ANY]], "Add": [[14, INF, ANY]]})
    nodes = [h.make_node("Asin", ["x"], ["a"], name="asin1"), h.make_node("MatMul", ["a", "w"], ["mm"], name="matmul"),
             h.make_node("Add", ["mm", "b"], ["s"], name="add"), h.make_node("Asin", ["s"], ["y"], name="asin2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 3])],
                   [init("w", np.ones((4, 3), np.float32)), init("b", np.ones((3,), np.float32))], opset=14)
    by, pl = _place(m, optimization="all", tables=tables)
    assert by["matmul"].ep == placement.CUDA and by["add"].status == "eliminated"
    assert len(pl.boundaries) == 2
