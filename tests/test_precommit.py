"""The real pre-commit tool runs this checkout's hook: fails on a defective model, passes on a clean one."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

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
    # a committed file named like an option is linted as a path (the hook ends its args with `--`): no baseline
    (repo / "--baseline=b.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    for model, rc in (("clean_conv.onnx", 0), ("dropout_training.onnx", 1)):
        (repo / "model.onnx").write_bytes((examples_dir / model).read_bytes())
        git("add", ".")
        run = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env,
                             timeout=timeout)
        assert run.returncode == rc, run.stdout + run.stderr
        assert rc == 0 or "OLX010" in run.stdout, run.stdout + run.stderr
        assert not (repo / "b.onnx").exists()


PUBLIC = "https://github.com/onnxlint/onnxlint"


def _remote_block(text: str) -> str:
    return next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if f"repo: {PUBLIC}" in b)


@pytest.mark.once
@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None, reason="pre-commit/git not installed")
def test_readme_remote_hook_runs_from_a_fresh_clone(tmp_path, examples_dir):
    """The README's block as written, its URL pointing at a fresh clone of this checkout (standing in for the
    public repository, whose default branch is `main`): pre-commit installs the hook from it and runs it."""
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    clone = tmp_path / "public"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    # its `main` at this checkout's HEAD, whatever branch that is (`branch -f` refuses the branch checked out)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "-B", "main", "HEAD"], check=True, capture_output=True)
    block = _remote_block((ROOT / "README.md").read_text())
    assert "id: onnxlint" in block
    rev = yaml.safe_load(block)["repos"][0]["rev"]  # a commit of this repository's history: pre-commit fetches it
    assert subprocess.run(["git", "-C", str(clone), "cat-file", "-e", f"{rev}^{{commit}}"]).returncode == 0
    _run_hook_on_examples(tmp_path, examples_dir, block.replace(PUBLIC, str(clone)), timeout=900)


def test_docs_pre_commit_config_matches_the_readme():
    docs = yaml.safe_load((ROOT / "docs" / "pre-commit-config.yaml").read_text())
    readme = yaml.safe_load(_remote_block((ROOT / "README.md").read_text()))
    assert docs["repos"][0]["repo"] == readme["repos"][0]["repo"] == PUBLIC
    assert docs["repos"][0]["rev"] == readme["repos"][0]["rev"]
    # pinned to a commit (a branch name makes pre-commit warn on every run), one of this repository's history
    rev = readme["repos"][0]["rev"]
    assert re.fullmatch(r"[0-9a-f]{40}", rev), rev
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode == 0:
        assert subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", rev, "HEAD"]).returncode == 0
    assert "pre-commit autoupdate --freeze" in (ROOT / "README.md").read_text()
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {h["id"] for h in docs["repos"][0]["hooks"]} <= hooks


def test_readme_names_the_hook_environment():
    """What the README says the hook environment holds is pyproject's dependency list (and no onnxruntime)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=;\s\[]", d, maxsplit=1)[0].replace("_", "-").lower() for d in deps}
    readme = (ROOT / "README.md").read_text()
    said = readme[readme.index("The `onnxlint` hook's environment gets"):][:400].replace("_", "-").lower()
    for name in names - {"tomli"}:  # tomli: Python 3.10 only
        assert name in said, name
    assert not any(d.startswith("onnxruntime") for d in deps)


@pytest.mark.once
@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None or shutil.which("onnxlint") is None,
                    reason="pre-commit/git/onnxlint not installed")
def test_readme_local_hook_runs_as_written(tmp_path, examples_dir):
    """The README's `repo: local` block, copied verbatim, for someone who installed onnxlint with pip."""
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repo: local" in b)
    _run_hook_on_examples(tmp_path, examples_dir, block, timeout=300)


def test_readme_local_hook_is_declared_as_the_published_hook():
    """The README's `repo: local` hook runs what .pre-commit-hooks.yaml's `onnxlint` hook runs: `--force-exclude`
    included, so the config's excludes hold under pre-commit as the README says they do."""
    readme = (ROOT / "README.md").read_text()
    local = yaml.safe_load(next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repo: local" in b))
    hook = local["repos"][0]["hooks"][0]
    published = next(h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "onnxlint")
    assert (hook["entry"], hook["args"], hook["files"]) == (published["entry"], published["args"], published["files"])


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None, reason="pre-commit/git not installed")
def test_autoupdate_freeze_moves_the_pin_as_the_readme_says(tmp_path):
    """`pre-commit autoupdate --freeze` on the README's block, against a repository standing in for the public
    one: before any release tag it pins the default branch's newest commit and writes no `# frozen:` comment;
    with a tag, that tag's commit and `# frozen: v0.2.0`."""
    origin = tmp_path / "public"
    git = lambda *a: subprocess.run(["git", "-C", str(origin), *a], check=True, capture_output=True, text=True)
    origin.mkdir()
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
    (origin / ".pre-commit-hooks.yaml").write_text((ROOT / ".pre-commit-hooks.yaml").read_text())
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "hooks")
    head = git("rev-parse", "HEAD").stdout.strip()
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    config = repo / ".pre-commit-config.yaml"
    config.write_text(_remote_block((ROOT / "README.md").read_text()).replace(PUBLIC, str(origin)))
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    update = lambda: subprocess.run(["pre-commit", "autoupdate", "--freeze"], cwd=repo, capture_output=True, text=True,
                                    env=env, timeout=120)
    run = update()
    assert run.returncode == 0, run.stdout + run.stderr
    rev_line = next(ln for ln in config.read_text().splitlines() if "rev:" in ln)
    assert rev_line.split()[1] == head and "frozen" not in rev_line, rev_line
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "release")
    git("tag", "v0.2.0")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "after the release")
    run = update()
    assert run.returncode == 0, run.stdout + run.stderr
    rev_line = next(ln for ln in config.read_text().splitlines() if "rev:" in ln)
    assert rev_line.split()[1] == git("rev-parse", "v0.2.0").stdout.strip() and rev_line.endswith("# frozen: v0.2.0")
