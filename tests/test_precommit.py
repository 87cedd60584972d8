"""The real pre-commit tool runs this checkout's hook: fails on a defective model, passes on a clean one."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None, reason="pre-commit/git not installed")
def test_pre_commit_hook(tmp_path, examples_dir):
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if rev.returncode != 0:
        pytest.skip("not a git checkout")
    repo = tmp_path / "repo"
    repo.mkdir()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    git("init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {rev.stdout.strip()}\n    hooks:\n      - id: onnxlint\n")
    (repo / "model.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    git("add", ".")
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": __import__("os").environ["PATH"], "HOME": str(tmp_path)}
    ok = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (repo / "model.onnx").write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    git("add", ".")
    bad = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert bad.returncode == 1 and "OLX010" in bad.stdout, bad.stdout + bad.stderr


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None or shutil.which("onnxlint") is None,
                    reason="pre-commit/git/onnxlint not installed")
def test_readme_local_hook_runs_as_written(tmp_path, examples_dir):
    """The README's `repo: local` block, copied verbatim, for someone who installed onnxlint with pip."""
    import os
    import re

    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repo: local" in b)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    git("init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(block)
    (repo / "model.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    git("add", ".")
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    ok = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (repo / "model.onnx").write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    git("add", ".")
    bad = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 1 and "OLX010" in bad.stdout, bad.stdout + bad.stderr
