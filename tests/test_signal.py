"""Signal over noise (issue 19): what a default run shows (errors and warnings) is what a deployment engineer acts
on, once per cause. Each noise pattern judged on real exports (benchmarks/realworld.py) has a test here that keeps
it out of the default text output, and each true positive next to it has a test that keeps it shown.

Models are built here with onnx.helper; every run uses the default settings (no config, default targets
ort-cuda and tensorrt), as a new user's first `onnxlint model.onnx` does.
"""

from __future__ import annotations

import numpy as np
import onnx
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

import onnxlint
from onnxlint.config.settings import Settings


def findings(model: onnx.ModelProto, **overrides):
    return onnxlint.lint(model, Settings.from_config(None, **overrides)).findings


def shown(model: onnx.ModelProto, **overrides):
    """(code, node location) of what default text output prints: errors and warnings, not suppressed."""
    return {(f.code, f.node) for f in findings(model, **overrides) if f.severity != "info" and not f.suppressed}


def codes(model: onnx.ModelProto, severity: str | None = None, **overrides):
    return {f.code for f in findings(model, **overrides) if severity is None or f.severity == severity}


def dynamic_reshape_model(shape_via_identity: bool = False):
    """x[N, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [2, 2])): what every dynamic-batch export emits."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["n", "ax"], ["n1"], name="unsq"),
             h.make_node("Concat", ["n1", "tail"], ["t"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "t"], ["y"], name="reshape")]
    inits = [init("zero", np.array(0, np.int64)), init("ax", np.array([0], np.int64)), init("tail", np.array([2, 2], np.int64))]
    return make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 2, 2])], inits)


# ------------------------------------------------------------------------------------- noise kept out


def test_dynamic_reshape_is_info_not_a_warning():
    m = dynamic_reshape_model()
    assert shown(m) == set()
    assert "OLX309" in codes(m, "info")  # still in JSON/SARIF, as context


def test_reshape_shape_identity_of_initializer_is_a_constant():
    m = make_model([h.make_node("Identity", ["s0"], ["s"], name="id"), h.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
                   [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 2, 2])], [init("s0", np.array([-1, 2, 2], np.int64))])
    assert "OLX309" not in codes(m)
    # a real computation behind the Identity is still one
    m2 = dynamic_reshape_model()
    m2.graph.node[-1].input[1] = "t_id"
    m2.graph.node.insert(4, h.make_node("Identity", ["t"], ["t_id"], name="id"))
    assert "OLX309" in codes(m2)


def test_nonzero_on_bool_is_no_error_or_warning_for_tensorrt():
    """torchvision detectors: NonZero on bool masks (a known-false TensorRT error once). The parsers that import it
    (8.6, RTX 1.4) say nothing; RTX 1.6 and later import NonZero through a plugin RTX does not ship ("NonZero plugin
    creator version 1 was not found in plugin registry", measured on the node tests and torchvision's detectors)."""
    m = make_model([h.make_node("Greater", ["x", "thr"], ["mask"], name="gt"), h.make_node("NonZero", ["mask"], ["idx"], name="nz")],
                   [vi("x", T.FLOAT, ["N"])], [vi("idx", T.INT64, [1, "K"])], [init("thr", np.array(0.5, np.float32))])
    for version in ("8.6", "10.1+rtx1.4"):
        assert shown(m, trt_version=version) == set(), version
        assert "OLX306" in codes(m, "info", trt_version=version)
    assert ("OLX300", "nz") in shown(m, trt_version="10.1+rtx1.7")


def test_nonmaxsuppression_runs_on_cuda():
    m = make_model([h.make_node("NonMaxSuppression", ["boxes", "scores", "k", "iou"], ["sel"], name="nms")],
                   [vi("boxes", T.FLOAT, [1, "B", 4]), vi("scores", T.FLOAT, [1, 1, "B"])], [vi("sel", T.INT64, ["K", 3])],
                   [init("k", np.array([100], np.int64)), init("iou", np.array([0.5], np.float32))])
    assert not {c for c in codes(m) if c.startswith("OLX2")}
    assert shown(m) == set()


def test_scatternd_is_context_at_every_opset():
    for opset in (13, 17):
        m = make_model([h.make_node("ScatterND", ["x", "i", "u"], ["y"], name="scatter")],
                       [vi("x", T.FLOAT, ["N", 3]), vi("u", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, ["N", 3])],
                       [init("i", np.array([[0], [1]], np.int64))], opset=opset)
        assert shown(m) == set(), opset
        assert "OLX302" in codes(m, "info"), opset  # ScatterND-13 has no reduction attribute: still matched


def test_float64_model_is_reported_once_by_its_input():
    m = make_model([h.make_node("Gemm", ["x", "w"], ["a"], name="gemm"), h.make_node("Tanh", ["a"], ["y"], name="tanh")],
                   [vi("x", T.DOUBLE, ["N", 4])], [vi("y", T.DOUBLE, ["N", 4])], [init("w", np.eye(4))])
    assert shown(m) == {("OLX012", "input:x")}
    assert "OLX307" in codes(m, "info")


def test_if_branch_ranks_accepted_by_the_10x_parser_are_info():
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", T.FLOAT, [4])])
    else_g = h.make_graph([h.make_node("Unsqueeze", ["x", "ax"], ["e"])], "else", [], [vi("e", T.FLOAT, [1, 4])],
                          [init("ax", np.array([0], np.int64))])
    m = make_model([h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                   [vi("c", T.BOOL, []), vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, None)])
    assert not {c for c, _ in shown(m) if c.startswith("OLX3")}
    assert "OLX311" in codes(m, "info")
    # true positive: TensorRT 8.x's parser rejects it (measured on silero_vad)
    assert ("OLX300", "if") in shown(m, trt_version="8.6")


def test_legacy_opset_alone_is_info():
    m = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 4])],
                   opset=9, ir=4)
    assert shown(m) == set()
    assert "OLX006" in codes(m, "info")


def test_ir3_initializer_not_listed_as_input_is_no_checker_error():
    """onnxruntime's own sample mul_1.onnx: ORT loads it although onnx.checker complains."""
    m = make_model([h.make_node("Mul", ["X", "W"], ["Y"], name="mul")], [vi("X", T.FLOAT, [3, 2])], [vi("Y", T.FLOAT, [3, 2])],
                   [init("W", np.ones((3, 2), np.float32))], opset=7, ir=3)
    assert shown(m) == set()
    # a real complaint behind that one is still an error
    m.graph.node[0].op_type = "NotAnOp"
    assert ("OLX001", None) in shown(m)


def test_training_mode_dropout_is_reported_once():
    m = make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")], [vi("x", T.FLOAT, ["N", 3])],
                   [vi("y", T.FLOAT, ["N", 3])], [init("r", np.array(0.5, np.float32)), init("t", np.array(True))])
    assert shown(m) == {("OLX010", "drop")}
    # the TensorRT verdict is still there when the core rule is off
    assert ("OLX300", "drop") in shown(m, ignore=["OLX010"])


def test_a_suppressed_core_finding_does_not_hide_the_target_finding(tmp_path):
    """per-file-ignores, model metadata or the node's doc_string silencing OLX010 must not silence what TensorRT
    says about the same node: nothing would be shown and CI would pass a model TensorRT refuses."""
    def model():
        return make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")], [vi("x", T.FLOAT, ["N", 3])],
                          [vi("y", T.FLOAT, ["N", 3])], [init("r", np.array(0.5, np.float32)), init("t", np.array(True))])

    p = tmp_path / "m.onnx"
    onnx.save(model(), p)
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.onnxlint.per-file-ignores]\n"m.onnx" = ["OLX010"]\n')
    res = onnxlint.lint(p, Settings.from_config(cfg))
    assert {(f.code, f.suppressed) for f in res.findings if f.code in ("OLX010", "OLX300")} == {
        ("OLX010", "per-file-ignores"), ("OLX300", None)}
    m = model()
    onnx.helper.set_model_props(m, {"onnxlint:ignore": "OLX010"})
    assert ("OLX300", "drop") in shown(m)
    m = model()
    m.graph.node[0].doc_string = "onnxlint: ignore[OLX010]"
    assert ("OLX300", "drop") in shown(m)


def test_training_mode_batchnorm_is_reported_once():
    c = [init(n, np.full(3, v, np.float32)) for n, v in (("s", 1), ("b", 0), ("mean", 0), ("var", 1))]
    # its three outputs, as training mode needs: with one, ORT's Graph::Resolve refuses the model first (OLX007)
    m = make_model([h.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["y", "rm", "rv"], name="bn",
                                training_mode=1)],
                   [vi("x", T.FLOAT, ["N", 3, 4, 4])], [vi("y", T.FLOAT, ["N", 3, 4, 4]), vi("rm", T.FLOAT, [3]),
                                                        vi("rv", T.FLOAT, [3])], c, opset=15)
    on_bn = {c for c, node in shown(m) if node == "bn"}
    assert on_bn == {"OLX011"}
    assert {"OLX204", "OLX300"} <= {c for c, node in shown(m, ignore=["OLX011"]) if node == "bn"}


def test_custom_domain_op_is_reported_once():
    m = make_model([h.make_node("FancyNorm", ["x"], ["y"], name="op", domain="com.example")], [vi("x", T.FLOAT, ["N", 4])],
                   [vi("y", T.FLOAT, ["N", 4])], extra_opsets=[("com.example", 1)])
    assert {c for c, _ in shown(m)} == {"OLX014"}


def test_clean_dynamic_batch_cnn_prints_no_warning_or_error(save, cli):
    """A ResNet-style block exported at opset 17 with a dynamic batch: nothing to act on."""
    c = [init("w1", np.random.rand(8, 3, 3, 3).astype(np.float32)), init("b1", np.zeros(8, np.float32)),
         init("wf", np.random.rand(10, 8).astype(np.float32)), init("bf", np.zeros(10, np.float32))]
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"], name="relu"),
             h.make_node("Add", ["r", "c"], ["a"], name="add"),
             h.make_node("GlobalAveragePool", ["a"], ["p"], name="gap"),
             h.make_node("Flatten", ["p"], ["f"], name="flat"),
             h.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    m = make_model(nodes, [vi("x", T.FLOAT, ["batch", 3, 16, 16])], [vi("y", T.FLOAT, ["batch", 10])], c)
    assert shown(m) == set()
    rc, out, _ = cli(save(m))
    assert rc == 0 and " warning" not in out.replace("0 warnings", "") and "error" not in out.replace("0 errors", "")


# ------------------------------------------------------------------------------------- true positives still shown


def test_uint8_qdq_is_a_tensorrt_error():
    """ORT's default static quantization (uint8 activations, zero point 128): TensorRT's parser takes symmetric int8
    Q/DQ only; the model's Q/DQ causes are one error line (OLX318), with the re-quantization that works."""
    m = make_model([h.make_node("QuantizeLinear", ["x", "sc", "zp"], ["q"], name="q"),
                    h.make_node("DequantizeLinear", ["q", "sc", "zp"], ["y"], name="dq")],
                   [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 4])],
                   [init("sc", np.array(0.1, np.float32)), init("zp", np.array(128, np.uint8))])
    got = [f for f in findings(m) if f.code in ("OLX300", "OLX318")]
    assert [f.code for f in got] == ["OLX318"] and got[0].severity == "error"
    assert "non-zero zero point" in got[0].message and "QuantType.QInt8" in got[0].message


def test_open_ended_kernel_fallback_is_a_warning():
    """Resize-19 under a CUDA kernel registered as 18+: ORT matches open-ended kernels only at their own version."""
    m = make_model([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear")],
                   [vi("x", T.FLOAT, ["N", 3, 8, 8])], [vi("y", T.FLOAT, ["N", 3, 16, 16])],
                   [init("sc", np.array([1, 1, 2, 2], np.float32))], opset=19, ir=9)
    got = [f for f in findings(m, ort_version="1.24.4") if f.code == "OLX200"]
    assert got and got[0].severity == "warning" and "Resize-19" in got[0].message


def test_text_output_prints_one_line_per_cause(save, cli):
    """Twenty BitwiseNot nodes with one cause (no TensorRT importer) print once per rule, with the count."""
    nodes, outs = [], []
    for k in range(20):
        nodes.append(h.make_node("BitwiseNot", ["x"], [f"y{k}"], name=f"bn{k}"))
        outs.append(vi(f"y{k}", T.INT32, [4]))
    m = make_model(nodes, [vi("x", T.INT32, [4])], outs, opset=18)
    rc, out, _ = cli(save(m), "--quiet", "--target", "tensorrt")
    lines = [ln for ln in out.splitlines() if " OLX300 " in ln]
    assert rc == 1 and len(lines) == 1 and "×20" in lines[0]
    rc, out, _ = cli(save(m), "--target", "tensorrt")
    assert "; 1 line after grouping, --expand lists every node. Checked against" in out.splitlines()[-1]
    assert "Found 20 findings" in out
    rc, out, _ = cli(save(m), "--expand", "--target", "tensorrt")
    assert "after grouping" not in out and "--expand lists" not in out and len([ln for ln in out.splitlines() if " OLX300 " in ln]) == 20
