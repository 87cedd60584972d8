"""--fix, the driver (onnxlint/linting/fixing.py): what is applied, checked, written and said, external data included."""

import json
import os
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from fix_cases import (
    _copy,
    _external_dropout_model,
    _findings_naming,
    _grid_model,
    _noisy_fold_model,
    _outputs,
    _Reader,
)
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxlint
from onnxlint.config.settings import Settings
from onnxlint.fixers import write as fix_write
from onnxlint.linting import fixing


@pytest.mark.parametrize("name,code", [("dropout_training.onnx", "OLX010"), ("batchnorm_training.onnx", "OLX011"),
                                       ("equal_mismatch.onnx", "OLX015"), ("resize_opset10.onnx", "OLX020"),
                                       ("gridsample_custom_domain.onnx", "OLX021"), ("resize_align_corners.onnx", "OLX301")])
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
    assert "-      [dropout] y = Dropout" in out and "+      [dropout] y = Identity" in out, out
    assert p.read_bytes() == before


def test_external_data_model_fixed_in_place_keeps_its_data_file(tmp_path, cli, lint_json):
    p = _external_dropout_model(tmp_path / "src")
    data_before = (tmp_path / "src" / "m.data").read_bytes()
    rc, text, _ = cli(p, "--fix")
    assert " fixed, " in text and "fix not written" not in text, text
    assert (tmp_path / "src" / "m.data").read_bytes() == data_before
    assert not any(f["code"] == "OLX010" for f in lint_json(p)[1])
    assert sorted(os.listdir(tmp_path / "src")) == ["m.data", "m.onnx"]  # no temp files left


def test_output_naming_the_models_own_data_file_is_refused(tmp_path, cli):
    """-o never clobbers an input: not the model's external data file either."""
    p = _external_dropout_model(tmp_path / "src")
    data_before = (tmp_path / "src" / "m.data").read_bytes()
    rc, out, err = cli(p, "--fix", "-o", tmp_path / "src" / "m.data")
    assert rc == 2 and "external data file" in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "src" / "m.data").read_bytes() == data_before


def test_a_name_that_is_not_utf8_is_said_to_be_the_models_not_onnxlints_defect(tmp_path, examples_dir):
    """A node name that is not UTF-8 (protobuf hands it over as bytes): the lint reads it repaired (`\\xNN`), and
    the fix said "internal error in a fixer (TypeError: node name b'...' is not UTF-8 text); please report it"."""
    m = onnx.load(examples_dir / "dropout_training.onnx")
    name = m.graph.node[0].name
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString().replace(name.encode(), b"\xff\xfe" + name.encode()[2:]))  # same length
    before = p.read_bytes()
    res = onnxlint.fix(p)
    assert any(f.code == "OLX010" and f.node and "\\xff\\xfe" in f.node for f in res.findings), res
    assert res.notes[-1] == ("fix not written: the model holds text that is not UTF-8 (a name shown with \\xNN "
                             "escapes): a fix cannot rewrite it as it is"), res.notes
    assert p.read_bytes() == before

def test_a_graph_name_that_is_not_utf8_is_said_to_be_the_models_not_onnxlints_defect(tmp_path, examples_dir):
    """The graph's own name not UTF-8: the fixer copying it raised UnicodeDecodeError, not the TypeError a node
    name gives, and the note said "internal error in a fixer (UnicodeDecodeError: ...); please report it"."""
    m = onnx.load(examples_dir / "dropout_training.onnx")
    m.graph.name = "QQQQQQQ"
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString().replace(b"QQQQQQQ", b"e\xd0ample"))  # same length
    before = p.read_bytes()
    res = onnxlint.fix(p)
    assert any(f.code == "OLX010" for f in res.findings), res
    assert res.notes[-1] == ("fix not written: the model holds text that is not UTF-8 (a name shown with \\xNN "
                             "escapes): a fix cannot rewrite it as it is"), res.notes
    assert p.read_bytes() == before


def test_a_fixer_failing_on_an_invalid_model_is_not_called_onnxlints_defect(tmp_path, cli, examples_dir):
    """An initializer of no data type made the tidy step fail in onnx-graphsurgeon, and the note said "internal
    error in a fixer ...; please report it" for a model onnx's checker rejects and ORT refuses (OLX007)."""
    import onnx

    m = onnx.load(examples_dir / "dropout_training.onnx")
    m.graph.initializer.append(onnx.TensorProto(name="bad", data_type=0, dims=[1], raw_data=b"\0" * 4))
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    rc, out, err = cli(p, "--fix")
    assert "OLX007" in out and "fix not written: the model is not valid ONNX (OLX007 says why), and a fixer failed" in out
    assert "please report it" not in out and p.read_bytes() == before, out


@pytest.mark.parametrize("hidden_by", ["ignore", "metadata", "baseline"])
def test_a_fixer_failing_on_an_invalid_model_says_why_when_its_finding_is_not_shown(tmp_path, cli, examples_dir, hidden_by):
    """With the finding that says the model is invalid (OLX007 here: ORT refuses an UNDEFINED initializer) ignored,
    suppressed in the model or recorded in the baseline, the note said "(... says why)" for a finding the run did not
    show, or (ignored) "internal error ...; please report it": onnx's words instead."""
    import onnx

    m = onnx.load(examples_dir / "dropout_training.onnx")
    m.graph.initializer.append(onnx.TensorProto(name="bad", data_type=0, dims=[1], raw_data=b"\0" * 4))
    if hidden_by == "metadata":
        m.metadata_props.add(key="onnxlint:ignore", value="OLX007")
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    args: list = ["--ignore", "OLX007"] if hidden_by == "ignore" else []
    if hidden_by == "baseline":
        cli(p, "--baseline", tmp_path / "b.json", "--update-baseline", "--select", "OLX007")
        args = ["--baseline", tmp_path / "b.json"]
    rc, out, err = cli(p, "--diff", *args)
    assert "OLX001" not in out and "OLX007" not in out and "says why" not in out and "please report it" not in out, out
    assert ("fix would not be written: the model is not valid ONNX (onnx rejects it: setting data_type field (tensor "
            "name: bad) to UNDEFINED is not allowed), and a fixer failed on it") in out, out


@pytest.mark.parametrize("where", ["initializer", "value_info"])
def test_a_fixer_failing_on_an_unknown_data_type_blames_the_model(tmp_path, cli, examples_dir, where):
    """A tensor or value of data type 99 passes onnx's checker (no OLX001), and onnx-graphsurgeon fails on it with a
    KeyError: the note said "internal error in a fixer (KeyError: 99); please report it"."""
    import onnx

    m = onnx.load(examples_dir / "dropout_training.onnx")
    if where == "initializer":
        m.graph.initializer.append(onnx.TensorProto(name="bad", data_type=99, dims=[1], raw_data=b"\0" * 4))
        said = f"tensor 'bad' has data type 99, which onnx {onnx.__version__} does not define"
    else:
        m.graph.value_info.append(onnx.helper.make_tensor_value_info("bad", 99, [1]))
        said = f"value 'bad' has element type 99, which onnx {onnx.__version__} does not define"
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    rc, out, err = cli(p, "--fix")
    assert f"fix not written: the model is not valid ONNX ({said}), and a fixer failed on it" in out, out
    assert "please report it" not in out and p.read_bytes() == before, out


@pytest.mark.parametrize("name", ["results.sarif", "report.JSON", "page.html"])
def test_fix_output_named_like_a_report_is_refused(tmp_path, cli, name):
    """A CI step writing a report (`--format sarif -o results.sarif`) that adds --fix wrote an ONNX model named
    results.sarif, and the SARIF went to standard output: one line, exit 2, nothing written."""
    p = _external_dropout_model(tmp_path / "src")
    rc, out, err = cli(p, "--fix", "--format", "sarif", "-o", tmp_path / name)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "with --fix, -o is where the fixed model is written" in err and f"> {name}" in err
    assert not (tmp_path / name).exists()


def test_diff_output_named_like_a_report_is_refused_in_words_naming_diff(tmp_path, cli, examples_dir):
    """`--diff -o r.txt` was refused "with --fix, -o is ...": an option this user did not type (--diff implies it)."""
    rc, out, err = cli(examples_dir / "dropout_training.onnx", "--diff", "-o", tmp_path / "r.txt")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "with --diff, -o is where the fixed model would be written, not the report" in err and "--fix" not in err, err
    assert not (tmp_path / "r.txt").exists()


def test_external_data_model_fixed_into_another_folder_gets_its_own_data(tmp_path, cli, monkeypatch):
    import numpy as np

    p = _external_dropout_model(tmp_path / "src")
    x = np.random.default_rng(1).standard_normal((2, 1024)).astype(np.float32)
    expected = (x + np.arange(1024, dtype=np.float32)) * 3.0  # Dropout in inference form is the identity
    out = tmp_path / "elsewhere"
    out.mkdir()
    reads = []
    real_open = open

    def spy(file, mode="r", *a, **k):
        fh = real_open(file, mode, *a, **k)
        if str(file).endswith("m.data") and "r" in mode:
            fh = _Reader(fh, reads)
        return fh

    monkeypatch.setattr("builtins.open", spy)
    monkeypatch.setattr(fix_write, "COPY_CHUNK", 1000)
    rc, text, _ = cli(p, "--fix", "-o", out / "fixed.onnx")
    monkeypatch.undo()
    assert " fixed, " in text, text
    assert reads and max(reads) <= 1000  # streamed, never the whole file at once
    assert sorted(os.listdir(out)) == ["fixed.onnx", "fixed.onnx.data"]
    fixed = onnx.load(out / "fixed.onnx", load_external_data=False)
    assert {e.value for t in fixed.graph.initializer for e in t.external_data if e.key == "location"} == {"fixed.onnx.data"}
    assert "Dropout" not in {n.op_type for n in fixed.graph.node}
    np.testing.assert_array_equal(_outputs(out / "fixed.onnx"), expected)
    (tmp_path / "src" / "m.data").unlink()  # the copy does not depend on the source folder
    np.testing.assert_array_equal(_outputs(out / "fixed.onnx"), expected)


def test_external_data_is_copied_beside_a_link_planted_at_its_name(tmp_path, cli):
    """A link leading nowhere at the new data file's name (`out/fixed.onnx.data`, planted by a repository): the
    copy's O_EXCL open refused it, nothing was written and the note said "fix not written to out/fixed.onnx: File
    exists". The next free name is taken now; the link is left as it was."""
    p = _external_dropout_model(tmp_path / "src")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(tmp_path / "nowhere" / "w.bin", out / "fixed.onnx.data")
    rc, text, _ = cli(p, "--fix", "-o", out / "fixed.onnx")
    assert "wrote" in text, text
    assert sorted(os.listdir(out)) == ["fixed.onnx", "fixed.onnx.1.data", "fixed.onnx.data"]
    assert os.readlink(out / "fixed.onnx.data") == str(tmp_path / "nowhere" / "w.bin")
    assert not (tmp_path / "nowhere").exists()
    fixed = onnx.load(out / "fixed.onnx", load_external_data=False)
    assert {e.value for t in fixed.graph.initializer for e in t.external_data if e.key == "location"} == {"fixed.onnx.1.data"}
    _outputs(out / "fixed.onnx")  # loads and runs


def test_external_data_fix_failure_removes_the_new_data_file(tmp_path, cli, monkeypatch):
    p = _external_dropout_model(tmp_path / "src")
    out = tmp_path / "elsewhere"
    out.mkdir()

    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fix_write, "atomic_write", broken)
    rc, text, _ = cli(p, "--fix", "-o", out / "fixed.onnx")
    assert "fix not written" in text and "No space left" in text
    assert os.listdir(out) == []


def test_external_data_fixed_again_into_the_same_folder_replaces_its_data_file(tmp_path, cli, monkeypatch):
    """`--fix -o out/` run again: the data file the replaced out/m.onnx named was left beside the new one, a full
    copy of the weights each run (m.onnx.data, m.onnx.1.data, m.onnx.2.data, ...). It is removed once the new
    model is in place, unless another model in out/ names it (a copy of out/m.onnx); a file of another name, or
    one the replaced model did not name, is never removed, and a failed write removes nothing."""
    import shutil

    p = _external_dropout_model(tmp_path / "src")
    out = tmp_path / "out"

    def fix():
        rc, text, _ = cli(p, "--fix", "--no-cache", "-o", f"{out}{os.sep}")
        assert "wrote" in text, text
        _outputs(out / "m.onnx")  # loads and runs from its data file
        return sorted(os.listdir(out))

    assert fix() == ["m.onnx", "m.onnx.data"]
    assert fix() == ["m.onnx", "m.onnx.1.data"]
    assert fix() == ["m.onnx", "m.onnx.data"]
    shutil.copy(out / "m.onnx", out / "Backup.ONNX")  # names m.onnx.data too
    (out / "m.onnx.7.data").write_bytes(b"not named by the model")
    (out / "m.onnx.1.data.bak").write_bytes(b"a name onnxlint does not give")
    assert fix() == ["Backup.ONNX", "m.onnx", "m.onnx.1.data", "m.onnx.1.data.bak", "m.onnx.7.data", "m.onnx.data"]
    _outputs(out / "Backup.ONNX")
    monkeypatch.setattr(fix_write, "atomic_write", lambda *a, **k: (_ for _ in ()).throw(OSError(28, "No space")))
    rc, text, _ = cli(p, "--fix", "--no-cache", "-o", f"{out}{os.sep}")
    assert "fix not written" in text, text
    monkeypatch.undo()
    assert "m.onnx.1.data" in os.listdir(out) and "m.onnx.2.data" not in os.listdir(out)
    _outputs(out / "m.onnx")


@pytest.mark.skipif(os.name == "nt", reason="no flock: nothing is removed there")
def test_a_temporary_file_left_by_a_killed_fix_is_removed_by_the_next(tmp_path, cli, examples_dir, monkeypatch):
    """A --fix killed (SIGKILL: the OOM killer, a CI runner's last resort) while writing left `.m.onnx.XXXXXXXX.tmp`
    beside the model, as large as the model, for good. The next write of that model removes what atomic_write
    named, unchanged for 10 minutes and locked by no process (a writing one holds its lock), and says so; a file of
    any other name, a link, a newer one or one a process holds stays."""
    import fcntl
    import time

    model = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    old = time.time() - 3600
    names = [".dropout_training.onnx.k2j3h4g5.tmp", ".dropout_training.onnx.fresh_12.tmp",
             ".dropout_training.onnx.held1234.tmp", ".dropout_training.onnx.ABCDEFGH.tmp",
             ".dropout_training.onnx.abcdefgh.tmp.bak", "dropout_training.onnx.abcdefgh.tmp", ".other.onnx.abcdefgh.tmp"]
    for name in names:
        (tmp_path / name).write_bytes(b"partial model")
        if "fresh" not in name:
            os.utime(tmp_path / name, (old, old))
    os.symlink(tmp_path / names[0], tmp_path / ".dropout_training.onnx.link1234.tmp")
    os.utime(tmp_path / ".dropout_training.onnx.link1234.tmp", (old, old), follow_symlinks=False)
    from onnxlint.model.loading import native

    real_check = native.check_model

    def while_writing(path, *a, **k):  # this run's temporary file, written: locked, as another run's removal sees it
        if isinstance(path, str) and path.endswith(".tmp"):
            with open(path, "rb") as other:
                with pytest.raises(BlockingIOError):
                    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return real_check(path, *a, **k)

    monkeypatch.setattr(native, "check_model", while_writing)
    with open(tmp_path / names[2], "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        rc, out, err = cli(model, "--fix", "--no-cache")
    assert rc == 0 and "wrote" in out, out + err
    assert f"removed {names[0]} beside dropout_training.onnx: left by a --fix killed while writing it" in out, out
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".bak"))) == \
        sorted([*names[1:], ".dropout_training.onnx.link1234.tmp"])
    assert not (tmp_path / names[0]).exists() and os.path.islink(tmp_path / ".dropout_training.onnx.link1234.tmp")


def test_fix_over_the_examples_leaves_no_safely_fixable_finding(tmp_path, examples_dir, cli, lint_json):
    import shutil

    from onnxlint.fixers import REGISTRY

    d = tmp_path / "ex"
    shutil.copytree(examples_dir, d)
    _, before = lint_json(d)
    fixable = {(f["filename"], f["code"], f["node"]) for f in before if f["fix"] and REGISTRY[f["fix"]].safe}
    assert len({f for f, _, _ in fixable}) >= 6
    rc, out, _ = cli(d, "--fix")
    assert "fix not written" not in out, out
    _, after = lint_json(d)
    left = [(f["filename"], f["code"], f["node"]) for f in after if f["fix"] and REGISTRY[f["fix"]].safe]
    assert left == []
    for p in d.glob("*.onnx"):
        onnx.checker.check_model(onnx.load(p), full_check=True)


def test_fix_format_json_stays_valid_json(tmp_path, capfd):
    """onnx-graphsurgeon, onnxslim, ORT print from Python and C++: nothing may reach fd 1 but the report."""
    from onnxlint.cli import main

    p = tmp_path / "dyn_fold.onnx"
    onnx.save(_noisy_fold_model(), p)

    def noisy(model):
        print("[W] graphsurgeon-style warning on stdout")
        os.write(1, b"C++ level noise on fd 1\n")
        os.write(2, b"C++ level noise on fd 2\n")
        return fold(model)

    from onnxlint.fixers import fold_shapes as fs

    fold = fs.fold
    fs.fold = noisy
    try:
        main([str(p), "--fix", "--format", "json", "--target", "ort-cuda", "--target", "tensorrt", "--ort-optimization", "disabled"])
    finally:
        fs.fold = fold
    out, err = capfd.readouterr()
    data = json.loads(out)  # valid JSON: the noise went elsewhere
    assert any(f.get("fixed") or f["code"] == "OLX309" for f in data) or data == []
    assert "noise" not in out and "[W]" not in out


def test_a_fixer_that_changes_nothing_writes_nothing(tmp_path, examples_dir):
    from onnxlint.fixers.base import REGISTRY, Applicability, Fixer

    p = _copy(examples_dir, tmp_path, "double_input.onnx")
    stat = p.stat()
    REGISTRY["test-noop"] = Fixer("test-noop", Applicability.SAFE, "changes nothing", lambda ctx: ctx.model)

    def touch(ctx):
        ctx.model.doc_string = "touched"
        return ctx.model

    REGISTRY["test-touch"] = Fixer("test-touch", Applicability.SAFE, "changes a doc string", touch)
    try:
        res = _findings_naming("test-noop", p)
        fixing.fix_file(p, Settings.from_config(None), res, fixing.FixOptions())
        assert any(n.startswith("nothing written: test-noop") for n in res.notes), res.notes
        res = _findings_naming("test-touch", p)
        fixing.fix_file(p, Settings.from_config(None), res, fixing.FixOptions())
        assert any("cleared no finding" in n for n in res.notes), res.notes
        assert not any("wrote" in n for n in res.notes)
    finally:
        del REGISTRY["test-noop"], REGISTRY["test-touch"]
    assert p.stat().st_mtime_ns == stat.st_mtime_ns and sorted(os.listdir(tmp_path)) == ["double_input.onnx"]


def test_output_folder_for_several_models(tmp_path, examples_dir):
    from onnxlint.support.errors import UsageError

    a = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    b = _copy(examples_dir, tmp_path, "batchnorm_training.onnx")
    with pytest.raises(UsageError, match="an existing one or"):
        fixing.check_output([a, b], tmp_path / "one.onnx")
    out = tmp_path / "fixed"
    out.mkdir()
    fixing.check_output([a, b], out)
    sub = tmp_path / "sub"
    sub.mkdir()
    c = _copy(examples_dir, sub, "dropout_training.onnx")
    with pytest.raises(UsageError, match="both be written"):
        fixing.check_output([a, c], out)
    before = {x: x.read_bytes() for x in (a, b)}
    for x in (a, b):
        res = onnxlint.fix(x, output=out)
        assert any(f"wrote {out / x.name}" in n for n in res.notes), res.notes
    assert sorted(os.listdir(out)) == ["batchnorm_training.onnx", "dropout_training.onnx"]
    assert all(x.read_bytes() == v for x, v in before.items())  # the inputs are untouched


def test_fix_shape_sets_the_numeric_check_inputs(tmp_path, cli):
    """`--fix --shape` feeds the numeric check the user's dims; a name no input has is a usage error."""
    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="com.microsoft")
    m = _grid_model(node, extra=[("com.microsoft", 1)])
    for inp in m.graph.input:  # a dynamic batch, as exports have
        inp.type.tensor_type.shape.dim[0].dim_param = "n"
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "n"
    p = tmp_path / "gs.onnx"
    onnx.save(m, p)
    rc, out, err = cli(p, "--fix", "--shape", "nosuch=1x2x5x5")
    assert rc == 2 and "nosuch" in err and len(err.strip().splitlines()) == 1, err
    assert onnx.load(p).graph.node[0].domain == "com.microsoft"  # nothing written
    rc, out, _ = cli(p, "--fix", "--shape", "x=3x2x5x5", "--shape", "grid=3x4x4x2")
    assert "outputs equal at fixed shapes" in out and "wrote" in out, out
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix")  # without --shape the check picks the symbolic batch itself
    assert "outputs equal at n=" in out and "wrote" in out, out


@pytest.mark.parametrize("forked", [True, False])
def test_a_checker_complaint_the_original_has_does_not_block_the_fix(tmp_path, cli, monkeypatch, forked):
    """An output declared without a shape fails onnx's checker in the original too: the fix still lands (the
    note says so), and OLX001 keeps reporting it. (onnxslim would add the shape; onnxlint's own folder, used
    when onnxslim is absent or rejected, does not.) The checker's complaint is told apart the same way whether it
    comes from the native worker (by class name) or in-process (where there is no fork)."""
    from onnxlint.fixers import fold_shapes
    from onnxlint.model.loading import native

    monkeypatch.setitem(fold_shapes.ENGINE, "mode", "own")
    if not forked:
        monkeypatch.setattr(native, "_ENABLED", False)
    p = tmp_path / "noshape.onnx"
    onnx.save(_noisy_fold_model(r_shape=None), p)
    rc, text, _ = cli(p, "--fix", "--show-info", "--target", "tensorrt")
    assert "OLX001" in text and "wrote" in text and "fails the checker the same way" in text, text
    assert "concat" not in {n.name for n in onnx.load(p).graph.node}  # [-1, C] folded to a constant


def test_fix_with_a_machine_format_says_on_stderr_what_it_wrote(tmp_path, examples_dir, cli):
    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, out, err = cli(p, "--fix", "--format", "json")
    assert not any(f["code"] == "OLX010" for f in json.loads(out))  # stdout stays one JSON document
    assert "wrote" in err and "d.onnx" in err, err


def test_external_data_model_fixed_through_a_symlink_keeps_loading_through_it(tmp_path, cli, lint_json):
    """A -> B link to a model with external data beside both: fixed in place through the link, the model still
    loads (ORT resolves the data from the link's folder) and no data file is copied."""
    real = _external_dropout_model(tmp_path / "B")
    (tmp_path / "A").mkdir()
    os.symlink(real, tmp_path / "A" / "m.onnx")
    (tmp_path / "A" / "m.data").write_bytes((tmp_path / "B" / "m.data").read_bytes())
    rc, text, _ = cli(tmp_path / "A" / "m.onnx", "--fix")
    assert "wrote" in text, text
    assert (tmp_path / "A" / "m.onnx").is_symlink()
    assert sorted(os.listdir(tmp_path / "A")) == ["m.data", "m.onnx"]
    codes = {f["code"] for f in lint_json(tmp_path / "A" / "m.onnx")[1]}
    assert "OLX003" not in codes and "OLX010" not in codes
    _outputs(tmp_path / "A" / "m.onnx")  # loads and runs


def test_external_data_model_with_an_inherited_checker_complaint_is_fixed(tmp_path, cli, monkeypatch):
    """The checker complains about the original already (an output without a shape); with external data it can
    only run by path, and the fix still lands."""
    from onnxlint.fixers import fold_shapes

    monkeypatch.setitem(fold_shapes.ENGINE, "mode", "own")  # onnxslim would add the missing shape
    p = _external_dropout_model(tmp_path / "src", output_shape=None)
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text and "OLX001" in text, text


def test_fix_without_onnxruntime_says_so_in_one_line_and_writes_nothing(tmp_path, examples_dir, cli, monkeypatch):
    """The numeric check needs ORT: without it (sys.modules entry None: not importable, find_spec finds
    nothing) --fix is a usage error naming the extra, and the model is untouched."""
    import sys

    p = _copy(examples_dir, tmp_path, "batchnorm_training.onnx")
    before = p.read_bytes()
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    for extra in ((), ("--diff",), ("-o", str(tmp_path / "out.onnx"))):
        rc, out, err = cli(p, "--fix", *extra)
        assert rc == 2 and out == "", (extra, out)
        assert err.strip() == f"onnxlint: error: {fixing.NEEDS_ORT}"
        assert "pip install onnxruntime (the CPU build" in err and "onnxlint[" not in err and len(err.splitlines()) == 1
    assert p.read_bytes() == before and not (tmp_path / "out.onnx").exists()
    rc, out, _ = cli(examples_dir / "clean_conv.onnx", "--fix")  # nothing to fix: nothing to check either
    assert rc == 0


def test_fix_extra_and_hook_declare_onnxruntime():
    import yaml

    try:
        import tomllib
    except ImportError:  # Python 3.10: tomli, a dependency there
        import tomli as tomllib  # type: ignore[no-redef]

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    fix = [e for d in extras["fix"] for e in (extras["cpu"] if d == "onnxlint[cpu]" else [d])]
    assert fix and all(d.startswith("onnxruntime") for d in fix)
    hooks = {h["id"]: h for h in yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())}
    assert any(d.startswith("onnxruntime") for d in hooks["onnxlint-fix"]["additional_dependencies"])
    assert "additional_dependencies" not in hooks["onnxlint"]


def test_intended_change_is_reported_as_such(tmp_path, examples_dir, cli):
    """batch-norm and Dropout fixes change outputs on purpose: the note says so and names the reference."""
    for name, fixer in (("batchnorm_training.onnx", "batchnorm-inference"), ("dropout_training.onnx", "dropout-inference")):
        p = _copy(examples_dir, tmp_path, name)
        _, out, _ = cli(p, "--fix")
        note = next(line for line in out.splitlines() if "numeric check:" in line)
        assert f"an intended change ({fixer} " in note and "outputs equal to the original run with training_mode=0, at batch=1" in note
    p = _copy(examples_dir, tmp_path, "equal_mismatch.onnx")  # no reference: the original is the reference
    _, out, _ = cli(p, "--fix")
    assert "intended change" not in out


def test_fix_output_folder_with_trailing_slash_is_made(tmp_path, examples_dir, cli):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    rc, out, _ = cli(p, "--fix", "-o", f"{tmp_path / 'newdir'}/")
    assert (tmp_path / "newdir").is_dir() and (tmp_path / "newdir" / "dropout_training.onnx").is_file(), out
    assert p.read_bytes() == before
    rc, _, err = cli(p, "-o", f"{tmp_path / 'report'}/")  # a report is a file
    assert rc == 2 and "is a folder" in err and not (tmp_path / "report").exists()


def test_diff_says_what_would_happen(tmp_path, cli):
    """--diff writes nothing, so its notes say 'would': a fix that is refused reads 'would not be written'."""
    m = h.make_model(h.make_graph([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")], "g",
                                  [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])],
                                  [nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")]),
                     opset_imports=[h.make_opsetid("", 13)])
    p = tmp_path / "d.onnx"
    m.ir_version = 14  # newer than ORT loads: the numeric check cannot run, the fix is refused
    onnx.save(m, p)
    _, out, _ = cli(p, "--fix", "--diff")
    assert "note: the fix would not be written: neither the original nor the fixed model runs on ORT CPU" in out, out
    assert "note: fix not written" not in out
    m.ir_version = 8
    onnx.save(m, p)
    _, out, _ = cli(p, "--fix", "--diff")
    assert "-      [d] y = Dropout (x, r, t)\n+      [d] y = Identity (x)" in out and "not written" not in out, out
    assert "note: would write" in out
    assert fixing._conditional("fix not written: x") == "the fix would not be written: x"
    assert fixing._conditional("nothing written: a found nothing") == "nothing would be written: a found nothing"


def test_a_crash_in_a_fixer_costs_that_fix_not_the_run(tmp_path, examples_dir, cli, monkeypatch):
    """The fixers run native code in the process that calls them (onnxslim evaluates constant subgraphs with
    onnxruntime; onnx's C++ infers and converts): the rewrite runs in a child forked for it, and a fixer that
    segfaults is one line for its model, nothing written; the next model's fix lands."""
    import signal

    from onnxlint.fixers import REGISTRY
    from onnxlint.model.loading import native

    if not native._ENABLED:
        pytest.skip("no fork: the rewrite runs in-process")
    crashing = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    (tmp_path / "b").mkdir()
    fine = _copy(examples_dir, tmp_path / "b", "batchnorm_training.onnx")
    before = crashing.read_bytes()
    dropout = REGISTRY["dropout-inference"]

    def dies(ctx):
        os.kill(os.getpid(), signal.SIGSEGV)

    import dataclasses

    monkeypatch.setitem(REGISTRY, "dropout-inference", dataclasses.replace(dropout, apply=dies))
    rc, out, err = cli(crashing, fine, "--fix", "--no-cache")
    assert "Traceback" not in err, err
    assert "fix not written: the fixers' rewrite crashed on this model (signal 11)" in out, out
    assert crashing.read_bytes() == before
    assert "wrote" in out and fine.read_bytes() != (examples_dir / "batchnorm_training.onnx").read_bytes()


def test_the_rewrite_in_a_child_answers_as_in_process(examples_dir, monkeypatch):
    """fixers.apply_in_child gives what fixers.apply gives: the same model bytes, fixers applied and skipped, and
    the fixers' notes; a FixError comes back as a FixError with its text, another exception with its class name."""
    from onnxlint import fixers
    from onnxlint.fixers.base import REGISTRY, FixError

    class Noting:  # a safe fixer that says something and marks the model
        applicability = fixers.Applicability.SAFE

        def apply(self, ctx):
            ctx.notes.append("noting: said in the fixer")
            out = onnx.ModelProto()
            out.CopyFrom(ctx.model)
            out.doc_string = "noted"
            return out

    class Refusing:
        applicability = fixers.Applicability.SAFE

        def __init__(self, exc):
            self.exc = exc

        def apply(self, ctx):
            raise self.exc

    monkeypatch.setitem(REGISTRY, "noting", Noting())
    model = onnx.load(examples_dir / "dropout_training.onnx")
    node = next(n for n in model.graph.node if n.op_type == "Dropout")
    requests = [fixers.FixRequest("dropout-inference", node.name, "any"), fixers.FixRequest("noting", None, "any"),
                fixers.FixRequest("int64-to-int32", None, "tensorrt")]
    notes_here: list[str] = []
    notes_there: list[str] = []
    here = fixers.apply(model, requests, unsafe=False, notes=notes_here)
    there = fixers.apply_in_child(model, requests, unsafe=False, notes=notes_there)
    assert here[0].SerializeToString() == there[0].SerializeToString() and here[0].doc_string == "noted"
    assert here[1:] == there[1:] and set(there[1]) == {"dropout-inference", "noting"} and there[2] == ["int64-to-int32"]
    assert notes_here == notes_there == ["noting: said in the fixer"]
    monkeypatch.setitem(REGISTRY, "refusing", Refusing(FixError("cannot fold this one")))
    with pytest.raises(FixError, match="^cannot fold this one$"):
        fixers.apply_in_child(model, [fixers.FixRequest("refusing", None, "any")], unsafe=False)
    monkeypatch.setitem(REGISTRY, "refusing", Refusing(KeyError("x")))
    with pytest.raises(Exception) as got:
        fixers.apply_in_child(model, [fixers.FixRequest("refusing", None, "any")], unsafe=False)
    assert type(got.value).__name__ == "KeyError" and not isinstance(got.value, FixError)


def test_a_crash_checking_the_written_file_leaves_the_original(tmp_path, examples_dir, cli, monkeypatch):
    """The written file is checked by onnx's checker before it replaces the original: in the native worker, where
    a crash is one line and the original stays."""
    import signal

    from onnxlint.model.loading import native

    if not native._ENABLED:
        pytest.skip("no fork")
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    real = native._run

    def dies(kind, flags, payload):
        if kind == native._CHECK_PATH:  # the written file's check, by path
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(kind, flags, payload)

    native.shutdown()  # the next worker is forked with the patch
    monkeypatch.setattr(native, "_run", dies)
    try:
        rc, out, err = cli(p, "--fix", "--no-cache")
    finally:
        native.shutdown()
    assert "Traceback" not in err, err
    assert f"fix not written to {p}: onnx's checker crashed on this model (signal 11)" in out, out
    assert p.read_bytes() == before and not list(tmp_path.glob(".*.tmp"))


def test_a_model_whose_weights_are_its_own_file_is_its_own_note_and_the_run_goes_on(tmp_path, examples_dir, cli):
    """A tensor whose external-data location names the model file itself: the in-place fix raised a UsageError
    ("-o m.onnx: that is the external data file...", with no -o given) that stopped the run: no report, the model
    fixed before it written unsaid, the one after it not fixed. It is that model's note now; the others are fixed."""
    w = nh.from_array(np.arange(16, dtype=np.float32), "w")
    g = h.make_graph([h.make_node("Dropout", ["x", "r", "t"], ["d"], name="drop"), h.make_node("Add", ["d", "w"], ["y"])],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 16])], [h.make_tensor_value_info("y", T.FLOAT, ["n", 16])],
                     [w, nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = T.EXTERNAL
    for k, v in (("location", "m.onnx"), ("offset", "0"), ("length", "64")):
        e = t.external_data.add()
        e.key, e.value = k, v
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    before = (tmp_path / "m.onnx").read_bytes()
    for name in ("a.onnx", "z.onnx"):
        _copy(examples_dir, tmp_path, "dropout_training.onnx").rename(tmp_path / name)
    rc, out, err = cli(tmp_path, "--fix")
    # no option named: "-o" as a word (pytest's default temporary folder, /tmp/pytest-of-USER, holds "-of")
    assert "m.onnx: note: fix not written: " in out and "is the external data file of" in out, out
    assert re.search(r"(?<!\S)-o\b", out) is None, out
    assert (tmp_path / "m.onnx").read_bytes() == before
    assert out.count("wrote") == 2 and rc == 1 and not err, (out, err)


@pytest.mark.parametrize("env,value", [("ONNXLINT_CHECK_TIMEOUT", "abc"), ("ONNXLINT_CHECK_TIMEOUT", "-1"),
                                       ("ONNXLINT_CHECK_TIMEOUT", "inf"), ("ONNXLINT_CHECK_MEMORY_MB", "-5"),
                                       ("ONNXLINT_CHECK_MEMORY_MB", "2G"),
                                       ("ONNXLINT_CHECK_TIMEOUT", "1e308"), ("ONNXLINT_CHECK_MEMORY_MB", "\u00b2"),
                                       ("ONNXLINT_CHECK_MEMORY_MB", "99999999999999999999")])
def test_a_malformed_check_limit_is_one_line_for_the_run(tmp_path, examples_dir, cli, monkeypatch, env, value):
    """The numeric check's limits from the environment: `abc` failed every model's check in Python's words
    ("could not convert string to float"), `inf` in the clock's, and a negative memory limit was refused by
    setrlimit unseen, the check then unbounded; `1e308` failed each check in the clock's words, `²` (a digit to
    str.isdigit) was an internal error and a memory past setrlimit's range failed each check's child. One line, exit
    2, nothing written."""
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    monkeypatch.setenv(env, value)
    rc, out, err = cli(p, "--fix")
    assert rc == 2 and f"{env}={value}: not a" in err and p.read_bytes() == before, (out, err)


def test_diff_into_a_folder_to_be_made_makes_none(tmp_path, examples_dir, cli, monkeypatch):
    """`--diff -o fixed/` made the folder fixed/ although --diff writes nothing; it says where each fixed model
    would go (into the folder, one or several models), and --fix still makes it."""
    a = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    b = tmp_path / "b.onnx"
    b.write_bytes(a.read_bytes())
    monkeypatch.chdir(tmp_path)
    for models in ([a.name], [a.name, b.name]):
        rc, out, err = cli(*models, "--diff", "-o", f"fixed{os.sep}")
        assert rc == 1 and f"would write {os.path.join('fixed', a.name)} " in out, out + err
        assert sorted(os.listdir(tmp_path)) == ["b.onnx", "dropout_training.onnx"]
    rc, out, err = cli(a.name, b.name, "--fix", "-o", f"fixed{os.sep}")
    assert rc == 0 and sorted(os.listdir(tmp_path / "fixed")) == ["b.onnx", "dropout_training.onnx"], out + err


@pytest.mark.parametrize("server", [True, False])
def test_a_check_killed_while_ort_reads_its_session_file_leaves_none_in_the_models_folder(tmp_path, cli, monkeypatch,
                                                                                           server):
    """A model with external data is run from a session file in its own folder (where its data resolves); a check
    child killed while ORT was creating that session (its time limit, a crash) left `.onnxlint-check.*.onnx` in
    the user's model folder. The parent removes what its child left."""
    from onnxlint.fixers import equivalence

    if not server:
        monkeypatch.setattr(equivalence, "_SERVER", [None])
    elif equivalence._server() is None:
        pytest.skip("no check server on this platform (no fork)")
    p = _external_dropout_model(tmp_path / "src")
    before = sorted(os.listdir(p.parent))
    monkeypatch.setenv(equivalence.CRASH_ENV, "g")  # the model's graph name: the child crashes creating a session
    rc, out, err = cli(p, "--fix")
    assert "fix not written: onnxruntime crashed (SIGSEGV) creating a session" in out, out + err
    assert sorted(os.listdir(p.parent)) == before


def test_o_naming_a_file_as_a_folder_writes_nothing(tmp_path, examples_dir, cli):
    """`--fix -o other.onnx/` (a trailing separator names a folder) where other.onnx is a file: the fixed model was
    written over that file. One line, exit 2, the file as it was."""
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    other = tmp_path / "other.onnx"
    other.write_bytes(b"not yours")
    rc, out, err = cli(p, "--fix", "-o", f"{other}{os.sep}")
    assert rc == 2 and "is a file, not a folder" in err and other.read_bytes() == b"not yours", out + err


def test_the_numeric_check_of_a_model_with_external_data_writes_nothing_in_its_folder(tmp_path, cli, monkeypatch):
    """Its copies of both models were written in the model's own folder (where ORT resolves the weights), and the
    check's session file beside them: a read-only model folder (a mounted model store, another user's checkout)
    could not be fixed into `-o out/` ("could not run the numeric check: Permission denied"). The copies go to the
    check's temporary folder; ORT reads the weights from the model's folder given as their folder."""
    import tempfile

    p = _external_dropout_model(tmp_path / "src")
    made: list[str] = []
    real = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        fd, path = real(*args, **kwargs)
        made.append(path)
        return fd, path

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    rc, out, err = cli(p, "--fix", "-o", f"{tmp_path / 'out'}{os.sep}")
    assert "numeric check: " in out and f"wrote {tmp_path / 'out' / 'm.onnx'}" in out, out + err
    assert made and not [m for m in made if Path(m).parent == p.parent], made


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="a read-only folder: root writes in it anyway")
def test_a_model_in_a_read_only_folder_is_fixed_into_another(tmp_path, cli):
    p = _external_dropout_model(tmp_path / "src")
    os.chmod(p.parent, 0o555)
    try:
        rc, out, err = cli(p, "--fix", "-o", f"{tmp_path / 'out'}{os.sep}")
    finally:
        os.chmod(p.parent, 0o755)
    assert f"wrote {tmp_path / 'out' / 'm.onnx'}" in out and "fix not written" not in out, out + err
