import json
import subprocess
import sys

import make_examples
import pytest


def test_every_example_reports_its_rule_at_its_node(examples_dir, lint_json):
    rc, findings = lint_json(examples_dir)
    assert rc == 1
    for name, expected in make_examples.EXPECTED.items():
        got = [(f["code"], f["node"]) for f in findings if f["filename"].endswith(name)]
        if expected is None:
            assert got == [], f"{name} should be clean, got {got}"
        else:
            assert expected in got, f"{name}: expected {expected}, got {got}"


def test_json_carries_the_required_keys(examples_dir, lint_json):
    _, findings = lint_json(examples_dir / "dropout_training.onnx")
    f = next(f for f in findings if f["code"] == "OLX010")
    for key in ("code", "name", "severity", "target", "filename", "node", "op_type", "message", "fixable"):
        assert key in f
    assert f["severity"] == "error" and f["node"] == "dropout" and f["op_type"] == "Dropout" and f["fixable"]


def test_clean_model_exits_zero(examples_dir, cli):
    rc, out, _ = cli(examples_dir / "clean_conv.onnx")
    assert rc == 0
    # a clean model prints only the summary, which names the releases checked
    assert out.startswith("Found 0 findings in 1 file: 0 errors, 0 warnings. Checked against ORT ") and out.count("\n") == 1


def test_text_format_lines(examples_dir, cli):
    rc, out, _ = cli(examples_dir / "equal_mismatch.onnx")
    assert rc == 1
    assert f"{examples_dir / 'equal_mismatch.onnx'}:eq: error: OLX015 Equal compares int64 with int32" in out
    assert out.count("hint:") == 1


def test_select_ignore_and_fail_on(examples_dir, lint_json, cli):
    _, findings = lint_json(examples_dir, "--select", "OLX01")
    assert findings and all(f["code"].startswith("OLX01") for f in findings)
    _, findings = lint_json(examples_dir, "--ignore", "OLX0,OLX3")
    assert all(f["code"].startswith("OLX2") for f in findings)
    rc, _, _ = cli(examples_dir / "static_batch.onnx")
    assert rc == 0  # info only, fail-on defaults to warning
    rc, _, _ = cli(examples_dir / "static_batch.onnx", "--fail-on", "info")
    assert rc == 1


def test_target_selection_limits_rules(examples_dir, lint_json):
    _, findings = lint_json(examples_dir / "scatternd.onnx", "--target", "ort-cpu")
    assert not any(f["code"].startswith("OLX3") for f in findings)
    _, findings = lint_json(examples_dir / "scatternd.onnx", "--target", "tensorrt")
    assert any(f["code"] == "OLX302" for f in findings)


def test_list_rules_explain_and_version(cli):
    rc, out, _ = cli("--list-rules")
    assert rc == 0 and "OLX200" in out and "cuda-kernel-missing" in out
    rc, out, _ = cli("--explain", "OLX302")
    assert rc == 0 and "ScatterND" in out and "Fix: no automatic fix" in out
    rc, out, _ = cli("--explain", "OLX301")
    assert "Fix: resize-sizes (safe)" in out
    rc, out, _ = cli("--explain", "OLX010")
    assert "dropout-inference (safe)" in out


def test_list_rules_marks_a_rule_out_of_the_default_set(tmp_path, cli, monkeypatch):
    """A rule file's `default: false` rule runs only when selected; --list-rules (which the README points at for
    the default set) says so on its line, and its JSON has `default`."""
    import json

    monkeypatch.chdir(tmp_path)
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "acme.yaml").write_text(
        "- id: ACME001\n  name: no-relu\n  severity: error\n  targets: any\n  summary: s\n  explanation: e\n"
        "  default: false\n  message: a Relu\n  match: {op: Relu}\n")
    rc, out, _ = cli("--list-rules", "--rules", "extra")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert rc == 0 and "[not default: --select or --extend-select it]" in lines["ACME001"]
    assert "not default" not in lines["OLX200"]
    rc, out, _ = cli("--list-rules", "--rules", "extra", "--format", "json")
    by = {r["code"]: r for r in json.loads(out)}
    assert by["ACME001"]["default"] is False and by["OLX200"]["default"] is True


def test_statistics(examples_dir, cli):
    rc, out, _ = cli(examples_dir, "--statistics", "-q")
    assert "OLX013      fully-static-input-shapes" in out


def test_python_dash_m_entry_point(examples_dir):
    proc = subprocess.run([sys.executable, "-m", "onnxlint", str(examples_dir / "custom_op.onnx"), "--format", "json"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)[0]["code"] == "OLX014"


@pytest.mark.parametrize("name", sorted(make_examples.EXPECTED))
def test_committed_examples_match_the_generator(name):
    """examples/*.onnx in the repo are what make_examples.py builds (under 1 MB each)."""
    from pathlib import Path

    import onnx

    path = Path(__file__).resolve().parent.parent / "examples" / name
    assert path.exists() and path.stat().st_size < 1_000_000
    assert onnx.load(path) == make_examples.build()[name]


def test_rules_doc_is_current():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("gen_rules_doc", root / "tools" / "gen_rules_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (root / "docs" / "rules.md").read_text() == mod.render(), "run tools/gen_rules_doc.py"
    readme = (root / "README.md").read_text()
    assert readme == mod.readme_with_fixers(readme), "run tools/gen_rules_doc.py (README fixer table)"
