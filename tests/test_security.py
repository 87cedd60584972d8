"""Issue 17: the attack classes a linter in CI meets, each with a real model or file built here.

External data outside the model's folder, injection through output, config found above the repository or
broken, path walks that never end or block, inputs whose cost is superlinear."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.config import config_file as config_mod
from onnxlint.model import loading
from onnxlint.support import escape, yaml_safe
from onnxlint.support.errors import InputError, RuleError

ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def _external(name: str, location: str, offset="0", length="64", shape=(4, 4)) -> onnx.TensorProto:
    t = init(name, np.zeros(shape, np.float32))
    t.ClearField("raw_data")
    t.data_location = T.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    return t


def _ext_model(w: onnx.TensorProto) -> onnx.ModelProto:
    nodes = [h.make_node("MatMul", ["x", w.name], ["mm"], name="mm"),
             h.make_node("Equal", ["mm", "k"], ["y"], name="eq")]  # fixable (equal-cast) once the data is there
    return make_model(nodes, [vi("x", T.FLOAT, ["n", 4]), vi("k", T.DOUBLE, ["n", 4])], [vi("y", T.BOOL, ["n", 4])],
                      [w], opset=13)


def _write(path: Path, model: onnx.ModelProto) -> Path:
    """The proto as is: onnx.save would try to write (or follow) the external data itself."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def _codes(out: str) -> list[dict]:
    return json.loads(out)


# ----------------------------------------------------------------------------- 1. external data stays inside


def test_safe_external_path_refuses_absolute_dotdot_and_symlinks_out(tmp_path):
    base = tmp_path / "m"
    base.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"S" * 64)
    (base / "w.bin").write_bytes(b"\0" * 64)
    (base / "sub").mkdir()
    (base / "sub" / "v.bin").write_bytes(b"\0" * 64)
    os.symlink("../secret.bin", base / "out.bin")
    os.symlink("w.bin", base / "in.bin")
    os.symlink(str(tmp_path), base / "up")
    assert loading.safe_external_path(base, "w.bin") == Path(os.path.realpath(base / "w.bin"))
    assert loading.safe_external_path(base, "sub/v.bin") is not None
    assert loading.safe_external_path(base, "in.bin") == Path(os.path.realpath(base / "w.bin"))  # a link inside
    for bad in ("out.bin", "up/secret.bin", "../secret.bin", "sub/../../secret.bin", str(tmp_path / "secret.bin"),
                "", ".", "sub/..", "a\0b"):
        assert loading.safe_external_path(base, bad) is None, bad
        assert loading.external_location_problem(base, bad)
    assert "outside the model's folder" in loading.external_location_problem(base, "out.bin")


def test_external_data_symlinked_out_of_the_folder_is_a_finding_and_never_copied(tmp_path, cli):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"S" * 64)
    os.chmod(secret, 0o600)
    model = _write(tmp_path / "m" / "model.onnx", _ext_model(_external("w", "w.bin")))
    os.symlink("../secret.bin", tmp_path / "m" / "w.bin")
    rc, out, err = cli(model, "--format", "json", "--select", "OLX003")
    found = _codes(out)
    assert [f["code"] for f in found] == ["OLX003"]
    assert "outside the model's folder" in found[0]["message"]
    mf = loading.load(model)
    assert mf.missing_external and mf.outside_external and mf.external_bytes == 64
    assert loading.check_external_data(mf.model, model.parent)
    assert "outside the model's folder" in loading.external_data_problem(model)
    # --fix into another folder must not copy the outside file next to the fixed model
    (tmp_path / "other").mkdir()
    cli(model, "--fix", "--unsafe-fixes", "-o", tmp_path / "other" / "fixed.onnx")
    assert not any(p.name.endswith(".data") for p in (tmp_path / "other").iterdir())
    assert b"S" * 64 not in b"".join(p.read_bytes() for p in (tmp_path / "other").iterdir() if p.is_file())


@pytest.mark.parametrize("location", [".git/config", "sub/.GIT/config", "cfg.bin"])
def test_external_data_in_a_git_folder_is_a_finding_and_never_copied(tmp_path, cli, location):
    """A model at a repository's root naming `.git/config` (a CI checkout keeps its token there) was accepted: the
    session and the numeric check read it as weights, and `--fix -o` copied it into the new data file."""
    repo = tmp_path / "repo"
    for git in (repo / ".git", repo / "sub" / ".GIT"):
        git.mkdir(parents=True)
        (git / "config").write_bytes(b"S" * 64)
    os.symlink(os.path.join(".git", "config"), repo / "cfg.bin")  # a link inside the folder, into .git
    model = _write(repo / "model.onnx", _ext_model(_external("w", location)))
    rc, out, _ = cli(model, "--format", "json", "--select", "OLX003")
    assert [f["code"] for f in _codes(out)] == ["OLX003"] and "in a .git folder" in _codes(out)[0]["message"]
    assert "in a .git folder" in loading.external_data_problem(model)
    assert loading.safe_external_path(repo, location) is None
    (tmp_path / "other").mkdir()
    cli(model, "--fix", "--unsafe-fixes", "-o", tmp_path / "other" / "fixed.onnx")
    assert b"S" * 64 not in b"".join(p.read_bytes() for p in (tmp_path / "other").iterdir() if p.is_file())


@pytest.mark.parametrize("annexed, refused", [
    (".git/annex/objects/Xq/Wk/SHA256E-s64--ab/SHA256E-s64--ab", False),  # git-annex's store: the file's content
    (".git/annex/objects", True),  # its folder, never a data file
    (".git/annex/config", True),
    (".git/objects/Xq/ab", True),  # git's own objects
])
def test_external_data_linked_into_git_annexs_object_store_is_read(tmp_path, cli, annexed, refused):
    """git-annex keeps a locked file as a link into `.git/annex/objects/`: a model at the repository's root whose
    data file is annexed names that link, and its weights are the repository's own (ORT reads them). Any other
    place in .git stays refused."""
    repo = tmp_path / "repo"
    (repo / annexed).parent.mkdir(parents=True)
    if annexed.endswith("objects"):
        (repo / annexed).mkdir()
    else:
        (repo / annexed).write_bytes(b"S" * 64)
    os.symlink(annexed, repo / "w.data")
    model = _write(repo / "model.onnx", _ext_model(_external("w", "w.data")))
    rc, out, _ = cli(model, "--format", "json", "--select", "OLX003")
    assert [f["code"] for f in _codes(out)] == (["OLX003"] if refused else []), out
    assert (loading.safe_external_path(repo, "w.data") is None) == refused


@pytest.mark.parametrize("data_in, refused", [("blobs", False), ("other", True)])
def test_a_linked_models_data_in_its_real_folder_is_read_as_ort_reads_it(tmp_path, cli, data_in, refused):
    """The Hugging Face cache links a snapshot's model.onnx and model.onnx.data to blobs named by their content,
    in one blobs folder. ORT reads data in the model's folder or in the real folder of the file the model is
    (its path validation; measured on 1.24.4): OLX003 said such a model's data "points outside the model's folder"
    and that ORT fails at load, where ORT loads it. Data leading anywhere else stays refused, as ORT refuses it."""
    root = tmp_path / "hub" / "models--acme--m"
    (root / "blobs").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "snapshots" / "rev").mkdir(parents=True)
    (root / data_in / "b2").write_bytes(np.arange(16, dtype=np.float32).tobytes())
    add = make_model([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", T.FLOAT, [4, 4])],
                     [vi("y", T.FLOAT, [4, 4])], [_external("w", "model.onnx.data")], opset=13)
    _write(root / "blobs" / "b1", add)
    model = root / "snapshots" / "rev" / "model.onnx"
    os.symlink(os.path.join("..", "..", "blobs", "b1"), model)
    os.symlink(os.path.join("..", "..", data_in, "b2"), root / "snapshots" / "rev" / "model.onnx.data")
    rc, out, _ = cli(model, "--format", "json", "--select", "OLX003")
    assert [f["code"] for f in _codes(out)] == (["OLX003"] if refused else []), out
    assert (loading.external_data_problem(model) is not None) == refused
    ort = pytest.importorskip("onnxruntime")
    try:
        ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        loads = True
    except Exception:  # noqa: BLE001 - ORT's refusal, whatever its class
        loads = False
    # what the finding says is what ORT does: it validates the path from 1.24 (1.23.2, the floor, reads any)
    from packaging.version import Version

    assert loads != refused if Version(ort.__version__) >= Version("1.24") else loads


@pytest.mark.parametrize("data, shape, said", [
    (b"S" * 64, (4, 4), None), (b"S" * 32, (4, 4), "is 32 bytes, tensor needs bytes 0..64"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 + b"\nsize 4096\n", (32, 32),
     "is a Git LFS pointer to"),
])
def test_a_short_data_file_is_found_when_the_tensor_gives_no_length(tmp_path, cli, data, shape, said):
    """A tensor with no `length` (onnx writes one; other writers may not) was compared with its data file by offset
    only: a file too short for its dims (an LFS pointer included) passed, and ORT fails reading it."""
    (tmp_path / "w.data").write_bytes(data)
    model = _write(tmp_path / "m.onnx", _ext_model(_external("w", "w.data", length=None, shape=shape)))
    rc, out, _ = cli(model, "--format", "json", "--select", "OLX003")
    found = _codes(out)
    assert [f["code"] for f in found] == (["OLX003"] if said else []), out
    assert said is None or said in found[0]["message"], found


def test_a_linked_models_real_folder_in_git_lends_it_no_git_file(tmp_path, cli):
    """A model that is a link to a file in .git (sub/m.onnx -> ../.git/x.onnx) has .git as its real folder: data
    there (.git/config, where a CI checkout keeps its token) was checked for .git below that folder only, and read."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / ".git" / "config").write_bytes(b"S" * 64)
    _write(repo / ".git" / "x.onnx", _ext_model(_external("w", "cfg")))
    os.symlink(os.path.join("..", ".git", "x.onnx"), repo / "sub" / "m.onnx")
    os.symlink(os.path.join("..", ".git", "config"), repo / "sub" / "cfg")
    rc, out, _ = cli(repo / "sub" / "m.onnx", "--format", "json", "--select", "OLX003")
    assert [f["code"] for f in _codes(out)] == ["OLX003"] and "in a .git folder" in _codes(out)[0]["message"], out


def test_fix_internals_refuse_external_data_outside_the_folder(tmp_path):
    """Behind fix_file's own refusal: the copier and the numeric check's session check the location themselves."""
    from onnxlint.fixers import FixError, equivalence, write

    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"S" * 64)
    (tmp_path / "m").mkdir()
    (tmp_path / "out").mkdir()
    model = _ext_model(_external("w", "../secret.bin"))
    with pytest.raises(FixError, match="outside the model's folder"):
        write.relocate_external_data(model, tmp_path / "m", tmp_path / "out" / "fixed.onnx")
    assert not any((tmp_path / "out").iterdir())  # the half-made data file is removed
    with pytest.raises(FixError, match="external data"):
        equivalence.session(model, tmp_path / "m")



@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_location_leaving_the_folder_is_a_finding(tmp_path, lint_json, location):
    (tmp_path / "secret.bin").write_bytes(b"S" * 64)
    model = _write(tmp_path / "m" / "model.onnx", _ext_model(_external("w", location)))
    rc, found = lint_json(model)
    ext = [f for f in found if f["code"] == "OLX003"]
    assert ext and "outside the model's folder" in ext[0]["message"]
    assert not any(f["code"] == "OLX001" for f in found)  # one problem, one finding: not the checker's too


@pytest.mark.parametrize("location", ["w" * 1_000_000, "../" * 300_000, "a/" * 200])
def test_a_long_external_data_location_is_quoted_clipped(tmp_path, lint_json, location):
    """OLX003 quoted a location of any length whole: a model naming a 1 MB location made a 1 MB message. Its start
    is shown, '…' and its length saying the rest was cut; a location of ordinary length stays whole."""
    model = _write(tmp_path / "m" / "model.onnx", _ext_model(_external("w", location)))
    rc, found = lint_json(model)
    [msg] = [f["message"] for f in found if f["code"] == "OLX003"]
    assert len(msg) < 500 and repr(location)[:150] in msg and f"… ({len(location):,} characters)" in msg, msg[:600]
    assert loading.external_location_problem(tmp_path, "../x.bin") == "location '../x.bin' points outside the model's folder"


def test_olx003_names_the_first_problems_and_counts_the_rest(tmp_path, lint_json):
    """A model saved one file per tensor (onnx's all_tensors_to_one_file=False) and copied without its files: OLX003
    joined every tensor's problem into one message, as long as the model has tensors. The first five are named,
    then how many more; the count of tensors stays whole."""
    ws = [_external(f"w{i:03}", f"w{i:03}.bin") for i in range(40)]
    nodes = [h.make_node("Add", ["x", w.name], [f"y{i}"], name=f"add{i}") for i, w in enumerate(ws)]
    m = make_model(nodes, [vi("x", T.FLOAT, [4, 4])], [vi(f"y{i}", T.FLOAT, [4, 4]) for i in range(40)], ws)
    rc, found = lint_json(_write(tmp_path / "m" / "model.onnx", m))
    [msg] = [f["message"] for f in found if f["code"] == "OLX003"]
    assert msg.startswith("40 initializer(s) lack their external data: ") and msg.endswith("; and 35 more"), msg
    assert "'w004.bin'" in msg and "'w005.bin'" not in msg and msg.count("; ") == 5


def test_external_data_in_a_constant_attribute_is_checked_too(tmp_path):
    (tmp_path / "secret.bin").write_bytes(b"S" * 64)
    c = h.make_node("Constant", [], ["c"], name="const", value=_external("cval", "../secret.bin"))
    m = make_model([c, h.make_node("Add", ["x", "c"], ["y"], name="add")], [vi("x", T.FLOAT, [4, 4])],
                   [vi("y", T.FLOAT, [4, 4])])
    mf = loading.load(_write(tmp_path / "m" / "model.onnx", m))
    assert [t.name for t in mf.outside_external] == ["cval"]


def test_every_tensor_that_can_name_external_data_is_found_in_order(tmp_path):
    """Initializers and sparse initializers of the main graph and its bodies, then the tensor attributes of
    their nodes (Constant values, a TENSORS attribute), then those of local functions' nodes and their bodies:
    each external tensor is found once, in that order (the first problem found is the one reported)."""
    def ext(name: str) -> onnx.TensorProto:
        return _external(name, f"{name}.bin")

    def const(name: str) -> onnx.NodeProto:
        return h.make_node("Constant", [], [f"{name}_out"], value=ext(name))

    inner = h.make_graph([const("inner_const"), h.make_node("Identity", ["inner_const_out"], ["io"])], "inner", [],
                         [vi("io", T.FLOAT, [4, 4])], [ext("inner_init")])
    then_g = h.make_graph([const("then_const"), h.make_node("If", ["c"], ["ti"], then_branch=inner, else_branch=inner)],
                          "then", [], [vi("ti", T.FLOAT, [4, 4])], [ext("then_init")])
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["eo"])], "else", [], [vi("eo", T.FLOAT, [4, 4])])
    sparse = onnx.SparseTensorProto(values=ext("sparse_values"), indices=ext("sparse_indices"), dims=[4, 4])
    many = h.make_node("Custom", ["x"], ["cu"], domain="custom", tensors=[ext("list_a"), ext("list_b")])
    body = h.make_graph([const("fn_body_const"), h.make_node("Identity", ["fn_body_const_out"], ["fb"])], "fbody", [],
                        [vi("fb", T.FLOAT, [4, 4])])
    fn = onnx.helper.make_function("local", "f", ["x"], ["y"], [const("fn_const"), h.make_node(
        "If", ["x"], ["y"], then_branch=body, else_branch=body)], [h.make_opsetid("", 17)])
    m = make_model([const("main_const"), h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g), many],
                   [vi("x", T.FLOAT, [4, 4]), vi("c", T.BOOL, [])], [vi("y", T.FLOAT, [4, 4])], [ext("main_init")])
    m.graph.sparse_initializer.append(sparse)
    m.functions.append(fn)
    found = [t.location for t in loading.external_tensors(m, tmp_path)]
    assert found == [f"{n}.bin" for n in (
        "main_init", "sparse_values", "sparse_indices",  # the main graph's initializers
        "then_init", "inner_init", "inner_init",  # bodies in walk order (inner twice: both branches of its If)
        "main_const", "list_a", "list_b", "then_const", "inner_const", "inner_const",  # attributes, same order
        "fn_const", "fn_body_const", "fn_body_const")]  # local functions and their bodies


@pytest.mark.parametrize("offset,length,why", [("abc", "64", "offset"), ("0", "1e3", "length"), ("-1", "64", "offset"),
                                               ("0", "9" * 5000, "length"), ("0x10", None, "offset")])
def test_non_integer_offset_or_length_is_a_finding_not_a_traceback(tmp_path, cli, offset, length, why):
    d = tmp_path / "m"
    model = _write(d / "model.onnx", _ext_model(_external("w", "w.bin", offset, length)))
    (d / "w.bin").write_bytes(b"\0" * 64)
    rc, out, err = cli(model, "--format", "json")
    assert "Traceback" not in err
    found = [f for f in _codes(out) if f["code"] == "OLX003"]
    assert found and f"external data {why}" in found[0]["message"] and "not a non-negative integer" in found[0]["message"]
    rc, out, err = cli("placement", model)
    assert "Traceback" not in err and rc in (0, 1, 2)


def test_bad_offset_in_one_model_of_a_folder_does_not_abort_the_pool(tmp_path, cli):
    d = tmp_path / "models"
    good = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, ["n", 4])],
                      [vi("y", T.FLOAT, ["n", 4])])
    for i in range(17):  # 16 or more files with --jobs > 1: the process pool
        _write(d / f"good{i:02d}.onnx", good)
    _write(d / "bad.onnx", _ext_model(_external("w", "w.bin", "zz", "64")))
    (d / "w.bin").write_bytes(b"\0" * 64)
    rc, out, err = cli(d, "--format", "json", "--jobs", "2")
    assert "Traceback" not in err
    found = _codes(out)
    assert any(f["code"] == "OLX003" and f["filename"].endswith("bad.onnx") for f in found)
    assert not any(f["code"] == "OLX000" for f in found)


SHADOW = """import os, sys
open(os.path.join(os.getcwd(), "RAN"), "a").write("ran")
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
del sys.modules["multiprocessing"]
import multiprocessing as _real
sys.modules["multiprocessing"] = _real
"""


def _repository_with_a_shadow(tmp_path, monkeypatch) -> None:
    """16 models (enough for the pool) under models/, a committed multiprocessing/ beside them, the current folder."""
    good = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, ["n", 4])],
                      [vi("y", T.FLOAT, ["n", 4])])
    for i in range(16):
        _write(tmp_path / "models" / f"m{i:02d}.onnx", good)
    (tmp_path / "multiprocessing").mkdir()
    (tmp_path / "multiprocessing" / "__init__.py").write_text(SHADOW)
    monkeypatch.chdir(tmp_path)


def test_the_process_pool_never_imports_the_repositorys_modules(tmp_path, cli, monkeypatch):
    """Python 3.14's default start method on Linux, forkserver, starts its server as `python -c`, the current
    folder (the repository under review) first on its import path: a committed multiprocessing/ ran in it when 16
    or more models were linted by the pool. Simulated here by making forkserver the default, as 3.14 does."""
    import multiprocessing

    if not sys.platform.startswith("linux"):
        pytest.skip("the pool forks on Linux only")
    _repository_with_a_shadow(tmp_path, monkeypatch)
    before = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("forkserver", force=True)
    try:
        rc, out, err = cli("models", "--jobs", "2", "--no-cache")
    finally:
        multiprocessing.set_start_method(before, force=True)
    assert not (tmp_path / "RAN").exists(), "the repository's multiprocessing/ ran in onnxlint's pool"
    assert rc == 0 and "Traceback" not in err and "in 16 files" in out, out + err


def test_a_spawned_pool_never_imports_the_repositorys_modules(tmp_path, cli, monkeypatch):
    """macOS and Windows start the pool's workers (and multiprocessing's resource tracker) by spawn, as
    `python -c`, the current folder first on their import path: a committed multiprocessing/ ran in each. Here
    the pool is made to spawn as it does there (linter._start_method); the workers start with PYTHONSAFEPATH."""
    from onnxlint.linting import linter

    if sys.version_info < (3, 11):
        pytest.skip("PYTHONSAFEPATH is Python 3.11's: on 3.10 a spawning platform lints without a pool")
    _repository_with_a_shadow(tmp_path, monkeypatch)
    monkeypatch.setattr(linter, "_start_method", lambda: "spawn")
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    rc, out, err = cli("models", "--jobs", "2", "--no-cache")
    assert not (tmp_path / "RAN").exists(), "the repository's multiprocessing/ ran in onnxlint's spawned pool"
    assert rc == 0 and "Traceback" not in err and "in 16 files" in out, out + err
    assert "PYTHONSAFEPATH" not in os.environ  # put back as it was


# ----------------------------------------------------------------------------- 2. no injection through output

INJECT = "\n::error file=README.md,line=1::PWNED"
ANSI = "\x1b[2J\x1b]8;;http://evil.example\x07x\x1b]8;;\x07\u202e\x85\x9b31m"


def _line_starts_a_command(line: str) -> bool:
    return line.lstrip().startswith("::") or "##[" in line


def test_escape_text_defuses_controls_and_workflow_commands():
    assert escape.text("plain name/with:colons") == "plain name/with:colons"
    out = escape.text(INJECT + ANSI + "\udcff")
    assert "\n" not in out and not re.search("[\x00-\x1f\x7f-\x9f\u202e\ud800-\udfff]", out)
    assert "\\n::error" in out and "\\x1b" in out and "\\u202e" in out and "\\xff" in out
    assert not escape.text("::error::x").startswith("::")
    assert not escape.text("  ::error::x").lstrip().startswith("::")
    assert "##[" not in escape.text("x ##[error]y")
    assert not escape.line(":" + escape.text(":node") + ": x").startswith("::")
    assert not escape.line("\x1b[1m::x").replace("\x1b[1m", "").startswith("::")
    doc = escape.json_unicode(json.dumps({"f": "a\udcffb"}, ensure_ascii=False))
    assert json.loads(doc.encode("utf-8").decode("utf-8")) == {"f": "a\\xffb"}


def test_node_names_cannot_inject_into_text_output(save, cli):
    n = h.make_node("Equal", ["a", "b"], ["y"], name=INJECT + ANSI)
    m = make_model([n], [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])
    rc, out, err = cli(save(m))
    assert "PWNED" in out  # reported, escaped
    for line in out.splitlines():
        assert not _line_starts_a_command(line), line
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", line), line
    rc, out, err = cli(save(m), "--format", "github")
    assert all(line.startswith("::") and "\x1b" not in line for line in out.splitlines())
    assert "PWNED" in out and out.count("\n") == len(out.splitlines())


def test_file_names_cannot_inject_into_text_output(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n = h.make_node("Equal", ["a", "b"], ["y"], name="eq")
    m = make_model([n], [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])
    for name in ("::error file=README.md,line=1::PWNED.onnx", ":", "\x1b[31mred.onnx", "x\u2028::warning::y.onnx"):
        _write(tmp_path / name, m)
    rc, out, err = cli("*", "--no-progress")
    assert out.count("PWNED") >= 1 and "\x1b" not in out
    for line in out.splitlines():
        assert not _line_starts_a_command(line), line


def test_sarif_uri_is_percent_encoded(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n = h.make_node("Equal", ["a", "b"], ["y"], name="eq")
    m = make_model([n], [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])
    _write(tmp_path / "my model#1%zz.onnx", m)
    rc, out, err = cli("my model#1%zz.onnx", "--format", "sarif")
    doc = json.loads(out)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"] for loc in r["locations"]}
    assert uris == {"my%20model%231%25zz.onnx"}
    for uri in uris:  # an RFC 3986 relative reference: unreserved, sub-delims, '/', '@', pct-encoded only
        assert re.fullmatch(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=/@]|%[0-9A-F]{2})+", uri)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_non_utf8_file_name_works_in_every_format(tmp_path, cli, fmt):
    n = h.make_node("Equal", ["a", "b"], ["y"], name="eq")
    m = make_model([n], [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])
    bad = os.fsencode(str(tmp_path)) + b"/bad\xff name.onnx"
    with open(bad, "wb") as fh:
        fh.write(m.SerializeToString())
    target = os.fsdecode(bad)
    rc, out, err = cli(target, "--format", fmt)  # capsys is a strict UTF-8 stream
    assert "Traceback" not in err and rc in (0, 1)
    out.encode("utf-8")
    assert "\\xff" in out or "%FF" in out
    if fmt in ("json", "sarif"):
        json.loads(out)
        report = tmp_path / f"report.{fmt}"
        rc, _, err = cli(target, "--format", fmt, "-o", report)
        assert "Traceback" not in err
        json.loads(report.read_bytes().decode("utf-8"))


# ----------------------------------------------------------------------------- 3. config visible and bounded


def _equal_model():
    n = h.make_node("Equal", ["a", "b"], ["y"], name="eq")
    return make_model([n], [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])


def test_config_above_the_repository_root_is_not_applied(tmp_path, lint_json):
    outer = tmp_path / "outer"
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    (outer / ".onnxlint.yaml").write_text('ignore: ["OLX"]\n')
    model = _write(repo / "models" / "m.onnx", _equal_model())
    config_mod.find_for.cache_clear()
    rc, found = lint_json(model)
    assert any(f["code"] == "OLX015" for f in found)
    assert config_mod.find_for(model.parent).path is None
    asked = config_mod.find_for(model.parent, above_repo=True)
    assert asked.path == outer / ".onnxlint.yaml" and asked.ignore == ["OLX"]
    (repo / "pyproject.toml").write_text('[tool.onnxlint]\nignore = ["OLX015"]\n')
    config_mod.find_for.cache_clear()
    cfg = config_mod.find_for(model.parent)
    assert cfg.path == repo / "pyproject.toml" and cfg.path.is_absolute()
    assert "pyproject.toml" in cfg.describe() and config_mod.Config().describe() == "config: none (defaults)"


@pytest.mark.skipif(not hasattr(os, "chown") or not ROOT_USER, reason="needs root to give a file to another user")
def test_config_owned_by_another_user_outside_a_repository_is_an_error(tmp_path, cli):
    (tmp_path / ".onnxlint.yaml").write_text('ignore: ["OLX"]\n')
    os.chown(tmp_path / ".onnxlint.yaml", 54321, 54321)
    model = _write(tmp_path / "models" / "m.onnx", _equal_model())
    config_mod.find_for.cache_clear()
    rc, out, err = cli(model)
    assert rc == 2 and "owned by another user" in err and ".onnxlint.yaml" in err
    assert "Found 0 finding" not in out


@pytest.mark.parametrize("content", [b"[tool.onnxlint\nselect = 1\n", b'[tool.onnxlint]\nignore = ["\xff"]\n',
                                     b'tool = "x"\n', b"[tool]\nonnxlint = 5\n",
                                     b"[tool.onnxlint]\nrules = 5\n", b"[tool.onnxlint]\nrules = [5]\n",
                                     b"[tool.onnxlint]\nseverity = {OLX001 = 5}\n",
                                     b"[tool.onnxlint]\nort-version = [1]\n"])
def test_broken_pyproject_is_an_error_naming_the_file(tmp_path, cli, content):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "pyproject.toml").write_bytes(content)
    (tmp_path / ".onnxlint.yaml").write_text('ignore: ["OLX"]\n')  # must not apply instead
    model = _write(proj / "m.onnx", _equal_model())
    config_mod.find_for.cache_clear()
    rc, out, err = cli(model)
    assert rc == 2 and "pyproject.toml" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content", [b"rules: 5\n", b"rules: [5]\n", b"select: \xff\xfe\n", b"severity: {OLX001: [a]}\n",
                                     b"per-file-ignores: {5: [OLX001]}\n", b"- a\n- b\n", b"fail-on: [error]\n",
                                     b"? [a, b]\n: 1\n"])
def test_bad_config_values_are_one_line_and_exit_2(tmp_path, cli, content):
    cfg = tmp_path / ".onnxlint.yaml"
    cfg.write_bytes(content)
    model = _write(tmp_path / "m.onnx", _equal_model())
    rc, out, err = cli(model, "--config", cfg)
    assert rc == 2 and ".onnxlint.yaml" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def _bomb(levels: int = 9) -> str:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        text += f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    return text


def test_yaml_alias_bomb_is_refused_quickly(tmp_path, cli):
    cfg = tmp_path / ".onnxlint.yaml"
    cfg.write_text(_bomb() + "ignore: *i\n")
    model = _write(tmp_path / "m.onnx", _equal_model())
    start = time.monotonic()
    rc, out, err = cli(model, "--config", cfg)
    assert rc == 2 and "alias" in err and time.monotonic() - start < 10
    merge = "l0: &l0 {a: 1, b: 2}\n" + "".join(f"l{i}: &l{i} {{<<: [*l{i-1}, *l{i-1}], k{i}: 1}}\n" for i in range(1, 40))
    with pytest.raises(RuleError, match="alias"):
        yaml_safe.load(merge, "merge.yaml")
    with pytest.raises(RuleError, match="contains it"):
        yaml_safe.load("a: &a [1, *a]\n", "cycle.yaml")
    assert yaml_safe.load("base: &b {x: 1}\nuse: {<<: *b, y: 2}\n", "ok.yaml") == {"base": {"x": 1}, "use": {"x": 1, "y": 2}}


def test_yaml_safe_keeps_line_numbers_with_a_custom_loader(tmp_path):
    from onnxlint.rulefiles import ruleset

    loader = ruleset._line_loader()
    f = tmp_path / "r.yaml"
    f.write_text("rules:\n  - id: X\n    name: y\n")
    data = yaml_safe.load_path(f, loader)
    assert data.line_of("rules") == 1 and data["rules"][0].line_of("name") == 3
    f.write_text(_bomb())
    with pytest.raises(RuleError, match=r"r\.yaml:\d+: YAML aliases"):
        yaml_safe.load_path(f, loader)
    f.write_bytes(b"a: \xff\n")
    with pytest.raises(RuleError, match="not UTF-8"):
        yaml_safe.load_path(f, loader)


# ----------------------------------------------------------------------------- 4. paths


def test_recursive_walks_end_on_a_symlink_loop(tmp_path, monkeypatch):
    d = tmp_path / "dir"
    _write(d / "sub" / "m.onnx", _equal_model())
    os.symlink(".", d / "a")
    os.symlink("..", d / "sub" / "b")
    os.symlink(str(d), d / "sub" / "c")
    start = time.monotonic()
    assert loading.expand_paths([str(d)]) == [d / "sub" / "m.onnx"]
    assert loading.expand_paths([f"{d}/**/*.onnx"]) == [d / "sub" / "m.onnx"]
    monkeypatch.chdir(tmp_path)
    assert loading.expand_paths(["dir/**/*.onnx"]) == [Path("dir/sub/m.onnx")]
    assert loading.expand_paths(["**/m.onnx"]) == [Path("dir/sub/m.onnx")]
    assert time.monotonic() - start < 10


def test_a_dangling_or_looping_model_link_is_that_models_error_not_the_runs(tmp_path, cli, monkeypatch):
    """A git-annex file whose content was not fetched (a link into .git/annex/objects) in a walked folder ended the
    whole run with one line, nothing else linted and an empty SARIF file; a link loop did the same. Each is now
    its own model's error (exit 2), the other models are linted and reported."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "models" / "m.onnx", _equal_model())
    os.symlink("../.git/annex/objects/Xx/SHA256E-s9--ab.onnx/SHA256E-s9--ab.onnx", tmp_path / "models" / "annexed.onnx")
    os.symlink("loop2.onnx", tmp_path / "models" / "loop1.onnx")
    os.symlink("loop1.onnx", tmp_path / "models" / "loop2.onnx")
    for args in (["models"], ["models/m.onnx", "models/annexed.onnx", "models/loop1.onnx"]):
        rc, out, err = cli("--no-cache", *args)
        assert rc == 2 and "OLX015" in out and "Traceback" not in err, (out, err)
        assert "models/annexed.onnx: a git-annex link whose content is not here" in err and "git annex get" in err
        assert "models/loop1.onnx: cannot read: Too many levels of symbolic links" in err
    rc, out, err = cli("--no-cache", "--format", "sarif", "models")
    assert rc == 2 and "OLX015" in {r["ruleId"] for r in json.loads(out)["runs"][0]["results"]}


def test_glob_keeps_glob_semantics(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for p in ("a/x.onnx", "a/b/y.onnx", "a/.hidden/z.onnx", "a/b/c/w.onnx", "top.onnx"):
        _write(tmp_path / p, _equal_model())
    assert loading.expand_paths(["a/**/*.onnx"]) == [Path(p) for p in ("a/b/c/w.onnx", "a/b/y.onnx", "a/x.onnx")]
    assert loading.expand_paths(["**/*.onnx"]) == [Path(p) for p in ("a/b/c/w.onnx", "a/b/y.onnx", "a/x.onnx", "top.onnx")]
    assert loading.expand_paths(["a/**/c/*.onnx"]) == [Path("a/b/c/w.onnx")]
    assert loading.expand_paths([str(tmp_path / "a" / "**" / "y.onnx")]) == [tmp_path / "a" / "b" / "y.onnx"]


def test_unreadable_subfolder_is_reported_not_skipped(tmp_path, monkeypatch):
    d = tmp_path / "dir"
    _write(d / "m.onnx", _equal_model())
    (d / "locked").mkdir()
    real_scandir = os.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(InputError, match="locked.*permission denied"):
        loading.expand_paths([str(d)])
    with pytest.raises(InputError, match="locked.*permission denied"):
        loading.expand_paths([f"{d}/**/*.onnx"])


@pytest.mark.skipif(ROOT_USER or os.name != "posix", reason="root can list any folder")
def test_folder_without_permission_is_reported(tmp_path, cli):
    d = tmp_path / "dir"
    _write(d / "m.onnx", _equal_model())
    (d / "locked").mkdir()
    os.chmod(d / "locked", 0)
    try:
        rc, out, err = cli(d)
        assert rc == 2 and "locked" in err and "permission denied" in err
    finally:
        os.chmod(d / "locked", 0o755)


def _in_thread(fn, timeout=20):
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "hung"
    return box


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_and_device_are_refused_without_reading(tmp_path, cli):
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    box = _in_thread(lambda: cli(fifo))
    rc, out, err = box["value"]
    assert rc == 2 and "not a regular file (a FIFO)" in out + err
    box = _in_thread(lambda: loading.load(fifo))
    assert isinstance(box["error"], InputError) and "FIFO" in str(box["error"])
    d = tmp_path / "dir"
    d.mkdir()
    os.mkfifo(d / "x.onnx")  # inside a walk: listed, then refused per file, never opened
    box = _in_thread(lambda: cli(d, "--format", "json"))
    rc, out, err = box["value"]
    assert any("not a regular file" in f["message"] for f in json.loads(out))
    if os.path.exists("/dev/null"):
        rc, out, err = cli("/dev/null")
        assert rc == 2 and "character device" in out + err


def test_file_over_protobuf_limit_is_refused_by_stat(tmp_path):
    big = tmp_path / "big.onnx"
    with open(big, "wb") as fh:
        fh.truncate(3 * 2**30)  # sparse: no disk used, and it must never be read
    start = time.monotonic()
    with pytest.raises(InputError, match="2 GiB limit"):
        loading.load(big)
    assert time.monotonic() - start < 5


# ----------------------------------------------------------------------------- 5. bounded cost


def _if_chain(n: int, constant_condition: bool = False) -> onnx.ModelProto:
    nodes, prev = [], "x"
    for i in range(n):
        then_g = h.make_graph([h.make_node("Identity", [prev], [f"t{i}"])], f"then{i}", [], [vi(f"t{i}", T.FLOAT, [2])])
        else_g = h.make_graph([h.make_node("Neg", [prev], [f"e{i}"])], f"else{i}", [], [vi(f"e{i}", T.FLOAT, [2])])
        nodes.append(h.make_node("If", ["c"], [f"x{i}"], name=f"if{i}", then_branch=then_g, else_branch=else_g))
        prev = f"x{i}"
    if constant_condition:
        return make_model(nodes, [vi("x", T.FLOAT, [2])], [vi(prev, T.FLOAT, [2])], [init("c", np.array(True))])
    return make_model(nodes, [vi("x", T.FLOAT, [2]), vi("c", T.BOOL, [])], [vi(prev, T.FLOAT, [2])])


def test_inference_budget_skips_a_long_if_chain(tmp_path):
    small = loading.load(_write(tmp_path / "small.onnx", _if_chain(20)))
    loading.infer_shapes(small)
    assert small.inferred is not None and small.inference_skipped is None
    big = loading.load(_write(tmp_path / "big.onnx", _if_chain(8000)))
    start = time.monotonic()
    loading.infer_shapes(big)
    assert time.monotonic() - start < 5
    assert big.inferred is None and big.inference_error is None and "skipped" in big.inference_skipped
    assert loading.over_inference_budget(big.model) and not loading.over_inference_budget(small.model)


def test_inference_budget_counted_from_loads_walk_is_the_walk_over_every_node(tmp_path):
    """load's external-data walk notes where the bodies are (graph.graph_bodies); the budget's count then reads
    only the output counts before them, and must count what the walk over every node's attributes counts, where
    it stops past a small limit too (bodies nested, two nodes with bodies, a node with two)."""
    from onnxlint.model.graph import graph_bodies

    def branch(i: int, inner: onnx.GraphProto | None = None) -> onnx.GraphProto:
        nodes = [h.make_node("Neg", ["x"], [f"n{i}"])]
        if inner is not None:
            nodes.append(h.make_node("If", ["c"], [f"o{i}"], then_branch=inner, else_branch=branch(i + 50)))
        return h.make_graph(nodes, f"b{i}", [], [vi(nodes[-1].output[0], T.FLOAT, [2])])

    nodes = [h.make_node("Relu", ["x"], ["r0"]), h.make_node("Split", ["r0"], ["s0", "s1"], num_outputs=2),
             h.make_node("If", ["c"], ["i0"], then_branch=branch(1, branch(2)), else_branch=branch(3)),
             h.make_node("Relu", ["i0"], ["r1"]),
             h.make_node("If", ["c"], ["i1"], then_branch=branch(4), else_branch=branch(5, branch(6))),
             h.make_node("Relu", ["i1"], ["y"])]
    m = make_model(nodes, [vi("x", T.FLOAT, [2]), vi("c", T.BOOL, [])], [vi("y", T.FLOAT, [2])])
    mf = loading.load(_write(tmp_path / "m.onnx", m))
    assert mf.graph_bodies is not None and len(mf.graph_bodies) == 9
    bodies = graph_bodies(mf.model)
    for limit in (None, 100, 20, 8, 0):
        walked: list = []
        counted: list = []
        assert loading.inference._inference_work(mf.model, limit, walked) == \
            loading.inference._inference_work(mf.model, limit, counted, bodies)
        assert walked == counted


def test_inference_budget_counts_nested_function_calls(tmp_path):
    funcs = [onnx.helper.make_function("local", "f0", ["x"], ["y"], [h.make_node("Relu", ["x"], ["y"])],
                                       [h.make_opsetid("", 17)])]
    for i in range(1, 40):  # every level calls the one below twice: 2**39 nodes once expanded
        body = [h.make_node(f"f{i-1}", ["x"], ["a"], domain="local"), h.make_node(f"f{i-1}", ["a"], ["y"], domain="local")]
        funcs.append(onnx.helper.make_function("local", f"f{i}", ["x"], ["y"], body, [h.make_opsetid("", 17)]))
    m = make_model([h.make_node("f39", ["x"], ["y"], domain="local", name="call")], [vi("x", T.FLOAT, [2])],
                   [vi("y", T.FLOAT, [2])], extra_opsets=[("local", 1)], functions=funcs)
    mf = loading.load(_write(tmp_path / "f.onnx", m))
    start = time.monotonic()
    loading.infer_shapes(mf)
    assert mf.inference_skipped and time.monotonic() - start < 5
    cyc = [onnx.helper.make_function("local", "g", ["x"], ["y"], [h.make_node("g", ["x"], ["y"], domain="local")],
                                     [h.make_opsetid("", 17)])]
    m2 = make_model([h.make_node("g", ["x"], ["y"], domain="local", name="call")], [vi("x", T.FLOAT, [2])],
                    [vi("y", T.FLOAT, [2])], extra_opsets=[("local", 1)], functions=cyc)
    assert loading.over_inference_budget(m2)


def test_node_count_budget(tmp_path, monkeypatch):
    chain = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(50)]
    mf = loading.load(_write(tmp_path / "m.onnx", make_model(chain, [vi("v0", T.FLOAT, [2])], [vi("v50", T.FLOAT, [2])])))
    monkeypatch.setattr(loading.inference, "INFER_MAX_NODES", 10)
    loading.infer_shapes(mf)
    assert mf.inferred is None and "50 nodes" in mf.inference_skipped


def test_a_main_graph_past_the_node_budget_is_indexed_first_and_counted_from_the_index(tmp_path, monkeypatch):
    """index_model over a main graph of more nodes than INFER_MAX_NODES: the index of the model as read comes
    first and the budget's count reads the main graph's output counts from it. The message is the one the walk
    over the protos gives, where the count stops past a small budget too (the nodes it names are those counted
    before it stopped: they depend on every output count before the last node with bodies)."""
    from onnxlint.model.graph import GraphIndex

    def branch(i: int, inner: onnx.GraphProto | None = None) -> onnx.GraphProto:
        nodes = [h.make_node("Neg", ["x"], [f"n{i}"])]
        if inner is not None:
            nodes.append(h.make_node("If", ["c"], [f"o{i}"], then_branch=inner, else_branch=branch(i + 50)))
        return h.make_graph(nodes, f"b{i}", [], [vi(nodes[-1].output[0], T.FLOAT, [2])])

    nodes = [h.make_node("Split", ["x"], ["s0", "s1", "s2"], num_outputs=3, name="split")]
    nodes += [h.make_node("Relu", [f"s{i % 3}"], [f"r{i}"], name=f"relu{i}") for i in range(12)]
    nodes.append(h.make_node("If", ["c"], ["i0"], then_branch=branch(1, branch(2)), else_branch=branch(3)))
    nodes += [h.make_node("Split", ["i0"], [f"t{i}", f"u{i}"], num_outputs=2, name=f"split{i}") for i in range(6)]
    nodes.append(h.make_node("If", ["c"], ["y"], then_branch=branch(4), else_branch=branch(5, branch(6))))
    path = _write(tmp_path / "m.onnx", make_model(nodes, [vi("x", T.FLOAT, [6]), vi("c", T.BOOL, [])],
                                                  [vi("y", T.FLOAT, [2])]))
    monkeypatch.setattr(loading.inference, "INFER_MAX_NODES", 10)
    read: list = []
    real = loading.inference._work_of_bodies
    monkeypatch.setattr(loading.inference, "_work_of_bodies",
                        lambda bodies, cap, graphs, main_outputs=None: read.append(main_outputs is not None)
                        or real(bodies, cap, graphs, main_outputs))
    said = set()
    for budget in range(100, 300):
        monkeypatch.setattr(loading.inference, "INFER_BUDGET", budget)
        walked = loading.load(path)
        loading.infer_shapes(walked)  # the count over the protos
        indexed = loading.load(path)
        index = loading.index_model(indexed)
        assert read[-2:] == [False, True]
        assert indexed.inferred is None and indexed.inference_skipped == walked.inference_skipped
        assert [n.location for n in index.nodes] == [n.location for n in GraphIndex(walked.model).nodes]
        said.add(walked.inference_skipped)
    assert len(said) > 2  # the budget stops the count at different graphs: the message names different counts


@pytest.mark.parametrize("constant_condition", [False, True])
def test_a_20k_if_chain_lints_within_60_seconds(tmp_path, cli, constant_condition):
    """Also with a constant condition: ORT inlines every If, and the optimizer model must stay linear."""
    path = _write(tmp_path / "chain.onnx", _if_chain(20000, constant_condition))
    start = time.process_time()  # this process's CPU: the machine may be shared
    rc, out, err = cli(path, "--format", "json", "--no-progress")
    elapsed = time.process_time() - start
    assert "Traceback" not in err and rc in (0, 1)
    assert elapsed < 60, f"{elapsed:.0f} s"


# ----------------------------------------------------------------------------- text from rule files

EVIL_RULE = r'''
- id: XTR009
  name: evil-rule
  severity: warning
  targets: any
  summary: "\e]8;;http://evil\a click \e[2J\u202e"
  explanation: "first line\n::error file=README.md::PWNED\n  ##[command]x \e[31m"
  references: ["see \e[2J here"]
  match: {op: Cast}
  message: "a Cast \e[31m here"
'''


@pytest.mark.parametrize("how", [["--list-rules"], ["--explain", "XTR009"], ["--list-rules", "--format", "json"]])
def test_text_from_a_rule_file_is_escaped_in_every_command(cli, tmp_path, how):
    """Rule files come from the repository under review: their text reaches the terminal and CI logs escaped
    like a model's."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "evil.yaml").write_text(EVIL_RULE)
    rc, out, err = cli("--rules", rules, *how)
    assert rc == 0, err
    assert "XTR009" in out and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert not any(line.lstrip().startswith(("::", "##[")) for line in out.splitlines())
    if "json" in how:
        assert any(r["summary"].startswith("\x1b]8;;") for r in json.loads(out))  # data, escaped by JSON
    elif "--explain" in how:
        assert "first line\n\\x3a:error file=README.md::PWNED" in out  # its own line breaks kept


def test_a_rule_message_is_escaped_in_the_findings(cli, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "evil.yaml").write_text(EVIL_RULE)
    m = make_model([h.make_node("Cast", ["x"], ["y"], name="c", to=T.FLOAT)], [vi("x", T.INT32, [2])],
                   [vi("y", T.FLOAT, [2])])
    onnx.save(m, tmp_path / "m.onnx")
    for fmt in ("text", "github"):
        rc, out, err = cli(tmp_path / "m.onnx", "--rules", rules, "--format", fmt, "--no-progress")
        assert "XTR009" in out and "\x1b" not in out and "Traceback" not in err


# ----------------------------------------------------------------------------- writes


def _dropout_with_external_constant(folder: Path) -> Path:
    """A Dropout (a safe fix removes it) after an Add of a Constant whose 32x32 value lives in c.data."""
    import onnx.external_data_helper as ext

    value = np.arange(1024, dtype=np.float32).reshape(32, 32)
    nodes = [h.make_node("Constant", [], ["c"], name="const", value=onnx.numpy_helper.from_array(value, "c")),
             h.make_node("Add", ["x", "c"], ["a"], name="add"),
             h.make_node("Dropout", ["a", "", "t"], ["y"], name="drop")]  # training_mode on: OLX010's fix
    m = make_model(nodes, [vi("x", T.FLOAT, [32, 32])], [vi("y", T.FLOAT, [32, 32])], [init("t", np.array(True))])
    ext.convert_model_to_external_data(m, all_tensors_to_one_file=True, location="c.data", size_threshold=1024,
                                       convert_attribute=True)
    p = folder / "m.onnx"
    onnx.save(m, p)
    assert (folder / "c.data").is_file()
    return p


def test_a_fix_written_elsewhere_moves_a_constant_nodes_external_data(tmp_path, cli, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    p = _dropout_with_external_constant(src)
    out = tmp_path / "out"
    out.mkdir()
    (out / "c.data").write_bytes(b"\0" * 4096)  # a decoy where the old relative location would lead
    monkeypatch.chdir(out)  # and the numeric check must not read data relative to the current folder either
    rc, stdout, err = cli(p, "--fix", "-o", out / "fixed.onnx", "--no-progress")
    assert "Traceback" not in err and (out / "fixed.onnx").is_file(), stdout + err
    fixed = onnx.load(out / "fixed.onnx", load_external_data=False)
    const = next(n for n in fixed.graph.node if n.op_type == "Constant").attribute[0].t
    location = {e.key: e.value for e in const.external_data}["location"]
    assert location != "c.data" and (out / location).is_file()
    fixed = onnx.load(out / "fixed.onnx")
    value = onnx.numpy_helper.to_array(next(n for n in fixed.graph.node if n.op_type == "Constant").attribute[0].t)
    assert np.array_equal(value, np.arange(1024, dtype=np.float32).reshape(32, 32))
    assert "Dropout" not in [n.op_type for n in fixed.graph.node]  # the fix itself


def test_report_output_onto_a_models_external_data_is_refused(tmp_path, cli):
    p = _dropout_with_external_constant(tmp_path)
    data = (tmp_path / "c.data").read_bytes()
    for extra in ([], ["--fix"]):
        rc, out, err = cli(p, *extra, "-o", tmp_path / "c.data")
        assert rc == 2 and "external data" in err and "Traceback" not in err
    assert (tmp_path / "c.data").read_bytes() == data


def test_a_baseline_never_overwrites_a_model(tmp_path, cli):
    p = _dropout_with_external_constant(tmp_path)
    before = p.read_bytes()
    for target in (p, tmp_path / "c.data"):
        rc, out, err = cli(p, "--baseline", target, "--update-baseline")
        assert rc == 2 and "--baseline" in err and "Traceback" not in err
    assert p.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("extra", [[], ["--fix"], ["--baseline-fifo"]])
def test_only_a_regular_file_is_replaced(tmp_path, cli, extra):
    m = make_model([h.make_node("Dropout", ["x"], ["y"], name="drop")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    onnx.save(m, tmp_path / "m.onnx")
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    args = ["--baseline", fifo, "--update-baseline"] if extra == ["--baseline-fifo"] else [*extra, "-o", fifo]
    done: list = []
    t = threading.Thread(target=lambda: done.append(cli(tmp_path / "m.onnx", *args)), daemon=True)
    t.start()
    t.join(60)
    assert done, "blocked on the FIFO"
    rc, out, err = done[0]
    assert rc == 2 and "not a regular file" in err and Path(fifo).is_fifo()


@pytest.mark.skipif(not hasattr(os, "chown") or os.geteuid() != 0, reason="giving a file another owner needs root")
def test_a_fix_in_place_keeps_the_files_owner_and_mode(tmp_path, cli):
    m = make_model([h.make_node("Dropout", ["x", "", "t"], ["y"], name="drop")], [vi("x", T.FLOAT, [2])],
                   [vi("y", T.FLOAT, [2])], [init("t", np.array(True))])
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    os.chown(p, 12345, 23456)
    os.chmod(p, 0o640)
    rc, out, err = cli(p, "--fix", "--no-progress")
    assert "Traceback" not in err
    st = os.stat(p)
    assert [n.op_type for n in onnx.load(p).graph.node] != ["Dropout"]  # fixed
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)


# ----------------------------------------------------------------------------- smaller ones


def test_a_pyproject_nested_thousands_deep_is_no_traceback(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = make_model([h.make_node("Equal", ["x", "k"], ["y"], name="eq")], [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])],
                   [vi("y", T.BOOL, [4])])
    onnx.save(m, tmp_path / "m.onnx")
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\nweird = {deep}\n")
    rc, out, err = cli("m.onnx", "--no-cache")
    assert rc == 1 and "OLX015" in out and "Traceback" not in err  # no [tool.onnxlint]: not onnxlint's to judge
    other = tmp_path / "other"
    other.mkdir()
    onnx.save(m, other / "m.onnx")
    (other / "pyproject.toml").write_text(f"[tool.onnxlint]\nselect = {deep}\n")
    monkeypatch.chdir(other)
    rc, out, err = cli("m.onnx", "--no-cache")
    assert rc == 2 and "nested too deeply" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_string_fields_that_are_not_utf8_do_not_cost_the_findings(tmp_path, cli, fmt):
    """protobuf hands a string field whose bytes are not UTF-8 over as bytes: a doc_string, a node name, a
    metadata entry. The model is still linted, its findings all there, the bad bytes shown escaped."""
    nodes = [h.make_node("Equal", ["x", "k"], ["e"], name="QQQQ", doc_string="DDDD"),
             h.make_node("Cast", ["e"], ["y"], name="cast", to=T.FLOAT)]
    m = make_model(nodes, [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])], [vi("y", T.FLOAT, [4])])
    m.doc_string = "MMMM"
    m.metadata_props.add(key="KKKK", value="VVVV")
    data = m.SerializeToString()
    for tag in (b"QQQQ", b"DDDD", b"MMMM", b"KKKK", b"VVVV"):
        data = data.replace(tag, b"\xff\xfe\xc3\x28")
    (tmp_path / "m.onnx").write_bytes(data)
    rc, out, err = cli(tmp_path / "m.onnx", "--no-cache", "--format", fmt, "--no-progress")
    assert rc == 1 and "internal error" not in err + out and "Traceback" not in err
    assert "OLX015" in out and "\\xff\\xfe" in out.replace("\\\\", "\\")


@pytest.mark.parametrize("command", ["lint", "placement"])
def test_a_constant_output_name_that_is_not_utf8_in_a_model_ort_refuses(tmp_path, cli, command):
    """Where ORT refuses the model, its refusal is modelled with an initializer made of each Constant node, named
    after the node's output: those bytes set into the initializer's name raised UnicodeDecodeError, not the
    TypeError the retry with repaired strings was for ("internal error while linting", exit 2; placement:
    "internal error ... please report it")."""
    value = h.make_tensor("v", T.FLOAT, [2], [1, 2])
    nodes = [h.make_node("Constant", [], ["QQQQ"], value=value), h.make_node("Constant", [], ["a", "b"], value=value)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString().replace(b"QQQQ", b"c\xd0nv"))
    args = ("placement", tmp_path / "m.onnx") if command == "placement" else (tmp_path / "m.onnx", "--no-cache")
    rc, out, err = cli(*args)
    assert rc == (0 if command == "placement" else 1) and "internal error" not in err + out, err + out
    assert "ORT refuses this model" in out and "output size 2" in out


@pytest.mark.parametrize("fmt", ["json", "text", "html"])
def test_placement_of_a_node_domain_that_is_not_utf8(tmp_path, cli, fmt):
    """A custom op's domain that is not UTF-8 reaches the placement document as the bytes protobuf hands over:
    `onnxlint placement --format json` said "internal error (TypeError: Object of type bytes is not JSON
    serializable)", exit 2, and wrote no document. It is the text with the bad byte as `\\xNN`, in the node's
    `domain` and in the words that name it ("no provider registers domain ...", which said 'b'com.ex\\x80m.ops'',
    Python's repr of the bytes, in every format)."""
    nodes = [h.make_node("FancyNorm", ["x"], ["y"], name="my_op", domain="com.QQQQ.ops")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], extra_opsets=[("com.QQQQ.ops", 1)])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString().replace(b"QQQQ", b"ex\x80m"))
    rc, out, err = cli("placement", tmp_path / "m.onnx", "--format", fmt)
    assert rc == 0 and "internal error" not in err, err
    assert "b'" not in out.replace("\\\\", "\\") and "domain 'com.ex\\x80m.ops'" in out.replace("\\\\", "\\"), out
    if fmt == "json":
        assert json.loads(out)[0]["nodes"][0]["domain"] == "com.ex\\x80m.ops"


def test_an_external_data_location_that_is_not_utf8_is_a_finding_not_a_crash(tmp_path, cli):
    """An external-data entry whose bytes are not UTF-8 (protobuf hands it over as bytes) is named as the
    problem of that tensor's data (OLX003), never an internal error."""
    w = onnx.numpy_helper.from_array(np.ones((4,), np.float32), "w")
    w.data_location = T.EXTERNAL
    w.external_data.add(key="location", value="LLLL.bin")
    w.external_data.add(key="length", value="16")
    w.ClearField("raw_data")
    m = make_model([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])],
                   inits=[w])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString().replace(b"LLLL.bin", b"L\xff\xfeL.bin"))
    rc, out, err = cli(tmp_path / "m.onnx", "--no-cache", "--no-progress")
    assert rc == 1 and "internal error" not in err + out and "Traceback" not in err
    assert "OLX003" in out and "external data entry 'location' is not UTF-8 text" in out


def test_report_output_onto_a_linked_models_external_data_is_refused(tmp_path, cli):
    """A model that is a link has its data in the real folder of the file it leads to too (read there as ORT reads
    it): -o naming that data file replaced the model's weights with the report."""
    (tmp_path / "store").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "store" / "m.onnx.data").write_bytes(np.arange(16, dtype=np.float32).tobytes())
    _write(tmp_path / "store" / "m.onnx", _ext_model(_external("w", "m.onnx.data")))
    os.symlink(os.path.join("..", "store", "m.onnx"), tmp_path / "models" / "m.onnx")
    os.symlink(os.path.join("..", "store", "m.onnx.data"), tmp_path / "models" / "m.onnx.data")
    data = (tmp_path / "store" / "m.onnx.data").read_bytes()
    for target in (tmp_path / "store" / "m.onnx.data", tmp_path / "models" / "m.onnx.data"):
        rc, out, err = cli(tmp_path / "models" / "m.onnx", "-o", target)
        assert rc == 2 and "is the external data file of" in err and "Traceback" not in err, out + err
    assert (tmp_path / "store" / "m.onnx.data").read_bytes() == data


def test_the_write_guard_parses_only_models_that_name_a_data_file(tmp_path, cli, monkeypatch):
    """An existing -o file or baseline in the models' folder made the guard parse every model again in full to list
    its data files (seconds for models of hundreds of MB). A model whose bytes hold no "location", the key of
    every external-data entry, names none and is not parsed; one that does is, and -o onto its data is refused."""
    from onnxlint.model import loading, write_guard

    inline = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    _write(tmp_path / "a.onnx", inline)
    (tmp_path / "m.onnx.data").write_bytes(np.arange(16, dtype=np.float32).tobytes())
    _write(tmp_path / "m.onnx", _ext_model(_external("w", "m.onnx.data")))
    (tmp_path / "r.txt").write_text("an earlier report\n")
    parsed = []
    real_load = loading.load
    monkeypatch.setattr(loading, "load", lambda path, *a, **k: parsed.append(Path(path).name) or real_load(path, *a, **k))
    monkeypatch.setattr(write_guard, "_SEEN", {})
    assert write_guard._external_files(tmp_path / "a.onnx") == set() and parsed == []
    assert write_guard._external_files(tmp_path / "m.onnx") == {os.path.realpath(tmp_path / "m.onnx.data")}
    assert parsed == ["m.onnx"]
    rc, out, err = cli(tmp_path / "a.onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.onnx.data")
    assert rc == 2 and "is the external data file of" in err, out + err


def test_fix_o_of_a_linked_model_whose_data_is_in_its_real_folder_writes_a_standalone_copy(tmp_path, cli):
    """The Hugging Face cache: snapshots/<rev>/model.onnx and its data link to one blobs folder. The lint reads the
    data there, as ORT does (through the link); `--fix -o` refused ("fix a copy of the model and its data in one
    folder"), as verify did before it named that folder. It reads the blobs the lint read (the numeric check given
    that folder, the model's locations naming them) and writes the fixed model with a copy of that data beside it,
    which runs as the original did; nothing in the cache changes. In place (a blob) and --diff still say why not."""
    root = tmp_path / "hub" / "models--acme--m"
    (root / "blobs").mkdir(parents=True)
    (root / "snapshots" / "rev").mkdir(parents=True)
    (root / "blobs" / "b2").write_bytes(np.arange(16, dtype=np.float32).tobytes())
    _write(root / "blobs" / "b1", _ext_model(_external("w", "model.onnx.data")))
    model = root / "snapshots" / "rev" / "model.onnx"
    os.symlink(os.path.join("..", "..", "blobs", "b1"), model)
    os.symlink(os.path.join("..", "..", "blobs", "b2"), root / "snapshots" / "rev" / "model.onnx.data")
    listing = {d: sorted(os.listdir(root / d)) for d in ("blobs", "snapshots/rev")}
    blob = (root / "blobs" / "b1").read_bytes()
    for extra, why in (([], "fix a copy with -o"), (["--diff"], "is in the folder of the file model.onnx links to")):
        rc, out, err = cli(model, "--fix", *extra, "--no-progress")
        assert why in out + err and "wrote" not in out + err, out + err
        assert "neither the original" not in out + err and "Traceback" not in err
    rc, out, err = cli(model, "--fix", "-o", f"{tmp_path / 'out'}{os.sep}", "--no-progress")
    assert rc == 1 and "wrote" in out + err and "Traceback" not in err, out + err  # OLX012 is left (unsafe)
    assert sorted(os.listdir(tmp_path / "out")) == ["model.onnx", "model.onnx.data"]
    fixed = tmp_path / "out" / "model.onnx"
    assert "Cast" in {n.op_type for n in onnx.load(fixed, load_external_data=False).graph.node}
    x, k = np.ones((2, 4), np.float32), np.full((2, 4), 24.0)
    import onnxruntime as ort

    got = ort.InferenceSession(str(fixed), providers=["CPUExecutionProvider"]).run(None, {"x": x, "k": k})[0]
    assert got.tolist() == (x @ np.arange(16, dtype=np.float32).reshape(4, 4) == 24.0).tolist()
    assert {d: sorted(os.listdir(root / d)) for d in ("blobs", "snapshots/rev")} == listing
    assert (root / "blobs" / "b1").read_bytes() == blob


def test_python_children_never_import_the_repositorys_modules(tmp_path, monkeypatch, cli, examples_dir):
    """onnxlint runs in the repository under review (a pre-commit hook's, a CI step's), and `python -m X` / `-c`
    put the current folder first on a child's import path: a committed `onnx.py` ran in --fix's numeric check (the
    fix was then not written: 'did not finish'), `onnxruntime.py` in doctor's probe, and the Action's lint child
    imported them too. Now no child has the current folder on its path."""
    import subprocess
    import sys

    from onnxlint.commands import github_action

    for name in ("onnx", "numpy", "onnxruntime", "yaml", "shlex"):
        (tmp_path / f"{name}.py").write_text(f"open({str(tmp_path / ('RAN-' + name))!r}, 'w').close()\n"
                                             "raise ImportError('planted by the repository')\n")
    model = tmp_path / "dropout_training.onnx"
    model.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli("--fix", "--no-cache", "dropout_training.onnx")
    assert rc == 0 and "1 fixed" in out + err, out + err
    cli("doctor")
    to_sarif, to_log, _ = github_action.commands({"ONNXLINT_PATHS": "dropout_training.onnx"}, tmp_path)
    run = subprocess.run(to_log, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0 and "planted" not in run.stderr, run.stderr
    assert sorted(p.name for p in tmp_path.glob("RAN-*")) == []


@pytest.mark.parametrize("layout", ["hugging-face", "git-annex", "dvc-hardlink"])
@pytest.mark.parametrize("sorted_", [True, False])
def test_data_files_that_are_links_are_no_checker_finding(tmp_path, cli, monkeypatch, layout, sorted_):
    """onnx's checker refuses a data file that is a symbolic link, and from onnx 1.23 one with several hard links;
    ORT (1.20.1, 1.24.4, 1.32.0; hard links: 1.23.2, 1.24.4, 1.31.1) and TensorRT-RTX 1.7's parser read it, and the
    Hugging Face cache and git-annex keep every data file as a symbolic link, DVC's hardlink cache as a hard link:
    OLX001 warned on each such model. The model is checked again with regular files in the links' place, so a real
    complaint behind the link's (an unsorted graph) is still OLX001."""
    if layout == "dvc-hardlink" and not hasattr(os, "link"):
        pytest.skip("no hard links")
    if layout == "hugging-face":
        root = tmp_path / "hub" / "models--acme--m"
        (root / "blobs").mkdir(parents=True)
        (root / "blobs" / "b2").write_bytes(np.arange(16, dtype=np.float32).tobytes())
        folder, data_link = root / "snapshots" / "rev", os.path.join("..", "..", "blobs", "b2")
    elif layout == "dvc-hardlink":
        folder = tmp_path / "repo"
        data_link = ".dvc/cache/files/md5/3a/b1c2"  # the cache object the checkout's data file is a hard link of
        (folder / data_link).parent.mkdir(parents=True)
        (folder / data_link).write_bytes(np.arange(16, dtype=np.float32).tobytes())
    else:
        folder = tmp_path / "repo"
        annexed = ".git/annex/objects/Xq/Wk/SHA256E-s64--ab/SHA256E-s64--ab"
        (folder / annexed).parent.mkdir(parents=True)
        (folder / annexed).write_bytes(np.arange(16, dtype=np.float32).tobytes())
        data_link = annexed
    nodes = [h.make_node("Add", ["x", "w"], ["s"], name="add"), h.make_node("Relu", ["s"], ["y"], name="relu")]
    add = make_model(nodes if sorted_ else nodes[::-1], [vi("x", T.FLOAT, [4, 4])], [vi("y", T.FLOAT, [4, 4])],
                     [_external("w", "model.onnx.data")], opset=13)
    if layout == "hugging-face":  # the snapshot's model and data both lead into blobs/
        _write(root / "blobs" / "b1", add)
        folder.mkdir(parents=True)
        model = folder / "model.onnx"
        os.symlink(os.path.join("..", "..", "blobs", "b1"), model)
    else:
        model = _write(folder / "model.onnx", add)
    if layout == "dvc-hardlink":
        os.link(folder / data_link, folder / "model.onnx.data")
        said = loading.checker_message(str(model)) or ""  # onnx 1.23 on; 1.21 takes a hard link
        assert "multiple hard links" in said or tuple(map(int, onnx.__version__.split(".")[:2])) < (1, 23), said
    else:
        os.symlink(data_link, folder / "model.onnx.data")
        assert "symbolic link" in (loading.checker_message(str(model)) or "")  # what the checker says of the file
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the second check's folder goes
    rc, out, _ = cli(model, "--format", "json", "--select", "OLX001,OLX003")
    found = _codes(out)
    if sorted_:
        assert found == [] and rc == 0, out
    else:
        assert [f["code"] for f in found] == ["OLX001"], out
        assert "topologically sorted" in found[0]["message"] and "symbolic link" not in found[0]["message"], found
        assert "onnxlint-check-" not in found[0]["message"], found
    ort = pytest.importorskip("onnxruntime")
    ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])  # ORT reads through the link
    assert not list(scratch.iterdir())  # the second check's folder is gone


def test_fix_writes_a_model_whose_data_file_is_a_git_annex_link(tmp_path):
    """`--fix` checks the file it wrote with onnx's checker before it replaces the model: a data file that is a
    link (git-annex's) made that check refuse every fix ("... but it is a symbolic link"); the link is kept."""
    repo = tmp_path / "repo"
    annexed = ".git/annex/objects/Xq/Wk/SHA256E-s64--ab/SHA256E-s64--ab"
    (repo / annexed).parent.mkdir(parents=True)
    (repo / annexed).write_bytes(np.arange(16, dtype=np.float32).tobytes())
    os.symlink(annexed, repo / "w.data")
    model = _write(repo / "model.onnx", _ext_model(_external("w", "w.data")))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "ONNXLINT_CACHE_DIR")}
    proc = subprocess.run([sys.executable, "-m", "onnxlint", "model.onnx", "--fix", "--select", "OLX015"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=600)  # the command line's native worker
    assert "wrote" in proc.stderr + proc.stdout and "symbolic link" not in proc.stderr + proc.stdout, proc
    assert [n.op_type for n in onnx.load(str(model), load_external_data=False).graph.node].count("Cast") == 1
    assert os.readlink(repo / "w.data") == annexed


def test_python_children_import_the_onnxlint_the_parent_runs(tmp_path, examples_dir):
    """`python -m onnxlint` in a source checkout that is not installed (a contributor's): the parent finds onnxlint
    in the current folder, and its children, which leave the current folder off their path, found none ('No
    module named onnxlint.fixers': --fix wrote nothing, verify failed, doctor said no provider is available) or
    another one (a release installed beside the checkout). Each child imports the parent's own package, and still
    has neither the current folder nor the checkout on its path."""
    import shutil
    import site
    import subprocess
    import sys

    import onnxlint

    checkout = tmp_path / "checkout"
    package = Path(onnxlint.__file__).parent
    shutil.copytree(package, checkout / "onnxlint", ignore=shutil.ignore_patterns("__pycache__"))
    if (package.parent / "rules").is_dir():  # a checkout's rules (a wheel's are in the package, _rules)
        shutil.copytree(package.parent / "rules", checkout / "rules")
    seen = tmp_path / "imported-by"
    with open(checkout / "onnxlint" / "__init__.py", "a") as f:  # each process that imports this copy says so
        f.write(f"\nimport os as _o, sys as _s\nwith open({str(seen)!r}, 'a') as _f:\n"
                f"    _f.write('%d %d\\n' % (_o.getpid(), '' in _s.path or {str(checkout)!r} in _s.path))\n")
    # an interpreter with onnxlint's dependencies and no onnxlint installed: the dependencies' folders, not what
    # their .pth files add (an editable install's path)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    python = next((tmp_path / "venv" / "bin").glob("python3*"))
    deps = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    (deps / "deps.pth").write_text("\n".join(p for p in site.getsitepackages() if os.path.isdir(p)) + "\n")
    shutil.copy(examples_dir / "dropout_training.onnx", checkout / "m.onnx")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"ONNXLINT_CACHE_DIR": str(tmp_path / "cache")}

    def run(*args):
        proc = subprocess.run([str(python), "-m", "onnxlint", *args], cwd=checkout, env=env, capture_output=True,
                              text=True, timeout=300)
        return proc.stdout + proc.stderr

    out = run("--fix", "--no-progress", "-o", "fixed.onnx", "m.onnx")
    assert "1 fixed" in out and (checkout / "fixed.onnx").is_file(), out
    out = run("verify", "--providers", "CPUExecutionProvider", "m.onnx")
    assert "No module named" not in out and "verify failed" not in out, out
    out = run("doctor")
    assert "available providers" in out, out
    lines = seen.read_text().split()
    processes = dict(zip(lines[::2], lines[1::2]))
    assert len(processes) >= 5 and list(processes.values()).count("1") == 3, processes
