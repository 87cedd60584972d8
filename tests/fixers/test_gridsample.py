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


def test_a_model_importing_ai_onnx_opset_0_or_below_is_no_internal_error(tmp_path, cli, lint_json):
    """onnx's checker and ORT take a model whose ai.onnx opset import is -1 or 0 (a contrib GridSample needs no
    ai.onnx op), and OLX021 called it fixable; `--fix` said "internal error in a fixer (RuntimeError: ...
    assertInVersionRange ...); please report it": onnx's version converter asserts on a source opset below 1. The
    finding is not claimed fixable there, and the fixer, asked anyway, says why in one line."""
    import pytest

    from onnxlint import fixers

    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="com.microsoft", mode="bicubic")
    for version in (-1, 0):
        m = _grid_model(node, extra=[("com.microsoft", 1)])
        next(o for o in m.opset_import if o.domain == "").version = version
        p = tmp_path / f"gs{version}.onnx"
        p.write_bytes(m.SerializeToString())  # onnx.save would run no checker either; as bytes, plainly
        assert [f["fixable"] for f in lint_json(p)[1] if f["code"] == "OLX021"] == [False]
        rc, text, err = cli(p, "--fix", "-o", tmp_path / "out.onnx")
        assert "internal error" not in text + err and "Traceback" not in err and not (tmp_path / "out.onnx").exists()
        found = next(f for f in onnxlint.lint(m).findings if f.code == "OLX021")
        with pytest.raises(fixers.FixError, match=f"imports ai.onnx opset {version}, which is no opset"):
            fixers.apply(m, [fixers.FixRequest("gridsample-standard", found.node, found.target)], unsafe=False)
