"""TensorRT's verdicts on quantized graphs (issue 41), each on a model built here with the pattern of a producer-set
model, against what tools/gen_trt_behaviour.py measured on the parsers (TensorRT 8.5.3, 8.6.0, TensorRT-RTX 1.4):
the verdict and the parser's own words."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.model.graph import GraphIndex
from onnxlint.tensorrt import model_importer, tables

RTX = "10.1+rtx1.4"
MS = ("com.microsoft", 1)


def verdicts(model, version):
    pred = model_importer.predict(GraphIndex(onnx.shape_inference.infer_shapes(model)), version)
    return {v.node.name: v for v in pred.nodes.values()}, pred


def qdq_conv(zp_dtype=np.int8, zp=0, domain="", bias=True, opset=13):
    """Q -> DQ of the activations, a per-channel int8 weight DQ, an int32 bias DQ, into a Conv: what ORT's
    quantize_static (QDQ) and TFLite's full-integer converter write."""
    extra = [MS] if domain else []
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="q", domain=domain),
             h.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"], name="dq", domain=domain),
             h.make_node("DequantizeLinear", ["w", "ws", "wzp"], ["wd"], name="dq_w", domain=domain, axis=0)]
    inits = [init("s", np.array(0.5, np.float32)), init("zp", np.array(zp, zp_dtype)),
             init("w", np.ones((4, 3, 3, 3), np.int8)), init("ws", np.full(4, 0.1, np.float32)), init("wzp", np.zeros(4, np.int8))]
    conv_in = ["xd", "wd"]
    if bias:
        nodes.append(h.make_node("DequantizeLinear", ["b", "bs", "bzp"], ["bd"], name="dq_b", domain=domain, axis=0))
        inits += [init("b", np.ones(4, np.int32)), init("bs", np.full(4, 0.05, np.float32)), init("bzp", np.zeros(4, np.int32))]
        conv_in.append("bd")
    nodes.append(h.make_node("Conv", conv_in, ["y"], name="conv"))
    return make_model(nodes, [vi("x", T.FLOAT, [1, 3, 8, 8])], [vi("y", T.FLOAT, [1, 4, 6, 6])], inits, opset=opset,
                      extra_opsets=extra)


def test_tables_carry_the_quantization_probes():
    for v in ("8.5", "8.6", RTX):
        q = tables.load(v)["behaviour"]["quantization"]
        assert q["qdq"] and q["errors"] and "uint16" in q["initializers"], v
        assert "tools/gen_trt_behaviour.py" in tables.load(v)["behaviour"]["quantization_source"]
    assert "quantization" not in (tables.load("8.4").get("behaviour") or {})  # no 8.4 parser ran


def test_symmetric_int8_qdq_is_accepted_where_the_probe_was():
    """keras MobileNetV2 QDQ with QInt8 activations and float bias: accepted by every measured parser."""
    for v in ("8.6", RTX):
        got, _ = verdicts(qdq_conv(bias=False), v)
        assert all(n.status == "supported" for n in got.values()), (v, {k: n.detail for k, n in got.items()})


@pytest.mark.parametrize("version,words", [("8.6", "TensorRT only supports symmetric quantization"),
                                           ("8.5", "TRT only supports symmetric quantization"),
                                           (RTX, "Non-zero zero point is not supported")])
def test_asymmetric_int8_zero_point_is_rejected_in_the_parsers_words(version, words):
    """TFLite full-integer int8 models through tf2onnx: activations with a zero point of -128."""
    got, _ = verdicts(qdq_conv(zp=-128, bias=False), version)
    assert (got["q"].status, got["q"].reason) == ("unsupported", "quantization")
    assert words in got["q"].detail and "non-zero zero point (asymmetric)" in got["q"].detail


def test_int32_bias_dequantize_on_8_6_is_the_parsers_activation_types_error():
    """8.6 took the int32 bias DQ of TFLite int8 models: 'only activation types allowed as input to this layer'."""
    got, _ = verdicts(qdq_conv(), "8.6")
    assert got["dq_b"].status == "unsupported" and "only activation types allowed" in got["dq_b"].detail
    assert got["dq_w"].status == "supported" and got["dq"].status == "supported"
    rtx, _ = verdicts(qdq_conv(), RTX)
    assert "input has type Int32 but must have type FP8, FP4, Int4, or Int8" in rtx["dq_b"].detail


def test_16_bit_zero_point_initializers_fail_the_import_on_both_parsers():
    """ORT's A16W8 QDQ with UseQDQContribOps: com.microsoft Q/DQ whose uint16 zero points the parser cannot
    import; it imports every initializer first, so every reader says so, in the parser's words."""
    m = qdq_conv(zp_dtype=np.uint16, zp=32768, domain="com.microsoft", bias=False)
    for v in ("8.6", RTX):
        got, pred = verdicts(m, v)
        for name in ("q", "dq"):
            assert (got[name].status, got[name].reason) == ("unsupported", "network-import"), (v, got[name].detail)
            assert '"Found unsupported datatype (4) when importing initializer"' in got[name].detail
        assert not pred.ort_ops  # the parser imports com.microsoft Q/DQ (ONNX's importer): not "prepared for ORT"


def test_stored_tensor_verdicts_name_no_tensor_so_one_cause_is_one_line():
    """Two readers of different uint16 initializers: one verdict, which names neither (the text output groups
    findings whose messages differ only in node names)."""
    m = make_model([h.make_node("Cast", ["a"], ["ca"], name="c1", to=T.FLOAT), h.make_node("Cast", ["b"], ["cb"], name="c2", to=T.FLOAT)],
                   [], [vi("ca", T.FLOAT, [2]), vi("cb", T.FLOAT, [2])],
                   [init("a", np.ones(2, np.uint16)), init("b", np.ones(2, np.uint16))])
    got, _ = verdicts(m, "8.6")
    assert got["c1"].detail == got["c2"].detail and "'a'" not in got["c1"].detail
    assert got["c1"].detail.startswith("TensorRT 8.6 cannot import input, a stored uint16 tensor")


def test_int4_block_dequantize_on_rtx_and_on_8_6():
    """int4 QDQ of ORT's MatMulNBitsQuantizer (DequantizeLinear-21, blocks of 4): RTX takes it, 8.6 cannot import
    int4 weights."""
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wd"], name="dq", axis=0, block_size=4),
             h.make_node("MatMul", ["x", "wd"], ["y"], name="mm")]
    w = h.make_tensor("w", T.INT4, [8, 4], [1] * 32)
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 8])], [vi("y", T.FLOAT, [2, 4])], [w, init("s", np.full((2, 4), 0.1, np.float32))],
                   opset=21, ir=10)
    assert verdicts(m, RTX)[0]["dq"].status == "supported"
    got = verdicts(m, "8.6")[0]["dq"]
    assert got.status == "unsupported" and '"Found unsupported datatype (22) when importing initializer"' in got.detail


def test_dequantize_without_zero_point_on_8_x():
    """8.x's Q/DQ importers read three inputs: a DQ without a zero point fails (8.5 says so in words)."""
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wd"], name="dq"), h.make_node("Add", ["x", "wd"], ["y"], name="add")]
    inits = [init("w", np.ones(4, np.int8)), init("s", np.array(0.5, np.float32))]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], inits, opset=13)
    assert "requires 3 inputs" in verdicts(m, "8.5")[0]["dq"].detail
    assert verdicts(m, "8.6")[0]["dq"].status == "unsupported"
    assert verdicts(m, RTX)[0]["dq"].status == "supported"


def test_an_unprobed_pattern_goes_to_the_ops_row():
    """A computed scale is not a probed pattern: the row's checks answer (no probe verdict, no crash)."""
    nodes = [h.make_node("Abs", ["s0"], ["s"], name="abs"),
             h.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="q"),
             h.make_node("DequantizeLinear", ["xq", "s", "zp"], ["y"], name="dq")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4]), vi("s0", T.FLOAT, [])], [vi("y", T.FLOAT, [4])], [init("zp", np.array(3, np.int8))],
                   opset=13)
    got, _ = verdicts(m, RTX)
    assert "quantization" not in (got["q"].reason or "")


@pytest.mark.parametrize("a,bits,words", [(T.FLOAT, 4, "input tensor A must be FP16."),
                                          (T.FLOAT, 8, "only 4-bit MatMulNBits is supported."),
                                          (T.FLOAT16, 4, "failed to load MatMulNBits plugin.")])
def test_matmulnbits_on_rtx_gets_its_importers_words(a, bits, words):
    """RTX's parser has a MatMulNBits importer: it checks A's type and `bits` before loading its plugin, which
    RTX does not ship; the model-level line (OLX314/OLX315) carries the importer's words."""
    blob = 32 * bits // 8
    node = h.make_node("MatMulNBits", ["a", "b", "s"], ["y"], name="mmnb", domain="com.microsoft", K=32, N=8, bits=bits,
                       block_size=32)
    np_a = np.float32 if a == T.FLOAT else np.float16
    m = make_model([node], [vi("a", a, [2, 32])], [vi("y", a, [2, 8])],
                   [init("b", np.ones((8, 1, blob), np.uint8)), init("s", np.full(8, 0.5, np_a))], extra_opsets=[MS])
    got, pred = verdicts(m, RTX)
    assert (got["mmnb"].status, got["mmnb"].reason) == ("unsupported", "ort-op") and words in got["mmnb"].detail
    assert pred.ort_ops_text() == f'com.microsoft::MatMulNBits ×1 (its importer: "{words}")'
    # TensorRT 8.6 has no importer: a plugin of that name, as before
    got, pred = verdicts(m, "8.6")
    assert got["mmnb"].reason == "ort-op" and pred.ort_ops_text() == "com.microsoft::MatMulNBits ×1"


def test_a_zero_point_in_the_data_file_is_read_there(tmp_path):
    """A model saved with every tensor external (onnx.save size_threshold=0; TFLite int8 models of the producer set
    saved so): its asymmetric zero point was unknown, so the parser's rejection went unsaid (OLX318 named 3 of a
    small CNN's 22 nodes, 22 as saved whole). Read from the model's own data file, as the parser reads it."""
    import onnxlint

    for name, external in (("whole", False), ("external", True)):
        path = tmp_path / name / "m.onnx"
        path.parent.mkdir()
        model = qdq_conv(zp=-128, bias=False)
        onnx.save(model, path, save_as_external_data=external, location="m.onnx.data", size_threshold=0)
        settings = onnxlint.Settings.from_config(None, targets=["tensorrt"], trt_version=RTX)
        found = [f for f in onnxlint.lint(path, settings).findings if f.code == "OLX318"]
        assert len(found) == 1 and "non-zero zero point (asymmetric)" in found[0].message, (name, found)


def _shared_zero_points():
    """Q/DQ nodes of one signature reading a few shared zero points (0, non-zero, int32, none), with a blocked and a
    per-tensor scale each (DequantizeLinear-21 `block_size`), before and after nodes reading the other ones."""
    nodes, k = [], 0
    for zp in ("z0", "z1", "z0", "z1", "z0", ""):
        nodes += [h.make_node("QuantizeLinear", ["x", "s", zp] if zp else ["x", "s"], [f"q{k}"], name=f"q{k}"),
                  h.make_node("DequantizeLinear", [f"q{k}", "s", zp] if zp else [f"q{k}", "s"], [f"d{k}"], name=f"dq{k}"),
                  h.make_node("DequantizeLinear", ["w", "ws", zp] if zp else ["w", "ws"], [f"w{k}"], name=f"dqw{k}",
                              axis=0, block_size=2),
                  h.make_node("DequantizeLinear", ["w", "s", zp] if zp else ["w", "s"], [f"v{k}"], name=f"dqv{k}")]
        k += 1
    nodes += [h.make_node("DequantizeLinear", ["b", "s", zi], [f"b{zi}"], name=f"dqb_{zi}") for zi in ("zi", "zi2", "zi")]
    inits = [init("s", np.array(0.5, np.float32)), init("ws", np.full((2, 4), 0.1, np.float32)),
             init("z0", np.array(0, np.int8)), init("z1", np.array(3, np.int8)), init("w", np.ones((4, 4), np.int8)),
             init("b", np.ones(4, np.int32)), init("zi", np.array(0, np.int32)), init("zi2", np.array(5, np.int32))]
    outs = [vi(f"{p}{i}", T.FLOAT, None) for i in range(k) for p in ("d", "w", "v")]
    return make_model(nodes, [vi("x", T.FLOAT, [4, 4])], outs, inits, opset=21, ir=10)


@pytest.mark.parametrize("keep_protos", [True, False])
def test_zero_points_read_once_give_each_nodes_pattern(keep_protos):
    """quantization.key with the zero points' kinds kept across nodes (model_importer's pass, each tensor read
    once) gives every node the pattern it gets alone, the scale's granularity read from the index walk's
    attribute flags where the index has them; predict's verdicts are those made for each node alone."""
    from onnxlint.tensorrt import quantization

    index = GraphIndex(onnx.shape_inference.infer_shapes(_shared_zero_points()), keep_protos=keep_protos)
    memo: dict = {}
    shared = [quantization.key(n, memo) for n in index.nodes]
    assert shared == [quantization.key(n) for n in index.nodes]
    assert {p[5] for p in shared if p} == {"zero", "nonzero", "none"} and {p[6] for p in shared if p} == {"tensor", "block"}
    assert len(memo) == 4  # z0, z1, zi, zi2
    for version in tables.available():
        table = tables.load(version)
        check = model_importer.verdict_verified if table.get("verified") == "parser" else model_importer.verdict_docs
        pred = model_importer.predict(index, version)
        alone = {n.name: model_importer._verdict(n, index.signature(n), table, version, check) for n in index.nodes}
        assert {n.name: (v.status, v.reason, v.detail) for n in index.nodes if (v := pred.get(n))} == alone, version
