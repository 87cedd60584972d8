"""Issue 40: the attacks of every class in the two modes a repository reaches without a command line: the real
pre-commit tool running this checkout's hook, and the Action's steps as a runner runs them. One repository holds
a file named like an option, models whose evaluation has no bound (a catastrophic regular expression, a
RoiAlign sampling 10^10 points), and a model whose names carry control, bidi and invisible characters; each run
is bounded by a timeout."""

from __future__ import annotations

import json
import os
import re

import onnx
from attacks import dropout, hostile_model, regex_model, roi_model
from runners import git_repo, local_hook, pre_commit, pre_commit_installed, run_action

RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
                 "\U000e0000-\U000e0fff\ud800-\udfff]")


def _repository(root):
    root.mkdir(parents=True)
    onnx.save(dropout(), root / "--baseline=b.onnx")
    onnx.save(regex_model(), root / "regex.onnx")
    onnx.save(roi_model(), root / "roi.onnx")
    onnx.save(hostile_model(), root / "names.onnx")
    return root


def _no_injection(root):
    assert not [p for p in root.rglob("*") if p.name in ("b.onnx", ".onnx")]


@pre_commit_installed
def test_every_class_through_pre_commit(tmp_path):
    repo = _repository(tmp_path / "repo")
    env = git_repo(repo, [local_hook("onnxlint")], tmp_path)
    run = pre_commit(repo, env)
    assert run.returncode == 1, run.stdout + run.stderr
    out = run.stdout
    assert "--baseline=b.onnx:d: error: OLX010" in out  # a path, not an option
    for name, op in (("regex.onnx", "RegexFullMatch"), ("roi.onnx", "RoiAlign")):  # bounded, said once each
        assert len([x for x in out.splitlines() if x.startswith(f"{name}: note:") and "not evaluated" in x and op in x]) == 1
    assert "PWNED" in out and "\\u200b" in out
    for line in out.splitlines():
        assert not RAW.search(line) and not line.lstrip().startswith("::"), line
    _no_injection(repo)


def test_every_class_through_the_actions_steps(tmp_path):
    ws = _repository(tmp_path / "ws")
    runs, outputs = run_action(tmp_path, ws, paths="*.onnx")
    assert outputs["exit-code"] == "1" and runs[-1].returncode == 1, [r.stderr for r in runs]
    annotations = runs[0].stdout.splitlines()
    assert annotations and all(re.match(r"::(error|warning|notice) file=", x) for x in annotations)
    assert not any(RAW.search(x) for x in annotations)
    doc = json.loads((ws / "onnxlint.sarif").read_text())
    texts = [r["message"]["text"] for r in doc["runs"][0]["results"]]
    assert any("PWNED" in t for t in texts) and not any(RAW.search(t) for t in texts)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"] for loc in r["locations"]}
    assert "--baseline%3Db.onnx" in uris
    _no_injection(ws)
    assert sorted(os.listdir(ws)) == ["--baseline=b.onnx", "names.onnx", "onnxlint.sarif", "regex.onnx", "roi.onnx"]


# the baseline is a file of the repository too (`args: [--baseline, baseline.json, --]`): a committed link to
# /dev/zero stops the hook and the Action's step in one line, exit 2, whatever else the repository holds
def _baseline_repository(root):
    _repository(root)
    os.symlink("/dev/zero", root / "baseline.json")
    return root


def _one_line(text: str) -> str:
    said = [line for line in text.splitlines() if "baseline.json" in line]
    assert len(said) == 1 and "cannot read the baseline: not a regular file (a character device)" in said[0], text
    assert "Traceback" not in text and "internal error" not in text
    return said[0]


@pre_commit_installed
def test_a_baseline_linked_to_dev_zero_through_pre_commit(tmp_path):
    repo = _baseline_repository(tmp_path / "repo")
    env = git_repo(repo, [local_hook("onnxlint", ["--baseline", "baseline.json", "--"])], tmp_path)
    run = pre_commit(repo, env)
    assert run.returncode != 0 and "exit code: 2" in run.stdout, run.stdout + run.stderr
    _one_line(run.stdout)
    _no_injection(repo)


def test_a_baseline_linked_to_dev_zero_through_the_actions_steps(tmp_path):
    ws = _baseline_repository(tmp_path / "ws")
    runs, outputs = run_action(tmp_path, ws, paths="*.onnx", args="--baseline baseline.json")
    assert runs[0].returncode == 2 and outputs["exit-code"] == "2", [r.stderr for r in runs]
    _one_line(runs[0].stderr)
    assert runs[0].stderr.count("\n") == 1, runs[0].stderr
    _no_injection(ws)
