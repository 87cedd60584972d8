"""gridsample-standard (fixers/gridsample.py): a contrib or mmcv GridSample as ONNX GridSample."""

import numpy as np
import onnx
from fix_cases import _grid_model, _run
from onnx import helper as h

import onnxlint


def test_gridsample_com_microsoft_becomes_standard_and_numerics_are_checked(tmp_path, cli, lint_json):

    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="com.microsoft",
                       mode="bicubic", padding_mode="reflection", align_corners=1)
    m = _grid_model(node, extra=[("com.microsoft", 1)])
    p = tmp_path / "gs.onnx"
    onnx.save(m, p)
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text and "only the fixed model" not in text, text  # ORT CPU runs the contrib original
    fixed = onnx.load(p)
    n = fixed.graph.node[0]
    assert (n.domain, n.op_type) == ("", "GridSample") and fixed.opset_import[0].version == 16
    assert {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} == {
        "mode": b"bicubic", "padding_mode": b"reflection", "align_corners": 1}
    assert not any(f["code"] == "OLX021" for f in lint_json(p)[1])


def test_mmcv_grid_sampler_integer_enums_map_to_the_same_sampling(tmp_path, cli):
    from onnx import helper as h

    node = h.make_node("grid_sampler", ["x", "grid"], ["y"], name="gs", domain="mmcv",
                       interpolation_mode=1, padding_mode=1, align_corners=1)  # nearest, border
    p = tmp_path / "mmcv.onnx"
    onnx.save(_grid_model(node, extra=[("mmcv", 1)]), p)
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text, text
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (1, 4, 4, 2)).astype(np.float32)
    same = h.make_node("GridSample", ["x", "grid"], ["y"], domain="com.microsoft", mode="nearest",
                       padding_mode="border", align_corners=1)
    np.testing.assert_allclose(_run(onnx.load(p), x, grid), _run(_grid_model(same, extra=[("com.microsoft", 1)]), x, grid))


def test_gridsample_with_unmapped_attribute_is_left_alone(tmp_path, cli):

    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="mmcv", mode="bilinear", extra_flag=1)
    p = tmp_path / "odd.onnx"
    onnx.save(_grid_model(node, extra=[("mmcv", 1)]), p)
    before = p.read_bytes()
    rep = onnxlint.lint(p)
    assert [f.fixable for f in rep.findings if f.code == "OLX021"] == [False]  # no standard equivalent: not claimed
    rc, text, _ = cli(p, "--fix")
    assert "wrote" not in text, text
    assert p.read_bytes() == before
