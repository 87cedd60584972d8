"""Shapes from onnx's data propagation (ort.optimizer.refined_shapes): lazy, bounded, read where the index says."""

import gc
import json
import os
import signal

import numpy as np
import onnx
import pytest
from conftest import chain_with_if, init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _shared_weight_blocks

from onnxlint.model.graph import GraphIndex
from onnxlint.ort.optimizer import (
    refined_shapes,
)


def test_data_propagation_survives_large_float_weights_but_not_large_integer_tensors():
    """Shapes from data propagation decide which shape nodes ORT keeps on CPU; a detector's big conv weights
    (float, bytes stripped for inference) must not switch it off, a large int64 tensor (which it would
    materialise) does."""
    import onnx


    def model(big_dtype):
        big = onnx.TensorProto(name="big", data_type=big_dtype, dims=[1100, 1000])  # stripped: dims, no bytes
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
                 h.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),  # Reshape-14 reads propagated data
                 h.make_node("Relu", ["r"], ["y"], name="relu"),
                 h.make_node("Identity", ["big"], ["b"], name="keep")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, None), vi("b", big_dtype, None)],
                          [big], opset=14)

    shapes = refined_shapes.refined_shapes(GraphIndex(model(T.FLOAT)))
    assert shapes.get("r") == (2, 3)  # Reshape to Shape(x): only data propagation knows this
    assert refined_shapes.refined_shapes(GraphIndex(model(T.INT64))).get("r") is None  # not run at all


def test_no_data_propagation_over_a_long_constant_range():
    """onnx's data propagation writes a Range's whole output out as dims (20M elements: 5.6 GB): a Range over
    constants longer than the limit switches it off; a short one does not."""
    def model(limit):
        nodes = [h.make_node("Range", ["s", "l", "d"], ["r"], name="range"), h.make_node("Cast", ["r"], ["y"], to=T.FLOAT)]
        return make_model(nodes, [], [vi("y", T.FLOAT, None)],
                          [init("s", np.array(0, np.int64)), init("l", np.array(limit, np.int64)),
                           init("d", np.array(1, np.int64))], opset=13)

    assert refined_shapes._data_propagation_too_costly(model(200_000_000))
    assert not refined_shapes._data_propagation_too_costly(model(16))


def test_no_data_propagation_over_a_long_one_dimensional_value(monkeypatch):
    """onnx's data propagation spells out every 1-D input of a known length to an op that propagates data (Add,
    Cast, Gather, ...), whatever its type: a 5M-element 1-D tensor into an Add took +686 MB. Such a value in the
    inferred model switches RefinedShapes' inference off, and so does a flatten to a computed length (plain
    inference does not know it, data propagation would), sized by the Reshape's input."""
    from onnxlint.model import loading

    monkeypatch.setattr(refined_shapes, "DATA_PROP_MAX_ELEMENTS", 1000)

    def model(n, computed=False):
        if computed:  # Reshape(x, Shape(x)[1:2]): [1, n] -> [n], a length only data propagation knows
            nodes = [h.make_node("Shape", ["x"], ["xs"], name="xshape"),
                     h.make_node("Gather", ["xs", "one"], ["len"], name="len", axis=0),
                     h.make_node("Reshape", ["x", "len"], ["r"], name="flatten")]
        else:
            nodes = [h.make_node("Reshape", ["x", "flat"], ["r"], name="flatten")]
        nodes += [h.make_node("Add", ["r", "r"], ["y"], name="add"),
                  h.make_node("Shape", ["z"], ["zs"], name="shape"), h.make_node("Reshape", ["z", "zs"], ["w"], name="reshape")]
        inits = [init("flat", np.array([-1], np.int64)), init("one", np.array([1], np.int64))]
        return make_model(nodes, [vi("x", T.FLOAT, [1, n]), vi("z", T.FLOAT, ["n", 4])],
                          [vi("y", T.FLOAT, None), vi("w", T.FLOAT, None)], inits, opset=17)

    from onnxlint.model.loading import native

    calls = []
    real = native.infer_shapes
    monkeypatch.setattr(native, "infer_shapes", lambda *a, **k: calls.append(k) or real(*a, **k))
    for n, computed, costly in ((500, False, False), (2000, False, True), (500, True, False), (2000, True, True)):
        mf = loading.ModelFile(path=None, display="m", model=model(n, computed), file_size=0)
        index = loading.index_model(mf)
        assert refined_shapes._data_propagation_too_costly(index.model) is costly
        calls.clear()
        rs = refined_shapes.refined_shapes(index)
        assert rs.get("w") == (None if costly else (None, 4))
        assert bool([k for k in calls if k.get("data_prop")]) is not costly
        if computed and not costly:
            assert rs.get("r") == (n,)  # what data propagation learns there


def test_refined_shapes_read_what_the_index_knows_instead_of_walking():
    """RefinedShapes skips the walks over every node (inference budget, Range search, subgraph search) when the
    graph index says there is nothing to find; the answers are those of the walks."""
    from onnxlint.model import loading

    def model(with_if, with_range):
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["r"], name="reshape")]
        if with_range:
            nodes.append(h.make_node("Range", ["a", "b", "c"], ["q"], name="range"))
        if with_if:
            then_g = h.make_graph([h.make_node("Identity", ["r"], ["t"])], "then", [], [vi("t", T.FLOAT, None)])
            else_g = h.make_graph([h.make_node("Neg", ["r"], ["e"])], "else", [], [vi("e", T.FLOAT, None)])
            nodes.append(h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g))
        else:
            nodes.append(h.make_node("Relu", ["r"], ["y"], name="relu"))
        inits = [init("a", np.array(0, np.int64)), init("b", np.array(10 ** 8, np.int64)), init("c", np.array(1, np.int64))]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, None)],
                          inits, opset=17)  # Shape's data propagation: opset 15 on

    for with_if in (False, True):
        for with_range in (False, True):
            m = model(with_if, with_range)
            inferred = onnx.shape_inference.infer_shapes(m)
            refined = refined_shapes.refined_shapes(GraphIndex(inferred))
            assert refined._flat is not with_if and refined._has_range is with_range
            assert loading.over_inference_budget(inferred, budget=3, flat=refined._flat) \
                == loading.over_inference_budget(inferred, budget=3)
            assert refined_shapes._data_propagation_too_costly(inferred, refined._flat, refined._has_range) \
                is refined_shapes._data_propagation_too_costly(inferred) is with_range
            shaped = refined_shapes._shaped_types(inferred.graph, refined._flat)
            assert shaped == refined_shapes._shaped_types(inferred.graph) and ("t" in shaped) is with_if
            assert GraphIndex(inferred).scopes[0].type_of("r").shape == ("unk__0", "unk__1")
            # data propagation gives the Reshape its shape; not past a long constant Range
            assert refined.get("r") == (None if with_range else (2, 3))


def test_refined_shapes_find_bodies_where_the_index_says_and_read_entries_when_asked():
    """RefinedShapes finds the inferred model's bodies at the nodes the index names (no walk over every node)
    and keeps each name's last entry, reading its shape when asked: the answers are _shaped_types' over the
    full walk, a name given twice whose later entry has no shape included; bodies that do not match the index
    fall back to the full walk."""
    def branch(tag, inner=None):
        nodes = [h.make_node("Relu", ["r"], [f"{tag}_a"])]
        if inner is not None:
            nodes.append(h.make_node("If", ["cond"], [f"{tag}_o"], then_branch=inner[0], else_branch=inner[1]))
            nodes.append(h.make_node("Add", [f"{tag}_a", f"{tag}_o"], [f"{tag}_y"]))
        else:
            nodes.append(h.make_node("Identity", [f"{tag}_a"], [f"{tag}_y"]))
        return h.make_graph(nodes, tag, [], [vi(f"{tag}_y", T.FLOAT, None)])

    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Reshape", ["x", "s"], ["r"])]
    nodes += [h.make_node("Neg", ["r"], [f"n{i}"]) for i in range(5)]  # nodes before, between and after bodies
    nodes.append(h.make_node("If", ["cond"], ["y1"], then_branch=branch("t1", (branch("t1t"), branch("t1e"))),
                             else_branch=branch("e1")))
    nodes += [h.make_node("Neg", ["r"], [f"m{i}"]) for i in range(3)]
    nodes.append(h.make_node("If", ["cond"], ["y2"], then_branch=branch("t2"), else_branch=branch("e2")))
    nodes.append(h.make_node("Sum", ["y1", "y2", "n0", "m0"], ["y"]))
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, None)], opset=17)
    inferred = onnx.shape_inference.infer_shapes(m)
    # "r" once more, later, without a shape: the answer stays the shaped entry before it
    inferred.graph.output.append(onnx.helper.make_value_info("r", onnx.TypeProto()))
    gi = GraphIndex(inferred)
    bodies = refined_shapes._body_positions(gi)
    full = refined_shapes._walk_order(inferred.graph)
    assert len(full) == 7 and [g.name for g in refined_shapes._walk_order(inferred.graph, bodies=bodies)] \
        == [g.name for g in full]
    assert [g.name for g in refined_shapes._bodies_at(inferred.graph, bodies)] == [g.name for g in full]
    assert refined_shapes._shaped_types(inferred.graph, bodies=bodies) == refined_shapes._shaped_types(inferred.graph)
    refined = refined_shapes.refined_shapes(gi)
    again = onnx.shape_inference.infer_shapes(inferred, data_prop=True)
    expected = refined_shapes._shaped_types(again.graph)
    names = {vi_.name for g in full for part in (g.input, g.value_info, g.output) for vi_ in part} | {"nope"}
    for name in sorted(names):
        t = expected.get(name)
        want = None if t is None else tuple(d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim)
        assert refined.get(name) == want, name
    assert refined._types is None  # every last entry had its shape: no full dict was built
    # a name given twice, the later entry without a shape (inference fills a graph output's, so set by hand)
    g = h.make_graph([], "g", [vi("a", T.FLOAT, [2, 3])], [vi("a", T.FLOAT, None)])
    assert not g.output[0].type.tensor_type.HasField("shape")
    lone = refined_shapes.RefinedShapes(None)
    lone._inferred, lone._infos = g, {v.name: v for v in (*g.input, *g.output)}
    assert lone.get("a") == (2, 3) and lone._types == refined_shapes._shaped_types(g)
    # a copy whose bodies are not where the index says: the full walk answers
    other = onnx.ModelProto()
    other.CopyFrom(inferred)
    del other.graph.node[2]  # every node after it moves up one place
    assert refined_shapes._bodies_at(other.graph, bodies) is None
    assert [g.name for g in refined_shapes._walk_order(other.graph, bodies=bodies)] \
        == [g.name for g in refined_shapes._walk_order(other.graph)] == [g.name for g in full]


def test_refined_shapes_bound_the_budget_by_the_count_made_before_inference(monkeypatch):
    """With bodies, RefinedShapes' budget check on the inferred model is answered from loading's count before
    inference (its cost plus bodies x value_info) when that bound is within the budget: no second walk, the
    same shapes. Over it, the walk decides as before."""
    from onnxlint.model import loading

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["r"], name="reshape")]
    # a body value too: the bound counts it for every body, though only bodies nested in this one see it
    then_g = h.make_graph([h.make_node("Identity", ["r"], ["t0"]), h.make_node("Relu", ["t0"], ["t"])], "then", [],
                          [vi("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Neg", ["r"], ["e"])], "else", [], [vi("e", T.FLOAT, None)])
    nodes.append(h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g))
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, None)], [], opset=17)
    walks = []
    real = loading.inference._inference_work
    monkeypatch.setattr(loading.inference, "_inference_work", lambda *a, **k: walks.append(1) or real(*a, **k))

    def refined(budget):
        monkeypatch.setattr(loading.inference, "INFER_BUDGET", budget)
        index = loading.index_model(loading.ModelFile(path=None, display="m", model=m, file_size=0))
        cost, n, bodies = index.inference_work
        assert (n, bodies) == (6, 2) and cost <= budget
        added = sum(len(g.value_info) for g in refined_shapes._model_graphs(index))
        walks.clear()
        got = refined_shapes.refined_shapes(index).get("r")
        return got, len(walks), cost + bodies * added

    got, walked, bound = refined(loading.INFER_BUDGET)
    assert (got, walked) == ((2, 3), 0)  # data propagation ran, with no second walk
    exact = loading.inference_cost(loading.index_model(loading.ModelFile(path=None, display="m", model=m,
                                                                         file_size=0)).model)
    assert exact <= bound
    # a budget the count before inference fits but the bound does not: the walk decides, and it may run
    assert exact < bound
    got, walked, _ = refined(bound - 1)
    assert (got, walked) == ((2, 3), 1)
    assert loading.inference_cost(m) < exact  # inference adds value_info: the inferred model costs more
    got, walked, _ = refined(exact - 1)
    assert (got, walked) == (None, 1)  # over the budget on the inferred model: no data propagation


def test_refined_shapes_are_lazy_and_leave_no_cycle():
    """Data propagation (a second onnx shape inference over the model) runs on the first lookup only, gives
    what it gave eagerly, and its walk over subgraphs is a loop: no self-referencing closure for the GC."""

    gi = GraphIndex(chain_with_if(50))
    shapes = refined_shapes.refined_shapes(gi)
    assert shapes._infos is None  # nothing inferred yet
    assert shapes.get("v50") == (2,) and shapes.get("t") == (2,) and "e" in shapes and shapes.get("nope") is None
    gc.collect()
    gc.disable()
    try:
        shapes = refined_shapes.refined_shapes(GraphIndex(_shared_weight_blocks(20)))
        assert shapes.get("y") == (None, 4)  # Reshape to Shape(v20): only data propagation knows the rank
        del shapes
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_crash_of_data_propagation_costs_its_shapes_not_the_run(tmp_path, monkeypatch, cli):
    """onnx's data propagation is C++ that crashes on models plain inference passes (onnx#5212, a nested function):
    it runs in the native worker, and a crash there is one placement note; the optimizer goes on with the
    shapes of plain inference. In-process, the signal would end the whole run."""
    from onnxlint.model.loading import native

    if not hasattr(os, "fork"):
        pytest.skip("no fork: native calls run in-process")
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
             h.make_node("Relu", ["r"], ["y"], name="relu")]
    # a dynamic dim: ORT's constant folding cannot fold the Shape, and the optimizer asks for x's shape
    model = make_model(nodes, [vi("x", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)], opset=14)
    assert refined_shapes.refined_shapes(GraphIndex(model)).get("r") == (None, 3)  # data propagation's answer
    real = native._run

    def dies(kind, flags, payload):
        if kind == native._INFER and flags & 4:  # data_prop
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(kind, flags, payload)

    native.shutdown()  # the next worker is forked with the patch
    monkeypatch.setattr(native, "_run", dies)
    try:
        notes: list[str] = []
        assert refined_shapes.refined_shapes(GraphIndex(model), notes).get("r") is None
        assert notes == ["onnx's shape inference crashed on this model (signal 11) (with data propagation): "
                         "the shapes of plain inference are used instead"]
        onnx.save(model, tmp_path / "m.onnx")
        rc, out, err = cli("placement", tmp_path / "m.onnx", "--target", "ort-cuda", "--format", "json")
    finally:
        native.shutdown()
    assert rc in (0, 1) and "Traceback" not in err, err
    assert notes[0] in json.dumps(json.loads(out))
