"""CommonSubexpressionElimination (ort.optimizer.common_subexpression_elimination)."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _cse_after_a_rewrite, _optimized_both_ways, _removed, _transformer_blocks

from onnxlint.model.graph import GraphIndex
from onnxlint.ort import graph_viewer
from onnxlint.ort.optimizer import common_subexpression_elimination, graph_transformer_mgr


def test_cse_of_tensor_attributes_in_typed_fields_from_ort_1_31():
    """Two ConstantOfShape nodes on equal shapes: with `value` as raw bytes CSE merges them on every release;
    with `value` in float_data (older exporters, e.g. the light_inception models on PyPI) ORT 1.20.2 and 1.24.4
    keep both and 1.31.1 merges them (measured with ORT's optimized-model output)."""
    def model(value):
        nodes = [h.make_node("ConstantOfShape", ["s1"], ["c1"], name="cos1", value=value),
                 h.make_node("ConstantOfShape", ["s2"], ["c2"], name="cos2", value=value),
                 h.make_node("Mul", ["x", "c1"], ["m1"], name="mul1"), h.make_node("Mul", ["x", "c2"], ["m2"], name="mul2"),
                 h.make_node("Add", ["m1", "m2"], ["y"], name="add")]
        return make_model(nodes, [vi("x", T.FLOAT, ["n", 3, 4])], [vi("y", T.FLOAT, None)],
                          [init("s1", np.array([2, 3, 4], np.int64)), init("s2", np.array([2, 3, 4], np.int64))], opset=17)

    def merged(m, version):
        index = GraphIndex(onnx.shape_inference.infer_shapes(m))
        by = {n.index: n.name for n in index.nodes}
        gone = graph_transformer_mgr.optimize(index, "all", ort_version=version).removed
        return {by[i] for i, r in gone.items() if r.reason == "cse"}

    typed = model(h.make_tensor("v", T.FLOAT, [1], [0.02]))
    raw = model(init("v", np.array([0.02], np.float32)))
    assert merged(typed, "1.24.4") == set() and merged(typed, "1.20.2") == set()
    # measured: ORT keeps mul2 and removes mul1
    assert "mul1" in merged(typed, "1.31.1") and "mul1" in merged(raw, "1.24.4") and "mul1" in merged(raw, "1.20.2")


def test_cse_compares_a_tensor_attribute_by_value_not_name():
    """Measured on 1.24.4 and 1.31.1: ConstantOfShape values named `v` and `w` with one value are merged."""
    nodes = [h.make_node("ConstantOfShape", ["s1"], ["c1"], name="cos1", value=init("v", np.array([2.0], np.float32))),
             h.make_node("ConstantOfShape", ["s1"], ["c2"], name="cos2", value=init("w", np.array([2.0], np.float32))),
             h.make_node("Shape", ["x"], ["s1"], name="shape"),
             h.make_node("Add", ["c1", "c2"], ["y"], name="add")]
    m = make_model(nodes[2:3] + nodes[:2] + nodes[3:], [vi("x", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)], opset=17)
    gone = _removed(m)
    assert [k for k in ("cos1", "cos2") if k in gone and gone[k].reason == "cse"]


def _output_duplicates() -> onnx.ModelProto:
    """Two Relu(x), both graph outputs (kept: a graph output keeps its producer), and two Neg of an Identity of x
    that CSE merges once EliminateIdentity rewired them."""
    nodes = [h.make_node("Relu", ["x"], ["y1"], name="r1"), h.make_node("Relu", ["x"], ["y2"], name="r2"),
             h.make_node("Identity", ["x"], ["i"], name="ident"), h.make_node("Neg", ["i"], ["n1"], name="neg1"),
             h.make_node("Neg", ["x"], ["n2"], name="neg2"), h.make_node("Add", ["n1", "n2"], ["y3"], name="add")]
    return make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y1", T.FLOAT, [4]), vi("y2", T.FLOAT, [4]),
                                                        vi("y3", T.FLOAT, [4])])


@pytest.mark.parametrize("build", [_transformer_blocks, _cse_after_a_rewrite, _output_duplicates])
def test_a_settled_graph_is_not_compared_again_until_a_value_is_rewired(monkeypatch, build):
    """A CSE run that left every live node unlike the others is not repeated while no value was rewired since:
    what the optimizer model removes, rewires and makes constant is what running it every round gives."""
    results = _optimized_both_ways(monkeypatch, common_subexpression_elimination, "SKIP_SETTLED", "input_canon",
                                   lambda: onnx.shape_inference.infer_shapes(build()))
    every, settled = results[False], results[True]
    assert settled[:3] == every[:3] and any(r["reason"] == "cse" for r in every[0].values())
    if build is _transformer_blocks:
        assert settled[3] < every[3]


def test_cse_merges_a_node_into_the_first_earlier_one_whose_attributes_match():
    """CSE reads a node's attributes only when an earlier node has its op and inputs: a Transpose is merged into the
    earlier one with its perm, not into the first one of its inputs (another perm), which stays; two Gemms with
    their attributes in another order are alike; a Transpose of other inputs is read by its inputs alone."""
    nodes = [h.make_node("Transpose", ["x"], ["tc"], name="tc", perm=[1, 0]),
             h.make_node("Transpose", ["x"], ["tb"], name="tb", perm=[1, 0]),
             h.make_node("Transpose", ["x"], ["ta"], name="ta", perm=[0, 1]),  # first of the three in ORT's order
             h.make_node("Transpose", ["w"], ["td"], name="td", perm=[1, 0]),
             h.make_node("Gemm", ["x", "w"], ["g1"], name="g1", alpha=2.0, beta=1.0),
             h.make_node("Gemm", ["x", "w"], ["g2"], name="g2", beta=1.0, alpha=2.0),
             h.make_node("Sum", ["ta", "tb", "tc", "td", "g1", "g2"], ["y"], name="sum")]
    m = make_model(nodes, [vi("x", T.FLOAT, [3, 3])], [vi("y", T.FLOAT, [3, 3])], [init("w", np.ones((3, 3), np.float32))])
    index = GraphIndex(onnx.shape_inference.infer_shapes(m))
    order = [n.name for n in graph_viewer.ort_topological_order(index.scopes[0])]
    assert order.index("ta") < min(order.index("tb"), order.index("tc"))
    by = {n.index: n.name for n in index.nodes}
    gone = {by[i]: r.detail for i, r in graph_transformer_mgr.optimize(index, "all").removed.items() if r.reason == "cse"}
    first, second = sorted(("tb", "tc"), key=order.index)
    assert sorted(gone) == sorted([second, "g2" if order.index("g1") < order.index("g2") else "g1"])
    assert gone[second].startswith(f"duplicate of {first}:")


def test_input_canon_answers_canon_of_each_input_while_values_are_rewired():
    """OptimizerState.input_canon, bound once for a CSE run, answers tuple(canon(v) for v in inputs) for every node
    as removals rewire values during the run: shared constants alike by value (c1, c2), one compared by name after
    all (big: too large to share), a rewired value (a2 -> a1) and one rewired to a value rewired later (m2 -> m1,
    then m1 -> s), "" kept, inputs neither rewired nor shared answered as they are."""
    from onnxlint.ort.optimizer import constant_sharing
    from onnxlint.ort.optimizer.state import OptimizerState

    nodes = [h.make_node("Add", ["x", "c1"], ["a1"], name="add1"), h.make_node("Add", ["x", "c2"], ["a2"], name="add2"),
             h.make_node("Mul", ["a1", "big"], ["m1"], name="mul1"), h.make_node("Mul", ["a2", "big"], ["m2"], name="mul2"),
             h.make_node("Sub", ["m2", "c2"], ["s"], name="sub"), h.make_node("Clip", ["m1", "", "c1"], ["c"], name="clip"),
             h.make_node("Neg", ["a2"], ["n"], name="neg"), h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("Sum", ["c", "n", "r"], ["y"], name="sum")]
    m = make_model(nodes, [vi("x", T.FLOAT, [16])], [vi("y", T.FLOAT, [16])],
                   [init("c1", np.array([1.0], np.float32)), init("c2", np.array([1.0], np.float32)),
                    init("big", np.ones(16, np.float32))])
    index = GraphIndex(onnx.shape_inference.infer_shapes(m))
    scope, by = index.scopes[0], {n.name: n for n in index.nodes}
    state = OptimizerState(index, "all", lambda node: True)
    state.share_constants({"c1", "c2", "big"}, constant_sharing.shared_key)
    canon_of = state.input_canon(scope)

    def check():
        for n in index.nodes:
            assert canon_of(n.inputs) == tuple(state.canon(scope, v) for v in n.inputs), n.name

    check()
    assert canon_of(("x", "c1")) == canon_of(("x", "c2")) and canon_of(("big",)) == ("big",)
    state.remove(by["add2"], "eliminated", "cse", "", {"a2": "a1"}, twin=by["add1"])
    check()
    assert canon_of(by["mul2"].inputs) == canon_of(by["mul1"].inputs)
    state.remove(by["mul2"], "eliminated", "cse", "", {"m2": "m1"}, twin=by["mul1"])
    state.remove(by["mul1"], "eliminated", "test", "", {"m1": "s"})
    check()
    assert canon_of(by["sub"].inputs)[0] == "s" and canon_of(by["clip"].inputs)[:2] == ("s", "")
    assert canon_of(by["neg"].inputs) == ("a1",) and canon_of(by["relu"].inputs) is by["relu"].inputs


def _twin_chains(depth: int) -> onnx.ModelProto:
    """Two alike chains of `depth` Relus from x (CSE merges the second node by node in one run, each removal
    rewiring the next one's input), a Mul of each end by x, alike only through the chains, and an Add of each two
    nodes in a row of the first chain, alike to none: no CSE run needs to look at them."""
    nodes = []
    for side in ("a", "b"):
        prev = "x"
        for k in range(depth):
            nodes.append(h.make_node("Relu", [prev], [f"{side}{k}"], name=f"relu_{side}{k}"))
            if side == "a" and k:
                nodes.append(h.make_node("Add", [f"a{k - 1}", f"a{k}"], [f"s{k}"], name=f"add_{k}"))
            prev = f"{side}{k}"
    last = [f"a{depth - 1}", f"b{depth - 1}"]
    nodes += [h.make_node("Mul", [last[0], "x"], ["ma"], name="mul_a"), h.make_node("Mul", [last[1], "x"], ["mb"], name="mul_b"),
              h.make_node("Sum", ["ma", "mb", *(f"s{k}" for k in range(1, depth))], ["y"], name="sum")]
    return make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], opset=17)


def _shared_made_constant() -> onnx.ModelProto:
    """Add(x, u) and Add(x, v), u made an initializer by the first rule pass (UnsqueezeElimination of c, opset 11),
    v an initializer of u's value: ConstantSharing shares both, so CSE merges the Adds, though only u has a
    producer (the Unsqueeze)."""
    nodes = [h.make_node("Unsqueeze", ["c"], ["u"], name="unsqueeze", axes=[0]),
             h.make_node("Add", ["x", "u"], ["a1"], name="add1"), h.make_node("Add", ["x", "v"], ["a2"], name="add2"),
             h.make_node("Mul", ["a1", "a2"], ["y"], name="mul")]
    return make_model(nodes, [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])],
                      [init("c", np.array(2.0, np.float32)), init("v", np.array([2.0], np.float32))], opset=11)


def _no_producer_twins() -> onnx.ModelProto:
    """Two ConstantOfShape of equal shape initializers (no producer: merged by the shapes' value), whose readers
    Mul(x, c1) and Mul(x, c2) are alike only once the first merge rewired c2 to c1, in the same run."""
    nodes = [h.make_node("ConstantOfShape", ["s1"], ["c1"], name="cos1", value=init("v", np.array([2.0], np.float32))),
             h.make_node("ConstantOfShape", ["s2"], ["c2"], name="cos2", value=init("v", np.array([2.0], np.float32))),
             h.make_node("Mul", ["x", "c1"], ["m1"], name="mul1"), h.make_node("Mul", ["x", "c2"], ["m2"], name="mul2"),
             h.make_node("Add", ["m1", "m2"], ["y"], name="add")]
    return make_model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, None)],
                      [init("s1", np.array([2, 3], np.int64)), init("s2", np.array([2, 3], np.int64))], opset=17)


@pytest.mark.parametrize("build", [_transformer_blocks, _cse_after_a_rewrite, _output_duplicates, lambda: _twin_chains(3),
                                   lambda: _twin_chains(graph_viewer.ALIKE_ROUNDS + 2), _shared_made_constant,
                                   _no_producer_twins])
def test_cse_looking_only_at_nodes_that_may_be_alike_removes_what_looking_at_every_node_does(monkeypatch, build):
    """A CSE run looks only at the nodes another live node may be alike to (OptimizerState.twin_candidates): what
    the optimizer model removes, rewires and makes constant is what looking at every node gives, twins found
    through rewirings of the same run (chains, no-producer twins) and shared constants with a producer included."""
    results = _optimized_both_ways(monkeypatch, common_subexpression_elimination, "TWINS_ONLY", "twin_candidates",
                                   lambda: onnx.shape_inference.infer_shapes(build()))
    every, twins = results[False], results[True]
    assert twins[:3] == every[:3] and any(r["reason"] == "cse" for r in every[0].values())
    assert every[3] == 0 and twins[3] > 0


@pytest.mark.parametrize(("depth", "looked_at"), [(3, 2 * 3 + 2), (graph_viewer.ALIKE_ROUNDS + 2, None)])
def test_twin_candidates_are_the_chains_or_every_node_past_the_label_rounds(depth, looked_at):
    """The first CSE run of _twin_chains looks at the Relus and the Muls only (each Add and the Sum read
    producers no other node reads); a chain longer than the label rounds take gets every node of the order."""
    from onnxlint.ort.optimizer.state import OptimizerState

    index = GraphIndex(onnx.shape_inference.infer_shapes(_twin_chains(depth)))
    state = OptimizerState(index, "all", lambda node: True)
    scope = index.scopes[0]
    got = [n.name for n in state.twin_candidates(scope)]
    order = [n.name for n in state.nodes(scope)]
    if looked_at is None:
        assert got == order
    else:
        assert len(got) == looked_at and got == [name for name in order if name.startswith(("relu", "mul"))]
