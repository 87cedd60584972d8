"""ReshapeFusion (ort.optimizer.reshape_fusion), FuseContiguousReshapes included."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _fusion_blocks, _optimized_both_ways, _place, _qkv_model, _removed, _transformer_blocks

from onnxlint.model.graph import GraphIndex
from onnxlint.ort.optimizer import (
    graph_transformer_mgr,
    graph_utils,
    reshape_fusion,
)


def test_reshape_fusion_removes_the_shape_subgraph_of_a_reshape():
    # Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): ORT's ReshapeFusion (Level 1) makes the shape the
    # constant [0, -1]; the Shape/Gather/Unsqueeze/Concat never reach partitioning (were reported as CPU nodes)
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["d0", "ax"], ["d0u"], name="unsq"),
             h.make_node("Concat", ["d0u", "minus1"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 3, 4])], [vi("y", T.FLOAT, ["n", 12])],
                   [init("i0", np.array(0, np.int64)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))])
    by, pl = _place(m, "all")
    assert {by[n].status for n in ("shape", "gather", "unsq", "concat")} == {"eliminated"} and by["concat"].reason == "fusion"
    assert by["reshape"].status == "device" and not pl.boundaries
    by, _ = _place(m, "disabled")
    assert [by[n].status for n in ("gather", "unsq", "concat")] == ["deliberate"] * 3


def test_contiguous_reshapes_fuse_by_release_and_reshape_version():
    """FuseContiguousReshapes, measured with ORT's CUDA session: 1.20.2 never fuses; 1.23.2 and 1.24.4 fuse a chain
    whose first Reshape is Reshape-14 or older (opset 13 here) and not Reshape-19/21 (a GroupNormalization-21 body
    keeps both); 1.31.1 fuses every version."""
    def index(opset):
        nodes = [h.make_node("Reshape", ["x", "s1"], ["a"], name="r1"), h.make_node("Reshape", ["a", "s2"], ["b"], name="r2"),
                 h.make_node("Relu", ["b"], ["y"], name="relu")]
        m = make_model(nodes, [vi("x", T.FLOAT, [2, 6])], [vi("y", T.FLOAT, [3, 4])],
                       [init("s1", np.array([12], np.int64)), init("s2", np.array([3, 4], np.int64))], opset=opset)
        return GraphIndex(onnx.shape_inference.infer_shapes(m))

    def fused(opset, version):
        gi = index(opset)
        by = {n.index: n.name for n in gi.nodes}
        return {by[i] for i in graph_transformer_mgr.optimize(gi, "all", ort_version=version).removed}

    assert fused(13, "1.31.1") == fused(21, "1.31.1") == fused(13, "1.24.4") == fused(13, "1.23.2") == {"r2"}
    assert not fused(19, "1.24.4") and not fused(21, "1.24.4") and not fused(13, "1.20.2")
    assert not fused(19, "1.23.2") and not fused(21, "1.23.2")


def test_reshape_fusion_takes_the_reshape_versions_of_the_release():
    """The Reshape versions ReshapeFusion fuses grew: 5/13/14 up to 1.24, Reshape-19 from 1.25, every version from
    1.28 (measured: the Concat of this model gone after basic optimizations on the CPU wheels 1.21.1-1.32.0 and on
    the CUDA sessions of 1.24.4, 1.26.0 and 1.31.1). torch 2.15's TorchScript export at its default opset 20 (a
    Reshape-19) had its Shape/Gather/Unsqueeze/Concat said to run on CPU at 1.31.1, which removes them."""
    def removed(opset, version):
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
                 h.make_node("Gather", ["s", "i0"], ["g0"], name="g0", axis=0),
                 h.make_node("Gather", ["s", "i1"], ["g1"], name="g1", axis=0),
                 h.make_node("Unsqueeze", ["g0", "ax"], ["u0"], name="u0"),
                 h.make_node("Unsqueeze", ["g1", "ax"], ["u1"], name="u1"),
                 h.make_node("Concat", ["u0", "u1", "tail"], ["c"], name="concat", axis=0),
                 h.make_node("Reshape", ["x", "c"], ["r"], name="reshape"), h.make_node("Relu", ["r"], ["y"], name="relu")]
        m = make_model(nodes, [vi("x", T.FLOAT, ["batch", "seq", 64])], [vi("y", T.FLOAT, None)],
                       [init("i0", np.array(0, np.int64)), init("i1", np.array(1, np.int64)),
                        init("ax", np.array([0], np.int64)), init("tail", np.array([4, 16], np.int64))], opset=opset)
        gi = GraphIndex(onnx.shape_inference.infer_shapes(m))
        by = {n.index: n.name for n in gi.nodes}
        return "concat" in {by[i] for i in graph_transformer_mgr.optimize(gi, "basic", ort_version=version).removed}

    fused = {v: [op for op in (13, 18, 20, 21, 23) if removed(op, v)] for v in ("1.24.4", "1.26.0", "1.31.1")}
    assert fused == {"1.24.4": [13, 18], "1.26.0": [13, 18, 20], "1.31.1": [13, 18, 20, 21, 23]}


def test_a_squeeze_before_a_reshape_starts_no_chain():
    """Squeeze -> Reshape -> Unsqueeze of a small shape tensor (paddle2onnx's LSTM states): the chain starts at
    the Reshape (measured on 1.23.2, 1.24.4 and 1.31.1: `<reshape>_new_reshape`, the Squeeze stays)."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Slice", ["s", "st", "en"], ["sl"], name="slice"),
             h.make_node("Squeeze", ["sl", "ax"], ["sq"], name="squeeze"), h.make_node("Reshape", ["sq", "empty"], ["r"], name="resh"),
             h.make_node("Unsqueeze", ["r", "ax"], ["u"], name="unsq"), h.make_node("Concat", ["two", "u"], ["c"], name="cat", axis=0),
             h.make_node("Expand", ["z0", "c"], ["y"], name="expand")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None)],
                   [init("st", np.array([0], np.int64)), init("en", np.array([1], np.int64)), init("ax", np.array([0], np.int64)),
                    init("empty", np.zeros((0,), np.int64)), init("two", np.array([2], np.int64)), init("z0", np.zeros((1,), np.float32))],
                   opset=13)
    gi = GraphIndex(onnx.shape_inference.infer_shapes(m))
    by = {n.index: n.name for n in gi.nodes}
    for version in ("1.23.2", "1.24.4", "1.31.1"):  # 1.23.2: paddle2onnx's BiLSTM's two Unsqueezes were said CPU
        assert {by[i] for i in graph_transformer_mgr.optimize(gi, "basic", ort_version=version).removed} == {"unsq"}


def test_reshape_fusion_sees_through_eliminated_identities():
    """Concat -> Identity -> Identity -> Reshape (paddle2onnx exports): once EliminateIdentity removed both, the
    Concat has one consumer, the Reshape, and ReshapeFusion replaces it."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Gather", ["s", "i0"], ["g"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["g"], ["u"], name="unsq", axes=[0]),
             h.make_node("Concat", ["u", "tail"], ["c"], name="concat", axis=0),
             h.make_node("Identity", ["c"], ["c1"], name="id1"), h.make_node("Identity", ["c1"], ["c2"], name="id2"),
             h.make_node("Reshape", ["x", "c2"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 2, 2])],
                   [init("i0", np.array(0, np.int64)), init("tail", np.array([2, 2], np.int64))], opset=11)
    gone = _removed(m)
    assert gone["concat"].reason == "fusion" and {"id1", "id2"} <= set(gone)


def test_reshape_fusion_copies_a_dim_of_another_tensor_from_ort_1_31():
    """A qkv Reshape [B, T, 3, 4, C/4] built from the dims of x [B, T, 64] (the Reshape reads x @ W): ORT 1.31.1
    makes the shape [0, 0, 3, 4, -1] (dims B and T are the same named dims); 1.24.4 wants x of the very same shape
    as the Reshape's input and keeps the subgraph. Dims onnx's inference names unk__N prove nothing."""
    index = GraphIndex(onnx.shape_inference.infer_shapes(_qkv_model(["B", "T"])))
    by = {n.index: n.name for n in index.nodes}
    gone31 = {by[i] for i in graph_transformer_mgr.optimize(index, "all", ort_version="1.31.1").removed}
    assert {"concat", "ub", "ut", "uc", "div"} <= gone31
    assert "concat" not in {by[i] for i in graph_transformer_mgr.optimize(index, "all", ort_version="1.24.4").removed}
    index = GraphIndex(onnx.shape_inference.infer_shapes(_qkv_model(["unk__1", "unk__2"])))
    by = {n.index: n.name for n in index.nodes}
    assert "concat" not in {by[i] for i in graph_transformer_mgr.optimize(index, "all", ort_version="1.31.1").removed}


def _reshape_after_a_fused_reshape() -> onnx.ModelProto:
    """timm's ViT attention: qkv = Reshape(Add(ln), [B, N, 2, 4]) and later Reshape(Relu(qkv), [B, N, 8]), both
    shapes from Gather(Shape(ln), 0/1). N = 5 is a number in ln's shape; the second Reshape's input has it only
    once the first Reshape was fused (its shape a constant [0, 0, 2, 4]: ORT infers the dims again)."""
    nodes = [h.make_node("Relu", ["x"], ["ln"], name="relu"),
             h.make_node("Shape", ["ln"], ["s0"], name="shape0"), h.make_node("Gather", ["s0", "k0"], ["g0"], name="gather0", axis=0),
             h.make_node("Shape", ["ln"], ["s1"], name="shape1"), h.make_node("Gather", ["s1", "k1"], ["g1"], name="gather1", axis=0),
             h.make_node("Add", ["ln", "c"], ["a"], name="add"),
             h.make_node("Unsqueeze", ["g0", "ax"], ["u0"], name="unsq0"), h.make_node("Unsqueeze", ["g1", "ax"], ["u1"], name="unsq1"),
             h.make_node("Concat", ["u0", "u1", "two", "four"], ["shp1"], name="concat1", axis=0),
             h.make_node("Reshape", ["a", "shp1"], ["r1"], name="reshape1"),
             h.make_node("Relu", ["r1"], ["q"], name="relu2"),
             h.make_node("Unsqueeze", ["g0", "ax"], ["u2"], name="unsq2"), h.make_node("Unsqueeze", ["g1", "ax"], ["u3"], name="unsq3"),
             h.make_node("Concat", ["u2", "u3", "eight"], ["shp2"], name="concat2", axis=0),
             h.make_node("Reshape", ["q", "shp2"], ["y"], name="reshape2")]
    ints = {"k0": np.array(0, np.int64), "k1": np.array(1, np.int64), "ax": np.array([0], np.int64), "two": np.array([2], np.int64),
            "four": np.array([4], np.int64), "eight": np.array([8], np.int64)}
    return make_model(nodes, [vi("x", T.FLOAT, ["B", 5, 8])], [vi("y", T.FLOAT, None)],
                      [init(k, v) for k, v in ints.items()] + [init("c", np.ones([8], np.float32))])


def test_reshape_fusion_matches_a_dim_the_fused_reshapes_before_made_known():
    # ORT 1.31.1 (real session): every shape node gone, both Concats fused; 1.24.4 compares whole shapes and keeps
    # the second Concat and its Unsqueezes on CPU. Without the fused Reshape's dims, the second Reshape's input
    # has no known dim 1: onnxlint kept concat2 on CPU on 1.31.1 (127 such false alarms on the transformer set)
    m = _reshape_after_a_fused_reshape()
    by, _ = _place(m, "basic", version="1.31.1")
    for n in ("shape0", "gather0", "shape1", "gather1", "unsq2", "unsq3", "concat2"):
        assert by[n].status == "eliminated" and by[n].reason in ("fusion", "cse"), (n, by[n])
    by, _ = _place(m, "basic", version="1.24.4")
    assert [(by[n].status, by[n].ep is not None) for n in ("unsq2", "unsq3", "concat2")] == [("deliberate", True)] * 3


def test_one_element_multiplies_the_dims_as_an_int64_product_does():
    """graph_utils.one_element multiplies the dims in Python where the product fits an int64, else as numpy's int64
    product, which it used alone before and which wraps past 2**63: (2**63 - 1)**2 wraps to 1. A Python product
    alone would answer False there."""
    dims = {"one": (1, 1), "two": (2, 1), "scalar": (), "wraps": (2**63 - 1, 2**63 - 1), "large": (2**40, 2**40),
            "unknown": (None, 1), "none": None}

    class Shapes:
        def shape(self, scope, value):
            return dims[value]

    got = {v: graph_utils.one_element(Shapes(), None, v) for v in dims}
    assert got == {"one": True, "two": False, "scalar": True, "wraps": True, "large": False, "unknown": False, "none": False}
    assert all(got[v] == (int(np.prod(dims[v])) == 1) for v in ("one", "two", "scalar", "wraps", "large"))


@pytest.mark.parametrize("build", [lambda: _fusion_blocks(3), _transformer_blocks])
def test_contiguous_reshapes_look_only_at_reshapes_a_reshape_like_node_reads(monkeypatch, build):
    """In the main graph, FuseContiguousReshapes looks only at the Reshapes whose output a Reshape, Squeeze or
    Unsqueeze reads: what the optimizer model removes, rewires and makes constant is what a look at every
    Reshape gives, with fewer questions about readers."""
    results = _optimized_both_ways(monkeypatch, reshape_fusion, "RESHAPE_READ_ONLY", "live_readers", build)
    full, short = results[False], results[True]
    assert short[:3] == full[:3] and short[3] < full[3]
    fused = [r for r in full[0].values() if "makes the run one Reshape" in r["detail"]]
    assert len(fused) == (3 * 2 if build is not _transformer_blocks else 0)  # Unsqueeze and Reshape after a Reshape
