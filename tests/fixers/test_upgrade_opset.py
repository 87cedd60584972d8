"""upgrade-opset (fixers/upgrade_opset.py): a legacy opset converted to the lowest one that clears the finding."""

import onnx
from fix_cases import _copy, _model
from onnx import TensorProto as T
from onnx import helper as h

import onnxlint
from onnxlint import fixers


def test_upgrade_opset_goes_to_the_minimum_not_17(tmp_path, examples_dir, cli):
    p = _copy(examples_dir, tmp_path, "resize_opset10.onnx")
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text, text
    assert fixers.base.opset_of(onnx.load(p)) == 11


def test_a_model_level_finding_is_marked_fixable_by_upgrade_opset(tmp_path):
    """OLX006 (a legacy opset) is a finding on the model, not a node: its fixer is asked about the model
    (fixers.base's model scope) and claims it, as on a node finding whose scope's root holds the model."""
    m = _model([h.make_node("Relu", ["x"], ["y"], name="relu")], [h.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
               [h.make_tensor_value_info("y", T.FLOAT, ["N", 4])], [], opset=9)
    path = tmp_path / "old.onnx"
    onnx.save(m, path)
    report = onnxlint.lint(path, onnxlint.Settings.from_config(None))
    legacy = [f for f in report.findings if f.code == "OLX006"]
    assert legacy and legacy[0].node is None and legacy[0].fix == "upgrade-opset" and legacy[0].fixable
