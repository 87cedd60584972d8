"""Issue 40, class 3: an in-place --fix is compare-and-swap. While the numeric check runs (seconds on a real
model), an editor saves a new version or `git checkout` replaces the file: the fix, computed from the old version,
must not overwrite it. Nothing is written, one line says so, the exit code is 2; mode and links as before."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import onnx
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint import fixers


def _dropout(name: str = "d", width: int = 2) -> onnx.ModelProto:
    return make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name=name)],
                      [vi("x", T.FLOAT, [width]), vi("r", T.FLOAT, []), vi("t", T.BOOL, [])], [vi("y", T.FLOAT, [width])],
                      opset=13)


def _new_version(p: Path) -> bytes:
    """What the user saved meanwhile: another model."""
    data = _dropout("edited", 3).SerializeToString()
    p.write_bytes(data)
    return data


def _same_size_and_mtime(p: Path) -> bytes:
    """Another model of the same size, the modification time put back (a copy that kept it, a clock too coarse)."""
    st = os.stat(p)
    data = _dropout("e", 2).SerializeToString()
    assert len(data) == st.st_size
    p.write_bytes(data)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    return data


def _replaced_by_rename(p: Path) -> bytes:
    """`git checkout`: a new file renamed over it (same bytes here: only the inode tells)."""
    data = p.read_bytes()
    tmp = p.with_name("checkout.tmp")
    tmp.write_bytes(data)
    st = os.stat(p)
    os.replace(tmp, p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    return data


def _deleted(p: Path) -> None:
    p.unlink()
    return None


CHANGES = {"new-version": _new_version, "same-size-and-mtime": _same_size_and_mtime,
           "replaced-by-rename": _replaced_by_rename, "deleted": _deleted}


def _during_the_numeric_check(monkeypatch, target: Path, change) -> dict:
    """Run change(target) once, while the fix's numeric check runs (after the fix read the file)."""
    real = fixers.verify
    done: dict = {}

    def verify(*a, **k):
        if not done:
            done["data"] = change(target)
        return real(*a, **k)

    monkeypatch.setattr(fixers, "verify", verify)
    return done


@pytest.mark.parametrize("change", CHANGES)
def test_a_file_changed_during_the_fix_is_not_overwritten(tmp_path, cli, monkeypatch, change):
    p = tmp_path / "m.onnx"
    onnx.save(_dropout(), p)
    done = _during_the_numeric_check(monkeypatch, p, CHANGES[change])
    rc, out, err = cli(p, "--fix", "--no-progress")
    assert done, "the change was not made"
    assert rc == 2, out + err
    lines = [x for x in err.splitlines() if "changed since onnxlint read it" in x]
    assert len(lines) == 1 and lines[0].startswith(f"onnxlint: error: {p}: changed since onnxlint read it"), err
    assert "the fix was not written" in lines[0] and "wrote" not in out
    if change == "deleted":
        assert not p.exists()
    else:
        assert p.read_bytes() == done["data"]  # the new version, untouched
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".")]  # no temporary file left


def test_a_file_changed_between_the_lint_and_the_fix_is_not_fixed(tmp_path, cli, monkeypatch):
    from onnxlint.linting import fixing

    p = tmp_path / "m.onnx"
    onnx.save(_dropout(), p)
    real = fixing._fix_file
    edited: dict = {}

    def fix_file(path, *a, **k):
        edited["data"] = _new_version(path)
        return real(path, *a, **k)

    monkeypatch.setattr(fixing, "_fix_file", fix_file)
    rc, out, err = cli(p, "--fix", "--no-progress")
    assert rc == 2 and "changed between the lint and the fix" in err and p.read_bytes() == edited["data"]


def test_a_model_gone_between_the_lint_and_the_fix_is_its_own_line_and_the_run_goes_on(tmp_path, cli, monkeypatch):
    """A model deleted (a `git checkout`) after the lint read it: the fix's second read raised an InputError that
    stopped the run: no report, a model fixed before it written unsaid, the one after it not fixed."""
    from onnxlint.linting import fixing

    for name in ("a.onnx", "b.onnx", "c.onnx"):
        onnx.save(_dropout(), tmp_path / name)
    real = fixing._fix_file

    def fix_file(path, *a, **k):
        if path.name == "b.onnx":
            os.unlink(path)
        return real(path, *a, **k)

    monkeypatch.setattr(fixing, "_fix_file", fix_file)
    rc, out, err = cli(tmp_path, "--fix", "--no-progress")
    assert rc == 2 and "b.onnx: cannot be read again for the fix" in err, out + err
    assert out.count("wrote") == 2 and "Found " in out, out


def test_in_a_folder_only_the_changed_model_is_left_alone(tmp_path, cli, monkeypatch):
    for name in ("a.onnx", "b.onnx"):
        onnx.save(_dropout(), tmp_path / name)
    _during_the_numeric_check(monkeypatch, tmp_path / "a.onnx", _new_version)
    rc, out, err = cli(tmp_path, "--fix", "--no-progress")
    assert rc == 2 and err.count("changed since onnxlint read it") == 1
    assert "wrote" in out and not any(n.op_type == "Dropout" for n in onnx.load(tmp_path / "b.onnx").graph.node)
    assert onnx.load(tmp_path / "a.onnx").graph.node[0].name == "edited"


def test_through_a_link_the_target_is_compared_and_the_link_kept(tmp_path, cli, monkeypatch):
    real = tmp_path / "real.onnx"
    onnx.save(_dropout(), real)
    os.chmod(real, 0o640)
    link = tmp_path / "link.onnx"
    os.symlink("real.onnx", link)
    done = _during_the_numeric_check(monkeypatch, real, _same_size_and_mtime)
    rc, out, err = cli(link, "--fix", "--no-progress")
    assert rc == 2 and real.read_bytes() == done["data"] and os.path.islink(link)
    monkeypatch.undo()
    rc, out, err = cli(link, "--fix", "--no-progress")  # unchanged meanwhile: written, mode and link kept
    assert rc in (0, 1) and "wrote" in out, out + err
    assert os.path.islink(link) and stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert not any(n.op_type == "Dropout" for n in onnx.load(real).graph.node)


def test_the_api_and_a_fix_elsewhere(tmp_path, monkeypatch):
    from onnxlint import api

    p = tmp_path / "m.onnx"
    onnx.save(_dropout(), p)
    done = _during_the_numeric_check(monkeypatch, p, _new_version)
    res = api.fix(p)
    assert res.write_refused and "changed since onnxlint read it" in res.write_refused and p.read_bytes() == done["data"]
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.undo()
    onnx.save(_dropout(), p)
    done = _during_the_numeric_check(monkeypatch, p, _new_version)
    res = api.fix(p, output=out / "m.onnx")  # written elsewhere: the source may change, nothing of it is replaced
    assert not res.write_refused and (out / "m.onnx").exists() and p.read_bytes() == done["data"]


@pytest.mark.parametrize("planted", [".baseline.json.tmp", None])
def test_update_baseline_never_writes_through_a_planted_temporary_name(tmp_path, planted):
    """--update-baseline wrote `.baseline.json.tmp` (open for writing, following a link) and renamed it: a committed
    link of that name made it write the baseline over the file the link leads to, outside the repository. The
    temporary file is now a new one (O_EXCL, a name nobody chose); a link at the baseline's own name is replaced,
    never written through."""
    from bounded import onnxlint

    repo = tmp_path / "repo"
    repo.mkdir()
    onnx.save(_dropout(), repo / "m.onnx")
    victim = tmp_path / "outside.txt"
    victim.write_text("precious\n")
    os.symlink(victim, repo / (planted or "baseline.json"))
    run = onnxlint("--no-cache", "--baseline", "baseline.json", "--update-baseline", "--", "m.onnx", cwd=repo)
    assert run.returncode == 0 and "recorded" in run.stderr, run.stderr
    assert victim.read_text() == "precious\n"
    assert not (repo / "baseline.json").is_symlink() and '"fingerprints"' in (repo / "baseline.json").read_text()
    assert onnxlint("--no-cache", "--baseline", "baseline.json", "--", "m.onnx", cwd=repo).returncode == 0
    assert sorted(p.name for p in repo.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()) == []


@pytest.mark.parametrize("where", ["a folder", "a missing folder", "a linked folder"])
def test_update_baseline_to_a_folder_or_into_a_missing_or_linked_one_is_one_line(tmp_path, where):
    """--update-baseline onto a folder, or into a folder that does not exist, was "internal error (IsADirectoryError
    ...); please report it"; into a committed linked folder it wrote outside. One line, exit 2, as for -o."""
    from bounded import onnxlint

    repo = tmp_path / "repo"
    repo.mkdir()
    onnx.save(_dropout(), repo / "m.onnx")
    outside = tmp_path / "outside"
    outside.mkdir()
    name = {"a folder": "bdir", "a missing folder": "nope/b.json", "a linked folder": "reports/b.json"}[where]
    if where == "a folder":
        (repo / "bdir").mkdir()
    if where == "a linked folder":
        os.symlink(outside, repo / "reports")
    run = onnxlint("--no-cache", "--baseline", name, "--update-baseline", "--", "m.onnx", cwd=repo)
    said = {"a folder": "is a folder", "a missing folder": "folder nope does not exist",
            "a linked folder": "is a symbolic link"}[where]
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and said in run.stderr, run.stderr
    assert "internal error" not in run.stderr and list(outside.iterdir()) == []


REPORTS = [("lint", ("--no-cache", "--format", "sarif"), 1, '"version": "2.1.0"'),
           ("placement", ("placement", "--format", "json"), 0, '"summary"')]


@pytest.mark.parametrize("command,args,rc,content", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_report_never_writes_through_a_committed_link(tmp_path, command, args, rc, content):
    """`-o onnxlint.sarif` in a CI step: the repository can commit that name as a link to a file outside it. The
    report replaces the link (a new temporary file renamed over it); the file it leads to stays as it was."""
    from bounded import onnxlint

    repo = tmp_path / "repo"
    repo.mkdir()
    onnx.save(_dropout(), repo / "m.onnx")
    victim = tmp_path / "outside.txt"
    victim.write_text("precious\n")
    os.symlink(victim, repo / "report.out")
    run = onnxlint(*args, "-o", "report.out", "--", "m.onnx", cwd=repo)
    assert run.returncode == rc, run.stderr
    assert victim.read_text() == "precious\n"
    assert not (repo / "report.out").is_symlink() and content in (repo / "report.out").read_text()
    assert stat.S_IMODE(os.stat(repo / "report.out").st_mode) & 0o044 == 0o044 & ~_umask()
    assert sorted(p.name for p in repo.iterdir()) == ["m.onnx", "report.out"]  # no temporary file left


@pytest.mark.parametrize("command,args,rc,content", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_relative_report_path_through_a_linked_folder_is_refused(tmp_path, command, args, rc, content):
    """`-o reports/lint.sarif` where the repository commits `reports` as a link to a folder outside it: one line
    naming the link, exit 2, nothing written there. An absolute path is the caller's own."""
    from bounded import onnxlint

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    onnx.save(_dropout(), repo / "m.onnx")
    os.symlink(outside, repo / "reports")
    run = onnxlint(*args, "-o", "reports/lint.out", "--", "m.onnx", cwd=repo)
    assert run.returncode == 2 and run.stdout == "" and run.stderr.count("\n") == 1, run.stderr
    assert "reports/lint.out: folder reports is a symbolic link" in run.stderr
    assert list(outside.iterdir()) == []
    run = onnxlint(*args, "-o", str(outside / "lint.out"), "--", "m.onnx", cwd=repo)
    assert run.returncode == rc and content in (outside / "lint.out").read_text(), run.stderr


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("how", ["link out", "linked folder", "into .git", "into .GIT"])
def test_a_fix_never_writes_through_a_repositorys_link_out_of_it(tmp_path, cli, how):
    """A committed link to a model outside the repository (a shared model store, another project's file), a
    committed linked folder, or a link into the repository's .git folder (git-annex's objects, content-addressed):
    --fix wrote the fixed model through it, there. Nothing is written, a note names where the link leads, the
    finding stays; a fix into a copy (-o, the user's own path) is written."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "models").mkdir()
    if how.startswith("into"):  # .GIT: the .git folder on a file system that ignores case (macOS's)
        target = repo / how.split()[1] / "annex" / "objects" / "SHA256E-s1--x.onnx"
    else:
        target = tmp_path / "outside" / "prod.onnx"
    target.parent.mkdir(parents=True)
    onnx.save(_dropout(), target)
    before = target.read_bytes()
    if how == "linked folder":
        os.symlink(target.parent, repo / "store")
        named = repo / "store" / "prod.onnx"
    else:
        named = repo / "models" / "m.onnx"
        os.symlink(os.path.relpath(target, named.parent), named)
    rc, out, err = cli(named, "--fix", "--no-progress")
    assert rc == 1 and "fix not written" in out and f"leads to {target}" in out, out + err
    assert target.read_bytes() == before and (how == "linked folder" or named.is_symlink())
    assert "OLX010" in out
    rc, out, err = cli(named, "--fix", "--no-progress", "-o", str(tmp_path / "fixed.onnx"))
    assert "wrote" in out and target.read_bytes() == before, out + err
    assert not any(n.op_type == "Dropout" for n in onnx.load(tmp_path / "fixed.onnx").graph.node)


@pytest.mark.parametrize("store", ["hf", "dvc"])
def test_a_fix_never_writes_through_a_link_into_a_content_addressed_store(tmp_path, cli, monkeypatch, store):
    """A Hugging Face cache snapshot's model.onnx is a link to a blob named by its content and shared by every
    snapshot holding it (DVC links into its cache the same way). Named outside any repository and outside the
    working folder (the user's own path), --fix wrote the fixed model into the blob: every revision sharing it
    changed, and the blob no longer had the content its name says. Nothing is written; -o still writes a copy."""
    if store == "hf":
        blob = tmp_path / "hub" / "models--org--m" / "blobs" / "0a1b2c"
        named = tmp_path / "hub" / "models--org--m" / "snapshots" / "rev1" / "model.onnx"
    else:
        blob = tmp_path / "proj" / ".dvc" / "cache" / "files" / "md5" / "ab" / "cdef"
        named = tmp_path / "proj" / "model.onnx"
    blob.parent.mkdir(parents=True)
    named.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(_dropout(), blob)
    os.symlink(os.path.relpath(blob, named.parent), named)
    before = blob.read_bytes()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    rc, out, err = cli(named, "--fix", "--no-progress")
    assert rc == 1 and "fix not written" in out and "named by its content" in out, out + err
    assert blob.read_bytes() == before and named.is_symlink()
    rc, out, err = cli(named, "--fix", "--no-progress", "-o", str(tmp_path / "fixed.onnx"))
    assert "wrote" in out and blob.read_bytes() == before, out + err


def test_without_a_repository_a_fix_never_writes_through_a_link_out_of_the_working_folder(tmp_path, cli, monkeypatch):
    """A checkout without .git (a source archive, a CI checkout made without git): no work tree bounded the
    fix, so a committed link leading out of the checkout had the fixed model written through it, there. The
    working folder stands for the repository, as for config files; a path outside it is the user's own."""
    checkout, outside = tmp_path / "checkout", tmp_path / "outside"
    (checkout / "models").mkdir(parents=True)
    outside.mkdir()
    onnx.save(_dropout(), outside / "prod.onnx")
    before = (outside / "prod.onnx").read_bytes()
    os.symlink(os.path.join("..", "..", "outside", "prod.onnx"), checkout / "models" / "m.onnx")
    monkeypatch.chdir(checkout)
    rc, out, err = cli(Path("models") / "m.onnx", "--fix", "--no-progress")
    assert rc == 1 and "fix not written" in out and "outside the working folder" in out, out + err
    assert (outside / "prod.onnx").read_bytes() == before and (checkout / "models" / "m.onnx").is_symlink()
    monkeypatch.chdir(tmp_path)  # both inside the working folder: written through, the link kept
    rc, out, err = cli(checkout / "models" / "m.onnx", "--fix", "--no-progress")
    assert "wrote" in out and (outside / "prod.onnx").read_bytes() != before, out + err


def test_a_fix_writes_through_a_link_that_stays_inside_the_repository(tmp_path, cli):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "store").mkdir()
    onnx.save(_dropout(), repo / "store" / "real.onnx")
    os.symlink("store/real.onnx", repo / "m.onnx")
    rc, out, err = cli(repo / "m.onnx", "--fix", "--no-progress")
    assert "wrote" in out and (repo / "m.onnx").is_symlink(), out + err
    assert not any(n.op_type == "Dropout" for n in onnx.load(repo / "store" / "real.onnx").graph.node)
