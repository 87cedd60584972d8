import numpy as np
from onnx import TensorProto as T, helper as h

from conftest import init, make_model, vi


def _trt(lint_json, path, *extra):
    _, findings = lint_json(path, "--target", "tensorrt", *extra)
    return findings


def test_seed_cases(save, lint_json):
    cases = {
        "scatter": (make_model([h.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc", reduction="mul")],
                               [vi("x", T.FLOAT, [4]), vi("u", T.FLOAT, [1])], [vi("y", T.FLOAT, [4])], [init("i", np.array([[1]], np.int64))]), "OLX303"),
        "align": (make_model([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear", coordinate_transformation_mode="align_corners")],
                             [vi("x", T.FLOAT, ["n", 1, 4, 4])], [vi("y", T.FLOAT, ["n", 1, 8, 8])], [init("sc", np.array([1, 1, 2, 2], np.float32))]), "OLX301"),
        "nonzero": (make_model([h.make_node("NonZero", ["x"], ["y"], name="nz")], [vi("x", T.FLOAT, [4])], [vi("y", T.INT64, [1, "k"])]), "OLX306"),
        "double": (make_model([h.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", T.DOUBLE, ["n"]), vi("b", T.DOUBLE, ["n"])],
                              [vi("y", T.DOUBLE, ["n"])]), "OLX307"),
        "reshape": (make_model([h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s2"], ["y"], name="reshape"),
                                h.make_node("Identity", ["s"], ["s2"], name="ident")],
                               [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 4])]), "OLX309"),
    }
    for name, (m, code) in cases.items():
        findings = _trt(lint_json, save(m, f"{name}.onnx"))
        assert code in {f["code"] for f in findings}, (name, findings)
        assert all(f["message"] for f in findings)


def test_version_awareness(save, lint_json):
    m = make_model([h.make_node("NonZero", ["x"], ["y"], name="nz")], [vi("x", T.FLOAT, [4])], [vi("y", T.INT64, [1, "k"])])
    p = save(m)
    old = {f["code"] for f in _trt(lint_json, p, "--trt-version", "8.4")}
    new = {f["code"] for f in _trt(lint_json, p, "--trt-version", "10.1")}
    assert "OLX300" in old and "OLX300" not in new


def test_conv_relu_net_is_clean(save, lint_json):
    m = make_model([h.make_node("Conv", ["x", "w"], ["c"], name="conv"), h.make_node("Relu", ["c"], ["y"], name="relu")],
                   [vi("x", T.FLOAT, ["n", 3, 8, 8])], [vi("y", T.FLOAT, ["n", 4, 6, 6])], [init("w", np.ones((4, 3, 3, 3), np.float32))])
    assert _trt(lint_json, save(m)) == []


def test_ort_trt_partition_summary(save, cli):
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Cast", ["a"], ["s"], name="to_str", to=T.STRING),
             h.make_node("Cast", ["s"], ["b"], name="to_f", to=T.FLOAT), h.make_node("Relu", ["b"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n"])], [vi("y", T.FLOAT, ["n"])])
    rc, out, _ = cli(save(m), "--target", "ort-trt")
    assert "ort-trt:" in out and "TensorRT subgraph(s)" in out
    assert "in 2 TensorRT subgraph(s)" in out


def test_align_corners_with_sizes_is_exact_on_8_4_and_later(save, lint_json):
    m = make_model([h.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rz", mode="linear", coordinate_transformation_mode="align_corners")],
                   [vi("x", T.FLOAT, ["n", 1, 4, 4])], [vi("y", T.FLOAT, ["n", 1, 8, 8])], [init("sz", np.array([1, 1, 8, 8], np.int64))])
    assert not any(f["code"] == "OLX301" for f in _trt(lint_json, save(m)))
