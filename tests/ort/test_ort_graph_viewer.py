"""GraphViewer's topological order (ort.graph_viewer)."""

from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.model.graph import GraphIndex
from onnxlint.ort import graph_viewer


def test_ort_order_is_the_reverse_dfs_from_the_last_leaf_with_producers_by_index():
    """GraphViewer's order as the optimizer model uses it (CSE keeps the first node of it): leaves started
    from the last, producers pushed by ascending index (so the highest is visited first), a node emitted on
    leaving; a value read twice is one edge."""

    nodes = [h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Neg", ["x"], ["b"], name="b"),
             h.make_node("Add", ["b", "a"], ["c"], name="c"), h.make_node("Mul", ["a", "a"], ["d"], name="d"),
             h.make_node("Concat", ["a", "b", "a", "c"], ["e"], name="e", axis=0)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("d", T.FLOAT, [2]), vi("e", T.FLOAT, [8])])
    gi = GraphIndex(m)
    assert [n.name for n in graph_viewer.ort_topological_order(gi.scopes[0])] == ["b", "a", "c", "e", "d"]
