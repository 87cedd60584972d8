"""Rule files are validated against the schema generated from the registries: every mistake is `file:line`
and exit 2, never a traceback; the published schema is current and accepts the built-in rules."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from onnxlint.support.errors import RuleError

ROOT = Path(__file__).resolve().parent.parent

HEAD = ("- id: ACME001\n  name: my-rule\n  severity: warning\n  targets: [ort-cuda]\n  summary: s\n"
        "  explanation: e\n")


def _rule(tail: str) -> str:
    return HEAD + tail


# (rule file text, line the error must name, words the message must hold)
BAD = {
    "fix-is-a-list": (_rule("  message: m\n  match: {op: Relu}\n  fix: [fold-shapes]\n"), 9, "fix needs text"),
    "fix-is-a-number": (_rule("  message: m\n  match: {op: Relu}\n  fix: 5\n"), 9, "fix needs text"),
    "fix-is-a-mapping": (_rule("  message: m\n  match: {op: Relu}\n  fix: {a: 1}\n"), 9, "fix needs text"),
    "fix-unknown": (_rule("  message: m\n  match: {op: Relu}\n  fix: fold-shape\n"), 9, "did you mean 'fold-shapes'"),
    "status-typo": (_rule("  message: m\n  match: {placement: {target: ort-cuda, status: fallbak}}\n"), 8,
                    "'fallbak' is not a known placement status"),
    "reason-typo": (_rule("  message: m\n  match: {placement: {target: ort-cuda, reason: {in: [dtyp]}}}\n"), 8,
                    "did you mean 'dtype'"),
    "trt-status-typo": (_rule("  message: m\n  match: {tensorrt: {status: unsuported}}\n"), 8, "TensorRT status"),
    "references-string": (_rule("  message: m\n  match: {op: Relu}\n  references: 'https://x.org/a'\n"), 9,
                          "references needs a list"),
    "references-number": (_rule("  message: m\n  match: {op: Relu}\n  references: 5\n"), 9, "references needs a list"),
    "tags-number": (_rule("  message: m\n  match: {op: Relu}\n  tags: 5\n"), 9, "tags needs a list"),
    "hint-number": (_rule("  message: m\n  match: {op: Relu}\n  hint: 5\n"), 9, "hint needs text"),
    "unhashable-key": (_rule("  message: m\n  match: {op: Relu}\n  ? [a, b]\n  : 1\n"), 9, "a key must be a name"),
    "dunder-placeholder": (_rule("  message: '{trt.__dict__}'\n  match: {op: Relu}\n"), 7, "placeholder"),
    "unknown-placeholder-field": (_rule("  message: '{input[0].dtyp}'\n  match: {op: Relu}\n"), 7,
                                  "did you mean 'dtype'"),
    "model-placeholder-in-node": (_rule("  message: '{value.name}'\n  match: {op: Relu}\n"), 7,
                                  "not available to a node rule"),
    "fallback-recurses": (_rule("  message: m\n  fallback: ort-cuda\n  match: {placement: {target: ort-cuda, status: device}}\n"),
                          9, "cannot use 'placement'"),
    "unknown-predicate": (_rule("  message: m\n  match:\n    op: Relu\n    opst: {lt: 11}\n"), 10,
                          "unknown predicate 'opst' (did you mean 'opset'?)"),
    "comparison-typo": (_rule("  message: m\n  match: {opset: {lte: 11}}\n"), 8, "unknown comparison"),
    "lt-needs-number": (_rule("  message: m\n  match: {opset: {lt: eleven}}\n"), 8, "needs"),
    "input-index": (_rule("  message: m\n  match: {inputs: {first: {dtype: float}}}\n"), 8, "unknown input index 'first'"),
    "unknown-target": (HEAD.replace("[ort-cuda]", "[ort-cdua]") + "  message: m\n  match: {op: Relu}\n", 4,
                       "did you mean 'ort-cuda'"),
    "severity": (HEAD.replace("warning", "fatal") + "  message: m\n  match: {op: Relu}\n", 3, "not a known severity"),
    # a version's lt/le/gt/ge is compared as Version(str(operand)): one that is no version passed the schema and
    # failed every model at lint time ("internal error while linting (InvalidVersion ...)", naming the model)
    "trt-version-gt-text": (_rule("  message: m\n  match: {tensorrt: {version: {gt: abc}}}\n"), 8,
                            "tensorrt.version.gt 'abc' does not have the expected form"),
    "trt-version-ge-negative": (_rule("  message: m\n  match: {tensorrt: {version: {ge: -1}}}\n"), 8,
                                "tensorrt.version.ge -1 is not a version"),
    "trt-version-lt-inf": (_rule("  message: m\n  match: {tensorrt: {version: {lt: .inf}}}\n"), 8,
                           "tensorrt.version.lt inf is not a version"),
    # an index past Python's 4,300 digits for int() passed the schema and failed every model at lint time
    # ("internal error while linting (ValueError ...)", naming the model); an index has at most 9 digits
    "input-index-digits": (_rule("  message: m\n  match:\n    inputs:\n      ? '" + "9" * 5000 + "'\n"
                                 "      : {dtype: float}\n"), 10, "unknown input index '999"),
    "placeholder-index-digits": (_rule("  message: '{input[" + "9" * 10 + "].name}'\n  match: {op: Relu}\n"), 7,
                                 "is not of the form"),
    "hint-placeholder-index-digits": (_rule("  message: m\n  hint: '{output[" + "9" * 10 + "]}'\n  match: {op: Relu}\n"),
                                      8, "is not of the form"),
    # a message or hint is rendered into every finding: a 1 MB one cost 4 GB (text) and 8 GB (JSON) of memory on a
    # model of 2,000 nodes; 1,000 characters and 16 placeholders bound it
    "message-too-long": (_rule("  message: '" + "a" * 1001 + "'\n  match: {op: Relu}\n"), 7,
                         "message is 1,001 characters long; at most 1,000"),
    "hint-too-long": (_rule("  message: m\n  hint: '" + "a" * 5000 + "'\n  match: {op: Relu}\n"), 8,
                      "hint is 5,000 characters long; at most 1,000"),
    "too-many-placeholders": (_rule("  message: '" + "{file}" * 17 + "'\n  match: {op: Relu}\n"), 7,
                              "more than 16 placeholders in message"),
    # Python's `$` matches before a final newline (the published schema's ECMA `$` does not): "OLX001\n" passed the
    # id pattern, a rule beside the built-in OLX001 whose id and name the text output printed with a raw newline
    "id-final-newline": (HEAD.replace("ACME001", '"OLX001\\n"') + "  message: m\n  match: {op: Relu}\n", 1,
                         "id 'OLX001\\n' does not have the expected form"),
    "name-final-newline": (HEAD.replace("my-rule", '"my-rule\\n"') + "  message: m\n  match: {op: Relu}\n", 2,
                           "name 'my-rule\\n' does not have the expected form"),
    "input-index-final-newline": (_rule("  message: m\n  match: {inputs: {\"0\\n\": {dtype: float}}}\n"), 8,
                                  "unknown input index"),
    # an attribute equals a scalar or a list of scalars (one of: a list of such); a date, a mapping or a list nested
    # deeper loaded and never matched any node (the array branch did not check its items)
    "attrs-date-item": (_rule("  message: m\n  match: {op: Transpose, attrs: {perm: [2001-01-01]}}\n"), 8,
                        "attrs.perm[0] needs text or a number or true or false or a list, got date"),
    "attrs-mapping-item": (_rule("  message: m\n  match: {op: Transpose, attrs: {perm: {eq: [0, {a: 1}]}}}\n"), 8,
                           "attrs.perm.eq[1] needs"),
    "attrs-too-deep": (_rule("  message: m\n  match: {op: Transpose, attrs: {perm: [[[0, 2, 1]]]}}\n"), 8,
                       "attrs.perm[0][0] needs text or a number or true or false, got a list"),
    "value-set-item": (_rule("  message: m\n  match: {op: Reshape, inputs: {1: {value: [[1, !!set {a}]]}}}\n"), 8,
                       "value[0][1] needs"),
    "model-scope-node-predicate": (_rule("  message: m\n  scope: model\n  match: {op: Relu}\n"), 9,
                                   "unknown model predicate 'op'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_rule_file_is_one_line_with_file_and_line(case, tmp_path, examples_dir, cli):
    text, line, words = BAD[case]
    path = tmp_path / "x.yaml"
    path.write_text(text)
    rc, out, err = cli(examples_dir / "clean_conv.onnx", "--rules", path)
    assert rc == 2 and "Traceback" not in err and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert f"{path}:{line}:" in err and words in err, err


@pytest.mark.parametrize("text", [
    _rule("  message: m\n  match:\n    op: Relu\n    ? " + "k" * 5000 + "\n    : 1\n"),  # an unknown predicate
    _rule("  message: m\n  match:\n    attrs:\n      ? " + "a" * 5000 + "\n      : {lt: abc}\n"),  # a path through it
    _rule("  message: m\n  match: {placement: {target: ort-cuda, status: " + "s" * 5000 + "}}\n"),  # not in an enum
    _rule("  message: m\n  match: {tensorrt: {version: {gt: " + "v" * 5000 + "}}}\n"),  # no version
    HEAD.replace("ACME001", "ACME" + "1" * 5000) + "  message: m\n  match: {op: Relu}\n",  # the id each line names
])
def test_an_error_line_quotes_a_long_value_shortened(text, tmp_path, examples_dir, cli):
    """An error line quoted a rule file's key, value or id whole: 5,000 characters made a 5,000-character line."""
    path = tmp_path / "x.yaml"
    path.write_text(text)
    rc, out, err = cli(examples_dir / "clean_conv.onnx", "--rules", path)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert len(err) < len(str(path)) + 300 and "…" in err, err


def test_yaml_only_user_rule_with_placement_and_values_works(tmp_path, examples_dir, lint_json):
    """A rule added as YAML only, using the placement target's vocabulary and value predicates."""
    (tmp_path / "acme.yaml").write_text(
        "- id: ACME002\n  name: int64-equal-on-cpu\n  severity: error\n  targets: [ort-cuda]\n"
        "  summary: Equal falls back\n  explanation: our latency budget has no room for it\n"
        "  message: 'Equal {node} on {input[0].dtype} runs on CPU ({placement.reason})'\n"
        "  match:\n    op: Equal\n    placement: {target: ort-cuda, status: [fallback, unsupported]}\n")
    rc, findings = lint_json(examples_dir / "equal_string_cuda.onnx", "--rules", tmp_path, "--select", "ACME")
    assert rc == 1 and [f["code"] for f in findings] == ["ACME002"]
    assert findings[0]["message"].startswith("Equal eq") and "runs on CPU (" in findings[0]["message"]


def _tool_render(name: str) -> str:
    """What tools/NAME.py would write (its render())."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.render()


def test_published_schema_is_current():
    assert (ROOT / "docs" / "rule-schema.json").read_text() == _tool_render("gen_rule_schema"), "run tools/gen_rule_schema.py"


def _string_keys(o):
    if isinstance(o, dict):
        return {str(k): _string_keys(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_string_keys(v) for v in o]
    return o


def test_published_schema_accepts_the_builtin_rules_and_rejects_a_typo():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "rule-schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in sorted((ROOT / "rules").glob("*.yaml")):
        errors = list(validator.iter_errors(_string_keys(yaml.safe_load(path.read_text()))))
        assert not errors, f"{path}: {errors[0].message[:200]}"
    for case in ("status-typo", "fix-is-a-list", "unknown-predicate", "references-string"):
        assert list(validator.iter_errors(_string_keys(yaml.safe_load(BAD[case][0])))), case


@pytest.mark.parametrize("codes, why", [(["OLX019"], "which no rule has"), (["USR900"], "leads back to USR900")])
def test_reported_by_names_existing_rules_and_no_cycle(tmp_path, cli, examples_dir, codes, why):
    (tmp_path / "r.yaml").write_text(f"""\
- id: USR900
  name: self-ref
  severity: warning
  targets: [any]
  summary: s
  explanation: e
  match: {{op: Relu, not: {{reported_by: {codes}}}}}
  message: "relu {{node}}"
""")
    rc, out, err = cli(examples_dir / "clean_conv.onnx", "--rules", tmp_path)
    assert rc == 2 and why in err and "r.yaml" in err and len(err.strip().splitlines()) == 1, err


def test_bundled_rules_copy_is_current_and_gives_the_rules_the_yaml_gives():
    """onnxlint/data/bundled-rules.json is the built-in rules parsed and validated (tools/gen_bundled_rules.py):
    a process with no cached rule set reads it, and gets field for field what parsing the YAML gives."""
    from onnxlint.rulefiles import ruleset
    from onnxlint.support import resources

    assert (resources.data_dir() / ruleset.BUNDLED_RULES).read_text(encoding="utf-8") == _tool_render("gen_bundled_rules"), \
        "run tools/gen_bundled_rules.py"
    bundled = ruleset._bundled_rules()
    parsed = ruleset.load_ruleset(bundled=False).rules
    assert bundled is not None and [vars(r) for r in bundled] == [vars(r) for r in parsed]
    assert [vars(r) for r in ruleset.load_ruleset().rules] == [vars(r) for r in parsed]

    def in_order(rules):  # a match's keys are evaluated in order: the copy keeps the YAML's order, not a sorted one
        return [json.dumps(ruleset.rule_to_json(r)) for r in rules]

    assert in_order(bundled) == in_order(parsed)


def test_an_edited_bundled_rule_file_is_parsed_not_read_from_the_bundled_copy(tmp_path, monkeypatch):
    """The bundled copy holds only while every rule file has the bytes it was made from: an edited, added or
    removed file in a checkout is parsed (and validated) as before."""
    import shutil

    from onnxlint.rulefiles import ruleset
    from onnxlint.support import resources

    folder = tmp_path / "rules"
    shutil.copytree(resources.rules_dir(), folder)
    monkeypatch.setattr(resources, "rules_dir", lambda: folder)
    assert ruleset._bundled_rules() is not None
    core = folder / "core.yaml"
    core.write_text(core.read_text().replace("name: checker-failed", "name: checker-refuses"))
    assert ruleset._bundled_rules() is None
    assert ruleset.load_ruleset().by_id()["OLX001"].name == "checker-refuses"
    core.write_text(core.read_text().replace("id: OLX001", "id: OLX001\n    bogus: 1", 1))
    with pytest.raises(RuleError, match="core.yaml"):
        ruleset.load_ruleset()
    core.unlink()
    assert ruleset._bundled_rules() is None


@pytest.mark.parametrize("spec, matches", [
    ("[[0, 2, 1], [0, 1, 2]]", True), ("{eq: [0, 2, 1]}", True), ("[[0, 1, 2]]", False), ("{ne: [0, 2, 1]}", False),
])
def test_an_attribute_is_compared_with_a_list_or_one_of_lists(spec, matches, tmp_path, lint_json):
    """The forms the schema keeps for a list-valued attribute still match as they did."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 2, 1])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), tmp_path / "m.onnx")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme.yaml").write_text(_rule(f"  message: m\n  match: {{op: Transpose, attrs: {{perm: {spec}}}}}\n"))
    rc, findings = lint_json(tmp_path / "m.onnx", "--rules", tmp_path / "rules", "--select", "ACME")
    assert [f["node"] for f in findings] == (["t"] if matches else []), findings


@pytest.mark.parametrize("version, matches", [
    ('"8.6"', True), ('["8.5", "8.6"]', True), ('{eq: "8.6"}', True), ('{in: ["8.6"]}', True), ('{ne: "8.6"}', False),
    ('{not_in: ["8.6"]}', False), ('"8.5"', False), ('{ge: "8.6", lt: "10"}', True), ('{gt: 8.6}', False),
])
def test_tensorrt_version_equality_compares_versions(version, matches, tmp_path, examples_dir, lint_json):
    """`tensorrt: {version: "8.6"}` (and eq, in, ne, not_in) compares the TensorRT version as a version: the text
    "8.6" was compared with == to a packaging Version, never equal, so such a rule never matched (and ne always)."""
    (tmp_path / "acme.yaml").write_text(
        "- id: ACME003\n  name: trt-version\n  severity: error\n  targets: any\n  summary: s\n  explanation: e\n"
        f"  message: 'TensorRT {{trt.version}}'\n  match: {{op: Conv, tensorrt: {{version: {version}}}}}\n")
    rc, findings = lint_json(examples_dir / "clean_conv.onnx", "--rules", tmp_path, "--select", "ACME",
                             "--trt-version", "8.6")
    assert [f["message"] for f in findings] == (["TensorRT 8.6"] if matches else []), findings


def test_a_placeholder_value_is_bounded_in_every_finding(tmp_path, lint_json):
    """A node rule may show a model-wide value ({model.inputs}: every graph input's name) in each finding: that
    was the whole list in every node's message (1.8 GB of JSON from a 1.4 MB model of 3,000 inputs and nodes).
    Each placeholder shows at most MAX_VALUE characters."""
    import onnx
    from onnx import TensorProto, helper

    from onnxlint.rules.messages import MAX_VALUE

    n = 300
    names = [f"input_{'x' * 40}_{i}" for i in range(n)]
    graph = helper.make_graph(
        [helper.make_node("Relu", [names[i]], [f"y{i}"], name=f"r{i}") for i in range(n)], "g",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1]) for x in names],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1]) for i in range(n)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), tmp_path / "m.onnx")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme.yaml").write_text(
        "- id: ACME004\n  name: inputs\n  severity: error\n  targets: any\n  summary: s\n  explanation: e\n"
        "  message: 'inputs: {model.inputs}'\n  match: {op: Relu}\n")
    rc, findings = lint_json(tmp_path / "m.onnx", "--rules", tmp_path / "rules", "--select", "ACME", "--target", "ort-cpu")
    assert rc == 1 and len(findings) == n
    for f in findings:
        assert len(f["message"]) == len("inputs: ") + MAX_VALUE and f["message"].endswith("…"), len(f["message"])
        assert f["message"].startswith(f"inputs: {names[0]}, {names[1]}, ")


def test_a_file_rule_hint_is_rendered_as_its_message(tmp_path, lint_json):
    """A file rule's hint is a template, checked as one on load (`{file}`, `{lfs.oid}`, `[[ ... ]]`): it was shown
    as written, its placeholders and brackets raw."""
    (tmp_path / "m.onnx").write_text(f"version https://git-lfs.github.com/spec/v1\noid sha256:{'ab' * 32}\nsize 12345\n")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme.yaml").write_text(
        "- id: ACME005\n  name: lfs\n  severity: error\n  targets: any\n  scope: file\n  summary: s\n  explanation: e\n"
        "  message: 'pointer {file}'\n  hint: 'fetch {file}[[ (object {lfs.oid})]]'\n  match: {}\n")
    rc, findings = lint_json(tmp_path / "m.onnx", "--rules", tmp_path / "rules", "--select", "ACME")
    assert rc == 1
    model = str(tmp_path / "m.onnx")
    assert [(f["message"], f["hint"]) for f in findings] == [(f"pointer {model}", f"fetch {model} (object {'ab' * 32})")]


def test_reported_by_asks_each_rule_once_per_node(tmp_path, cli, monkeypatch):
    """Rules naming each other in `reported_by` make a graph without a cycle; each (rule, node) is asked once. Asked
    afresh along every path, two rules a level each naming both of the next level's cost 2^levels matches a node:
    44 rules of a 6.5 KB rule file took 78 s for a one-node model."""
    import onnx
    from onnx import TensorProto, helper

    from onnxlint.rules import predicates

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), tmp_path / "m.onnx")
    levels, text = 14, []
    for i in range(levels):
        for side in "AB":
            match = "{op: Nope}" if i == levels - 1 else f"{{op: Relu, reported_by: [ACA{i + 1:03d}, ACB{i + 1:03d}]}}"
            text.append(f"- id: AC{side}{i:03d}\n  name: r\n  severity: error\n  targets: any\n  summary: s\n"
                        f"  explanation: e\n  message: m\n  match: {match}\n")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme.yaml").write_text("".join(text))
    asked = []
    real = predicates.match_node
    monkeypatch.setattr(predicates, "match_node", lambda ctx, m, node: asked.append(1) or real(ctx, m, node))
    rc, out, err = cli(tmp_path / "m.onnx", "--rules", tmp_path / "rules", "--select", "AC", "--no-cache")
    assert rc == 0 and "Traceback" not in err, err
    assert len(asked) <= 2 * levels, len(asked)  # 2^14 = 16,384 before


@pytest.mark.parametrize("length, refused", [(16, False), (17, True), (400, True)])
def test_a_reported_by_chain_is_bounded(length, refused, tmp_path, cli):
    """Each `reported_by` link is a nested match when a node is linted: a chain of 400 rules made every model
    "graph nesting too deep to analyse" (a line naming the model, not the rule file). A chain holds at most 16."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), tmp_path / "m.onnx")
    text = []
    for i in range(length):
        match = "{op: Nope}" if i == length - 1 else f"{{op: Relu, reported_by: [ACM{i + 1:03d}]}}"
        text.append(f"- {{id: ACM{i:03d}, name: r, severity: error, targets: any, summary: s, explanation: e, "
                    f"message: m, match: {match}}}\n")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme.yaml").write_text("".join(text))
    rc, out, err = cli(tmp_path / "m.onnx", "--rules", tmp_path / "rules", "--select", "ACM", "--no-cache")
    if refused:
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "acme.yaml:" in err and "reported_by chains more than 16 rules" in err, err
    else:
        assert rc == 0 and "Traceback" not in err, err


def test_rule_files_past_the_budget_are_refused_naming_the_builtin_rules_size(tmp_path, cli, examples_dir):
    """The refusal of rule files over 1 MiB compares them with the built-in rules: their size as read (it said
    63 KB while the rule files had grown to 70), not a figure written once."""
    (tmp_path / "r.yaml").write_text("#" + "x" * (1 << 20) + "\n")
    builtin = sum(p.stat().st_size for p in (ROOT / "rules").glob("*.yaml"))
    rc, out, err = cli(examples_dir / "clean_conv.onnx", "--rules", tmp_path)
    assert rc == 2 and f"the built-in rules are about {round(builtin, -3) // 1000} KB" in err, err
