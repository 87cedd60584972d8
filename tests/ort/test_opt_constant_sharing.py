"""ConstantSharing (ort.optimizer.constant_sharing): once, main graph, small constants CSE then sees as one."""

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _removed, _shared_weight_blocks, _sharing_model

from onnxlint.model.graph import GraphIndex
from onnxlint.ort.optimizer import (
    constant_sharing,
    graph_transformer_mgr,
)


def test_constant_sharing_runs_once_after_the_first_rule_pass():
    """ConstantSharing runs once, on the main graph, right after the first rule-based pass; an initializer a
    subgraph still reads then is not shared. Measured on fasterrcnn_mobilenet_v3 (ORT 1.24.4): at opset 11
    UnsqueezeElimination (axes attribute) removes the branch's reader first, the constant is shared and the
    duplicate Gather goes; at opset 17 (axes as an input) the Unsqueeze is only folded later and both Gathers stay."""
    gone11 = _removed(_sharing_model(11))
    assert gone11["else_unsq"].reason == "unsqueeze"
    assert [k for k in ("g1", "g2") if k in gone11] and all(gone11[k].reason == "cse" for k in ("g1", "g2") if k in gone11)
    gone17 = _removed(_sharing_model(17))
    assert gone17["else_unsq"].reason == "constant-folding" and "g2" not in gone17 and "g1" not in gone17


def test_constant_sharing_sees_body_reads_through_bypassed_nodes_and_shares_what_rules_made():
    """Measured with ORT 1.24.4 (basic level): an initializer a branch reads through an Identity that
    EliminateIdentity bypasses is still an implicit input of the If, so not shared (both Gathers stay); the
    initializers UnsqueezeElimination makes in the first rule pass are shared (one of the two Gathers goes)."""
    then_g = h.make_graph([h.make_node("Identity", ["one_a"], ["i"], name="then_id"),
                           h.make_node("Add", ["i", "v"], ["t"], name="then_add")], "then", [], [vi("t", T.INT64, [1])])
    else_g = h.make_graph([h.make_node("Identity", ["v"], ["e"], name="else_id")], "else", [], [vi("e", T.INT64, [1])])
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one_a"], ["g1"], name="g1", axis=0),
             h.make_node("Gather", ["s", "one_b"], ["g2"], name="g2", axis=0),
             h.make_node("Add", ["g1", "g2"], ["sum"], name="add"),
             h.make_node("If", ["cond"], ["branch"], name="if", then_branch=then_g, else_branch=else_g)]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", "m"]), vi("cond", T.BOOL, []), vi("v", T.INT64, [1])],
                   [vi("sum", T.INT64, []), vi("branch", T.INT64, [1])],
                   [init("one_a", np.array(1, np.int64)), init("one_b", np.array(1, np.int64))], opset=13)
    gone = _removed(m)
    assert gone["then_id"].reason == "identity" and "g1" not in gone and "g2" not in gone

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Unsqueeze", ["one_a"], ["ua"], name="ua", axes=[0]),
             h.make_node("Unsqueeze", ["one_b"], ["ub"], name="ub", axes=[0]),
             h.make_node("Gather", ["s", "ua"], ["g1"], name="g1", axis=0),
             h.make_node("Gather", ["s", "ub"], ["g2"], name="g2", axis=0),
             h.make_node("Concat", ["g1", "g2"], ["cat"], name="cat", axis=0),
             h.make_node("Reshape", ["y", "cat"], ["out"], name="r")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", "m"]), vi("y", T.FLOAT, ["k"])], [vi("out", T.FLOAT, None)],
                   [init("one_a", np.array(1, np.int64)), init("one_b", np.array(1, np.int64))], opset=11)
    gone = _removed(m)
    assert gone["ua"].reason == "unsqueeze" and gone["ub"].reason == "unsqueeze"
    assert len([k for k in ("g1", "g2") if k in gone and gone[k].reason == "cse"]) == 1


def test_cse_checks_a_shared_constant_once_not_once_per_reader(monkeypatch):
    """canon() asked whether every reader of a value is in the scope for each of its readers: quadratic in
    the readers of a weight every block shares (100k nodes: 93 of 117 s). Now once per value."""

    asked: list = []
    real = constant_sharing.shared_key

    def shared_key(state, scope, value):
        asked.append(value)
        return real(state, scope, value)

    monkeypatch.setattr(constant_sharing, "shared_key", shared_key)
    gi = GraphIndex(_shared_weight_blocks(300))
    opt = graph_transformer_mgr.optimize(gi)
    assert asked == ["k"]  # 300 readers, one check; values that are not constants are compared by name
    assert not opt.removed  # v_i + k chains: nothing is a duplicate of anything


def test_an_empty_constant_is_never_shared():
    """IsAllowedToShare wants 1 to 8 elements: two Reshapes to a scalar by two empty shapes stay two (measured on
    paddle2onnx's BiLSTM, 1.24.4 and 1.31.1: its duplicated state chains keep both Reshapes); two [-1] are shared."""
    def model(shape):
        nodes = [h.make_node("Reshape", ["x", "s1"], ["a"], name="r1"), h.make_node("Reshape", ["x", "s2"], ["b"], name="r2"),
                 h.make_node("Add", ["a", "b"], ["y"], name="add")]
        return make_model(nodes, [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, None)],
                          [init("s1", np.array(shape, np.int64)), init("s2", np.array(shape, np.int64))], opset=14)

    assert not _removed(model(np.zeros((0,), np.int64)), "basic")
    assert [r.reason for r in _removed(model([-1]), "basic").values()] == ["cse"]
