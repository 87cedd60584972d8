"""The two ways a repository meets the gate besides the command line: the real pre-commit tool running the hooks
of .pre-commit-hooks.yaml, and the Action's steps (action.yml) as a runner runs them. Shared by the attack tests
of every class (tests/security/test_gate_*.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def hooks() -> dict[str, dict]:
    return {hk["id"]: hk for hk in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def local_hook(hook_id: str, args: list[str] | None = None) -> dict:
    """The hook as .pre-commit-hooks.yaml defines it, run from PATH (language: system): pre-commit composes
    entry + args + file names the same way for every language; args: the user's own `args:` (they replace the
    hook's)."""
    hk = {k: v for k, v in hooks()[hook_id].items() if k in ("id", "name", "entry", "args", "files", "types",
                                                           "require_serial")}
    hk["language"] = "system"
    if args is not None:
        hk["args"] = args
    return hk


def git_repo(repo: Path, hooks_used: list[dict], home: Path) -> dict[str, str]:
    """repo (its files already there) as a git repository with these hooks in .pre-commit-config.yaml, every file
    committed; the environment to run pre-commit in (this Python's onnxlint first on PATH)."""
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks_used}]}))
    env = {"PRE_COMMIT_HOME": str(home / "pc-home"), "HOME": str(home), "ONNXLINT_CACHE_DIR": str(home / "c"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for cmd in (["init", "-q"], ["add", "--", "."], ["commit", "-q", "-m", "models"]):
        subprocess.run(git + cmd, check=True, capture_output=True, env=env)
    return env


def pre_commit(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)


pre_commit_installed = pytest.mark.skipif(shutil.which("git") is None or subprocess.run(
    [sys.executable, "-m", "pre_commit", "--version"], capture_output=True).returncode != 0,
    reason="git or pre-commit not installed")


def run_action(tmp_path: Path, workspace: Path, **inputs: str) -> tuple[list[subprocess.CompletedProcess], dict]:
    """action.yml's steps as a runner runs them (expressions expanded, each step in bash -e with its env), the
    install step replaced by a venv stand-in that runs this Python (tests/test_action.py installs for real).
    Returns the steps run and the step outputs written."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    values = {k: v.get("default", "") for k, v in action["inputs"].items()} | inputs
    runner = tmp_path / "runner"
    (runner / "onnxlint-venv" / "bin").mkdir(parents=True)
    shim = runner / "onnxlint-venv" / "bin" / "python"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    output = tmp_path / "github_output"
    output.write_text("")
    context = {f"inputs.{k}": v for k, v in values.items()} | {"github.action_path": str(ROOT)}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RUNNER_TEMP": str(runner), "GITHUB_OUTPUT": str(output),
           "GITHUB_WORKSPACE": str(workspace), "ONNXLINT_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}  # the checkout's onnxlint (a stand-in for the action's own install)
    runs = []
    for step in action["runs"]["steps"]:
        if "uses" in step or step["name"] == "Install onnxlint":
            continue
        outputs = dict(line.partition("=")[::2] for line in output.read_text().splitlines())
        context.update({f"steps.lint.outputs.{k}": v for k, v in outputs.items()})
        step_env = env | {k: EXPR.sub(lambda m: context[m.group(1)], str(v)) for k, v in step.get("env", {}).items()}
        run = subprocess.run(["bash", "-e", "-c", EXPR.sub(lambda m: context[m.group(1)], step["run"])], cwd=workspace,
                             env=step_env, capture_output=True, text=True, timeout=TIMEOUT)
        runs.append(run)
        if run.returncode != 0:
            break
    return runs, dict(line.partition("=")[::2] for line in output.read_text().splitlines())
