"""double-inputs-to-float (fixers/double_inputs.py, unsafe): float64 graph inputs as float32."""

from fix_cases import _copy


def test_unsafe_fix_needs_flag(tmp_path, examples_dir, cli, lint_json):
    p = _copy(examples_dir, tmp_path, "double_input.onnx")
    rc, out, _ = cli(p, "--fix")
    assert "need --unsafe-fixes" in out
    rc, out, _ = cli(p, "--fix", "--unsafe-fixes", "--select", "OLX012")
    _, after = lint_json(p, "--select", "OLX012")
    assert after == []
