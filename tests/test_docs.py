"""Every example in README.md and docs/ runs as written: the usage commands, the Python API snippet, the
configuration example with its user rule, the GitHub workflow's inputs. (The pre-commit blocks run in
test_precommit.py, the action's steps in test_action.py.)"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def _model() -> onnx.ModelProto:
    """x: [batch, 3, H, W] through a training-mode Dropout (a fixable error) and a Relu."""
    nodes = [h.make_node("Dropout", ["x", "ratio", "t"], ["d"], name="/drop/Dropout"), h.make_node("Relu", ["d"], ["y"], name="relu")]
    return make_model(nodes, [vi("x", T.FLOAT, ["batch", 3, "h", "w"])], [vi("y", T.FLOAT, ["batch", 3, "h", "w"])],
                      [init("ratio", np.array(0.5, np.float32)), init("t", np.array(True))])


@pytest.fixture
def workdir(tmp_path, monkeypatch, examples_dir):
    """The folder a reader runs the examples in: model.onnx, models/, exports/ with models in them."""
    onnx.save(_model(), tmp_path / "model.onnx")
    (tmp_path / "models").mkdir()
    for name in ("dropout_training.onnx", "equal_string_cuda.onnx", "clean_conv.onnx"):
        (tmp_path / "models" / name).write_bytes((examples_dir / name).read_bytes())
    (tmp_path / "exports" / "v1").mkdir(parents=True)
    (tmp_path / "exports" / "v1" / "m.onnx").write_bytes((examples_dir / "static_batch.onnx").read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _usage_commands() -> list[list[str]]:
    block = next(b for b in _blocks("sh") if "onnxlint model.onnx models/" in b)
    commands = []
    for line in block.splitlines():
        line = re.split(r"\s{2,}#", line)[0]
        for part in line.split(" ; "):
            argv = shlex.split(part)
            assert argv[0] == "onnxlint" and not {"|", "[", "]"} & set("".join(argv)), f"not a command as written: {part}"
            commands.append(argv[1:])
    return commands


def test_every_usage_line_runs_as_written(workdir, cli):
    """Each command of the usage block, in order, in a folder with the files it names: exit 0 or 1 (findings,
    a failed session on a machine without a GPU), never a usage or input error, never a traceback."""
    commands = _usage_commands()
    assert len(commands) >= 20
    for argv in commands:
        rc, out, err = cli(*argv)
        assert rc in (0, 1), (argv, rc, err)
        assert "Traceback" not in out + err, (argv, err)
    assert json.loads((workdir / "report.sarif").read_text())["version"] == "2.1.0"
    assert (workdir / "fixed" / "model.onnx").is_file()


def test_python_api_snippet_runs_as_written(workdir):
    (snippet,) = [b for b in _blocks("python") if "import onnxlint" in b]
    run = subprocess.run([sys.executable, "-c", snippet], cwd=workdir, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "OLX010 error /drop/Dropout" in run.stdout and " on CUDA, 0 fall back" in run.stdout


def test_python_api_snippet_runs_once_as_a_script_without_a_guard(workdir):
    """The snippet saved as a script and run as `python script.py`, no `if __name__ == "__main__":` guard (issue
    44): the numeric check's child must not import the script again (multiprocessing's forkserver and spawn
    did: it printed everything twice and fixed the model twice). Every model write is logged, in every process."""
    (snippet,) = [b for b in _blocks("python") if "import onnxlint" in b]
    log = workdir / "writes.log"
    spy = (f"import os as _os, onnxlint.fixers.write as _w\n_real = _w.write_fixed\n"
           f"def _logged(*a, **k):\n    open({str(log)!r}, 'a').write(f'{{_os.getpid()}}\\n')\n    return _real(*a, **k)\n"
           "_w.write_fixed = _logged\nimport onnxlint.fixers as _f\n_f.write_fixed = _logged\n")
    script = workdir / "snippet.py"
    script.write_text(spy + snippet)
    run = subprocess.run([sys.executable, str(script)], cwd=workdir, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("OLX010 error /drop/Dropout") == 1, run.stdout  # printed once
    assert run.stdout.count(" on CUDA, 0 fall back") == 1, run.stdout
    assert len(log.read_text().splitlines()) == 1, log.read_text()  # fixed once (the second fix: nothing left)


def test_configuration_example_with_its_rule_runs_as_written(workdir, cli, examples_dir):
    """The README's pyproject table and its ACME001 rule file, as written: the user's rule is selected and
    reports an int64 Equal on CPU under ORT 1.20.2 (the release the example names); --show-config finds it."""
    (toml,) = [b for b in _blocks("toml") if "[tool.onnxlint]" in b]
    rule = next(b for b in _blocks("yaml") if "id: ACME001" in b)
    (workdir / "pyproject.toml").write_text(toml)
    (workdir / "lint-rules").mkdir()
    (workdir / "lint-rules" / "acme.yaml").write_text(rule)
    eq = make_model([h.make_node("Equal", ["a", "b"], ["e"], name="/cmp/Equal")],
                    [vi("a", T.INT64, [4]), vi("b", T.INT64, [4])], [vi("e", T.BOOL, [4])], opset=19, ir=9)
    onnx.save(eq, workdir / "models" / "eq.onnx")
    rc, out, err = cli("--show-config")
    assert rc == 0 and f"config in force: {workdir / 'pyproject.toml'}" in err
    rc, out, err = cli("models/eq.onnx")
    assert "ACME001 Equal" in out and "on int64 runs on CPU" in out, out + err
    assert "Checked against ORT 1.20.2, TensorRT 8.6" in out


def test_github_workflow_example_uses_the_action_as_declared():
    """docs/github-actions.yml and the README's excerpt name the action and only inputs action.yml declares."""
    inputs = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    workflow = yaml.safe_load((ROOT / "docs" / "github-actions.yml").read_text())
    excerpt = yaml.safe_load(next(b for b in _blocks("yaml") if "onnxlint/onnxlint@" in b))
    for steps in (workflow["jobs"]["onnxlint"]["steps"], excerpt["steps"]):
        (step,) = [s for s in steps if s.get("uses", "").startswith("onnxlint/onnxlint@")]
        assert set(step["with"]) <= inputs
        assert step["uses"].split("@")[1] == "main"
    assert workflow["permissions"]["security-events"] == "write"
    assert "pip install onnxlint" not in (ROOT / "docs" / "github-actions.yml").read_text()


def test_the_default_run_shown_in_the_readme_is_what_a_run_prints(tmp_path):
    """The README's default-run output (a CLIP export's int32 ArgMax) against a run on a model with that node:
    the finding and hint lines word for word, the summary line's tail (the tables checked) and the placement
    summary's form (its counts are the whole model's)."""
    block = re.search(r"```\n(model\.onnx: ort-cuda: .*?)```", README, re.S).group(1).splitlines()  # type: ignore[union-attr]
    n = h.make_node("ArgMax", ["input_ids"], ["am"], name="/m/text_model/ArgMax", axis=-1, keepdims=0)
    model = tmp_path / "model.onnx"
    onnx.save(make_model([n], [vi("input_ids", T.INT32, ["batch", 7])], [vi("am", T.INT64, ["batch"])], opset=17), model)
    proc = subprocess.run([sys.executable, "-m", "onnxlint", "model.onnx", "--no-cache"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout.splitlines()
    assert proc.returncode == 1 and block[1:3] == out[1:3], proc.stdout
    assert re.fullmatch(r"model\.onnx: ort-cuda: \d+ nodes on CUDA, 1 fall back, .* copied per run.*", block[0])
    assert out[0].startswith("model.onnx: ort-cuda: ") and " 1 fall back, " in out[0]
    assert block[3].startswith("Found 1 finding in 1 file: 0 errors, 1 warning")
    assert block[3].split(". Checked against ")[1] == out[3].split(". Checked against ")[1]


def test_every_placement_command_quoted_in_the_docs_names_a_target_it_takes():
    """`onnxlint placement --target X` in the README, docs/rules.md or a rule's explanation (--explain) names a
    target the placement command accepts (OLX318's said `--target tensorrt`, which it refuses)."""
    from onnxlint import targets

    takes = {t.name for t in targets.REGISTRY.values() if t.predicate == "placement"}
    texts = [README, (ROOT / "docs" / "rules.md").read_text(), *(p.read_text() for p in (ROOT / "rules").glob("*.yaml"))]
    named = [m for text in texts for m in re.findall(r"onnxlint placement [^`]*?--target[ =](\S+?)[`\s]", " ".join(text.split()))]
    assert named and set(named) <= takes, (named, takes)
