"""The optimizer state (ort.optimizer.state): shapes learnt again after folding, the node order shared between passes."""

from dataclasses import asdict

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import (
    _anchor_blocks,
    _computed_reshape_blocks,
    _cse_after_a_rewrite,
    _foldable_blocks,
    _if_fold_chain,
    _removed,
    _transformer_blocks,
)

from onnxlint.model.graph import GraphIndex
from onnxlint.ort import graph_viewer
from onnxlint.ort.optimizer import (
    graph_transformer_mgr,
)
from onnxlint.ort.optimizer import state as optimizer_state


def test_shape_after_a_pad_with_computed_pads_folds_once_the_pads_are_known():
    """ORT re-runs shape inference after folding: Pad(x, Concat(...constants)) gets a static shape and the
    Shape of it folds (torchvision detectors pad their images this way)."""
    nodes = [h.make_node("Concat", ["p0", "p1"], ["pads"], name="concat", axis=0),
             h.make_node("Pad", ["x", "pads"], ["padded"], name="pad"),
             h.make_node("Shape", ["padded"], ["s"], name="shape"),
             h.make_node("Reshape", ["padded", "s"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, None)],
                   [init("p0", np.array([0, 1], np.int64)), init("p1", np.array([0, 1], np.int64))], opset=13)
    gone = _removed(m)
    assert gone["concat"].reason == "constant-folding" and gone["shape"].reason == "shape-folding"
    assert "pad" not in gone


def test_shape_of_a_folded_range_chain_folds_after_reinference():
    """torchvision's anchor generators: Range(0, W) of a static feature-map width, Reshape(-1, 1), then Shape of
    that. ORT folds the Range chain, infers its shape again and folds the Shape too (measured on ssdlite320:
    the Concat of two such Shapes was reported as a CPU node ORT never runs)."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape_x"),
             h.make_node("Gather", ["s", "i3"], ["w"], name="gather", axis=0),
             h.make_node("Range", ["zero", "w", "one"], ["r"], name="range"),
             h.make_node("Reshape", ["r", "col"], ["rc"], name="reshape"),
             h.make_node("Shape", ["rc"], ["s2"], name="shape_rc"),
             h.make_node("Expand", ["y", "s2"], ["out"], name="expand")]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 3, 4, 5]), vi("y", T.FLOAT, ["n", 1])], [vi("out", T.FLOAT, None)],
                   [init("i3", np.array(3, np.int64)), init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
                    init("col", np.array([-1, 1], np.int64))], opset=13)
    gone = _removed(m)
    assert gone["range"].reason == "constant-folding" and gone["reshape"].reason == "constant-folding"
    assert gone["shape_rc"].reason == "shape-folding" and "expand" not in gone


def test_optimizer_passes_share_one_order_between_changes(monkeypatch):
    """The node order is recomputed only after a pass removed something: a pass that changed nothing hands
    its order to the next (a 100k-node graph: 16 orders became 5). The result is the same either way."""

    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Relu", ["x"], ["b"], name="r2"),  # CSE: r2 goes
             h.make_node("Add", ["a", "b"], ["y"], name="add")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    orders: list = []
    real = graph_viewer.OrderCache.order

    def counted(self, scope, opt, rewirings):
        orders.append(scope.path)
        return real(self, scope, opt, rewirings)

    monkeypatch.setattr(graph_viewer.OrderCache, "order", counted)
    opt = graph_transformer_mgr.optimize(GraphIndex(m))
    assert [r.reason for r in opt.removed.values()] == ["cse"]
    passes = 4 * 2  # two rounds of the four passes: the first removes r2, the second finds nothing
    assert 0 < len([p for p in orders if p == "graph"]) <= 3 < passes


def _twin_below_its_reader() -> onnx.ModelProto:
    """Two Relu(x), b and a, a first in ORT's order (its reader y reads it before b's reader c reads b), where
    c, reading a instead of b once CSE removed b, visits a before y: a moves before z (y's other input)."""
    nodes = [h.make_node("Relu", ["x"], ["b"], name="b"), h.make_node("Add", ["a", "z"], ["y"], name="y"),
             h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Neg", ["x2"], ["z"], name="z"),
             h.make_node("Add", ["b", "y"], ["c"], name="c")]
    return make_model(nodes, [vi("x", T.FLOAT, [2]), vi("x2", T.FLOAT, [2])], [vi("c", T.FLOAT, [2])])


@pytest.mark.parametrize("build", [lambda: _anchor_blocks(3), lambda: _foldable_blocks(12), _if_fold_chain,
                                   _transformer_blocks, _cse_after_a_rewrite, _twin_below_its_reader])
def test_the_passes_order_is_ort_topological_order_of_the_graph_as_they_left_it(monkeypatch, build):
    """OrderCache (what never changes read once per scope, positions instead of nodes) gives, after every
    change, the order ort_topological_order computes from scratch on the graph as the passes left it."""
    checked: list[bool] = []
    real = optimizer_state.OptimizerState.nodes

    def nodes(self, scope):
        got = real(self, scope)
        want = graph_viewer.ort_topological_order(scope, self._out)
        checked.append([n.index for n in got] == [n.index for n in want])
        return got

    monkeypatch.setattr(optimizer_state.OptimizerState, "nodes", nodes)
    opt = graph_transformer_mgr.optimize(GraphIndex(build()))
    assert checked and all(checked) and opt.removed


@pytest.mark.parametrize("build", [_transformer_blocks, _twin_below_its_reader, lambda: _anchor_blocks(3)])
def test_the_order_after_cse_is_the_last_less_the_twins_where_the_walk_shows_it(monkeypatch, build):
    """After a CSE pass, the next order is the one before less the twins it removed (OrderCache.after_twins) where
    the walk that made it shows that is ORT's order: in transformer blocks (a Reshape of a MatMul's twin reads a
    shape made of the first one's Shape: left in time), not where a twin's reader now visits the first one
    sooner (_twin_below_its_reader: computed). The optimizer's answer is the same either way."""
    from ort_cases import _optimized_both_ways

    made: list[bool] = []
    real = graph_viewer.OrderCache.after_twins

    def after_twins(self, scope, *args):
        got = real(self, scope, *args)
        made.append(got is not None)
        return got

    monkeypatch.setattr(graph_viewer.OrderCache, "after_twins", after_twins)
    results = _optimized_both_ways(monkeypatch, optimizer_state, "INCREMENTAL_ORDERS", "nodes", build)
    assert results[True][:3] == results[False][:3] and any(r["reason"] == "cse" for r in results[True][0].values())
    assert made == ([False] if build is _twin_below_its_reader else [True])


@pytest.mark.parametrize("build", [lambda: _anchor_blocks(1), lambda: _anchor_blocks(20), lambda: _computed_reshape_blocks(3),
                                   lambda: _foldable_blocks(12),
                                   _if_fold_chain, _transformer_blocks])
def test_a_nothing_new_reinference_is_kept_until_something_up_its_inputs_changes(monkeypatch, build):
    """reinferred's "nothing new" answers are dropped when something up their inputs changes instead of after
    every change anywhere: what the optimizer model removes, rewires and makes constant is what dropping them
    all after every change gives, with fewer re-inference steps where shapes are asked again and again."""

    steps = [0]
    real = optimizer_state.OptimizerState._reinfer_node

    def counted(self, scope, value, depth):
        steps[0] += 1
        return real(self, scope, value, depth)

    monkeypatch.setattr(optimizer_state.OptimizerState, "_reinfer_node", counted)
    model = onnx.shape_inference.infer_shapes(build())
    results = {}
    for durable, budget in ((False, None), (True, None), (True, 3)):
        monkeypatch.setattr(optimizer_state, "DURABLE_REINFERENCE", durable)
        if budget is not None:  # past FORGET_BUDGET it falls back to dropping them all after every change
            monkeypatch.setattr(optimizer_state, "FORGET_BUDGET", budget)
        steps[0] = 0
        out = graph_transformer_mgr.optimize(GraphIndex(model))
        results[durable, budget] = ({k: asdict(r) for k, r in out.removed.items()}, dict(out.alias), set(out.constants), steps[0])
    every, kept = results[False, None], results[True, None]
    assert kept[:3] == every[:3] == results[True, 3][:3] and every[0]
    assert kept[3] <= every[3]
    if model.graph.node[-1].name.endswith("expand"):  # every block's Shape folds once its shape computation has
        names = {n.index: n.name for n in GraphIndex(model).nodes}
        folded = {names[i] for i, r in every[0].items() if r["reason"] == "shape-folding"}
        assert {n.name for n in model.graph.node if n.name.endswith("_shape")} <= folded
        if len(model.graph.node) > 20:
            assert kept[3] < every[3]


@pytest.mark.parametrize("build", [_if_fold_chain, _transformer_blocks, _cse_after_a_rewrite])
def test_the_order_the_passes_leave_is_the_order_of_the_optimized_graph(build):
    """Optimized.orders, which the partitioner's queue reuses, is ORT's node order of each graph as the passes
    left it (computed afresh, it is the same list), for the main graph at least."""

    gi = GraphIndex(build())
    out = graph_transformer_mgr.optimize(gi)
    assert id(gi.scopes[0]) in out.orders
    for scope in gi.scopes:
        if id(scope) in out.orders:
            assert out.orders[id(scope)] == graph_viewer.ort_topological_order(scope, out)


@pytest.mark.parametrize("scan", [0, 32])
def test_a_merge_moves_each_reader_once_whether_it_scans_the_readers_or_keeps_their_ids(monkeypatch, scan):
    """`remove` rewires a value's readers to the value it is replaced by: a reader of both (an Add of two CSE
    duplicates) is one reader of it afterwards, and a reader in a body follows too; the main graph's consumers
    lists are not changed (the state's readers overlay them)."""
    monkeypatch.setattr(optimizer_state, "MERGE_SCAN", scan)  # 0: a set of the readers' ids at every merge
    body = h.make_graph([h.make_node("Neg", ["b"], ["t"], name="neg")], "then", [], [vi("t", T.FLOAT, [2])])
    other = h.make_graph([h.make_node("Abs", ["a"], ["e"], name="abs")], "else", [], [vi("e", T.FLOAT, [2])])
    nodes = [h.make_node("Relu", ["x"], ["a"], name="ra"), h.make_node("Relu", ["x"], ["b"], name="rb"),
             h.make_node("Add", ["a", "b"], ["s"], name="add"), h.make_node("Mul", ["b", "s"], ["y"], name="mul"),
             h.make_node("If", ["c"], ["z"], name="if", then_branch=body, else_branch=other)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2]), vi("c", T.BOOL, [])], [vi("y", T.FLOAT, [2]), vi("z", T.FLOAT, [2])])
    gi = GraphIndex(m)
    named = {n.name: n for n in gi.nodes}
    main_a = tuple(gi.scopes[0].consumers["a"])
    state = optimizer_state.OptimizerState(gi, "all", lambda n: True)
    assert [r.name for r in state.readers_of("a")] == ["add", "abs"]  # read in the main graph and a body
    state.remove(named["rb"], "eliminated", "cse", "duplicate of ra", {"b": "a"})
    assert [r.name for r in state.live_readers("a")] == ["add", "abs", "mul", "neg"]  # add once
    assert gi.scopes[0].consumers["a"] == main_a  # the index's own list unchanged


def test_a_crash_of_inference_after_reshape_fusion_costs_its_shapes_not_the_run(monkeypatch):
    """ORT infers the graph again after ReshapeFusion's constants replace Concats (fused_shape): that onnx inference
    runs in the native worker too, and its crash is one note of the optimizer's result, with nothing learnt."""
    import os
    import signal

    from onnxlint.model.loading import native

    if not hasattr(os, "fork"):
        pytest.skip("no fork: native calls run in-process")
    nodes = [h.make_node("Concat", ["a", "b"], ["s"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "s"], ["r"], name="reshape"), h.make_node("Relu", ["r"], ["y"], name="relu")]
    model = make_model(nodes, [vi("x", T.FLOAT, ["n", 6]), vi("a", T.INT64, [1]), vi("b", T.INT64, [1])],
                       [vi("y", T.FLOAT, None)], opset=14)

    def fused() -> tuple[object, optimizer_state.OptimizerState]:
        gi = GraphIndex(onnx.shape_inference.infer_shapes(model))
        state = optimizer_state.OptimizerState(gi, "all", lambda n: True)
        state.fused_reshape("s", [2, 3])
        state.resolve_fused_reshapes()
        return state.fused_shape(gi.scopes[0], "r"), state

    assert fused()[0] == (2, 3)
    real = native._run

    def dies(kind, flags, payload):
        if kind == native._INFER and not flags:  # plain inference, not the load's strict pass
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(kind, flags, payload)

    native.shutdown()  # the next worker is forked with the patch
    monkeypatch.setattr(native, "_run", dies)
    try:
        shape, state = fused()
    finally:
        native.shutdown()
    assert shape is None
    assert state.result().notes == ["onnx's shape inference crashed on this model (signal 11) (with folded shapes): "
                                    "nothing learnt from it"]
