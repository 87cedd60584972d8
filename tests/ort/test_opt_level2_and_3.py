"""The transformers ORT runs after partitioning at `all` (Levels 2 and 3) that leave nodes of their own:
GatherSliceToSplitFusion (ort.optimizer.gather_slice_fusion) and NhwcTransformer (ort.optimizer.nhwc_transformer);
and the nodes of a function body ORT inlines. Each model was measured with ORT's CUDA session on 1.24.4 and
1.31.1 (the truth harness); the tests place them with the shipped kernel tables."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

import onnxlint
import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex

RELEASES = ("1.24.4", "1.31.1")


def _created(model, version, level):
    pl = placement.simulate(GraphIndex(onnx.shape_inference.infer_shapes(model)), "ort-cuda", version, optimization=level)
    return sorted((c.op_type, c.ep, c.by, c.replaces) for c in pl.created), pl


def _gathers_and_slice(covered=True, opset=17, scalar=True, dtype=T.FLOAT):
    r = "r" if dtype == T.FLOAT else "x"  # a string input: the Gathers run on CPU (CUDA has no string Gather)
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu")] if dtype == T.FLOAT else []
    nodes += [h.make_node("Gather", [r, "i0"], ["g0"], axis=1, name="g0"),
             h.make_node("Gather", [r, "i1"], ["g1"], axis=1, name="g1")]
    outs = [vi("g0", dtype, None), vi("g1", dtype, None)]
    if covered:
        nodes.append(h.make_node("Slice", [r, "st", "en", "ax"], ["s2"], name="sl"))
        outs.append(vi("s2", dtype, None))
    index = (lambda i: np.array(i, np.int64)) if scalar else (lambda i: np.array([i], np.int64))
    return make_model(nodes, [vi("x", dtype, ["N", 3, 4])], outs,
                      [init("i0", index(0)), init("i1", index(1)), init("st", np.array([2], np.int64)),
                       init("en", np.array([3], np.int64)), init("ax", np.array([1], np.int64))],
                      opset=opset, ir=10 if opset <= 22 else 11)


@pytest.mark.parametrize("version", RELEASES)
def test_gathers_and_slices_covering_a_dim_become_a_split(version):
    """Two Gathers of scalar indices and a Slice covering dim 1 of [N, 3, 4]: a Split and two Squeezes, on CUDA
    with the first of them, at `all` only; two Gathers leaving index 2 out stay."""
    split = "GatherSliceToSplitFusion"
    made, _ = _created(_gathers_and_slice(), version, "all")
    assert made == [("Split", placement.CUDA, split, False)] + [("Squeeze", placement.CUDA, split, False)] * 2
    assert not _created(_gathers_and_slice(), version, "basic")[0]
    assert not _created(_gathers_and_slice(covered=False), version, "all")[0]


@pytest.mark.parametrize(("version", "opset", "refused"), [
    ("1.20.2", 21, True), ("1.22.0", 22, True), ("1.23.0", 21, True), ("1.23.2", 23, True), ("1.23.2", 20, False),
    ("1.24.4", 23, False), ("1.24.4", 24, True), ("1.24.4", 25, True), ("1.25.1", 25, False), ("1.31.1", 25, False)])
def test_a_fusion_squeeze_cuda_has_no_kernel_for_refuses_the_session(version, opset, refused):
    """The fusion's Squeezes take the model's opset and run on CUDA with the first Gather, no kernel asked: where
    the release's CUDA table lacks that Squeeze version, session creation fails at `all` ("Failed to find kernel
    for Squeeze(21)", TransformerMemcpy), and loads at `basic`. Measured with onnxruntime-gpu 1.20.2, 1.22.0,
    1.23.0, 1.23.2, 1.24.4, 1.25.1 and 1.31.1 (the dynamo TransformerEncoder exports at opsets 21-23 on 1.20-1.23)."""
    _, pl = _created(_gathers_and_slice(opset=opset), version, "all")
    first = next(iter(pl.nodes.values()))
    assert bool(pl.refused) == refused
    assert ((first.status, first.reason) == ("refused", "fusion-kernel")) == refused
    if refused:
        assert f"Failed to find kernel for Squeeze({schema_since('Squeeze', opset)})" in pl.refused
        assert not pl.created and not pl.boundaries
    assert not _created(_gathers_and_slice(opset=opset), version, "basic")[1].refused
    codes = {f.code for f in onnxlint.lint(_gathers_and_slice(opset=opset),
                                           onnxlint.Settings.from_config(None, targets="ort-cuda", ort_version=version)).findings}
    assert ("OLX203" in codes) == refused


def schema_since(op, opset):
    return onnx.defs.get_schema(op, opset).since_version


@pytest.mark.parametrize("kw", [dict(scalar=False), dict(dtype=T.STRING), dict(covered=False)],
                         ids=["no-squeeze", "fused-on-cpu", "not-fused"])
def test_a_fusion_with_no_squeeze_on_cuda_loads(kw):
    """A Split alone (Gathers of a [1] index, Split-18 has a CUDA kernel), a fusion on CPU (string Gathers: CPU has
    Squeeze-21), or no fusion: 1.23.2 loads the opset-21 model at `all` (measured)."""
    _, pl = _created(_gathers_and_slice(opset=21, **kw), "1.23.2", "all")
    assert not pl.refused


def test_no_fusion_refusal_claimed_before_the_releases_measured():
    """1.19's CUDA table lacks Squeeze-21 too; that release was not measured: no claim."""
    assert not _created(_gathers_and_slice(opset=21), "1.19.2", "all")[1].refused


def _qconvs(with_add=False):
    def conv(i, o, w, name):
        return h.make_node("QLinearConv", [i, "s", "z", w, "ws", "wz", "s", "z"], [o], name=name, pads=[1, 1, 1, 1])

    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"), conv("q", "c1", "w", "c1"), conv("c1", "c2", "w2", "c2")]
    last = "c2"
    if with_add:
        nodes += [h.make_node("QLinearAdd", ["c1", "s", "z", "c2", "s", "z", "s", "z"], ["a"], domain="com.microsoft", name="add"),
                  conv("a", "c3", "w", "c3")]
        last = "c3"
    nodes.append(h.make_node("DequantizeLinear", [last, "s", "z"], ["y"], name="dq"))
    weights = np.ones((4, 4, 3, 3), np.uint8)
    return make_model(nodes, [vi("x", T.FLOAT, ["N", 4, 8, 8])], [vi("y", T.FLOAT, None)],
                      [init("s", np.array(0.1, np.float32)), init("z", np.array(128, np.uint8)), init("w", weights),
                       init("ws", np.array(0.02, np.float32)), init("wz", np.array(0, np.uint8)), init("w2", weights)],
                      extra_opsets=[("com.microsoft", 1)])


@pytest.mark.parametrize("version", RELEASES)
def test_cpu_qlinearconvs_go_channels_last_between_two_transposes(version):
    """NhwcTransformer: each CPU QLinearConv (uint8) is replaced by com.microsoft's channels-last one; the
    Transposes between two of them cancel, a QLinearAdd of two of them is pushed through: one Transpose in and
    one out, on CPU, at `all` only. The Memcpy nodes stay as they are."""
    nhwc = "NhwcTransformer"
    for with_add, convs in ((False, 2), (True, 3)):
        made, pl = _created(_qconvs(with_add), version, "all")
        assert made == [("QLinearConv", placement.CPU, nhwc, True)] * convs + [("Transpose", placement.CPU, nhwc, False)] * 2
        assert len(pl.boundaries) == 2
        assert not _created(_qconvs(with_add), version, "basic")[0]


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("opset", [21, 23])
def test_the_body_of_an_inlined_function_is_placed_node_by_node(version, opset):
    """GroupNormalization-21 has no kernel: ORT inlines its body (in an opset-23 model too, with the opset-21
    body), 29 nodes, its Div and Concat of shape values on CPU, the rest on CUDA, at every level."""
    m = make_model([h.make_node("GroupNormalization", ["x", "g", "b"], ["y"], name="gn", num_groups=2, epsilon=1e-5)],
                   [vi("x", T.FLOAT, ["N", 4, 2, 2])], [vi("y", T.FLOAT, None)],
                   [init("g", np.ones(4, np.float32)), init("b", np.zeros(4, np.float32))], opset=opset, ir=10)
    for level in ("disabled", "all"):
        made, pl = _created(m, version, level)
        assert {p.node.name: p.status for p in pl.nodes.values()} == {"gn": "expanded"}
        cpu = sorted(op for op, ep, by, _ in made if ep == placement.CPU)
        assert cpu == ["Concat", "Div"] and len(made) == 29 and {by for _, _, by, _ in made} == {"InlineFunction"}


def _dq4_matmul(dtype=T.UINT4, opset=23, block=32, axis=0, weights_input=False, readers=1, graph_output=False):
    """A block-wise 4-bit DequantizeLinear of [64, 32] weights feeding MatMul's B (the shape of ORT's MatMulNBits
    quantizer's QDQ output, and of the producer set's dq21_uint4_block_matmul_op23)."""
    w = h.make_tensor("w_q", dtype, [64, 32], [3] * (64 * 32))
    nodes = [h.make_node("DequantizeLinear", ["w_q", "w_scale"], ["w"], axis=axis, block_size=block, name="dq")]
    nodes += [h.make_node("MatMul", ["a", "w"], [f"y{i}"], name=f"mm{i}") for i in range(readers)]
    inputs = [vi("a", T.FLOAT, ["B", 64])] + ([vi("w_q", dtype, [64, 32])] if weights_input else [])
    scales = (64 + block - 1) // block if axis == 0 else 64, 32 if axis == 0 else (32 + block - 1) // block
    outputs = [vi(f"y{i}", T.FLOAT, ["B", 32]) for i in range(readers)] + ([vi("w", T.FLOAT, [64, 32])] if graph_output else [])
    return make_model(nodes, inputs, outputs,
                      [w, init("w_scale", np.full(scales, 0.1, np.float32))], opset=opset, ir=11 if opset > 22 else 10)


@pytest.mark.parametrize("version", ["1.23.2", "1.24.4"])
def test_a_cpu_4bit_dequantizelinear_fused_into_its_cuda_matmul_falls_back_only_below_all(version):
    """DequantizeLinear-23 has no CUDA kernel before 1.26: placed on CPU, one Memcpy to the MatMul. At `all`
    ORT's DQMatMulToMatMulNBits fusion (Level 2, after partitioning) makes the pair one MatMulNBits on CUDA: no
    node on CPU, no Memcpy (measured on 1.23.2 and 1.24.4). onnxlint said OLX200 and a Memcpy at every level."""
    for kw in ({}, {"dtype": T.INT4}):
        _, pl = _created(_dq4_matmul(**kw), version, "all")
        dq = next(p for p in pl.nodes.values() if p.node.name == "dq")
        assert (dq.ep, dq.status, dq.reason) == (None, "eliminated", "fusion")
        assert "MatMulNBits" in dq.detail and not pl.boundaries
        _, basic = _created(_dq4_matmul(**kw), version, "basic")
        assert next(p for p in basic.nodes.values() if p.node.name == "dq").status == "fallback"
        assert len(basic.boundaries) == 1
    cuda = onnxlint.Settings.from_config(None, targets="ort-cuda", ort_version=version)
    assert "OLX200" not in {f.code for f in onnxlint.lint(_dq4_matmul(), cuda).findings}
    basic_settings = onnxlint.Settings.from_config(None, targets="ort-cuda", ort_version=version, ort_optimization="basic")
    assert "OLX200" in {f.code for f in onnxlint.lint(_dq4_matmul(), basic_settings).findings}


@pytest.mark.parametrize("version", ["1.23.2", "1.24.4"])
def test_a_cpu_4bit_dequantizelinear_read_by_two_cuda_matmuls_fuses_with_both(version):
    """Two MatMuls read it: EnsureUniqueDQForNodeUnit gives the second a copy (before Level 1, every level), and at
    `all` the original and the copy each fuse with their MatMul (measured: no DequantizeLinear, no Memcpy left).
    At `basic` both run on CPU, one Memcpy each."""
    _, pl = _created(_dq4_matmul(readers=2), version, "all")
    dq = next(p for p in pl.nodes.values() if p.node.name == "dq")
    assert (dq.ep, dq.status, dq.reason) == (None, "eliminated", "fusion")
    assert not pl.created and not pl.boundaries
    made, basic = _created(_dq4_matmul(readers=2), version, "basic")
    assert made == [("DequantizeLinear", placement.CPU, "EnsureUniqueDQForNodeUnit", False)]
    assert len(basic.boundaries) == 2


@pytest.mark.parametrize("version", ["1.23.2", "1.24.4"])
@pytest.mark.parametrize("readers", [1, 2])
def test_a_cpu_4bit_dequantizelinear_that_is_a_graph_output_stays_and_its_copies_fuse(version, readers):
    """Its output also a graph output: EnsureUniqueDQForNodeUnit gives each MatMul a copy, and at `all` each copy
    fuses with its MatMul while the original stays on CPU for the graph output (measured on 1.23.2 and 1.24.4: no
    copy left, no Memcpy; at `basic` the copies run on CPU, one Memcpy each). onnxlint kept the copies on CPU with a
    Memcpy each at `all`."""
    made, pl = _created(_dq4_matmul(readers=readers, graph_output=True), version, "all")
    dq = next(p for p in pl.nodes.values() if p.node.name == "dq")
    assert (dq.ep, dq.status) == (placement.CPU, "fallback")
    assert not made and not pl.boundaries
    made, basic = _created(_dq4_matmul(readers=readers, graph_output=True), version, "basic")
    assert made == [("DequantizeLinear", placement.CPU, "EnsureUniqueDQForNodeUnit", False)] * readers
    assert len(basic.boundaries) == readers
    made, uint8 = _created(_dq4_matmul(dtype=T.UINT8, graph_output=True), version, "all")  # not fused: as at basic
    assert made == [("DequantizeLinear", placement.CPU, "EnsureUniqueDQForNodeUnit", False)] and len(uint8.boundaries) == 1


@pytest.mark.parametrize("kw", [dict(dtype=T.UINT8), dict(block=8), dict(axis=1), dict(weights_input=True)],
                         ids=["uint8", "block8", "axis1", "weights-input"])
def test_a_dequantizelinear_the_fusion_does_not_take_stays_on_cpu(kw):
    """What ORT 1.24.4 leaves on CPU at `all` (measured): 8-bit weights, a block_size under 16, blocks along axis 1,
    weights fed as a graph input. Before 1.23 (not measured) nothing is fused."""
    _, pl = _created(_dq4_matmul(**kw), "1.24.4", "all")
    assert next(p for p in pl.nodes.values() if p.node.name == "dq").status == "fallback"
    assert pl.boundaries


def test_no_fusion_modelled_before_the_releases_measured():
    """1.19 has no CUDA DequantizeLinear-21 (placed on CPU); the fusion there was not measured: left on CPU."""
    _, pl = _created(_dq4_matmul(dtype=T.INT4, opset=21), "1.19.0", "all")
    assert next(p for p in pl.nodes.values() if p.node.name == "dq").status == "fallback"


def test_under_the_tensorrt_ep_the_cuda_ep_s_fusion_refusal_is_not_claimed_where_tensorrt_takes_the_nodes():
    """GatherSliceToSplitFusion is a Level-2 transformer: it runs after partitioning, on nodes the CUDA/CPU EPs
    hold. Where TensorRT's parser takes the Gathers and the Slice (the ort-trt partition), ORT's TensorRT EP has
    them in its engine and never makes the Squeeze CUDA has no kernel for: OLX203 claimed the CUDA EP's refusal
    under `--target ort-trt`, beside a line saying TensorRT takes all four nodes. A refusal of ORT's loader (an IR
    version past the release) is made whatever the EPs, and the ort-trt line says it."""
    model = _gathers_and_slice(opset=24)

    def lint(targets):
        r = onnxlint.lint(model, onnxlint.Settings.from_config(None, targets=targets, ort_version="1.24.4"))
        return {f.code for f in r.findings}, r.placement

    assert "OLX203" in lint(["ort-cuda"])[0]  # the CUDA EP alone: refused (measured, above)
    codes, line = lint(["ort-trt"])
    assert "OLX203" not in codes and line["ort-trt"].startswith("4 nodes in 1 TensorRT subgraph"), (codes, line)
    model.ir_version = 14
    codes, line = lint(["ort-trt"])
    assert "OLX203" in codes and line["ort-trt"].startswith("ORT refuses this model: IR version 14 is newer"), line
