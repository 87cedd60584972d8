"""The words a reader meets: counts that agree with their nouns, deliberate placements not counted as
fallbacks, eliminated nodes not called provider-less, the fixable marker of --statistics."""

from __future__ import annotations

import json

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h


def _shape_computation():
    """x -> Shape -> Gather -> Concat -> Reshape(x): ORT keeps the small Gather and Concat on CPU on purpose."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Gather", ["s", "i0"], ["b"], name="gather", axis=0),
             h.make_node("Concat", ["b", "m1"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")]
    return make_model(nodes, [vi("x", T.FLOAT, ["n", 3, 4])], [vi("y", T.FLOAT, ["n", 12])],
                      [init("i0", np.array([0], np.int64)), init("m1", np.array([-1], np.int64))])


def test_deliberate_placements_are_not_fallbacks(save, cli):
    p = save(_shape_computation())
    _, out, _ = cli("placement", p)
    head = out.splitlines()[0]
    assert "0 fall back, 2 shape computations on CPU on purpose, 0 boundaries" in head, head
    assert "real" not in head and "shape-only" not in head
    _, out, _ = cli(p)
    assert "fall back" not in out  # nothing left the GPU: the placement summary is not printed


def test_counts_agree_with_their_nouns(save, cli):
    m = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 4])])
    _, out, _ = cli("placement", save(m))
    assert ": 1 node on CUDA, 0 fall back, 0 boundaries," in out, out
    _, out, _ = cli("placement", save(_shape_computation(), "s.onnx"), "--format", "json")
    assert json.loads(out)[0]["summary"]["line"].startswith("2 nodes on CUDA")


def test_eliminated_node_is_not_said_to_have_no_provider(save, cli):
    nodes = [h.make_node("Identity", ["x"], ["a"], name="id"), h.make_node("Relu", ["a"], ["y"], name="relu")]
    _, out, _ = cli("placement", save(make_model(nodes, [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 4])])))
    line = next(ln for ln in out.splitlines() if "graph/id:" in ln)
    assert "NO PROVIDER" not in line and "-> none (removed by ORT's graph optimizations) [eliminated]" in line
    custom = make_model([h.make_node("Fancy", ["x"], ["y"], name="f", domain="com.acme")], [vi("x", T.FLOAT, ["n", 4])],
                        [vi("y", T.FLOAT, ["n", 4])], extra_opsets=[("com.acme", 1)])
    _, out, _ = cli("placement", save(custom, "c.onnx"))
    assert "-> NO PROVIDER [unsupported]" in out  # what really has none still says so


def test_statistics_marks_fixable_rules(save, cli):
    nodes = [h.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop"), h.make_node("Relu", ["y"], ["z"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 4])], [vi("z", T.FLOAT, [1, 4])],
                   [init("r", np.array(0.5, np.float32)), init("t", np.array(True))])
    _, out, _ = cli(save(m), "--statistics", "--show-info")
    rows = out.splitlines()
    assert any(" OLX010  [*] dropout-training-mode [error]" in r for r in rows), out
    assert any(" OLX013      fully-static-input-shapes [info]" in r for r in rows), out  # no fixer: no marker
    assert rows[-1] == "[*] 1 finding fixable with --fix"


def test_training_dropout_under_onnxruntime_is_what_olx010_says(save, cli):
    """OLX010's message and onnxlint's placement say what ORT does (measured here): its default session removes a
    training-mode Dropout between two nodes (EliminateDropout ignores training_mode; graph_utils::CanRemoveNode
    wants its data input made by a node and its output read by nodes, not a graph output), and keeps one that
    reads a graph input, which then draws a new mask per run; with optimizations off every Dropout is kept."""
    ort = __import__("pytest").importorskip("onnxruntime")
    x = np.ones((8, 64), np.float32)
    weights = [init("r", np.array(0.5, np.float32)), init("t", np.array(True))]

    def runs(path, level):
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        return [session.run(None, {"x": x})[0] for _ in range(4)]

    kept = save(make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")], [vi("x", T.FLOAT, [8, 64])],
                           [vi("y", T.FLOAT, [8, 64])], weights), "kept.onnx")
    removed = save(make_model([h.make_node("Relu", ["x"], ["a"], name="relu"),
                               h.make_node("Dropout", ["a", "r", "t"], ["d"], name="drop"),
                               h.make_node("Relu", ["d"], ["y"], name="relu2")],
                              [vi("x", T.FLOAT, [8, 64])], [vi("y", T.FLOAT, [8, 64])], weights), "removed.onnx")
    said = "OLX010 Dropout runs in training mode (training_mode input t); outputs are random where it runs"
    removal = ", but ORT's graph optimizations (level all) remove it here: ONNX Runtime gives the eval-mode outputs"
    _, out, _ = cli(kept)
    assert said + "\n" in out and removal not in out, out  # ORT keeps it: random at every level
    _, out, _ = cli(removed)
    assert said + removal in out, out
    _, out, _ = cli(removed, "--ort-optimization", "disabled")  # ORT keeps it then: no "remove" claim
    assert said + "\n" in out and "remove it here" not in out, out
    default, off = ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    for r in (runs(kept, default), runs(removed, off)):
        assert all((o == 0).any() for o in r) and len({o.tobytes() for o in r}) > 1  # random, masked
    assert all(np.array_equal(o, x) for o in runs(removed, default))  # removed: the eval-mode output
    for p, eliminated in ((kept, False), (removed, True)):
        _, out, _ = cli("placement", p, "--ort-version", "1.24.4", "--format", "json")
        node = next(n for n in json.loads(out)[0]["nodes"] if n["node"] == "graph/drop")
        assert (node["status"] == "eliminated") == eliminated, node
