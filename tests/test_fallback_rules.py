"""The `fallback:` rule key end to end: a user's rule names a node the CUDA EP's GetCapability refuses; the
placement puts that node on CPU with the rule's message as the reason, and the rule reports it too."""

from __future__ import annotations

import json

import onnx.parser
import pytest

RULE = """
- id: USR001
  name: relu-refused
  severity: warning
  targets: [ort-cuda]
  fallback: ort-cuda
  summary: a Relu this deployment's CUDA EP refuses
  explanation: stands for a GetCapability check written as a rule
  match: {op: Relu}
  message: "{op_type} is refused by the house CUDA build"
"""


@pytest.fixture
def model_and_rules(tmp_path):
    model = onnx.parser.parse_model("""
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N,4] x) => (float[N,4] y) { [abs] a = Abs(x) [relu] y = Relu(a) }""")
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "house.yaml").write_text(RULE)
    return path, rules


def test_a_fallback_rule_moves_its_node_to_cpu_with_its_message_as_the_reason(model_and_rules):
    from onnxlint import targets
    from onnxlint.config.settings import Settings
    from onnxlint.linting import engine, linter
    from onnxlint.model import loading
    from onnxlint.rulefiles.ruleset import load_ruleset

    path, rules = model_and_rules
    settings = Settings.from_config(None, targets=["ort-cuda"], ort_version="1.24.4", rule_dirs=[rules])
    ruleset = load_ruleset([rules])
    mf = loading.load(path)
    ctx = engine.new_context(mf, loading.index_model(mf), linter.options_for(settings), ruleset, targets.REGISTRY)
    placement = ctx.prediction("ort-cuda")
    by_name = {n.name: placement.get(n) for n in ctx.index.nodes}
    assert by_name["abs"].ep == "CUDAExecutionProvider"
    assert by_name["relu"].ep == "CPUExecutionProvider"
    assert by_name["relu"].detail == "USR001: Relu is refused by the house CUDA build"
    # without the rule the same Relu runs on CUDA
    plain = engine.new_context(mf, loading.index_model(mf), linter.options_for(settings), load_ruleset(), targets.REGISTRY)
    assert {n.name: plain.prediction("ort-cuda").get(n).ep for n in plain.index.nodes}["relu"] == "CUDAExecutionProvider"


def test_a_fallback_rule_reports_its_node_through_the_cli(model_and_rules, capsys):
    from onnxlint import cli

    path, rules = model_and_rules
    rc = cli.main([str(path), "--rules", str(rules), "--target", "ort-cuda", "--ort-version", "1.24.4",
                   "--format", "json", "--no-cache"])
    found = [f for f in json.loads(capsys.readouterr().out) if f["code"] == "USR001"]
    assert rc == 1 and [f["node"] for f in found] == ["relu"]
    assert found[0]["message"] == "Relu is refused by the house CUDA build"


def test_a_fallback_rule_may_not_read_a_prediction(tmp_path):
    from onnxlint.rulefiles.ruleset import load_ruleset
    from onnxlint.support.errors import RuleError

    (tmp_path / "bad.yaml").write_text(RULE.replace("match: {op: Relu}", "match: {op: Relu, cpu_shape_path: true}"))
    with pytest.raises(RuleError, match="cannot use 'cpu_shape_path'"):
        load_ruleset([tmp_path])
