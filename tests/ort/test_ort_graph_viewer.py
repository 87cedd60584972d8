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


def test_the_order_cache_is_ort_order_where_a_constant_or_a_node_writes_a_name_again():
    """OrderCache reads each node's producers from the index's own producer map, unless a name is written twice:
    by a Constant and a node (the node is the producer: Constants are no nodes to ORT, whichever comes last), or
    by two nodes (computed from scratch each time). Its order is ort_topological_order's in every case, with
    nodes removed and a value rewired."""
    from onnxlint.ort.optimizer.optimized import Optimized, Removed

    def model(twice: str) -> GraphIndex:
        const = h.make_node("Constant", [], ["a"], name="k", value=h.make_tensor("v", T.FLOAT, [2], [1.0, 2.0]))
        nodes = [h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Neg", ["x"], ["b"], name="b"),
                 h.make_node("Add", ["b", "a"], ["c"], name="c"), h.make_node("Identity", ["c"], ["i"], name="i"),
                 h.make_node("Mul", ["i", "a"], ["d"], name="d"), h.make_node("Sub", ["b", "d"], ["e"], name="e")]
        if twice == "constant first":
            nodes.insert(0, const)
        elif twice == "constant last":
            nodes.append(const)
        elif twice == "two nodes":
            nodes.insert(3, h.make_node("Sigmoid", ["x"], ["b"], name="b2"))
        return GraphIndex(make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("e", T.FLOAT, [2])]))

    for twice in ("none", "constant first", "constant last", "two nodes"):
        gi = model(twice)
        scope = gi.scopes[0]
        named = {n.name: n for n in gi.nodes}
        cache = graph_viewer.OrderCache()
        opt = Optimized("all")
        orders = []
        for step in range(3):
            if step == 1:
                opt.removed[named["b"].index] = Removed("eliminated", "cse", "")
            if step == 2:  # the Identity removed, its reader rewired to its input
                opt.removed[named["i"].index] = Removed("eliminated", "identity", "")
                opt.alias["i"] = "c"
            got = [n.name for n in cache.order(scope, opt, len(opt.alias))]
            assert got == [n.name for n in graph_viewer.ort_topological_order(scope, opt)], (twice, step)
            orders.append(got)
        assert "i" in orders[1] and "i" not in orders[2] and "k" not in orders[0], twice


def test_which_nodes_a_live_node_reads_is_the_same_read_a_slice_of_edges_at_a_time(monkeypatch):
    """OrderCache reads which positions a node not skipped reads while not dead itself in numpy, a slice of the edge
    arrays at a time (numpy indexes by 8-byte positions: a copy of the whole array each was 10 MB at 1M nodes):
    the answer is the one read edge by edge, whatever the slice."""
    import random
    from array import array

    rng = random.Random(0)
    count, edges = 50, 300
    owners = array("i", [rng.randrange(count) for _ in range(edges)])
    inputs = array("i", [rng.randrange(count) for _ in range(edges)])
    skip = bytearray(rng.random() < 0.2 for _ in range(count))
    dead = bytearray(rng.random() < 0.2 for _ in range(count))
    want = bytearray(count)
    for k, p in zip(owners, inputs):
        if not skip[k] and not dead[p]:
            want[p] = 1
    for at_once in (1, 7, graph_viewer._EDGES_AT_ONCE):
        monkeypatch.setattr(graph_viewer, "_EDGES_AT_ONCE", at_once)
        assert bytes(graph_viewer._read_by_live(skip, dead, owners, inputs, count)) == bytes(want), at_once


def test_each_nodes_producers_are_the_same_read_a_few_nodes_at_a_time(monkeypatch):
    """_Static reads the producers of NODES_AT_ONCE nodes at a time (their names in one list, the positions sorted
    and made unique in numpy): the edge arrays, and the orders read from them, are the ones read all at once,
    whatever the part (a part ending inside a node's edges or between, a node reading a name twice, a graph
    input, an empty input)."""
    nodes = [h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Neg", ["x"], ["b"], name="b"),
             h.make_node("Add", ["b", "a"], ["c"], name="c"), h.make_node("Mul", ["a", "a"], ["d"], name="d"),
             h.make_node("Clip", ["d", "", "c"], ["f"], name="f"),
             h.make_node("Concat", ["a", "b", "a", "c", "f"], ["e"], name="e", axis=0)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("d", T.FLOAT, [2]), vi("e", T.FLOAT, [10])])
    gi = GraphIndex(m)
    scope = gi.scopes[0]
    whole = graph_viewer._Static.of(scope)
    assert whole is not None
    edges = [(k, p) for k in range(len(whole.nodes)) for p in whole.inputs[whole.starts[k]:whole.starts[k + 1]]]
    assert edges == [(2, 0), (2, 1), (3, 0), (4, 2), (4, 3), (5, 0), (5, 1), (5, 2), (5, 4)]
    assert list(whole.owners) == [k for k, _ in edges]
    for at_once in (1, 2, 4):
        monkeypatch.setattr(graph_viewer, "_NODES_AT_ONCE", at_once)
        part = graph_viewer._Static.of(scope)
        assert part is not None
        assert (part.starts, part.inputs, part.owners) == (whole.starts, whole.inputs, whole.owners), at_once
