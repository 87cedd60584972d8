"""Which models a run looks at, as a user meets it (issue 44): a repository scan leaves out what git ignores,
hidden and virtual-environment folders and the user's excludes; pre-commit's explicit file names honour the
excludes with --force-exclude; a Git LFS pointer is its own finding with how to fetch the objects.

Every test runs the `onnxlint` command in a child process, from the folder a user would run it in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_model, vi
from onnx import TensorProto
from onnx import helper as h

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 94316544\n")


def onnxlint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("ONNXLINT_CACHE_DIR", None)
    lint = not args or args[0] not in ("placement", "verify", "doctor", "clean")
    return subprocess.run([sys.executable, "-m", "onnxlint", *(["--no-cache"] if lint else []), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def linted(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The models a JSON run reported on (every model below has one finding: its double input, OLX012)."""
    assert proc.returncode in (0, 1), proc.stderr
    return sorted({f["filename"] for f in json.loads(proc.stdout)})


def _model(path: Path) -> None:
    """A model with one warning (a float64 graph input, OLX012): each model linted shows up in the JSON."""
    import onnx

    m = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", TensorProto.DOUBLE, ["N", 4])],
                   [vi("y", TensorProto.DOUBLE, ["N", 4])])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree with models where a project has them: its own, a venv's, node_modules', a hidden
    folder's, git-ignored ones (nested .gitignore with a negation), and an untracked one."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "proj"
    for rel in ("models/a.onnx", "models/sub/b.onnx", "models/sub/keep.onnx", "models/sub/draft.onnx",
                "build/out.onnx", ".venv/lib/python3.11/site-packages/pkg/m.onnx", "venv/x.onnx",
                "node_modules/pkg/n.onnx", ".cache/c.onnx", "env/lib/python3.11/site-packages/p/s.onnx",
                "exports/legacy/old.onnx", "exports/new.onnx"):
        _model(root / rel)
    (root / ".gitignore").write_text("build/\n*.draft.onnx\n")
    (root / "models" / "sub" / ".gitignore").write_text("*.onnx\n!keep.onnx\n!b.onnx\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


OWN = ["exports/legacy/old.onnx", "exports/new.onnx", "models/a.onnx", "models/sub/b.onnx", "models/sub/keep.onnx"]


def test_a_repository_scan_leaves_out_ignored_hidden_and_venv_folders(repo: Path) -> None:
    assert linted(onnxlint(repo, ".", "--format", "json")) == OWN
    # the same from a subfolder, and by a glob (git's nested .gitignore with its negations holds there too)
    assert linted(onnxlint(repo / "models", ".", "--format", "json")) == ["a.onnx", "sub/b.onnx", "sub/keep.onnx"]
    assert linted(onnxlint(repo, "**/*.onnx", "--format", "json")) == OWN


def test_a_model_named_like_onnxlints_temporary_files_is_still_walked(tmp_path: Path) -> None:
    """A walk left out every name starting `.onnxlint-`, silently: a committed `.onnxlint-prod.onnx` passed a folder
    run unseen. Only the exact names mkstemp gives the numeric check's and verify's copies are left out."""
    for name in (".onnxlint-prod.onnx", ".onnxlint-check.onnx", ".onnxlint-check.abcd1234.onnx",
                 ".onnxlint-check.abcd1234.s.efgh_678.onnx"):
        _model(tmp_path / "m" / name)
    assert linted(onnxlint(tmp_path, "m", "--format", "json")) == ["m/.onnxlint-check.onnx", "m/.onnxlint-prod.onnx"]


def test_a_folder_walk_takes_the_onnx_suffix_in_any_case(tmp_path: Path) -> None:
    """`M.ONNX` was skipped in silence by a folder walk (`onnxlint .`, the Action's default) while named on the command
    line it was linted; the pre-commit hooks' `files:` pattern takes it too."""
    import re

    import yaml

    for name in ("a.onnx", "B.ONNX", "c.Onnx"):
        _model(tmp_path / "m" / name)
    (tmp_path / "m" / "a.onnx.data").write_bytes(b"\0" * 8)
    (tmp_path / "m" / "d.onnxx").write_bytes(b"\0" * 8)
    assert linted(onnxlint(tmp_path, "m", "--format", "json")) == ["m/B.ONNX", "m/a.onnx", "m/c.Onnx"]
    hooks = yaml.safe_load((Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text())
    for hook in hooks:
        files = re.compile(hook["files"])
        assert [n for n in ("a.onnx", "m/B.ONNX", "c.Onnx", "a.onnx.data", "d.onnxx") if files.search(n)] == \
            ["a.onnx", "m/B.ONNX", "c.Onnx"], hook["id"]


def test_gitignore_can_be_turned_off_and_a_named_file_is_always_linted(repo: Path) -> None:
    got = linted(onnxlint(repo, ".", "--no-respect-gitignore", "--format", "json"))
    assert got == sorted([*OWN, "build/out.onnx", "models/sub/draft.onnx"])
    # a file named on the command line is linted whatever ignores it (no --force-exclude)
    assert linted(onnxlint(repo, "build/out.onnx", "venv/x.onnx", "--format", "json")) == ["build/out.onnx", "venv/x.onnx"]


def test_exclude_and_extend_exclude_on_the_command_line(repo: Path) -> None:
    assert linted(onnxlint(repo, ".", "--extend-exclude", "exports/legacy,keep.onnx", "--format", "json")) == \
        ["exports/new.onnx", "models/a.onnx", "models/sub/b.onnx"]
    # --exclude replaces the defaults: venv/ and node_modules/ are walked again, hidden folders stay out
    got = linted(onnxlint(repo, ".", "--exclude", ".*/", "--format", "json"))
    assert "venv/x.onnx" in got and "node_modules/pkg/n.onnx" in got and not any(g.startswith(".") for g in got)


@pytest.mark.parametrize("kind", ["pyproject", "yaml"])
def test_excludes_in_the_config(repo: Path, kind: str) -> None:
    if kind == "pyproject":
        (repo / "pyproject.toml").write_text('[tool.onnxlint]\nextend-exclude = ["exports/legacy"]\nforce-exclude = true\n')
    else:
        (repo / ".onnxlint.yaml").write_text("extend-exclude: [exports/legacy]\nforce-exclude: true\n")
    assert linted(onnxlint(repo, ".", "--format", "json")) == [g for g in OWN if "legacy" not in g]
    # a config's patterns are relative to its own folder, whichever folder the run starts in
    assert linted(onnxlint(repo / "exports", ".", "--format", "json")) == ["new.onnx"]
    # force-exclude from the config: files named one by one (as pre-commit names them) honour the excludes
    proc = onnxlint(repo, "exports/legacy/old.onnx", "exports/new.onnx", "venv/x.onnx", "--format", "json")
    assert linted(proc) == ["exports/new.onnx"]


def test_force_exclude_as_pre_commit_runs_it(repo: Path) -> None:
    """pre-commit passes every staged .onnx by name; the hook's --force-exclude keeps the excludes in force."""
    named = ["exports/legacy/old.onnx", "venv/x.onnx", ".cache/c.onnx", "models/a.onnx"]
    proc = onnxlint(repo, "--force-exclude", "--extend-exclude", "exports/legacy", *named)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("OLX012") == 1 and "models/a.onnx:input:x: warning: OLX012" in proc.stdout
    # every file named is excluded: nothing to do is not a failure, and the user is told why
    proc = onnxlint(repo, "--force-exclude", "venv/x.onnx")
    assert proc.returncode == 0 and "every file given is excluded" in proc.stderr
    import yaml

    hooks = yaml.safe_load((Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text())
    entries = {hk["id"]: hk["entry"].split() for hk in hooks}
    assert all("--force-exclude" in entry for entry in entries.values()) and "--fix" in entries["onnxlint-fix"]


def test_a_folder_with_only_excluded_models_says_why(repo: Path) -> None:
    proc = onnxlint(repo, "build")  # a folder named on the command line is walked, ignored or not
    assert proc.returncode == 1 and "build/out.onnx" in proc.stdout
    proc = onnxlint(repo, ".", "--exclude", "*.onnx")
    assert proc.returncode == 2
    assert ("no .onnx files found under this directory: 1 folder and 11 models left out (.gitignore, exclude "
            "pattern '*.onnx'); name a file to lint it anyway") in proc.stderr


def test_outside_a_repository_no_gitignore_applies(tmp_path: Path) -> None:
    _model(tmp_path / "build" / "m.onnx")
    (tmp_path / ".gitignore").write_text("build/\n")
    assert linted(onnxlint(tmp_path, ".", "--format", "json")) == ["build/m.onnx"]


def test_a_git_lfs_pointer_is_its_own_error_with_how_to_fetch(tmp_path: Path) -> None:
    _model(tmp_path / "real.onnx")
    (tmp_path / "big.onnx").write_text(LFS_POINTER)
    proc = onnxlint(tmp_path, ".")
    # an error finding (exit 1): a gate never passes on a model it did not see; not "corrupt", not exit 2
    assert proc.returncode == 1, proc.stderr
    assert ("big.onnx: error: OLX009 a Git LFS pointer to a 94.3 MB object, not the model: its LFS object was "
            "not fetched") in proc.stdout
    assert "hint: git lfs install && git lfs pull (GitHub Actions: actions/checkout with `lfs: true`)" in proc.stdout
    assert "corrupt" not in proc.stdout + proc.stderr and proc.stderr == ""
    # --fail-on error still fails; ignoring the rule (pointers expected) passes the real model's warning only
    assert onnxlint(tmp_path, ".", "--fail-on", "error").returncode == 1
    assert onnxlint(tmp_path, ".", "--fail-on", "error", "--ignore", "OLX009").returncode == 0
    # commands that need the model refuse it in one line, with the same way out
    proc = onnxlint(tmp_path, "placement", "big.onnx")
    assert proc.returncode == 2 and "a Git LFS pointer to a 94.3 MB object, not the model: fetch the LFS objects: " \
        "git lfs install && git lfs pull" in proc.stderr and "Traceback" not in proc.stderr


def test_fix_of_a_git_lfs_pointer_says_it_was_not_fixed(tmp_path: Path) -> None:
    """`--fix` in a checkout whose LFS objects were not pulled printed OLX009 and nothing of the fix: whether the
    file was fixed was the user's guess. One note per pointer says it was not, and why; the exit code is the
    lint's (1: the finding), the pointer untouched; `--ignore OLX009` (pointers expected) says nothing of it."""
    _model(tmp_path / "real.onnx")
    (tmp_path / "big.onnx").write_text(LFS_POINTER)
    note = ("big.onnx: {}fix not written: the file is a Git LFS pointer, not the model (OLX009); fix it once its "
            "LFS object is fetched (git lfs install && git lfs pull)\n")
    for args, out, prefix in (((), "stdout", "note: "), (("--format", "json"), "stderr", "")):
        proc = onnxlint(tmp_path, "big.onnx", "real.onnx", "--fix", *args)
        assert proc.returncode == 1 and getattr(proc, out).count(note.format(prefix)) == 1, proc.stdout + proc.stderr
        assert "LFS" not in "".join(ln for ln in (proc.stdout + proc.stderr).splitlines(True) if "real.onnx" in ln)
        assert (tmp_path / "big.onnx").read_text() == LFS_POINTER
    proc = onnxlint(tmp_path, "big.onnx", "--fix", "--ignore", "OLX009")
    assert proc.returncode == 0 and "LFS" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_external_data_held_as_a_git_lfs_pointer_says_so_with_how_to_fetch(tmp_path: Path) -> None:
    """Weights in LFS, the model in git: the data file a checkout without LFS holds is a pointer. OLX003 called it
    'is 131 bytes, tensor needs bytes 0..4096', never what it is or how to fetch it."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    w = numpy_helper.from_array(np.ones((32, 32), np.float32), "w")
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g", [vi("x", TensorProto.FLOAT, [1, 32])],
                     [vi("y", TensorProto.FLOAT, [1, 32])], [w])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    (tmp_path / "m.onnx.data").write_text(LFS_POINTER)
    proc = onnxlint(tmp_path, "m.onnx")
    assert proc.returncode == 1 and ("OLX003 1 initializer(s) lack their external data: external data file "
                                     "'m.onnx.data' is a Git LFS pointer to a 94.3 MB object, not the data: fetch the "
                                     "LFS objects: git lfs install && git lfs pull") in proc.stdout, proc.stdout
    (tmp_path / "m.onnx.data").write_bytes(b"\0" * 100)  # short, and no pointer: as before
    assert "'m.onnx.data' is 100 bytes, tensor needs bytes 0..4096" in onnxlint(tmp_path, "m.onnx").stdout


def test_a_baseline_never_records_a_model_it_did_not_see(tmp_path: Path) -> None:
    """A baseline recorded in a checkout without LFS objects held every model's OLX009: from then on each run
    passed every model unlinted. A pointer finding is never recorded nor marked as recorded."""
    (tmp_path / "big.onnx").write_text(LFS_POINTER)
    _model(tmp_path / "real.onnx")
    alone = onnxlint(tmp_path, "real.onnx", "--baseline", "a.json", "--update-baseline")
    proc = onnxlint(tmp_path, ".", "--baseline", "b.json", "--update-baseline")
    assert proc.returncode == 0 and alone.stderr.split(":")[-1] == proc.stderr.split(":")[-1], proc.stderr  # real.onnx's
    proc = onnxlint(tmp_path, ".", "--baseline", "b.json")
    assert proc.returncode == 1 and "big.onnx: error: OLX009" in proc.stdout and "OLX012" not in proc.stdout


def test_the_action_example_and_readme_check_out_lfs_objects() -> None:
    root = Path(__file__).resolve().parent.parent
    workflow = (root / "docs" / "github-actions.yml").read_text()
    assert "lfs: true" in workflow
    assert "lfs: true" in (root / "README.md").read_text() and "git lfs pull" in (root / "README.md").read_text()
