"""The QDQ rewrites before partitioning: EnsureUniqueDQForNodeUnit (ort.optimizer.ensure_unique_dq_for_node_unit), the
redundant DQ -> Q pairs of QDQPropagationTransformer (ort.optimizer.qdq_propagation), the DQ -> X -> Q units and the
com.microsoft QuantizeLinear constant folding folds. Each case was measured with ORT's CUDA session on 1.24.4 and
1.31.1 (the truth harness); the tests place the models with the shipped kernel tables of both releases."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex

RELEASES = ("1.24.4", "1.31.1")


def _simulate(model, version, level):
    pl = placement.simulate(GraphIndex(onnx.shape_inference.infer_shapes(model)), "ort-cuda", version, optimization=level)
    return {p.node.name: p for p in pl.nodes.values()}, pl


def _shared_int32_bias(opset=17):
    """An int32 DequantizeLinear (no CUDA kernel) read by three nodes, one of them twice: four edges."""
    nodes = [h.make_node("DequantizeLinear", ["b", "bs"], ["bd"], name="dqb"),
             h.make_node("Add", ["x", "bd"], ["a1"], name="a1"), h.make_node("Add", ["a1", "bd"], ["a2"], name="a2"),
             h.make_node("Mul", ["bd", "bd"], ["m"], name="m"), h.make_node("Add", ["a2", "m"], ["y"], name="a3")]
    return make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None)],
                      [init("b", np.array([1, 2, 3, 4], np.int32)), init("bs", np.array(0.01, np.float32))], opset=opset)


@pytest.mark.parametrize("opset", [17, 21, 23])
@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("level", ["disabled", "basic", "all"])
def test_a_shared_dequantize_linear_is_copied_per_reading_input(opset, version, level):
    """ORT copies it for every reading input but the first (`dqb/duplicated`, ...), at every level, each copy on
    CPU with its own MemcpyFromHost: 4 Memcpy nodes, not 1."""
    by, pl = _simulate(_shared_int32_bias(opset), version, level)
    assert by["dqb"].ep == placement.CPU
    copies = [c for c in pl.created if c.by == "EnsureUniqueDQForNodeUnit"]
    assert [(c.op_type, c.ep, c.source.name) for c in copies] == [("DequantizeLinear", placement.CPU, "dqb")] * 3
    assert copies[0].name == "dqb/duplicated" and len({c.name for c in copies}) == 3
    assert len(pl.boundaries) == 4 and {b.direction for b in pl.boundaries} == {"to-device"}


def test_a_dequantize_linear_read_once_or_by_a_graph_output_only_is_not_copied_and_a_graph_output_keeps_its_own():
    one = make_model([h.make_node("DequantizeLinear", ["b", "bs"], ["bd"], name="dqb"), h.make_node("Add", ["x", "bd"], ["y"], name="a")],
                     [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None)],
                     [init("b", np.array([1, 2, 3, 4], np.int32)), init("bs", np.array(0.01, np.float32))])
    _, pl = _simulate(one, "1.24.4", "basic")
    assert not pl.created and len(pl.boundaries) == 1
    out = make_model([h.make_node("DequantizeLinear", ["b", "bs"], ["bd"], name="dqb"),
                      h.make_node("Add", ["x", "bd"], ["a1"], name="a1"), h.make_node("Add", ["a1", "bd"], ["y"], name="a2")],
                     [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None), vi("bd", T.FLOAT, None)],
                     [init("b", np.array([1, 2, 3, 4], np.int32)), init("bs", np.array(0.01, np.float32))])
    _, pl = _simulate(out, "1.31.1", "all")  # measured: the original stays for the graph output, both Adds get copies
    assert len(pl.created) == 2 and len(pl.boundaries) == 2


def test_readers_of_a_copied_dequantize_linear_are_never_merged_by_cse():
    """Two identical Relus of one uint8 DequantizeLinear read two copies after EnsureUniqueDQForNodeUnit: CSE keeps
    both; two identical ai.onnx DequantizeLinear and two identical com.microsoft::Gelu are never merged either."""
    nodes = [h.make_node("DequantizeLinear", ["x", "s", "zp"], ["d1"], name="dq1"),
             h.make_node("DequantizeLinear", ["x", "s", "zp"], ["d2"], name="dq2"),
             h.make_node("Relu", ["d1"], ["r1"], name="r1"), h.make_node("Relu", ["d1"], ["r2"], name="r2"),
             h.make_node("Gelu", ["r1"], ["g1"], domain="com.microsoft", name="g1"),
             h.make_node("Gelu", ["r1"], ["g2"], domain="com.microsoft", name="g2"),
             h.make_node("Sum", ["g1", "g2", "r2", "d2"], ["y"], name="sum")]
    m = make_model(nodes, [vi("x", T.UINT8, ["N", 4])], [vi("y", T.FLOAT, None)],
                   [init("s", np.array(0.01, np.float32)), init("zp", np.array(0, np.uint8))], extra_opsets=[("com.microsoft", 1)])
    for version in RELEASES:
        by, pl = _simulate(m, version, "all")
        names = ("dq1", "dq2", "r1", "r2", "g1", "g2")
        assert {n: by[n].status for n in names} == dict.fromkeys(names, "device")
        assert [c.ep for c in pl.created] == [placement.CUDA]  # dq1's copy for r2, on CUDA with it


def _dq_q(domain, zero_type, q_scale, mid=None, shared=False):
    np_zero = {T.UINT16: np.uint16, T.UINT8: np.uint8}[zero_type]
    nodes = [h.make_node("DequantizeLinear", ["bq", "s", "zp"], ["b"], domain=domain, name="dq0")]
    feed = "b"
    if mid:
        nodes.append(h.make_node(mid, ["b"], ["bi"], name="mid"))
        feed = "bi"
    nodes += [h.make_node("QuantizeLinear", [feed, "s2", "zp2"], ["q"], domain=domain, name="q"),
              h.make_node("DequantizeLinear", ["q", "s2", "zp2"], ["d"], domain=domain, name="dq1"),
              h.make_node("Add", ["x", "d"], ["y"], name="add")]
    outs = [vi("y", T.FLOAT, None)]
    if shared:
        nodes.append(h.make_node("Mul", ["x", "b"], ["z"], name="mul"))
        outs.append(vi("z", T.FLOAT, None))
    return make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], outs,
                      [init("bq", np.array([1, 2, 3, 4], np_zero)), init("s", np.array(0.01, np.float32)), init("zp", np.array(0, np_zero)),
                       init("s2", np.array(q_scale, np.float32)), init("zp2", np.array(0, np_zero))], extra_opsets=[("com.microsoft", 1)])


@pytest.mark.parametrize("domain,zero_type", [("com.microsoft", T.UINT16), ("", T.UINT8)])
@pytest.mark.parametrize("mid", [None, "Identity"])
def test_a_dequantize_quantize_pair_with_the_same_parameters_goes(domain, zero_type, mid):
    """QDQPropagationTransformer's CancelOutRedundantDQQPairs (an Identity between them goes first): the 16-bit QDQ
    BERT's tied bias. With another scale the pair stays."""
    for version in RELEASES:
        by, _ = _simulate(_dq_q(domain, zero_type, 0.01, mid), version, "basic")
        assert by["dq0"].status == by["q"].status == "eliminated" and by["dq0"].reason == "noop"
        assert by["dq1"].status in ("device", "fallback")
        by, _ = _simulate(_dq_q(domain, zero_type, 0.02, mid), version, "basic")
        assert by["dq0"].status in ("device", "fallback") and by["q"].status in ("device", "fallback")


@pytest.mark.parametrize("domain,zero_type", [("com.microsoft", T.UINT16), ("", T.UINT8)])
def test_a_dequantize_linear_of_constants_folds_with_its_whole_qdq_node_unit(domain, zero_type):
    """DQ(constants) -> Relu -> Q: ConstantFolding folds the three (skip_dequantize_linear keeps single DQs). Shared
    with a Mul, the DQ keeps a copy for it: the copy stays, on CPU for the 16-bit one, with its Memcpy."""
    for version in RELEASES:
        by, pl = _simulate(_dq_q(domain, zero_type, 0.02, "Relu"), version, "basic")
        assert {n: by[n].status for n in ("dq0", "mid", "q")} == dict.fromkeys(("dq0", "mid", "q"), "folded")
        by, pl = _simulate(_dq_q(domain, zero_type, 0.02, "Relu", shared=True), version, "basic")
        assert by["dq0"].status == "folded" and [c.source.name for c in pl.created] == ["dq0"]
        assert len(pl.boundaries) == (2 if domain else 0)
    by, _ = _simulate(_dq_q(domain, zero_type, 0.02, "Relu"), "1.24.4", "disabled")
    assert by["dq0"].status != "folded"


def test_com_microsoft_quantize_linear_of_constants_is_folded():
    """IsOperationDeterministic takes com.microsoft's QuantizeLinear: a 16-bit QDQ model's quantized constants are
    initializers at basic (the CPU-only com.microsoft::QuantizeLinear is no CPU node there), not with optimizations off."""
    nodes = [h.make_node("QuantizeLinear", ["c", "s", "zp"], ["q"], domain="com.microsoft", name="q"),
             h.make_node("DequantizeLinear", ["q", "s", "zp"], ["dq"], domain="com.microsoft", name="dq"),
             h.make_node("Mul", ["x", "dq"], ["y"], name="mul")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None)],
                   [init("c", np.array([1, 2, 3, 4], np.float32)), init("s", np.array(0.01, np.float32)),
                    init("zp", np.array(0, np.uint16))],
                   extra_opsets=[("com.microsoft", 1)])
    for version in RELEASES:
        by, pl = _simulate(m, version, "basic")
        assert by["q"].status == "folded" and by["dq"].ep == placement.CPU and len(pl.boundaries) == 1
        by, _ = _simulate(m, version, "disabled")
        assert by["q"].ep == placement.CPU
