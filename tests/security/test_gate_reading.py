"""Issue 40, class 4: every file onnxlint reads goes through one guard: regular files only (no /dev/zero, FIFO or
/dev/stdin), a size limit, bounded parsing, one clear line and exit 2. Each attack runs as a bounded child
process (tests/security/bounded.py): a regression fails here within seconds instead of hanging CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest
from bounded import onnxlint
from conftest import CAST_RULE, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.support import reading

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, /dev/zero and /dev/stdin are POSIX")


def _repo(tmp_path: Path, n: int = 1) -> Path:
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    for k in range(n):
        m = make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")],
                       [vi("x", T.FLOAT, [2]), vi("r", T.FLOAT, []), vi("t", T.BOOL, [])], [vi("y", T.FLOAT, [2])], opset=13)
        onnx.save(m, repo / "models" / f"m{k:02d}.onnx")
    return repo


def _one_line_exit_2(run: subprocess.CompletedProcess, *said: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    for s in said:
        assert s in run.stderr, run.stderr


def _sparse(p: Path, size: int = 1 << 34) -> None:
    with open(p, "wb") as fh:
        fh.truncate(size)  # 16 GiB, no block written


BASELINES = {
    "dev-zero": (lambda p: os.symlink("/dev/zero", p), "not a regular file (a character device)"),
    "fifo": (lambda p: os.mkfifo(p), "not a regular file (a FIFO)"),
    "dev-stdin": (lambda p: os.symlink("/dev/stdin", p), "not a regular file (a FIFO)"),
    "folder": (lambda p: p.mkdir(), "is a directory"),
    "huge": (_sparse, "over the 16 MiB limit for a baseline"),
    "nested": (lambda p: p.write_text("[" * 200_000 + "]" * 200_000), "not an onnxlint baseline"),
    "nested-object": (lambda p: p.write_text('{"a":' * 50_000 + "1" + "}" * 50_000), "not an onnxlint baseline"),
    "not-json": (lambda p: p.write_bytes(b"\xff\xfe{"), "cannot read the baseline"),
}


# every kind on one file; the baseline is read once per run whatever the run lints, so the folder and the pool
# modes are tried with a device and a nested document only
CASES = [(kind, "file") for kind in BASELINES] + [pytest.param(kind, mode, marks=pytest.mark.once)
                                                  for kind in ("dev-zero", "nested") for mode in ("folder", "jobs")]


@pytest.mark.parametrize("kind, mode", CASES)
def test_a_baseline_that_is_no_regular_file_or_too_big_or_nested_is_one_line(tmp_path, kind, mode):
    repo = _repo(tmp_path, 16 if mode == "jobs" else 2)
    make, said = BASELINES[kind]
    make(repo / "baseline.json")
    paths = {"file": ["models/m00.onnx"], "folder": ["models"], "jobs": ["models", "--jobs", "2"]}[mode]
    stdin = subprocess.PIPE if kind == "dev-stdin" else subprocess.DEVNULL  # a pipe that never ends
    run = onnxlint(*paths, "--baseline", "baseline.json", cwd=repo, stdin=stdin, timeout=90)
    _one_line_exit_2(run, "baseline.json: cannot read the baseline:" if kind not in ("nested", "nested-object")
                     else "baseline.json:", said)


@pytest.mark.parametrize("what", ["config", "rules", "model"])
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "dev-stdin", "huge"])
def test_config_rules_and_models_go_through_the_same_guard(tmp_path, what, kind):
    repo = _repo(tmp_path)
    name = {"config": "cfg.yaml", "rules": "r.yaml", "model": "x.onnx"}[what]
    target = repo / name
    make, said = BASELINES[kind]
    make(target)
    args = {"config": ["models", "--config", name], "rules": ["models", "--rules", name], "model": [name]}[what]
    run = onnxlint(*args, cwd=repo, stdin=subprocess.PIPE if kind == "dev-stdin" else subprocess.DEVNULL, timeout=90)
    if what == "model" and kind == "huge":
        said = "over protobuf's 2 GiB limit"
    elif kind == "huge":
        said = "more than 1 MiB" if what == "rules" else "over the 16 MiB limit"  # the rule files' budget, together
    _one_line_exit_2(run, name, said)


def test_a_genai_config_that_is_a_fifo_or_dev_zero_states_nothing_and_never_blocks(tmp_path):
    repo = _repo(tmp_path)
    os.mkfifo(repo / "models" / "genai_config.json")
    run = onnxlint("models", "--no-cache", cwd=repo)
    assert run.returncode == 1 and "OLX010" in run.stdout, run.stderr
    os.unlink(repo / "models" / "genai_config.json")
    os.symlink("/dev/zero", repo / "models" / "genai_config.json")
    run = onnxlint("models", cwd=repo)
    assert run.returncode == 1 and "OLX010" in run.stdout, run.stderr


def test_a_cache_entry_that_is_a_fifo_is_a_miss(tmp_path):
    from onnxlint.cache import folder

    cache = tmp_path / "cache"
    assert folder.write_entry(cache, cache / "v1" / "ab" / "x.json", b"{}")
    os.mkfifo(cache / "v1" / "ab" / "fifo.json")
    os.symlink("/dev/zero", cache / "v1" / "ab" / "zero.json")
    assert folder.load_entry(cache, cache / "v1" / "ab" / "fifo.json", "k") is None
    assert folder.load_entry(cache, cache / "v1" / "ab" / "zero.json", "k") is None
    with pytest.raises(FileNotFoundError):
        folder.load_entry(cache, cache / "v1" / "ab" / "gone.json", "k")


def test_the_guard_reads_a_regular_file_to_its_size_and_refuses_the_rest(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    assert reading.read_regular(p, reading.within(3, "x")) == b"abc"
    with pytest.raises(reading.Refused, match="3 bytes: over the 2 bytes limit for x"):
        reading.read_regular(p, reading.within(2, "x"))
    for bad, said in (("/dev/zero", "character device"), (tmp_path, "is a directory"), (tmp_path / "no", "no such file")):
        with pytest.raises(reading.Refused, match=said):
            reading.read_regular(bad, reading.within(1 << 20, "x"))


SECRETS = {".onnxlint.yaml": "machine github.com login bot password ghp_SECRETSECRETSECRET\n",
           "pyproject.toml": 'tool = "ghp_SECRETSECRETSECRET"\n'}


# a checkout without .git (a source archive, a CI checkout made without git): the working folder bounds it
NO_GIT = pytest.param(False, id="no .git")
WHERE = {True: "outside the repository", False: "outside the working folder, with no repository around it"}


@pytest.mark.parametrize("git", [True, NO_GIT])
@pytest.mark.parametrize("mode", ["file", "folder", "subfolder"])
@pytest.mark.parametrize("name", sorted(SECRETS))
def test_a_config_file_linked_out_of_the_repository_is_never_read(tmp_path, name, mode, git):
    """A committed `.onnxlint.yaml` (or pyproject.toml) that is a symbolic link to a file of the runner's (a .netrc,
    a token file): reading it put up to 57 of its characters into the error on the CI log. It is refused unread,
    without a .git folder too (there the owner check passed it: the runner owns its .netrc)."""
    repo = _repo(tmp_path)
    if git:
        (repo / ".git").mkdir()
    secret = tmp_path / "home" / "netrc"
    secret.parent.mkdir()
    secret.write_text(SECRETS[name])
    where = repo / "models" if mode == "subfolder" else repo
    os.symlink(secret, where / name)
    run = onnxlint("--no-cache", "--", "models/m00.onnx" if mode != "folder" else "models", cwd=repo)
    _one_line_exit_2(run, name, WHERE[git])
    assert "SECRET" not in run.stdout + run.stderr


@pytest.mark.parametrize("git", [True, NO_GIT])
def test_a_config_file_linked_inside_the_repository_still_applies(tmp_path, git):
    repo = _repo(tmp_path)
    if git:
        (repo / ".git").mkdir()
    (repo / "shared.yaml").write_text('ignore: ["OLX"]\n')
    os.symlink("../shared.yaml", repo / "models" / ".onnxlint.yaml")
    run = onnxlint("--no-cache", "--", "models/m00.onnx", cwd=repo)
    assert run.returncode == 0 and "OLX010" not in run.stdout, run.stderr


RULE_SECRET = "- id: ghp_SECRETSECRETSECRET\n  severity: error\n  scope: node\n  match: {}\n"


@pytest.mark.parametrize("git", [True, NO_GIT])
@pytest.mark.parametrize("how", ["up", "absolute", "root", "linked folder", "linked file"])
def test_rules_a_committed_config_names_outside_the_repository_are_never_read(tmp_path, how, git):
    """A committed config's `rules` that lead out of the repository (`../x`, an absolute path, `/`, a linked
    folder, or a rule file in a committed folder that links out): the loader read the runner's YAML files and
    quoted one (the id of its first rule) into the error on the CI log, and `/` walked the whole file system. Each
    is refused unread, naming the config or the link; --rules on the command line still reads them."""
    repo = _repo(tmp_path)
    if git:
        (repo / ".git").mkdir()
    outside = tmp_path / "home" / "rules"
    outside.mkdir(parents=True)
    (outside / "secret.yaml").write_text(RULE_SECRET)
    value = {"up": "../home/rules", "absolute": str(outside), "root": "/", "linked folder": "r",
             "linked file": "r"}[how]
    if how == "linked folder":
        os.symlink(outside, repo / "r")
    elif how == "linked file":
        (repo / "r").mkdir()
        os.symlink(outside / "secret.yaml", repo / "r" / "x.yaml")
    (repo / "pyproject.toml").write_text(f"[tool.onnxlint]\nrules = {json.dumps(value)}\n")
    run = onnxlint("--no-cache", "--", "models/m00.onnx", cwd=repo)
    _one_line_exit_2(run, WHERE[git], "x.yaml" if how == "linked file" else "pyproject.toml")
    assert "SECRET" not in run.stdout + run.stderr
    (repo / "pyproject.toml").unlink()
    run = onnxlint("--no-cache", "--rules", str(outside), "--", "models/m00.onnx", cwd=repo)
    _one_line_exit_2(run, "secret.yaml")  # the user's own choice: read (and its defect said)


def test_rules_a_committed_config_names_inside_the_repository_still_apply(tmp_path):
    """Rules in the repository, a rules folder linked inside it included, are read as before."""
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()
    (repo / "shared").mkdir()
    (repo / "shared" / "mine.yaml").write_text(CAST_RULE.replace("{op: Cast}", "{op: Dropout}"))
    os.symlink("shared", repo / "r")
    (repo / "models" / "pyproject.toml").write_text('[tool.onnxlint]\nrules = "../r"\n')
    run = onnxlint("--no-cache", "--", "models/m00.onnx", cwd=repo)
    assert run.returncode == 1 and "XTR001" in run.stdout, (run.stdout, run.stderr)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
@pytest.mark.parametrize("mode", ["file", "folder"])
def test_a_committed_result_cache_is_never_read(tmp_path, mode):
    """The default cache folder is .onnxlint_cache in the current folder: in a CI checkout, the repository's. A
    contributor lints a bad model, edits the entry to say it has no findings and commits the folder (`git add -f`):
    the gate passed the model. A cache folder whose tag git tracks is neither read nor written."""
    repo = _repo(tmp_path, 1 if mode == "file" else 2)
    _git(repo, "init", "-q")
    paths = ["models/m00.onnx"] if mode == "file" else ["models"]
    default_cache = {"ONNXLINT_CACHE_DIR": ""}
    assert onnxlint("--", *paths, cwd=repo, env=default_cache).returncode == 1
    entries = [p for p in (repo / ".onnxlint_cache").rglob("*.json") if "rulesets" not in p.parts]
    assert entries
    for p in entries:
        data = json.loads(p.read_text())
        for report in [data["report"]] if "report" in data else [f["report"] for f in data["files"]]:
            report["findings"] = []
        p.write_text(json.dumps(data))
    assert onnxlint("--", *paths, cwd=repo, env=default_cache).returncode == 0  # the contributor's own folder
    _git(repo, "add", "-f", "--", ".")
    _git(repo, "commit", "-q", "-m", "models")
    before = sorted(p for p in (repo / ".onnxlint_cache").rglob("*"))
    run = onnxlint("--", *paths, cwd=repo, env=default_cache)
    assert run.returncode == 1 and "OLX010" in run.stdout, (run.stdout, run.stderr)
    assert sorted(p for p in (repo / ".onnxlint_cache").rglob("*")) == before  # nothing written there either


@pytest.mark.parametrize("what", ["yaml-config", "pyproject", "rule-file", "hex", "sexagesimal"])
def test_a_number_past_pythons_digit_limit_is_one_line_naming_the_file(tmp_path, what):
    """YAML and TOML integers of 5,000 digits: Python refuses to convert past 4,300 (ValueError), which was an
    internal error; it is the file's error, one line, exit 2."""
    repo = _repo(tmp_path)
    digits = "1" * 5000
    name, text, args = {
        "yaml-config": (".onnxlint.yaml", f"ort-version: {digits}\n", []),
        "pyproject": ("pyproject.toml", f"[tool.onnxlint]\nort-version = {digits}\n", []),
        "rule-file": ("r.yaml", f"- id: XTR001\n  name: x\n  severity: {digits}\n", ["--rules", "r.yaml"]),
        "hex": (".onnxlint.yaml", f"ort-version: 0x{digits}\n", []),
        "sexagesimal": (".onnxlint.yaml", "ort-version: 1" + ":11" * 3000 + "\n", []),
    }[what]
    (repo / name).write_text(text)
    run = onnxlint("--no-cache", *args, "--", "models/m00.onnx", cwd=repo)
    _one_line_exit_2(run, name, "cannot be read")


def _external_dropout(folder: Path, training: bool) -> Path:
    """Dropout whose training_mode (and ratio) are kept in the data file, as an exporter saving every tensor
    externally writes them."""
    import numpy as np
    from onnx import numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"), numpy_helper.from_array(np.array(training), "tm")]
    m = make_model([h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Dropout", ["r", "ratio", "tm"], ["y"], name="drop")],
                   [vi("x", T.FLOAT, [1, 8])], [vi("y", T.FLOAT, [1, 8])], inits, opset=13)
    onnx.save(m, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    return folder / "m.onnx"


@pytest.mark.parametrize("training", [True, False])
def test_small_external_values_are_read_from_the_models_own_data_file(tmp_path, training):
    """A flag kept in the data file (Dropout's training_mode) was unknown to the rules (no OLX010 on a model in
    training mode) and read by the TensorRT prediction relative to the working folder (onnx's to_array): its
    verdict depended on where onnxlint ran, and on a file of the data file's name there. Both read the model's
    own data file now, wherever onnxlint runs from."""
    model = _external_dropout(tmp_path / "repo" / "models", training)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "m.data").write_bytes(b"\x00\x00\x00\x3f" + (b"\x00" if training else b"\x01"))  # the other value
    for cwd in (model.parent, elsewhere, tmp_path):
        run = onnxlint(model, "--format", "json", "--select", "OLX010", cwd=cwd)
        assert [f["code"] for f in json.loads(run.stdout)] == (["OLX010"] if training else []), (cwd, run.stdout, run.stderr)
        run = onnxlint(model, "--format", "json", "--target", "tensorrt", "--select", "OLX300", cwd=cwd)
        assert [f["code"] for f in json.loads(run.stdout)] == (["OLX300"] if training else []), (cwd, run.stdout, run.stderr)
