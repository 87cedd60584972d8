"""The real pre-commit tool runs this checkout's hook: fails on a defective model, passes on a clean one."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run_hook_on_examples(tmp_path, examples_dir, config: str, timeout: int) -> None:
    """A temp git repo with config as .pre-commit-config.yaml: a clean model passes, a training-mode
    Dropout fails with OLX010."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    git("init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(config)
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    for model, rc in (("clean_conv.onnx", 0), ("dropout_training.onnx", 1)):
        (repo / "model.onnx").write_bytes((examples_dir / model).read_bytes())
        git("add", ".")
        run = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env,
                             timeout=timeout)
        assert run.returncode == rc, run.stdout + run.stderr
        assert rc == 0 or "OLX010" in run.stdout, run.stdout + run.stderr


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None, reason="pre-commit/git not installed")
def test_pre_commit_hook(tmp_path, examples_dir):
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if rev.returncode != 0:
        pytest.skip("not a git checkout")
    config = f"repos:\n  - repo: {ROOT}\n    rev: {rev.stdout.strip()}\n    hooks:\n      - id: onnxlint\n"
    _run_hook_on_examples(tmp_path, examples_dir, config, timeout=900)


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None or shutil.which("onnxlint") is None,
                    reason="pre-commit/git/onnxlint not installed")
def test_readme_local_hook_runs_as_written(tmp_path, examples_dir):
    """The README's `repo: local` block, copied verbatim, for someone who installed onnxlint with pip."""
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repo: local" in b)
    _run_hook_on_examples(tmp_path, examples_dir, block, timeout=300)
