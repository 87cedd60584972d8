"""The atomic write of a fixed model (fixers/write.py): nothing half-written, the mode and links kept."""

import os

import onnx
import pytest
from fix_cases import _apply, _copy

from onnxlint import fixers
from onnxlint.fixers import write as fix_write


def test_injected_failure_leaves_original_untouched(tmp_path, examples_dir):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    m = onnx.load(p)
    fixed, applied, _ = _apply(m, "dropout-inference")
    with pytest.raises(OSError):
        fixers.atomic_write(fixed, p, _fail_after_write=True)
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


def test_disk_full_leaves_original_and_no_temp_file(tmp_path, examples_dir, cli, monkeypatch):
    import errno

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fix_write.os, "fsync", full)
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

    monkeypatch.setattr(fix_write.tempfile, "mkstemp", denied)
    rc, out, _ = cli(p, "--fix")
    assert "fix not written" in out and "Read-only file system" in out
    assert p.read_bytes() == before


def test_fix_keeps_the_file_mode_and_writes_through_a_symlink(tmp_path, examples_dir, cli):
    """--fix keeps what it does not own: the model's permission bits, and a symlink stays a symlink."""
    import os
    import stat

    real = tmp_path / "real" / "m.onnx"
    real.parent.mkdir()
    real.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    real.chmod(0o640)
    link = tmp_path / "link.onnx"
    os.symlink("real/m.onnx", link)
    rc, out, _ = cli(link, "--fix")
    assert "wrote" in out, out
    assert link.is_symlink() and os.readlink(link) == "real/m.onnx"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert onnx.load(real).graph.node[0].op_type != "Dropout"
    assert not [p for p in real.parent.iterdir() if p.name.startswith(".")]  # no temp file left


def test_fix_says_when_the_model_had_other_hard_links(tmp_path, examples_dir, cli):
    """A fix is a new file renamed over the model's name (never half-written): another hard link to the model
    keeps the old model. That was silent; a note says so now (and nothing when there is no other link)."""
    import os

    m = tmp_path / "m.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    os.link(m, tmp_path / "other.onnx")
    rc, out, _ = cli(m, "--fix")
    assert "wrote" in out and "had 1 other hard link to it: it keeps the model as it was" in out, out
    assert onnx.load(tmp_path / "other.onnx").graph.node[0].op_type == "Dropout"
    assert onnx.load(m).graph.node[0].op_type != "Dropout"
    (tmp_path / "other.onnx").unlink()
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, out, _ = cli(m, "--fix")
    assert "wrote" in out and "hard link" not in out, out


def test_a_new_fixed_file_gets_the_umask_mode(tmp_path, examples_dir, cli):
    """-o to a new file: the mode open() would give (the umask read, not set: a host's threads may race)."""
    import os
    import stat

    from onnxlint.model import write_guard

    old = os.umask(0o027)
    try:
        assert write_guard.umask() == 0o027
        src = tmp_path / "d.onnx"
        src.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
        rc, out, _ = cli(src, "--fix", "-o", tmp_path / "new.onnx")
        assert "wrote" in out, out
        assert stat.S_IMODE((tmp_path / "new.onnx").stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_o_folder_never_writes_one_models_fix_through_a_link_to_another_input(tmp_path, examples_dir, cli):
    """`--fix a.onnx b.onnx -o out/` where out/a.onnx is a link to b.onnx: an input the same file as the
    destination was left out of the check for every model, not only for the one written (a fix over itself),
    so a's fix was written through the link over b.onnx and b's model was lost. One line, exit 2 now."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    a, b = _copy(examples_dir, src, "dropout_training.onnx"), src / "b.onnx"
    model = onnx.load(a)
    model.graph.node[0].name = "b_only"  # b: another model, told apart from a's fix by its bytes
    onnx.save(model, b)
    before = b.read_bytes()
    os.symlink(os.path.join("..", "src", "b.onnx"), out / a.name)
    rc, _, err = cli(a, b, "--fix", "-o", f"{out}{os.sep}")
    assert rc == 2 and f"is the model {b}, being read" in err, err
    assert b.read_bytes() == before
    rc, _, err = cli(a, "--fix", "-o", out / a.name)  # one model, -o the link: the user's own choice, written
    assert rc in (0, 1), err


def test_a_model_or_report_with_a_long_name_is_written(tmp_path, examples_dir, cli):
    """The temporary file beside the destination was named after it whole: a model named with 250 bytes (the
    file system takes 255) could not be fixed ("fix not written ...: File name too long"), nor a report of
    that length written. The temporary name takes a short part of the name."""
    p = tmp_path / ("m" * 245 + ".onnx")
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, out, err = cli(p, "--fix")
    assert "wrote" in out and onnx.load(p).graph.node[0].op_type != "Dropout", out + err
    report = tmp_path / ("r" * 245 + ".sarif")
    rc, out, err = cli(p, "--format", "sarif", "-o", report)
    assert rc == 0 and report.is_file(), err
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted([p.name, report.name])  # no temporary file left
