"""The fixer registry (fixers/base.py): the built-in table, lazy imports, plug-in fixers, fix applicability, the gs graft."""

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from fix_cases import (
    _copy,
)
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnxlint import fixers


def test_the_builtin_fixer_table_names_the_module_that_registers_each_fixer():
    """base.BUILTIN decides which module a lint imports for a fixer its findings name: every module of the
    package that registers a fixer is in it, under the very names it registers."""
    import importlib
    import pkgutil

    from onnxlint.fixers.base import BUILTIN, REGISTRY

    registered = {}
    for info in pkgutil.iter_modules(fixers.__path__):
        mod = importlib.import_module(f"onnxlint.fixers.{info.name}")
        for name in list(REGISTRY._fixers):
            if REGISTRY._fixers[name].apply.__module__ == mod.__name__:
                registered[name] = info.name
    assert registered == BUILTIN
    assert list(REGISTRY) == list(BUILTIN)  # a listing is complete, in the table's order
    assert len(REGISTRY) == len(BUILTIN)


_FIXER_IMPORTS = r"""
import sys
from onnxlint.cli import main
rc = main(["--no-cache", "--no-progress", "--format", "json", sys.argv[1]])
print(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("onnxlint.fixers.")), file=sys.stderr)
"""

def test_a_lint_imports_only_the_fixers_its_findings_name(tmp_path, examples_dir):
    import subprocess
    import sys

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    proc = subprocess.run([sys.executable, "-c", _FIXER_IMPORTS, str(p)], capture_output=True, text=True, timeout=120)
    fixes = {f["fix"] for f in json.loads(proc.stdout) if f["fix"]}
    assert fixes == {"dropout-inference"}, proc.stdout
    from onnxlint.fixers.base import BUILTIN

    assert proc.stderr.strip().splitlines()[-1] == str(sorted(["base", BUILTIN["dropout-inference"]]))


def test_fix_through_graphsurgeon_keeps_what_nodes_carry(tmp_path, cli):
    """onnx-graphsurgeon's export drops node doc_strings and metadata_props; a fixed model keeps them (a node's
    `onnxlint: ignore[...]` suppression lives there), on the rewritten node and on the others."""
    nodes = [h.make_node("Dropout", ["x", "r", "t"], ["d"], name="drop", doc_string="from module head.drop"),
             h.make_node("Mul", ["d", "z"], ["e"], name="eq", doc_string="onnxlint: ignore[OLX015]"),
             h.make_node("Relu", ["d"], ["y"], name="relu")]
    nodes[2].metadata_props.add(key="source", value="head.py:12")
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                                               h.make_tensor_value_info("z", T.FLOAT, [2])],
                                  [h.make_tensor_value_info("y", T.FLOAT, [2]), h.make_tensor_value_info("e", T.FLOAT, [2])],
                                  [nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")]),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 10
    p = tmp_path / "carry.onnx"
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix")
    assert "wrote" in out and "(dropout-inference)" in out, out
    fixed = {n.name: n for n in onnx.load(p).graph.node}
    assert fixed["drop"].op_type == "Identity" and fixed["drop"].doc_string == "from module head.drop"
    assert fixed["eq"].doc_string == "onnxlint: ignore[OLX015]"
    assert {e.key: e.value for e in fixed["relu"].metadata_props} == {"source": "head.py:12"}


PLUGIN = Path(__file__).resolve().parents[1] / "plugin_example"


@pytest.fixture
def acme_plugin(monkeypatch):
    """tests/plugin_example installed: its folder on sys.path (its dist-info declares the entry point)."""
    import sys

    from onnxlint.rulefiles import rule_schema

    monkeypatch.syspath_prepend(str(PLUGIN))
    rule_schema.rule_schema.cache_clear()
    yield PLUGIN
    fixers.REGISTRY.pop("acme-drop-identity", None)
    sys.modules.pop("acme_onnxlint_fixers", None)
    rule_schema.rule_schema.cache_clear()  # its fixer enum named the plug-in


def test_plugin_fixer_fixes_its_finding_through_the_cli(tmp_path, cli, lint_json, acme_plugin):
    """A user rule names the plug-in's fixer; --fix loads it from the entry point, hands it the gs graph and its
    findings' nodes, checks the result numerically and writes it; the dead Identity is cleaned up after."""
    from onnxlint.fixers import tidy

    nodes = [h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Identity", ["a"], ["b"], name="/copy/Identity"),
             h.make_node("Sigmoid", ["b"], ["y"], name="sig")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["n", 4])]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    rules = str(acme_plugin / "rules.yaml")
    _, found = lint_json(p, "--rules", rules)
    (acme,) = [f for f in found if f["code"] == "ACME900"]
    assert acme["fix"] == "acme-drop-identity" and acme["fixable"]
    rc, out, _ = cli(p, "--rules", rules, "--fix")
    assert "wrote" in out and "(acme-drop-identity)" in out and "numeric check: outputs equal" in out, out
    fixed = onnx.load(p)
    assert [n.op_type for n in fixed.graph.node] == ["Relu", "Sigmoid"] and not tidy.dead_nodes(fixed)
    onnx.checker.check_model(fixed, full_check=True)
    _, after = lint_json(p, "--rules", rules)
    assert not any(f["code"] == "ACME900" for f in after)


def test_plugin_fixer_gets_the_same_numeric_check(tmp_path, cli, acme_plugin):
    """A plug-in whose rewrite changes outputs is refused like a built-in fixer: nothing is written."""
    import acme_onnxlint_fixers  # noqa: F401 - registers acme-drop-identity

    def wrong(ctx):
        graph = ctx.graph()
        for node in graph.nodes:
            if node.op == "Identity":
                node.op = "Neg"
        return ctx.from_graph(graph)

    fx = fixers.REGISTRY["acme-drop-identity"]
    fixers.REGISTRY["acme-drop-identity"] = fixers.Fixer(fx.name, fixers.Applicability.SAFE, fx.summary, wrong)  # acme_plugin removes it
    nodes = [h.make_node("Identity", ["x"], ["b"], name="id"), h.make_node("Relu", ["b"], ["y"], name="relu")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["n", 4])]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    _, out, _ = cli(p, "--rules", acme_plugin / "rules.yaml", "--fix")
    assert "fix not written" in out and p.read_bytes() == before, out


# ---------------------------------------------------------------- fix applicability


def _registered(name, *args, **kwargs):
    from onnxlint.fixers.base import REGISTRY, fixer

    fixer(name, *args, **kwargs)(lambda ctx: ctx.model)
    try:
        return REGISTRY[name]
    finally:
        del REGISTRY[name]


def test_applicability_is_named_and_the_old_bool_form_still_registers_the_same_fixer():
    """`@fixer(name, Applicability.X, summary)`; a plug-in written for the bool form (positional, or `safe=` as
    tests/plugin_example had it) registers the same fixer, with a DeprecationWarning."""
    from onnxlint.fixers.base import Applicability, Fixer

    assert _registered("t-safe", Applicability.SAFE, "s").applicability is Applicability.SAFE
    for args, kwargs, want in (((True, "s"), {}, Applicability.SAFE), ((False, "s"), {}, Applicability.UNSAFE),
                               ((), {"safe": True, "summary": "s"}, Applicability.SAFE),
                               ((), {"safe": False, "summary": "s"}, Applicability.UNSAFE)):
        with pytest.warns(DeprecationWarning, match="Applicability"):
            fx = _registered("t-old", *args, **kwargs)
        assert fx.applicability is want and fx.safe == (want is Applicability.SAFE), (args, kwargs)
    with pytest.warns(DeprecationWarning):
        assert Fixer("t-direct", False, "s", lambda ctx: ctx.model).applicability is Applicability.UNSAFE
    for bad in ((), ("yes", "s"), (Applicability.SAFE,)):
        with pytest.raises(TypeError):
            _registered("t-bad", *bad)
    with pytest.raises(TypeError, match="not both"):
        _registered("t-both", Applicability.SAFE, "s", safe=True)


def test_display_only_fixes_are_never_applied_and_unsafe_ones_only_when_asked(tmp_path):
    """A display-only fix is named by its findings but neither applied nor counted as needing --unsafe-fixes."""
    from onnxlint.fixers.base import REGISTRY, Applicability, Fixer

    def rename(ctx):
        ctx.model.doc_string = "rewritten"
        return ctx.model

    m = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"], name="r")], "g",
                                  [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])]),
                     opset_imports=[h.make_opsetid("", 17)])
    assert [a.applies(False) for a in Applicability] == [True, False, False]
    assert [a.applies(True) for a in Applicability] == [True, True, False]
    for how, applied_plain, applied_unsafe in ((Applicability.SAFE, ["t-x"], ["t-x"]),
                                               (Applicability.UNSAFE, [], ["t-x"]),
                                               (Applicability.DISPLAY_ONLY, [], [])):
        REGISTRY["t-x"] = Fixer("t-x", how, "rewrites the doc string", rename)
        try:
            req = [fixers.FixRequest("t-x", "r", "any")]
            _, applied, skipped = fixers.apply(m, req, unsafe=False)
            assert applied == applied_plain and skipped == (["t-x"] if how is Applicability.UNSAFE else []), how
            _, applied, skipped = fixers.apply(m, req, unsafe=True)
            assert applied == applied_unsafe and skipped == [], how
        finally:
            del REGISTRY["t-x"]


def test_explain_says_how_a_fix_applies():
    from onnxlint.commands.rules import explain
    from onnxlint.fixers.base import REGISTRY, Applicability, Fixer
    from onnxlint.rulefiles.ruleset import get_ruleset

    rule = get_ruleset(()).by_id()["OLX012"]  # double-inputs-to-float: unsafe
    assert "(unsafe: needs --unsafe-fixes)" in explain(rule)
    REGISTRY["t-shown"] = Fixer("t-shown", Applicability.DISPLAY_ONLY, "a rewrite to make in the exporter", lambda c: c.model)
    try:
        rule.fix = "t-shown"
        assert "Fix: t-shown (display-only: never applied): a rewrite to make in the exporter" in explain(rule)
    finally:
        rule.fix = "double-inputs-to-float"
        del REGISTRY["t-shown"]
