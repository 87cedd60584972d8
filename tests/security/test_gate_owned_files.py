"""--fix and -o remove or replace only what onnxlint wrote, and leave none of their own files behind: a data file an
exporter wrote beside the model -o replaces is the user's; a run killed (SIGKILL: the OOM killer, a CI runner's
last resort) leaves nothing half-written under a final name, and its temporary file is removed by the next write."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from bounded import limits, onnxlint
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _export(folder: Path, name: str = "model.onnx", dropout: bool = True) -> Path:
    """A model whose weights are in a data file beside it, as torch.onnx.export writes one (`model.onnx` and
    `model.onnx.data`); with dropout, a training-mode Dropout --fix removes."""
    folder.mkdir(parents=True, exist_ok=True)
    first = (h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop") if dropout
             else h.make_node("Identity", ["x"], ["d"], name="drop"))
    inits = [nh.from_array(np.arange(1024, dtype=np.float32), "w"), nh.from_array(np.full(1024, 3.0, np.float32), "b")]
    if dropout:
        inits += [nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "tm")]
    g = h.make_graph([first, h.make_node("Add", ["d", "w"], ["s"], name="add"), h.make_node("Mul", ["s", "b"], ["y"],
                     name="mul")], "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 1024])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 1024])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, folder / name, save_as_external_data=True, location=f"{name}.data", size_threshold=1024)
    return folder / name


def _runs(path: Path) -> np.ndarray:
    x = np.ones((2, 1024), np.float32)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _fix(tmp_path: Path, source: Path, dest: Path) -> subprocess.CompletedProcess:
    run = onnxlint("--no-cache", "--no-progress", "--fix", "-o", dest, "--", source, cwd=tmp_path)
    assert run.returncode == 0 and "wrote" in run.stdout, run.stdout + run.stderr
    return run


def test_o_over_an_exported_model_keeps_the_exporters_data_file(tmp_path):
    """`--fix -o out/model.onnx` over a model torch exported there: its `model.onnx.data` (onnxlint's name for a
    data file) was removed once the new model was in place, as no `*.onnx` in out/ named it any more; a model
    beside out/ that reads it (`location: out/model.onnx.data`) then failed to load. Only a data file onnxlint
    wrote is replaced by the next run; a run again keeps one copy of the fixed weights."""
    source = _export(tmp_path / "src", "in.onnx")
    out = tmp_path / "out"
    _export(out, dropout=False)
    users = (out / "model.onnx.data").read_bytes()
    reader = onnx.load(out / "model.onnx", load_external_data=False)  # beside out/, naming the exporter's file
    for t in reader.graph.initializer:
        for e in t.external_data:
            e.value = "out/model.onnx.data" if e.key == "location" else e.value
    onnx.save(reader, tmp_path / "reader.onnx")
    expected = _runs(tmp_path / "reader.onnx")
    for data in ("model.onnx.1.data", "model.onnx.2.data", "model.onnx.1.data"):
        _fix(tmp_path, source, out / "model.onnx")
        assert sorted(os.listdir(out)) == ["model.onnx", data, "model.onnx.data"]
        assert (out / "model.onnx.data").read_bytes() == users
        np.testing.assert_array_equal(_runs(tmp_path / "reader.onnx"), expected)
        _runs(out / "model.onnx")


def test_the_data_file_onnxlint_writes_says_so_and_loads(tmp_path):
    """What lets a later run tell its own data file from an exporter's: its first bytes; the tensors follow at
    DATA_ALIGN-aligned offsets, as ORT, onnx and the lint read them."""
    from onnxlint.fixers import write

    source = _export(tmp_path / "src", "in.onnx")
    (tmp_path / "out").mkdir()
    _fix(tmp_path, source, tmp_path / "out" / "m.onnx")
    data = (tmp_path / "out" / "m.onnx.data").read_bytes()
    assert data.startswith(write.DATA_HEADER)
    offsets = [int(e.value) for t in onnx.load(tmp_path / "out" / "m.onnx", load_external_data=False).graph.initializer
               for e in t.external_data if e.key == "offset"]
    assert offsets and min(offsets) >= len(write.DATA_HEADER) and all(o % write.DATA_ALIGN == 0 for o in offsets)
    np.testing.assert_allclose(_runs(tmp_path / "out" / "m.onnx")[0], (1.0 + np.arange(1024)) * 3.0)
    run = onnxlint("--no-cache", "--", tmp_path / "out" / "m.onnx", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def _killed(tmp_path: Path, patch: str, *args: str | os.PathLike, signum: int = 9) -> subprocess.CompletedProcess:
    """onnxlint ARGS in a child that patch (Python run after onnxlint is imported) kills with SIGKILL (signum) at a
    point it chooses (die()), as the OOM killer or a CI runner's last resort would."""
    code = textwrap.dedent(f"""\
        import os, signal, sys
        import onnxlint.cli
        from onnxlint.fixers import write
        def die():
            os.kill(os.getpid(), {signum})
        {textwrap.indent(textwrap.dedent(patch), "        ").strip()}
        sys.argv = ["onnxlint", *sys.argv[1:]]
        sys.exit(onnxlint.cli.main())
        """)
    # its temporary folders (the numeric check's, which SIGKILL leaves) beside tmp_path: never in the machine's /tmp
    tmp = tmp_path.parent / f"{tmp_path.name}.tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "ONNXLINT_CACHE_DIR": str(tmp_path / ".c"), "TMPDIR": str(tmp)}
    run = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, preexec_fn=limits(), env=env)
    # SIGTERM stops a run as Ctrl-C does (exit 143, "interrupted"); SIGKILL ends it where it is
    assert run.returncode == (-9 if signum == 9 else 128 + signum), run.stdout + run.stderr
    return run


def _age(folder: Path) -> list[str]:
    """The names of the temporary files in folder, made as old as a killed run's left for 10 minutes are."""
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))
    for name in names:
        os.utime(folder / name, (0, 1))
    return names


@pytest.mark.skipif(os.name == "nt", reason="no flock: nothing is removed there")
def test_a_fix_killed_while_copying_the_data_leaves_no_half_written_data_file(tmp_path):
    """`--fix -o` killed while it copied the weights into `out/m.onnx.data` left that file half-written, under the
    name a data file has and named by no model, for good: the next run wrote `m.onnx.1.data` beside it. The copy
    is now written under atomic_write's temporary naming and takes its name once whole; the next write of that
    model removes the temporary file, as one a killed model write left."""
    source = _export(tmp_path / "src", "in.onnx")
    out = tmp_path / "out"
    out.mkdir()
    _killed(tmp_path, """\
        real, calls = write.safe_external_path, []
        def second(*a):  # the first tensor is copied: kill on the way to the second
            calls.append(a)
            if len(calls) == 2:
                die()
            return real(*a)
        write.safe_external_path = second
        """, "--no-cache", "--fix", "-o", out / "m.onnx", "--", source)
    left = _age(out)
    assert len(left) == 1 and left[0].startswith(".m.onnx.") and sorted(os.listdir(out)) == left
    run = _fix(tmp_path, source, out / "m.onnx")
    assert f"removed {left[0]} beside m.onnx: left by a --fix killed while writing it" in run.stdout, run.stdout
    assert sorted(os.listdir(out)) == ["m.onnx", "m.onnx.data"]
    _runs(out / "m.onnx")


@pytest.mark.parametrize("links", [True, False], ids=["hard-links", "no-hard-links"])
def test_a_data_file_made_while_the_copy_ran_is_not_replaced(tmp_path, cli, monkeypatch, links):
    """The data file's name is chosen free before the copy and taken once the copy is whole: a file or link made
    under it meanwhile (another run, the user) is left as it is, nothing is written and the note says why; the
    copy keeps the source data's permission bits."""
    from onnxlint.fixers import write

    source = _export(tmp_path / "src", "in.onnx")
    os.chmod(tmp_path / "src" / "in.onnx.data", 0o640)
    out = tmp_path / "out"
    out.mkdir()
    real_copy = write._copy_tensors
    if not links:  # FAT, some network and FUSE file systems: the name is taken by a rename
        monkeypatch.setattr(os, "link", lambda *a, **k: (_ for _ in ()).throw(PermissionError(1, "Operation not permitted")))

    def meanwhile(*a, **k):
        real_copy(*a, **k)
        (out / "m.onnx.data").write_bytes(b"made meanwhile")

    monkeypatch.setattr(write, "_copy_tensors", meanwhile)
    rc, text, _ = cli(source, "--no-cache", "--fix", "-o", out / "m.onnx")
    assert "fix not written" in text and "m.onnx.data was made beside it while the data was copied" in text, text
    assert os.listdir(out) == ["m.onnx.data"] and (out / "m.onnx.data").read_bytes() == b"made meanwhile"
    monkeypatch.setattr(write, "_copy_tensors", real_copy)
    (out / "m.onnx.data").unlink()
    rc, text, _ = cli(source, "--no-cache", "--fix", "-o", out / "m.onnx")
    assert "wrote" in text and sorted(os.listdir(out)) == ["m.onnx", "m.onnx.data"], text
    assert stat.S_IMODE(os.stat(out / "m.onnx.data").st_mode) == 0o640
    _runs(out / "m.onnx")


REPORTS = {"report": ("-o", "report.json", "--format", "json", "--no-cache", "--"),
           "placement": ("placement", "-o", "report.json", "--format", "json", "--"),
           "baseline": ("--no-cache", "--baseline", "report.json", "--update-baseline", "--")}


# the child dies (die()) as its report's temporary file is about to be renamed to report.json
_KILLED_BEFORE_REPORT_RENAME = """\
        real = os.replace
        def replace(a, b, *k, **kw):
            if os.path.basename(b) == "report.json":
                die()
            return real(a, b, *k, **kw)
        os.replace = replace
        """


@pytest.mark.skipif(os.name == "nt", reason="no flock: nothing is removed there")
@pytest.mark.parametrize("command", REPORTS)
def test_a_report_or_baseline_killed_while_written_leaves_nothing_the_next_run_keeps(tmp_path, command):
    """A report (`-o`, `placement -o`, which streams for minutes on a large model) or `--update-baseline` killed
    (SIGKILL) before its temporary file was renamed left `.report.json.XXXXXXXX.tmp` beside it for good. The
    temporary file is locked while written, and the next write of that report removes one left unchanged for 10
    minutes that no process holds. SIGTERM and Ctrl-C (Interrupted) remove it at once, as before."""
    model = _export(tmp_path, dropout=False)
    args = (*REPORTS[command], model.name)
    _killed(tmp_path, _KILLED_BEFORE_REPORT_RENAME, *args)
    assert not (tmp_path / "report.json").exists()
    left = _age(tmp_path)
    assert len(left) == 1 and left[0].startswith(".report.json."), left
    (tmp_path / ".report.json.k2j3h4g5.tmp.bak").write_bytes(b"a name onnxlint does not give")
    run = onnxlint(*args, cwd=tmp_path)
    assert run.returncode == 0 and (tmp_path / "report.json").stat().st_size, run.stdout + run.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == [".report.json.k2j3h4g5.tmp.bak"]


@pytest.mark.parametrize("command", REPORTS)
def test_a_report_or_baseline_stopped_by_sigterm_leaves_no_temporary_file(tmp_path, command):
    model = _export(tmp_path, dropout=False)
    _killed(tmp_path, _KILLED_BEFORE_REPORT_RENAME, *REPORTS[command], model.name, signum=15)
    assert sorted(os.listdir(tmp_path)) == ["model.onnx", "model.onnx.data"]


@pytest.mark.skipif(os.name == "nt", reason="no flock: nothing is removed there")
def test_a_fix_killed_during_its_numeric_check_leaves_no_copy_in_the_models_folder(tmp_path):
    """A model with external data was checked from copies in its own folder (ORT read the weights beside them):
    `--fix` killed (SIGKILL) during the check, its longest part, left `.onnxlint-check.XXXXXXXX.onnx` there, two of
    them (and the check child's `.s.` session copy), for good, for a `git add -A` to commit. The copies are in the
    check's temporary folder now (ORT is told where the weights are; before 1.21 its session copy is still beside
    them, locked while it exists); the next check in that folder removes those an earlier run left, unchanged for
    10 minutes, that no process holds. A file of any other name, or one a process holds, stays."""
    import fcntl

    model = _export(tmp_path / "m", "m.onnx")
    _killed(tmp_path, """\
        from onnxlint.fixers import equivalence
        equivalence._run_child = lambda *a, **k: die()
        """, "--no-cache", "--fix", "--", model)
    assert not [p.name for p in (tmp_path / "m").iterdir() if p.name.startswith(".onnxlint")]
    left = [".onnxlint-check.abcd1234.onnx", ".onnxlint-check.efgh_678.onnx"]  # an earlier onnxlint's copies
    for name in left:
        (tmp_path / "m" / name).write_bytes(b"")
        os.utime(tmp_path / "m" / name, (0, 1))
    keep = [".onnxlint-check.abcdefgh.s.abcdefgh.onnx.bak", ".onnxlint-check.abcdefg.onnx", "onnxlint-check.abcdefgh.onnx"]
    for name in keep:
        (tmp_path / "m" / name).write_bytes(b"not a copy of the check")
        os.utime(tmp_path / "m" / name, (0, 1))
    session = tmp_path / "m" / ".onnxlint-check.abcdefgh.s.ijklmnop.onnx"  # a killed check child's
    session.write_bytes(b"")
    os.utime(session, (0, 1))
    held = tmp_path / "m" / ".onnxlint-check.held1234.onnx"  # another run's, checking now: it holds its lock
    held.write_bytes(b"")
    os.utime(held, (0, 1))
    with open(held, "rb") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        run = onnxlint("--no-cache", "--fix", "--", model, cwd=tmp_path)
    assert run.returncode == 0 and "wrote" in run.stdout, run.stdout + run.stderr
    assert sorted(os.listdir(tmp_path / "m")) == sorted([*keep, held.name, "m.onnx", "m.onnx.data"])


def test_verify_fix_of_a_model_with_external_data_writes_its_fixed_copy_beside_links_to_the_data(tmp_path):
    """`verify --fix` wrote the fixed model of a model with external data to `.onnxlint-verify-XXXXXXXX.onnx` beside
    the model (the repository under review) and ran a session on it (up to --timeout, 300 s): killed (SIGKILL)
    meanwhile, it left that copy there. It is written in a temporary folder beside a link to each data file
    (data_links.linked_folder, as ORT 1.20's session file), alone: no copy of the weights; killed during the session
    on it, the model's folder holds the model and its data alone, which the next verify fixes."""
    model = _export(tmp_path / "m", "m.onnx")
    args = ("verify", "--providers", "CPUExecutionProvider", "--fix", "--", model)
    _killed(tmp_path, """\
        from onnxlint.verify import command
        real = command.verify_file
        def verify_file(p, *a, **k):
            if os.path.abspath(p) != os.path.abspath(os.path.join("m", "m.onnx")):  # the fixed copy's session
                folder = os.path.dirname(p)
                assert sorted(os.listdir(folder)) == ["m.onnx", "m.onnx.data"], os.listdir(folder)
                assert os.path.islink(os.path.join(folder, "m.onnx.data")) and os.path.getsize(p) < 4096
                die()
            return real(p, *a, **k)
        command.verify_file = verify_file
        """, *args)
    assert sorted(os.listdir(tmp_path / "m")) == ["m.onnx", "m.onnx.data"]
    run = onnxlint(*args, cwd=tmp_path)
    assert run.returncode == 0 and "wrote" in run.stdout and "after fix:  verify" in run.stdout, run.stdout + run.stderr
    assert sorted(os.listdir(tmp_path / "m")) == ["m.onnx", "m.onnx.data"]
    assert "Dropout" not in {n.op_type for n in onnx.load(model, load_external_data=False).graph.node}


@pytest.mark.skipif(os.name == "nt", reason="no flock: nothing is removed there")
def test_a_verify_fix_killed_during_its_session_leaves_no_fixed_copy_beside_the_model(tmp_path):
    """Where no link can be made (Windows without the privilege), `verify --fix` writes the fixed model to
    `.onnxlint-verify-XXXXXXXX.onnx` beside the model and runs a session on it before fixing in place: killed
    (SIGKILL) meanwhile, it left that copy, as large as the model, for good. It is locked while it exists; the next
    verify of a model there removes one unchanged for 10 minutes that no process holds."""
    model = _export(tmp_path / "m", "m.onnx")
    args = ("verify", "--providers", "CPUExecutionProvider", "--fix", "--", model)
    _killed(tmp_path, """\
        def symlink(*a, **k):  # no link can be made
            raise OSError(1, "symbolic link privilege not held")
        os.symlink = symlink
        from onnxlint.verify import command
        real = command.verify_file
        def verify_file(p, *a, **k):
            if os.path.basename(p).startswith(".onnxlint-verify-"):
                die()
            return real(p, *a, **k)
        command.verify_file = verify_file
        """, *args)
    left = sorted(p.name for p in (tmp_path / "m").iterdir() if p.name.startswith(".onnxlint"))
    assert len(left) == 1 and left[0].startswith(".onnxlint-verify-"), left
    os.utime(tmp_path / "m" / left[0], (0, 1))
    run = onnxlint(*args, cwd=tmp_path)
    assert run.returncode == 0 and "wrote" in run.stdout, run.stdout + run.stderr
    assert sorted(os.listdir(tmp_path / "m")) == ["m.onnx", "m.onnx.data"]


def test_verify_fix_of_a_model_without_external_data_writes_its_fixed_copy_in_a_temporary_folder(tmp_path):
    """A model with no data file needs no copy beside it: `verify --fix` wrote its fixed model there
    (`.onnxlint-verify-XXXXXXXX.onnx`, in the repository under review while the session ran; a verify killed
    meanwhile left it until the next one). It is written in a temporary folder: killed during the session on it,
    the model's folder holds the model alone, which the next verify fixes."""
    model = _export(tmp_path / "m", "m.onnx")
    whole = onnx.load(model)  # its weights in the model, the data file gone
    for name in os.listdir(tmp_path / "m"):
        os.unlink(tmp_path / "m" / name)
    onnx.save(whole, model)
    args = ("verify", "--providers", "CPUExecutionProvider", "--fix", "--", model)
    _killed(tmp_path, """\
        from onnxlint.verify import command
        real = command.verify_file
        def verify_file(p, *a, **k):
            if os.path.abspath(p) != os.path.abspath(os.path.join("m", "m.onnx")):  # the fixed copy's session
                die()
            return real(p, *a, **k)
        command.verify_file = verify_file
        """, *args)
    assert os.listdir(tmp_path / "m") == ["m.onnx"]
    run = onnxlint(*args, cwd=tmp_path)
    assert run.returncode == 0 and "wrote" in run.stdout, run.stdout + run.stderr
    assert os.listdir(tmp_path / "m") == ["m.onnx"]
