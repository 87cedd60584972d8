"""`uses: ./` of the composite action (action.yml), run step by step as a runner would: install from the
action's own checkout into a fresh venv, lint to SARIF and annotations, hand the exit code on."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _expand(text: str, context: dict[str, str]) -> str:
    def one(m: re.Match) -> str:
        if m.group(1) not in context:
            raise AssertionError(f"the test does not know the expression {m.group(0)}")
        return context[m.group(1)]

    return EXPR.sub(one, text)


def test_action_declares_a_composite_that_installs_from_its_own_checkout():
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = steps[0]
    assert "github.action_path" in json.dumps(install) and "pip install" in install["run"]
    assert "pip install onnxlint" not in json.dumps(action)  # not published: never by name
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"


@pytest.mark.once
@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_uses_dot_runs_its_steps(tmp_path, examples_dir):
    """A repository with two models: the steps install, write a valid SARIF file (one result: the training-mode
    Dropout), print as many annotations and fail with onnxlint's exit code (1: findings)."""
    workspace = tmp_path / "workspace"
    (workspace / "models").mkdir(parents=True)
    for name in ("clean_conv.onnx", "dropout_training.onnx"):
        shutil.copy(examples_dir / name, workspace / "models" / name)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    action_path = tmp_path / "action"  # the action's own checkout: a clone of this one's committed tree
    subprocess.run(["git", "clone", "-q", str(ROOT), str(action_path)], check=True)
    for p in ("action.yml",):  # this checkout's action as it is now, committed or not
        shutil.copy(ROOT / p, action_path / p)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    output = tmp_path / "github_output"
    output.write_text("")
    action = _action()
    inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
    inputs.update({"paths": "models/", "python": sys.executable})
    context = {f"inputs.{k}": v for k, v in inputs.items()} | {"github.action_path": str(action_path)}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RUNNER_TEMP": str(runner_temp),
           "GITHUB_OUTPUT": str(output), "ONNXLINT_CACHE_DIR": str(tmp_path / "cache")}
    results = []
    for step in action["runs"]["steps"]:
        if "uses" in step:
            assert (workspace / inputs["sarif-file"]).is_file()  # what the upload step would send
            continue
        for line in output.read_text().splitlines():
            key, _, value = line.partition("=")
            context[f"steps.lint.outputs.{key}"] = value
        step_env = env | {k: _expand(str(v), context) for k, v in step.get("env", {}).items()}
        run = subprocess.run(["bash", "-e", "-c", _expand(step["run"], context)], cwd=workspace, env=step_env,
                             capture_output=True, text=True, timeout=900)
        results.append(run)
        if step.get("name") == "Install onnxlint":
            assert run.returncode == 0, run.stdout + run.stderr
    assert results[-1].returncode == 1  # findings: the job fails
    lint = results[1]
    sarif = json.loads((workspace / "onnxlint.sarif").read_text())
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text()))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"models/dropout_training.onnx"}
    assert lint.stdout.startswith("::error file=models/dropout_training.onnx,line=1,title=OLX010 ")
    assert len(lint.stdout.splitlines()) == len(sarif["runs"][0]["results"]) == 1
    assert "exit-code=1" in output.read_text()


def test_every_python_the_action_starts_runs_isolated():
    """The steps run in the workspace, the repository under review: `python -m venv`, `-m pip` and `-m
    onnxlint.commands.github_action` put it first on their import path, and its `venv/`, `pip/` or `shlex.py`
    ran in place of the standard library's. Each runs with -I."""
    runs = [s["run"] for s in _action()["runs"]["steps"] if "run" in s]
    calls = [line for run in runs for line in run.splitlines() if " -m " in line]
    assert len(calls) == 3 and all(re.search(r"(?i)python\"? -I -m ", line) for line in calls), calls
