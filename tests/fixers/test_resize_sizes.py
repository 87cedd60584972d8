"""resize-sizes (fixers/resize_sizes.py): an align_corners Resize given sizes instead of scales."""

import numpy as np
import onnx
import pytest
from fix_cases import _apply, _model, _ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def test_resize_sizes_needs_static_scaled_dims(tmp_path, cli, lint_json):
    """A dynamic dim that is scaled (here the height) has no constant size: the fix is not claimed. (A dynamic
    batch at scale 1 is: test_resize_sizes_keeps_a_dynamic_batch.)"""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    g = h.make_graph([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear",
                                  coordinate_transformation_mode="align_corners")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 1, "h", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 1, "h2", 8])],
                     [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    p = tmp_path / "dyn.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    _, found = lint_json(p, "--target", "tensorrt")
    olx301 = [f for f in found if f["code"] == "OLX301"]
    assert olx301 and not olx301[0]["fixable"]  # no equivalent constant size for a scaled dynamic dim: not claimed
    rc, text, _ = cli(p, "--fix", "--target", "tensorrt")
    assert "wrote" not in text and p.read_bytes() == before


def test_resize_sizes_rewrite_is_numerically_identical(tmp_path, examples_dir):
    import numpy as np
    import onnxruntime as ort

    m = onnx.load(examples_dir / "resize_align_corners.onnx")
    fixed, applied, _ = _apply(m, "resize-sizes")
    assert applied == ["resize-sizes"] and list(fixed.graph.node[0].input)[2] == ""
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    run = lambda mm: ort.InferenceSession(mm.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(run(m), run(fixed))


def _torch_resize(opset):
    """What torch's exporter writes for F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True):
    roi and scales as Constant nodes at opset 11 (an empty roi tensor), roi "" from opset 13."""
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 3, 5, 7])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 3, 10, 14])
    scales = h.make_node("Constant", [], ["sc"], name="Constant_1",
                         value=nh.from_array(np.array([1, 1, 2, 2], np.float32)))
    attrs = dict(mode="linear", coordinate_transformation_mode="align_corners", nearest_mode="floor")
    if opset < 13:
        roi = h.make_node("Constant", [], ["roi"], name="Constant_0", value=nh.from_array(np.zeros(0, np.float32)))
        nodes = [roi, scales, h.make_node("Resize", ["x", "roi", "sc"], ["y"], name="Resize_2", **attrs)]
    else:
        nodes = [scales, h.make_node("Resize", ["x", "", "sc"], ["y"], name="Resize_2", **attrs)]
    return _model(nodes, [x], [y], opset=opset)


@pytest.mark.parametrize("opset", [11, 12, 13, 17, 20])
def test_resize_sizes_on_torch_style_exports(tmp_path, cli, lint_json, opset):
    m = _torch_resize(opset)
    p = tmp_path / f"resize{opset}.onnx"
    onnx.save(m, p)
    _, before = lint_json(p, "--target", "tensorrt")
    assert any(f["code"] == "OLX301" and f["fixable"] for f in before)
    rc, text, _ = cli(p, "--fix", "--target", "tensorrt")
    assert "wrote" in text and "fix not written" not in text, text
    fixed = onnx.load(p)
    onnx.checker.check_model(fixed, full_check=True)
    rz = [n for n in fixed.graph.node if n.op_type == "Resize"][0]
    assert len(rz.input) == 4 and rz.input[3]
    if opset < 13:
        assert rz.input[1] and rz.input[2]  # Resize-11/12 have no optional inputs: empty tensors, not ""
    _, after = lint_json(p, "--target", "tensorrt")
    assert not any(f["code"] == "OLX301" for f in after)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 7)).astype(np.float32)
    np.testing.assert_array_equal(_ort(m, {"x": x})[0], _ort(fixed, {"x": x})[0])


def test_resize_sizes_keeps_a_dynamic_batch(tmp_path, cli, lint_json):
    """An align_corners Resize on [batch, 3, 8, 8] with scales [1, 1, 2, 2]: sizes = Concat(Shape(x)[:1],
    [3, 16, 16]), so the batch stays dynamic; the numeric check runs two batch sizes."""
    from onnxlint.fixers import tidy

    n = h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="up", mode="linear",
                    coordinate_transformation_mode="align_corners")
    m = h.make_model(h.make_graph([n], "g", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 8, 8])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["batch", 3, 16, 16])],
                                  [nh.from_array(np.zeros(0, np.float32), "roi"),
                                   nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]),
                     opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    p = tmp_path / "rz.onnx"
    onnx.save(m, p)
    _, before = lint_json(p)
    assert any(f["code"] == "OLX301" and f["fixable"] for f in before)
    _, out, _ = cli(p, "--fix")
    assert "outputs equal at batch=1 and batch=2" in out and "(resize-sizes)" in out, out
    fixed = onnx.load(p)
    assert [x.op_type for x in fixed.graph.node] == ["Shape", "Slice", "Concat", "Resize"] and tidy.is_sorted(fixed.graph)
    assert fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    _, after = lint_json(p)
    assert not any(f["code"] == "OLX301" for f in after)
    m.graph.initializer[1].CopyFrom(nh.from_array(np.array([2, 1, 2, 2], np.float32), "scales"))  # batch scaled
    onnx.save(m, p)
    _, again = lint_json(p)
    assert any(f["code"] == "OLX301" and not f["fixable"] for f in again)
