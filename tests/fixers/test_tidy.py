"""toposort and the tidy step after every fixer (fixers/tidy.py): sorted graphs, no dead initializer."""

import numpy as np
import onnx
from fix_cases import _graphs_of
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _unsorted(k=3):
    """A chain of Relus listed last-first: onnx.checker rejects it, ORT sorts it itself."""
    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}") for i in range(k)][::-1]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("v0", T.FLOAT, ["n", 2])],
                                  [h.make_tensor_value_info(f"v{k}", T.FLOAT, ["n", 2])]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_toposort_fixes_an_unsorted_graph_through_the_cli(tmp_path, cli, lint_json):
    from onnxlint.fixers import tidy

    p = tmp_path / "u.onnx"
    onnx.save(_unsorted(), p)
    _, before = lint_json(p)
    assert any(f["code"] == "OLX001" and f["fix"] == "toposort" for f in before)
    rc, out, _ = cli(p, "--fix")
    assert "wrote" in out and "(toposort)" in out, out
    m = onnx.load(p)
    onnx.checker.check_model(m, full_check=True)
    assert tidy.is_sorted(m.graph) and [n.name for n in m.graph.node] == ["relu0", "relu1", "relu2"]
    _, after = lint_json(p)
    assert not any(f["code"] == "OLX001" for f in after)


def test_checker_failure_other_than_order_is_not_fixable(tmp_path, lint_json):
    m = _unsorted()
    m.graph.node.reverse()
    m.graph.node[0].attribute.append(h.make_attribute("bogus", 1))  # the checker rejects an unknown attribute
    p = tmp_path / "b.onnx"
    onnx.save(m, p)
    _, found = lint_json(p)
    # ORT's node check refuses the attribute too: the refusal (OLX007), which no fixer claims, not the checker's line
    (refusal,) = [f for f in found if f["code"] in ("OLX001", "OLX007")]
    assert refusal["code"] == "OLX007" and "Unrecognized attribute: bogus" in refusal["message"]
    assert refusal["fix"] is None and not refusal["fixable"]


def test_fix_leaves_no_dead_initializer_and_sorted_graphs(tmp_path, cli):
    """dropout-inference leaves the Dropout's ratio and training_mode unread, in the main graph and in an If
    body; the tidy step after all fixers removes them (ORT warns about every one on every load)."""
    from onnxlint.fixers import tidy

    drop = lambda x, y, n: h.make_node("Dropout", [x, f"r{n}", f"t{n}"], [y], name=f"drop{n}")
    inits = lambda n: [nh.from_array(np.array(0.5, np.float32), f"r{n}"), nh.from_array(np.array(True), f"t{n}")]
    then = h.make_graph([drop("x", "a", 1)], "then", [], [h.make_tensor_value_info("a", T.FLOAT, ["n", 2])], inits(1))
    other = h.make_graph([h.make_node("Identity", ["x"], ["b"], name="id")], "else", [],
                         [h.make_tensor_value_info("b", T.FLOAT, ["n", 2])])
    nodes = [drop("x", "d", 0), h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other)]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 2]),
                                               h.make_tensor_value_info("c", T.BOOL, [])],
                                  [h.make_tensor_value_info("d", T.FLOAT, ["n", 2]), h.make_tensor_value_info("y", T.FLOAT, ["n", 2])],
                                  inits(0)), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    h.set_model_props(m, {"owner": "team-a"})
    p = tmp_path / "d.onnx"
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix")
    assert "wrote" in out, out
    fixed = onnx.load(p)
    assert tidy.dead_initializers(fixed) == [] and tidy.is_sorted(fixed.graph)
    assert {n.op_type for g in _graphs_of(fixed) for n in g.node} == {"Identity", "If"}
    assert {pr.key: pr.value for pr in fixed.metadata_props} == {"owner": "team-a"}  # the model's own fields stay
    assert [i.name for i in fixed.graph.input] == ["x", "c"]


def test_tidied_ir3_model_lists_its_initializers_as_inputs(tmp_path, cli):
    """IR 3 wants every initializer among the graph inputs; onnx-graphsurgeon's export drops them there, so a
    tidied IR-3 model failed the checker and upgrade-opset was never written (pypi-onnx light_resnet50)."""
    w, dead = nh.from_array(np.ones(2, np.float32), "w"), nh.from_array(np.zeros(2, np.float32), "dead")
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                     [h.make_tensor_value_info(n, T.FLOAT, [2]) for n in ("x", "w", "dead")],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])], [w, dead])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 9)])
    m.ir_version = 3
    p = tmp_path / "ir3.onnx"
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix", "--show-info")  # OLX006 (legacy opset) is an info: fixed when shown
    assert "wrote" in out and "(upgrade-opset)" in out, out
    fixed = onnx.load(p)
    onnx.checker.check_model(fixed, full_check=True)
    assert fixed.opset_import[0].version == 11 and {i.name for i in fixed.graph.initializer} <= {i.name for i in fixed.graph.input}


def test_tidy_returns_the_same_model_when_there_is_nothing_to_do(examples_dir):
    from onnxlint.fixers import tidy

    m = onnx.load(examples_dir / "clean_conv.onnx")
    assert tidy.tidy(m) is m


def test_tidy_keeps_the_order_of_a_sorted_graph():
    """Cleanup alone when the nodes are in order: gs's toposort would reorder independent nodes, and the order
    of random ops decides which numbers each draws (a model whose RandomUniformLike moved failed the check)."""
    from onnxlint.fixers import tidy

    nodes = [h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Sigmoid", ["a"], ["b"], name="b"),
             h.make_node("RandomUniformLike", ["x"], ["r"], name="rnd"), h.make_node("Add", ["b", "r"], ["y"], name="add")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                                  [h.make_tensor_value_info("y", T.FLOAT, [2])], [nh.from_array(np.ones(2, np.float32), "dead")]),
                     opset_imports=[h.make_opsetid("", 17)])
    t = tidy.tidy(m)
    assert [n.name for n in t.graph.node] == ["a", "b", "rnd", "add"] and not t.graph.initializer  # gs: a, rnd, b


def test_an_initializer_read_only_in_a_nested_body_is_not_dead():
    """dead_initializers reads every body (graph_walks.node_reads): `w`, read only by a Neg in the then-branch of an
    If inside the then-branch of another If, is alive; `unused` is dead."""
    from onnxlint.fixers import tidy

    def branch(nodes, out):
        return h.make_graph(nodes, "b", [], [h.make_tensor_value_info(out, T.FLOAT, [2])])

    inner = h.make_node("If", ["c"], ["i"], then_branch=branch([h.make_node("Neg", ["w"], ["n"])], "n"),
                        else_branch=branch([h.make_node("Identity", ["x"], ["e"])], "e"))
    outer = h.make_node("If", ["c"], ["y"], then_branch=branch([inner], "i"),
                        else_branch=branch([h.make_node("Identity", ["x"], ["e2"])], "e2"))
    g = h.make_graph([outer], "g", [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])],
                     initializer=[nh.from_array(np.ones(2, np.float32), "w"), nh.from_array(np.ones(2, np.float32), "unused")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    assert tidy.dead_initializers(m) == ["unused"]
