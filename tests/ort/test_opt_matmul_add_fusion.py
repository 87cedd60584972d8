"""MatMulAddFusion (ort.optimizer.matmul_add_fusion)."""

import numpy as np
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _fusion_blocks, _optimized_both_ways, _place, _removed, _tables, _transformer_blocks

import onnxlint.ort.partitioner as placement
from onnxlint.ort.optimizer import matmul_add_fusion


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


@pytest.mark.parametrize("build", [lambda: _fusion_blocks(3), _transformer_blocks])
def test_only_the_matmuls_an_add_reads_are_looked_at_with_the_same_answer(monkeypatch, build):
    """In the main graph, MatMulAddFusion looks only at the MatMuls whose output some Add reads (through
    rewirings: an Identity EliminateIdentity removed between them): what the optimizer model removes, rewires
    and makes constant is what a look at every MatMul gives, with fewer questions about readers."""
    results = _optimized_both_ways(monkeypatch, matmul_add_fusion, "ADD_READ_ONLY", "live_readers", build)
    full, short = results[False], results[True]
    assert short[:3] == full[:3] and short[3] < full[3]
    fused = [r for r in full[0].values() if r["detail"].startswith("Add of a bias after a MatMul")]
    assert len(fused) == (3 * 2 + 1 if build is not _transformer_blocks else 0)  # two a block, one in the If branch
