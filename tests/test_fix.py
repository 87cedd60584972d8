import os

import onnx
import pytest

from onnxlint import fixes


def _copy(examples_dir, tmp_path, name):
    p = tmp_path / name
    p.write_bytes((examples_dir / name).read_bytes())
    return p


@pytest.mark.parametrize("name,code", [("dropout_training.onnx", "OLX010"), ("batchnorm_training.onnx", "OLX011"),
                                       ("equal_mismatch.onnx", "OLX015"), ("resize_opset10.onnx", "OLX020")])
def test_fix_removes_safe_findings(tmp_path, examples_dir, cli, lint_json, name, code):
    p = _copy(examples_dir, tmp_path, name)
    rc, out, _ = cli(p, "--fix")
    assert "fixed" in out and "fix not written" not in out, out
    onnx.checker.check_model(onnx.load(p))
    _, after = lint_json(p)
    assert not any(f["code"] == code for f in after)


def test_diff_writes_nothing(tmp_path, examples_dir, cli):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    rc, out, _ = cli(p, "--diff")
    assert "would change" in out and "Dropout" in out
    assert p.read_bytes() == before


def test_unsafe_fix_needs_flag(tmp_path, examples_dir, cli, lint_json):
    p = _copy(examples_dir, tmp_path, "double_input.onnx")
    rc, out, _ = cli(p, "--fix")
    assert "need --unsafe-fixes" in out
    rc, out, _ = cli(p, "--fix", "--unsafe-fixes", "--select", "OLX012")
    _, after = lint_json(p, "--select", "OLX012")
    assert after == []


def test_injected_failure_leaves_original_untouched(tmp_path, examples_dir):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    m = onnx.load(p)
    fixed, applied, _ = fixes.apply(m, ["dropout-inference"], unsafe=False)
    with pytest.raises(OSError):
        fixes.atomic_write(fixed, p, _fail_after_write=True)
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["dropout_training.onnx"]


def test_read_only_target_reports_cleanly(tmp_path, examples_dir, cli):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    d = tmp_path / "ro"
    d.mkdir()
    p = _copy(examples_dir, d, "dropout_training.onnx")
    before = p.read_bytes()
    d.chmod(0o500)
    try:
        rc, out, _ = cli(p, "--fix")
    finally:
        d.chmod(0o700)
    assert "fix not written" in out and p.read_bytes() == before


def test_equivalence_check_rejects_a_changed_model(examples_dir):
    m = onnx.load(examples_dir / "clean_conv.onnx")
    broken = onnx.load(examples_dir / "clean_conv.onnx")
    broken.graph.node[1].op_type = "Sigmoid"
    with pytest.raises(fixes.FixError, match="differs"):
        fixes.check_equivalent(m, broken)


def test_disk_full_leaves_original_and_no_temp_file(tmp_path, examples_dir, cli, monkeypatch):
    import errno

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fixes.os, "fsync", full)
    rc, out, _ = cli(p, "--fix")
    assert "fix not written" in out and "No space left on device" in out
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["dropout_training.onnx"]


def test_read_only_folder_simulated(tmp_path, examples_dir, cli, monkeypatch):
    """Root ignores permissions, so the read-only case is simulated where the temp file is created."""
    import errno

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()

    def denied(*a, **k):
        raise PermissionError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(fixes.tempfile, "mkstemp", denied)
    rc, out, _ = cli(p, "--fix")
    assert "fix not written" in out and "Read-only file system" in out
    assert p.read_bytes() == before


def test_external_data_model_is_not_fixed_into_another_folder(tmp_path, cli):
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    src = tmp_path / "src"
    src.mkdir()
    w = nh.from_array(np.ones(1024, np.float32), "w")
    g = h.make_graph([h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop"), h.make_node("Add", ["d", "w"], ["y"], name="add")],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 1024])], [h.make_tensor_value_info("y", T.FLOAT, ["n", 1024])],
                     [w, nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "tm")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.save(m, src / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=1024)
    out = tmp_path / "elsewhere"
    out.mkdir()
    rc, text, _ = cli(src / "m.onnx", "--fix", "-o", out / "m.onnx")
    assert "external data" in text and not (out / "m.onnx").exists()
