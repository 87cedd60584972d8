"""Issue 40, class 1: no path from a repository is ever read as an option, globs are expanded by onnxlint, the
Action's inputs never reach a shell, and the Action never writes outside the workspace or through a link.

The attack: a committed file named `--baseline=b.onnx` (or `-o.onnx`). pre-commit appends file names after the
hook's arguments, so without an end-of-options marker the hook would write every finding into a baseline and
pass. Every mode is tried: the CLI (file, folder, glob, --jobs, placement, verify), the real pre-commit tool on the
hooks of .pre-commit-hooks.yaml (with the user's own `args:` too), and the Action's steps as a runner runs them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import onnx
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from runners import git_repo, hooks, local_hook, pre_commit, pre_commit_installed, run_action

HOSTILE = ("--baseline=b.onnx", "-o.onnx", "--fix.onnx")


def _dropout(name: str = "d") -> onnx.ModelProto:
    """A training-mode Dropout: an error (OLX010) with a safe fix."""
    return make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name=name)],
                      [vi("x", T.FLOAT, [2]), vi("r", T.FLOAT, []), vi("t", T.BOOL, [])], [vi("y", T.FLOAT, [2])], opset=13)


def _hostile_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in HOSTILE:
        onnx.save(_dropout(), folder / name)
    return folder


def _nothing_injected(where: Path) -> None:
    """No baseline written, no report or fixed model written under an option's name."""
    for p in where.rglob("*"):
        assert p.name not in ("b.onnx", ".onnx") and not p.name.endswith(".tmp"), p


# ----------------------------------------------------------------------------- the CLI: `--` and globs


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--no-cache"], ["--fix", "--diff"]])
def test_after_the_end_of_options_marker_every_argument_is_a_path(tmp_path, cli, monkeypatch, extra):
    monkeypatch.chdir(_hostile_folder(tmp_path / "repo"))
    rc, out, err = cli(*extra, "--", *HOSTILE)
    assert rc == 1, err
    for name in HOSTILE:
        assert name in out
    _nothing_injected(tmp_path)
    onnx.save(_dropout(), tmp_path / "repo" / "plain.onnx")
    rc, out, err = cli("plain.onnx", *extra, "--", "-o.onnx", "--baseline=b.onnx")  # paths before it too
    assert rc == 1 and "-o.onnx" in out and "plain.onnx" in out, err
    rc, out, err = cli(*extra, "--", "--")  # a second marker is a path too (here: none of that name)
    assert rc == 2 and "--: no such file or directory" in err
    _nothing_injected(tmp_path)


def test_subcommands_take_the_marker_too(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(_hostile_folder(tmp_path / "repo"))
    rc, out, err = cli("placement", "--format", "json", "--", *HOSTILE)
    assert rc == 0 and [r["filename"] for r in json.loads(out)] == list(HOSTILE), err
    rc, out, err = cli("verify", "--providers", "CPUExecutionProvider", "--format", "json", "--", "-o.onnx")
    assert json.loads(out)[0]["filename"] == "-o.onnx", err
    rc, out, err = cli("placement", "--")
    assert rc == 2 and "models" in err  # a path is still required


def test_a_file_named_like_a_subcommand_after_the_marker_is_a_path(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    onnx.save(_dropout(), tmp_path / "verify")
    rc, out, err = cli("--", "verify")
    assert rc == 1 and "verify:d: error: OLX010" in out, out + err


def test_globs_are_expanded_by_onnxlint_with_recursion(tmp_path, cli, monkeypatch):
    for rel in ("models/a.onnx", "models/x/m.onnx", "models/x/y/c.onnx", "models/x/y/z/--baseline=d.onnx",
                "models/.hidden/e.onnx"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        onnx.save(_dropout(), tmp_path / rel)
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli("--format", "json", "--", "models/**/*.onnx")
    assert rc == 1, err
    seen = {f["filename"] for f in json.loads(out)}
    assert seen == {"models/a.onnx", "models/x/m.onnx", "models/x/y/c.onnx", "models/x/y/z/--baseline=d.onnx"}
    rc, out, err = cli("--format", "json", "models/*/*.onnx")  # one level: as a shell would, no deeper
    assert {f["filename"] for f in json.loads(out)} == {"models/x/m.onnx"}
    _nothing_injected(tmp_path)


def test_a_file_named_like_the_pattern_does_not_stand_in_for_its_matches(tmp_path, cli, monkeypatch):
    """A committed clean model named `models/*.onnx` (or a folder `exports/**`) made the pattern a plain path:
    only the decoy was linted and every real model passed unseen. The pattern is expanded, the decoy linted too."""
    monkeypatch.chdir(tmp_path)
    for rel in ("models/bad.onnx", "exports/deep/bad.onnx"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        onnx.save(_dropout(), tmp_path / rel)
    clean = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [onnx.helper.make_tensor_value_info("x", 1, [1])],
        [onnx.helper.make_tensor_value_info("y", 1, [1])]), opset_imports=[onnx.helper.make_opsetid("", 17)])
    clean.ir_version = 8
    onnx.save(clean, tmp_path / "models" / "*.onnx")
    (tmp_path / "exports" / "**").mkdir()
    onnx.save(clean, tmp_path / "exports" / "**" / "*.onnx")
    rc, out, err = cli("--no-cache", "--format", "json", "--", "models/*.onnx", "exports/**/*.onnx")
    assert rc == 1 and {f["filename"] for f in json.loads(out) if f["code"] == "OLX010"} == {
        "models/bad.onnx", "exports/deep/bad.onnx"}, out + err
    rc, out, err = cli("--no-cache", "--", "models/*.onnx", "exports/**/*.onnx", "models/[b]ad.onnx")
    assert "in 4 files" in out, out  # the decoys too, each once; `[b]` is a class: bad.onnx, named again
    (tmp_path / "only[1].onnx").write_bytes((tmp_path / "models" / "bad.onnx").read_bytes())
    rc, out, err = cli("--no-cache", "--", "only[1].onnx")  # a file of that name, matching nothing as a pattern
    assert rc == 1 and "only[1].onnx:d: error: OLX010" in out, out + err


def _relu(doc: str = "") -> onnx.ModelProto:
    m = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, ["N", 2])], [vi("y", T.FLOAT, ["N", 2])])
    m.graph.doc_string = doc
    return m


def test_a_walked_file_named_like_a_pattern_is_that_file_only(tmp_path, cli, monkeypatch):
    """The CLI's files went through expand_paths again inside the lint: a walked `a[1].onnx` read as a pattern
    added `a1.onnx`, and a cached run, pairing its misses with the reports by position, put b.onnx's error on
    another file: 0 findings, exit 0. Files are expanded once; a folder a pattern names is walked."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    for name in ("a[1].onnx", "a1.onnx", "b.onnx"):
        onnx.save(_relu(), tmp_path / "models" / name)
    assert cli("models")[0] == 0  # recorded in the cache
    onnx.save(_dropout(), tmp_path / "models" / "b.onnx")
    onnx.save(_relu("changed"), tmp_path / "models" / "a[1].onnx")
    rc, out, err = cli("--format", "json", "models")
    assert rc == 1 and {f["filename"] for f in json.loads(out) if f["code"] == "OLX010"} == {"models/b.onnx"}, out + err
    rc, out, err = cli("--no-cache", "--extend-exclude", "a1.onnx", "--format", "json", "models")
    assert "models/a1.onnx" not in {f["filename"] for f in json.loads(out)}, out
    os.symlink("../.git/annex/objects/Xx/SHA256E-s9--ab.onnx", tmp_path / "models" / "c[1].onnx")
    rc, out, err = cli("--no-cache", "models")
    assert rc == 2 and "OLX010" in out and "models/c[1].onnx: a git-annex link" in err, out + err
    (tmp_path / "models" / "c[1].onnx").unlink()
    (tmp_path / "exp").mkdir()
    onnx.save(_dropout(), tmp_path / "exp" / "m.onnx")
    rc, out, err = cli("--no-cache", "--format", "json", "e*")  # a folder the pattern names: walked
    assert rc == 1 and {f["filename"] for f in json.loads(out) if f["code"] == "OLX010"} == {"exp/m.onnx"}, err


def test_pre_commits_file_names_are_never_patterns(tmp_path, cli, monkeypatch):
    """pre-commit passes staged files by name: `a[1].onnx` also linted (and, with the fix hook, rewrote) an
    unstaged `a1.onnx` that the name matches as a pattern."""
    monkeypatch.chdir(tmp_path)
    onnx.save(_relu(), tmp_path / "a[1].onnx")
    onnx.save(_dropout(), tmp_path / "a1.onnx")
    rc, out, err = cli("--no-cache", "--pre-commit", "--force-exclude", "--format", "json", "--", "a[1].onnx")
    assert rc == 0 and "a1.onnx" not in out, out + err
    assert cli("--no-cache", "--format", "json", "--", "a[1].onnx")[0] == 1  # on the command line: a pattern too


# ----------------------------------------------------------------------------- pre-commit
# (these and the Action's: `once`, the hook and action.yml bring the same code as the CLI tests above)


def test_every_hook_ends_its_args_with_the_marker_and_requires_it():
    for hk in hooks().values():
        assert hk["args"][-1] == "--", hk
        assert "--pre-commit" in hk["entry"].split(), hk  # no `--` left by a user's own args: the hook refuses


def _precommit(tmp_path: Path, hooks_used: list[dict]) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    _hostile_folder(repo)
    onnx.save(_dropout(), repo / "clean name.onnx")
    return repo, git_repo(repo, hooks_used, tmp_path)


@pytest.mark.once
@pre_commit_installed
def test_pre_commit_passes_a_committed_file_named_like_an_option_as_a_path(tmp_path):
    repo, env = _precommit(tmp_path, [local_hook("onnxlint")])
    run = pre_commit(repo, env)
    assert run.returncode == 1, run.stdout + run.stderr
    for name in HOSTILE:
        assert f"{name}:d: error: OLX010" in run.stdout, run.stdout
    _nothing_injected(repo)


@pytest.mark.once
@pre_commit_installed
def test_a_users_own_args_without_the_marker_fail_the_hook_not_open_it(tmp_path):
    repo, env = _precommit(tmp_path, [local_hook("onnxlint", ["--target", "ort-cuda"])])
    run = pre_commit(repo, env)
    assert run.returncode != 0 and "OLX010" not in run.stdout, run.stdout
    assert "must end with '--'" in run.stdout, run.stdout
    _nothing_injected(repo)
    repo2, env2 = _precommit(tmp_path / "2", [local_hook("onnxlint", ["--target", "ort-cuda", "--"])])
    run = pre_commit(repo2, env2)
    assert run.returncode == 1 and "--baseline=b.onnx:d: error: OLX010" in run.stdout, run.stdout
    _nothing_injected(repo2)


@pytest.mark.once
@pre_commit_installed
def test_the_fix_hook_fixes_files_named_like_options_in_place(tmp_path):
    repo, env = _precommit(tmp_path, [local_hook("onnxlint-fix")])
    before = (repo / "-o.onnx").read_bytes()
    run = pre_commit(repo, env)
    assert "wrote -o.onnx (dropout-inference)" in run.stdout, run.stdout
    assert (repo / "-o.onnx").read_bytes() != before
    _nothing_injected(repo)


# ----------------------------------------------------------------------------- the Action


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for rel in ("models/top.onnx", "models/a/mid.onnx", "models/a/b/deep.onnx", "models/a/b/--baseline=b.onnx"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        onnx.save(_dropout(), ws / rel)
    return ws


def _sarif_uris(path: Path) -> set[str]:
    doc = json.loads(path.read_text())
    return {loc["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"] for loc in r["locations"]}


@pytest.mark.once
def test_the_action_expands_double_star_itself_and_never_reads_a_path_as_an_option(tmp_path):
    ws = _workspace(tmp_path)
    runs, outputs = run_action(tmp_path, ws, paths="models/**/*.onnx")
    assert outputs["exit-code"] == "1" and runs[-1].returncode == 1, [r.stderr for r in runs]
    assert _sarif_uris(ws / "onnxlint.sarif") == {"models/top.onnx", "models/a/mid.onnx", "models/a/b/deep.onnx",
                                                  "models/a/b/--baseline%3Db.onnx"}
    assert runs[0].stdout.count("::error file=") == 4  # the annotations: every model, the deep ones too
    _nothing_injected(ws)


@pytest.mark.once
@pytest.mark.parametrize("inputs", [
    {"paths": "models/ $(touch pwned) `touch pwned` ; touch pwned"},
    {"paths": "models/", "args": "--fail-on error $(touch pwned) ; touch pwned"},
    {"paths": "models/\ntouch pwned", "args": "'--ignore' \"OLX0\""},
])
def test_no_action_input_reaches_a_shell(tmp_path, inputs):
    ws = _workspace(tmp_path)
    runs, outputs = run_action(tmp_path, ws, **inputs)
    assert not (ws / "pwned").exists() and not list(tmp_path.rglob("pwned"))
    assert outputs.get("exit-code") == "2" or runs[0].returncode == 2  # unknown paths or options: a usage error
    assert "Traceback" not in runs[0].stderr


@pytest.mark.once
def test_a_quoted_path_with_blanks_is_one_path(tmp_path):
    ws = _workspace(tmp_path)
    onnx.save(_dropout(), ws / "my model.onnx")
    runs, outputs = run_action(tmp_path, ws, paths="'my model.onnx'\nmodels/top.onnx")
    assert outputs["exit-code"] == "1", runs[0].stderr
    assert _sarif_uris(ws / "onnxlint.sarif") == {"my%20model.onnx", "models/top.onnx"}


@pytest.mark.once
@pytest.mark.parametrize("how", ["link", "outside", "absolute", "folder-link", "args", "args-cluster", "args-cluster-split"])
def test_the_action_never_writes_outside_the_workspace_or_through_a_link(tmp_path, how):
    ws = _workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    sarif = {"link": "onnxlint.sarif", "outside": "../outside/x.sarif", "absolute": str(outside / "x.sarif"),
             "folder-link": "reports/x.sarif"}.get(how, "onnxlint.sarif")
    if how == "link":
        os.symlink(outside / "stolen.sarif", ws / "onnxlint.sarif")
    if how == "folder-link":
        os.symlink(outside, ws / "reports")
    # argparse would take --out for --output, and -qo FILE (or -qoFILE) for -q -o FILE: the annotations run, to which
    # the step adds no -o, wrote its lines outside the workspace
    args = {"args": f"--out={outside / 'x.sarif'}", "args-cluster": f"-qo{outside / 'x.txt'}",
            "args-cluster-split": f"-qo {outside / 'x.txt'}"}.get(how, "")
    runs, outputs = run_action(tmp_path, ws, paths="models/", **{"sarif-file": sarif, "args": args})
    assert list(outside.iterdir()) == [], list(outside.iterdir())
    assert runs[0].returncode == 2 and "exit-code" not in outputs
    said = "input args: -o/--output is not allowed" if how.startswith("args") else "input sarif-file"
    assert runs[0].stderr.count("\n") == 1 and f"onnxlint action: error: {said}" in runs[0].stderr, runs[0].stderr


@pytest.mark.once
def test_args_may_not_move_the_end_of_options(tmp_path):
    ws = _workspace(tmp_path)
    runs, outputs = run_action(tmp_path, ws, paths="models/", args="--")
    assert runs[0].returncode == 2 and "'--' is not allowed" in runs[0].stderr


@pytest.mark.parametrize("args", ["--fix", "--unsafe-fixes", "--diff", "--upd", "--list-rules", "--explain OLX010",
                                  "--show-config", "--version", "-qh", pytest.param("--fail-on error", id="allowed")])
def test_args_may_not_turn_the_lint_into_something_else(tmp_path, args):
    """`args: --fix` made the step's -o name the fixed model (onnxlint.sarif became an ONNX file) and the annotations
    run fixed the checkout's models, exit-code 0 on a model with an error; `--list-rules`, `--explain` or
    `--version` answered without linting, exit 0 and no SARIF file. Each is refused, one line, before any run."""
    ws = _workspace(tmp_path)
    before = {p: p.read_bytes() for p in ws.rglob("*.onnx")}
    runs, outputs = run_action(tmp_path, ws, paths="models/", args=args)
    assert {p: p.read_bytes() for p in ws.rglob("*.onnx")} == before
    if args.startswith("--fail-on"):
        assert outputs["exit-code"] == "1" and json.loads((ws / "onnxlint.sarif").read_text())["runs"]
        return
    assert runs[0].returncode == 2 and "exit-code" not in outputs and not (ws / "onnxlint.sarif").exists()
    assert runs[0].stderr.count("\n") == 1 and "is not allowed: the action lints and reports" in runs[0].stderr
