"""The shortcuts that make lint fast must not change what it finds."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint import loading
from onnxlint.loading import wire as loading_wire


def _big_weight_model():
    w = init("w", np.arange(64 * 64, dtype=np.float32).reshape(64, 64))  # 16 KiB: stripped for inference
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
        h.make_node("Reshape", ["mm", "flat"], ["r"], name="reshape"),
        h.make_node("Equal", ["r", "k"], ["y"], name="eq"),
    ]
    return make_model(nodes, [vi("x", T.FLOAT, [1, 64]), vi("k", T.INT32, [64])], [vi("y", T.BOOL, [64])],
                      [w, init("flat", np.array([-1], np.int64))])


def test_shape_inference_without_weight_bytes_keeps_dtypes_and_weights(save, lint_json):
    m = _big_weight_model()
    path = save(m)
    mf = loading.load(path)
    before = mf.model.graph.initializer[0].raw_data
    loading.infer_shapes(mf)
    assert mf.model.graph.initializer[0].raw_data == before  # the linted proto keeps its weights
    types = {v.name: v.type.tensor_type for v in mf.inferred.graph.value_info}
    assert types["r"].elem_type == T.FLOAT and [d.dim_value for d in types["r"].shape.dim] == [64]
    rc, findings = lint_json(path)
    eq = [f for f in findings if f["code"] == "OLX015"]
    assert eq and "float" in eq[0]["message"] and "int32" in eq[0]["message"]


def test_typed_field_weights_are_restored(save):
    w = h.make_tensor("w", T.FLOAT, [64, 64], np.ones(64 * 64, np.float32).tolist())  # float_data, not raw
    m = make_model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [vi("x", T.FLOAT, [1, 64])],
                   [vi("y", T.FLOAT, [1, 64])], [w])
    mf = loading.load(save(m))
    loading.infer_shapes(mf)
    assert len(mf.model.graph.initializer[0].float_data) == 64 * 64
    assert mf.inferred is not None and mf.inference_error is None


def _weightless_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    """What inference gets: the main graph's initializers over loading.WEIGHT_BYTES without their data."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            continue
        if t.HasField("raw_data"):
            if len(t.raw_data) > loading.WEIGHT_BYTES:
                t.ClearField("raw_data")
        elif t.ByteSize() > loading.WEIGHT_BYTES:
            for f in ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data"):
                t.ClearField(f)
    return m


def test_weightless_bytes_are_cut_from_the_file_bytes(save):
    """Inference's weight-less copy is cut out of the serialized model at the wire level: large raw and typed
    weights lose their data, small constants, external tensors and everything else stay, a raw_data given
    twice on the wire goes whole (the last one is the value), a graph given in two parts is left as it is,
    and the parsed model is not touched. From the file's bytes and from the model alone: the same bytes."""
    rng = np.random.default_rng(0)
    ext = init("e", np.zeros(4, np.float32))
    ext.ClearField("raw_data")
    ext.data_location = onnx.TensorProto.EXTERNAL
    ext.external_data.add(key="location", value="w.bin")
    inits = [init("w", rng.standard_normal((64, 64)).astype(np.float32)),  # raw, large
             h.make_tensor("t", T.FLOAT, [64, 64], np.ones(64 * 64, np.float32).tolist()),  # typed, large
             init("k", np.array([1, 2], np.int64)), ext]
    nodes = [h.make_node("MatMul", ["x", "w"], ["a"]), h.make_node("Add", ["a", "t"], ["b"]),
             h.make_node("Add", ["b", "e"], ["c"]), h.make_node("Reshape", ["c", "k"], ["y"])]
    m = make_model(nodes, [vi("x", T.FLOAT, [64, 64])], [vi("y", T.FLOAT, None)], inits)
    before = m.SerializeToString()
    cut = loading.weightless_bytes(m)
    got = onnx.ModelProto()
    got.ParseFromString(cut)
    assert got == _weightless_reference(m) and m.SerializeToString() == before
    assert len(cut) < len(before) - 2 * 64 * 64 * 4 + 200
    assert loading.weightless_bytes(m, before) == cut
    # raw_data twice on the wire: the parsed value is the last one; both go
    w2 = onnx.TensorProto()
    w2.raw_data = np.ones(2048, np.float32).tobytes()
    tensor = m.graph.initializer[0].SerializeToString() + w2.SerializeToString()
    rest = onnx.GraphProto()
    rest.CopyFrom(m.graph)
    del rest.initializer[0]
    graph = rest.SerializeToString() + b"\x2a" + loading_wire._encode_varint(len(tensor)) + tensor  # field 5
    shell = onnx.ModelProto()
    shell.CopyFrom(m)
    shell.ClearField("graph")
    wire = shell.SerializeToString() + b"\x3a" + loading_wire._encode_varint(len(graph)) + graph  # field 7
    parsed = onnx.ModelProto()
    parsed.ParseFromString(wire)
    assert parsed.graph.initializer[-1].name == "w" and parsed.graph.initializer[-1].raw_data == w2.raw_data
    got.ParseFromString(loading.weightless_bytes(parsed, wire))
    assert got == _weightless_reference(parsed) and not got.graph.initializer[-1].HasField("raw_data")
    # the graph in two parts (protobuf merges them): left whole
    extra = onnx.ModelProto()
    extra.graph.doc_string = "second part"
    split = before + extra.SerializeToString()
    parsed.ParseFromString(split)
    assert loading.weightless_bytes(parsed, split) == split


def test_a_lint_parses_the_model_without_its_weights(save):
    """load(lean=True), what a lint uses: the parsed model has no data for its large initializers (small
    constants keep theirs), inference gets the very bytes it was parsed from, and infers what a whole parse
    gives; an IR < 4 model (the checker is run again on the parsed model) is parsed whole."""
    m = _big_weight_model()
    path = save(m)
    lean, whole = loading.load(path, lean=True), loading.load(path)
    w = {t.name: t for t in lean.model.graph.initializer}
    assert not w["w"].HasField("raw_data") and list(w["w"].dims) == [64, 64]
    assert w["flat"].HasField("raw_data") or w["flat"].int64_data
    assert lean.weightless == loading.weightless_bytes(whole.model, whole.raw)
    loading.infer_shapes(lean)
    loading.infer_shapes(whole)
    assert lean.weightless is None and lean.inferred == whole.inferred
    m.ir_version = 3
    old = loading.load(save(m, "ir3.onnx"), lean=True)
    assert old.weightless is None and old.model.graph.initializer[0].HasField("raw_data")


def test_weightless_bytes_leave_the_parsed_model_its_memory(save):
    """Clearing a weight of the parsed model and setting it again (the old way) grew the model by the weight's
    size for good (protobuf's arena keeps the cleared bytes): 3 x 64 MiB here; cut from the file's bytes,
    nothing grows."""
    def rss_mb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    if not os.path.exists("/proc/self/statm"):
        pytest.skip("needs /proc")
    w = init("w", np.ones((4096, 4096), np.float32))  # 64 MiB
    m = make_model([h.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", T.FLOAT, [1, 4096])],
                   [vi("y", T.FLOAT, [1, 4096])], [w])
    mf = loading.load(save(m))
    data = mf.raw
    del m, w
    start = rss_mb()
    for _ in range(3):
        mf.raw = data  # as a lint has it: the file's bytes at hand (the old way did not read them)
        loading.infer_shapes(mf)
    assert mf.inferred is not None and rss_mb() - start < 48


def test_rule_on_input_dtype_sees_subgraph_reads_of_outer_values(save, lint_json):
    then_g = h.make_graph([h.make_node("Neg", ["d"], ["t"], name="neg_outer")], "then", [], [vi("t", T.DOUBLE, [2])])
    else_g = h.make_graph([h.make_node("Identity", ["d"], ["e"], name="id_outer")], "else", [], [vi("e", T.DOUBLE, [2])])
    m = make_model([h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                   [vi("c", T.BOOL, []), vi("d", T.DOUBLE, [2])], [vi("y", T.DOUBLE, [2])])
    rc, findings = lint_json(save(m), "--target", "tensorrt", "--select", "OLX307")
    nodes = {f["node"] for f in findings}
    assert "graph/if:then_branch/neg_outer" in nodes and "graph/if:else_branch/id_outer" in nodes


def test_nodes_sharing_a_signature_keep_their_own_attribute_verdicts(save, lint_json):
    """Kernel verdicts are shared between same-typed nodes; attribute rejections are not."""
    W, R = init("W", np.ones((1, 8, 4), np.float32)), init("R", np.ones((1, 8, 2), np.float32))
    nodes = [h.make_node("LSTM", ["x", "W", "R"], ["", "h0"], name="plain", hidden_size=2),
             h.make_node("LSTM", ["x", "W", "R"], ["", "h1"], name="clipped", hidden_size=2, clip=1.0)]
    m = make_model(nodes, [vi("x", T.FLOAT, [3, 1, 4])], [vi("h0", T.FLOAT, [1, 1, 2]), vi("h1", T.FLOAT, [1, 1, 2])], [W, R])
    rc, findings = lint_json(save(m), "--target", "ort-cuda")
    fallback = {f["node"] for f in findings if f["code"] == "OLX210"}
    assert fallback == {"graph/clipped"}


def test_findings_come_in_graph_order_and_json_is_one_object_per_line(save, cli):
    nodes = []
    x = "x"
    for i in range(30):
        nodes.append(h.make_node("Dropout", [x], [f"d{i}"], name=f"drop{i}"))
        nodes.append(h.make_node("Shape", [f"d{i}"], [f"s{i}"], name=f"shape{i}"))
        x = f"d{i}"
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 4])], [vi(x, T.FLOAT, ["n", 4])] + [vi(f"s{i}", T.INT64, [2]) for i in range(30)],
                   opset=11)
    m.graph.node[5].attribute.extend([h.make_attribute("seed", 1)])
    rc, out, _ = cli(save(m), "--format", "json")
    lines = out.strip().splitlines()
    assert lines[0] == "[" and lines[-1] == "]"
    findings = json.loads(out)
    assert len(lines) == len(findings) + 2
    order = [f["node"] for f in findings if f["node"] and f["node"].startswith("graph/")]
    positions = [next(i for i, n in enumerate(nodes) if order_name.endswith("/" + n.name)) for order_name in order]
    assert positions == sorted(positions)


def _chain_with_if(n: int) -> onnx.ModelProto:
    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(n)]
    then_g = h.make_graph([h.make_node("Identity", [f"v{n}"], ["t"], name="then_id")], "then", [], [vi("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Neg", [f"v{n}"], ["e"], name="else_neg")], "else", [], [vi("e", T.FLOAT, [2])])
    nodes.append(h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g))
    return make_model(nodes, [vi("v0", T.FLOAT, [2]), vi("c", T.BOOL, [])], [vi("y", T.FLOAT, [2])])


def test_graph_index_leaves_no_reference_cycles():
    """Nodes hold their scope weakly: dropping the index frees every node at once, with no work for the GC."""
    import gc

    from onnxlint.graph import GraphIndex

    m = _chain_with_if(2000)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        gi = GraphIndex(m)
        assert len(gi.nodes) == 2003 and gi.nodes[-1].scope.owner is gi.nodes[2000]
        assert all(gi.signature(n) for n in gi.nodes)
        del gi
        assert gc.collect() < 50  # was ~8 objects per node
    finally:
        if enabled:
            gc.enable()


def test_recorded_nodes_keep_their_scope_after_the_index_is_gone():
    import gc

    from onnxlint.graph import GraphIndex, StatusIndex

    class Verdict:
        def __init__(self, node, status):
            self.node, self.status = node, status

    class Pred(StatusIndex):
        def __init__(self):
            self.nodes = {}

    gi = GraphIndex(_chain_with_if(10))
    pred = Pred()
    for n in gi.nodes:
        pred.record(n.index, Verdict(n, "device"))
    del gi, n
    gc.collect()
    inner = [v.node for v in pred.nodes.values() if v.node.op_type == "Neg"][0]
    assert inner.scope.owner.op_type == "If" and inner.scope.parent.type_of("v0").dtype == "float"


def test_interned_index_of_a_big_graph_is_the_same(monkeypatch):
    from onnxlint import graph

    m = _chain_with_if(300)
    plain = graph.GraphIndex(m)
    monkeypatch.setattr(graph, "INTERN_NODES", 0)
    interned = graph.GraphIndex(m)
    assert [(n.location, n.inputs, n.outputs, plain.signature(n)) for n in plain.nodes] == \
           [(n.location, n.inputs, n.outputs, interned.signature(n)) for n in interned.nodes]


def _shared_weight_blocks(n: int) -> onnx.ModelProto:
    """n Add nodes that all read one small shared initializer (a LayerNorm gamma shared by every block), then a
    Shape -> Reshape on a symbolic dim, so data propagation has something to do."""
    nodes = [h.make_node("Add", [f"v{i}", "k"], [f"v{i + 1}"], name=f"add{i}") for i in range(n)]
    nodes += [h.make_node("Shape", [f"v{n}"], ["s"], name="shape"), h.make_node("Reshape", [f"v{n}", "s"], ["y"], name="reshape")]
    return make_model(nodes, [vi("v0", T.FLOAT, ["batch", 4])], [vi("y", T.FLOAT, None)],
                      [init("k", np.ones(4, np.float32))], opset=14)


def test_cse_checks_a_shared_constant_once_not_once_per_reader(monkeypatch):
    """canon() asked whether every reader of a value is in the scope for each of its readers: quadratic in
    the readers of a weight every block shares (100k nodes: 93 of 117 s). Now once per value."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    asked: list = []
    real = ort_optimizer._Optimizer._canon_of

    def canon_of(self, scope, value):
        asked.append(value)
        return real(self, scope, value)

    monkeypatch.setattr(ort_optimizer._Optimizer, "_canon_of", canon_of)
    gi = GraphIndex(_shared_weight_blocks(300))
    opt = ort_optimizer.optimize(gi)
    assert asked == ["k"]  # 300 readers, one check; values that are not constants are compared by name
    assert not opt.removed  # v_i + k chains: nothing is a duplicate of anything


def test_refined_shapes_are_lazy_and_leave_no_cycle():
    """Data propagation (a second onnx shape inference over the model) runs on the first lookup only, gives
    what it gave eagerly, and its walk over subgraphs is a loop: no self-referencing closure for the GC."""
    import gc

    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    gi = GraphIndex(_chain_with_if(50))
    shapes = ort_optimizer._refined_shapes(gi)
    assert shapes._infos is None  # nothing inferred yet
    assert shapes.get("v50") == (2,) and shapes.get("t") == (2,) and "e" in shapes and shapes.get("nope") is None
    gc.collect()
    gc.disable()
    try:
        shapes = ort_optimizer._refined_shapes(GraphIndex(_shared_weight_blocks(20)))
        assert shapes.get("y") == (None, 4)  # Reshape to Shape(v20): only data propagation knows the rank
        del shapes
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_optimizer_passes_share_one_order_between_changes(monkeypatch):
    """The node order is recomputed only after a pass removed something: a pass that changed nothing hands
    its order to the next (a 100k-node graph: 16 orders became 5). The result is the same either way."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Relu", ["x"], ["b"], name="r2"),  # CSE: r2 goes
             h.make_node("Add", ["a", "b"], ["y"], name="add")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    orders: list = []
    real = ort_optimizer.ort_topological_order

    def counted(scope, opt=None):
        orders.append(scope.path)
        return real(scope, opt)

    monkeypatch.setattr(ort_optimizer, "ort_topological_order", counted)
    opt = ort_optimizer.optimize(GraphIndex(m))
    assert [r.reason for r in opt.removed.values()] == ["cse"]
    passes = 4 * 2  # two rounds of the four passes: the first removes r2, the second finds nothing
    assert 0 < len([p for p in orders if p == "graph"]) <= 3 < passes


def _foldable_blocks(n: int) -> onnx.ModelProto:
    """n blocks over a symbolic batch: a Shape -> Gather -> Unsqueeze -> Concat -> Reshape shape computation,
    a constant chain (Cast -> Mul of initializers) feeding an Add, an Identity, and an If on a constant
    condition whose taken branch reads a folded value; what constant folding, ReshapeFusion and the If rule
    work on together."""
    nodes, inits = [], [init("two", np.array([2.0], np.float32)), init("zero", np.array([0], np.int64)),
                        init("four", np.array([4], np.int64)), init("c", np.array(True))]
    x = "x"
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("Shape", [x], [p + "s"]), h.make_node("Gather", [p + "s", "zero"], [p + "g"], axis=0),
                  h.make_node("Concat", [p + "g", "four"], [p + "shape"], axis=0),
                  h.make_node("Reshape", [x, p + "shape"], [p + "r"]),
                  h.make_node("Cast", ["two"], [p + "t"], to=T.FLOAT), h.make_node("Mul", [p + "t", "two"], [p + "k"]),
                  h.make_node("Identity", [p + "k"], [p + "ki"]),
                  h.make_node("Add", [p + "r", p + "ki"], [p + "a"])]
        then_g = h.make_graph([h.make_node("Add", [p + "a", p + "ki"], [p + "o1"])], p + "then", [],
                              [vi(p + "o1", T.FLOAT, None)])
        else_g = h.make_graph([h.make_node("Sub", [p + "a", p + "ki"], [p + "o2"])], p + "else", [],
                              [vi(p + "o2", T.FLOAT, None)])
        nodes.append(h.make_node("If", ["c"], [p + "y"], then_branch=then_g, else_branch=else_g))
        x = p + "y"
    return make_model(nodes, [vi("x", T.FLOAT, ["batch", 4])], [vi(x, T.FLOAT, None)], inits, opset=14)


def _if_fold_chain() -> onnx.ModelProto:
    """X reads the output of an If on a constant condition whose taken branch is Identity(s), s an outer value
    that only folds two runs later (each If inlined leaves one node to fold in the next run: an If's implicit
    inputs are no edges of the order). Once If_A is inlined, X reads s through the branch's Identity."""
    def vb(name):
        return vi(name, T.BOOL, [1])

    def if_node(cond, src, y, tag):
        branch = [h.make_graph([h.make_node("Identity", [src], [f"{side}{tag}"])], f"{tag}_{side}", [], [vb(f"{side}{tag}")])
                  for side in ("t", "e")]
        return h.make_node("If", [cond], [y], name=f"If_{tag}", then_branch=branch[0], else_branch=branch[1])

    nodes = [if_node("cT", "ra", "y_a", "a"), h.make_node("Not", ["y_a"], ["ca"], name="C_a"),
             h.make_node("Not", ["kF"], ["ra"], name="R_a"), if_node("ca", "rb", "y_b", "b"),
             h.make_node("Not", ["y_b"], ["s"], name="C_b"), h.make_node("Not", ["ca"], ["rb"], name="R_b"),
             if_node("cT", "s", "y_A", "A"), h.make_node("Not", ["y_A"], ["out"], name="X")]
    inits = [h.make_tensor("cT", T.BOOL, [], [True]), h.make_tensor("kF", T.BOOL, [1], [False])]
    return make_model(nodes, [], [vb("out")], inits, opset=17)


@pytest.mark.parametrize("build", [lambda: _foldable_blocks(1), lambda: _foldable_blocks(12), _if_fold_chain])
def test_later_folding_runs_look_only_at_changed_nodes_with_the_same_answer(monkeypatch, build):
    """After its first run over the main graph, constant folding skips the nodes none of whose inputs were
    made constant or rewired since: what it removes, rewires and makes constant is what a run over every node
    gives, and it asks about fewer inputs."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    asked = [0]
    real = ort_optimizer._Optimizer.is_constant

    def is_constant(self, scope, value):
        asked[0] += 1
        return real(self, scope, value)

    monkeypatch.setattr(ort_optimizer._Optimizer, "is_constant", is_constant)
    results = {}
    for incremental in (False, True):
        monkeypatch.setattr(ort_optimizer, "INCREMENTAL_FOLDING", incremental)
        asked[0] = 0
        opt = ort_optimizer.optimize(GraphIndex(build()))
        results[incremental] = ({k: vars(r) for k, r in opt.removed.items()}, opt.alias, opt.constants, asked[0])
    full, inc = results[False], results[True]
    assert inc[:3] == full[:3]
    reasons = {r["reason"] for r in full[0].values()}
    assert {"constant-folding", "if-constant", "identity"} <= reasons, reasons
    assert inc[3] < full[3] or (build is _if_fold_chain and inc[3] == full[3])  # its runs all find work


def _transformer_blocks() -> onnx.ModelProto:
    """The benchmark's transformer blocks (Shape-computed Reshapes, shared weights CSE merges, MatMul + Add,
    a constant-condition If at the end): every pass of the optimizer model has work in it."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        import bench_lint
    finally:
        sys.path.pop(0)
    return bench_lint.transformer(400)


def _cse_after_a_rewrite() -> onnx.ModelProto:
    """Relu(If(true: Identity(x))) beside Relu(x): CSE finds nothing in the first round; constant folding then
    inlines the If, the next round's EliminateIdentity rewires the first Relu to x, and the round after that
    CSE merges the two Relus."""
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"], name="id_then")], "then", [], [vi("t", T.FLOAT, [4])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="neg")], "else", [], [vi("e", T.FLOAT, [4])])
    nodes = [h.make_node("If", ["c"], ["i"], name="if", then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["i"], ["a"], name="relu_a"), h.make_node("Relu", ["x"], ["b"], name="relu_b"),
             h.make_node("Add", ["a", "b"], ["y"], name="add")]
    return make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], [init("c", np.array(True))], opset=17)


def _anchor_blocks(n: int) -> onnx.ModelProto:
    """n torchvision-anchor-like blocks: Range(0, Shape(x)[3]) -> Reshape(-1, 1) -> Cast -> Mul by its graph input
    -> Add 0 -> Shape -> Expand. NoopElimination asks the Add's shape before constant folding has folded the
    Range chain (nothing new then, up the whole chain); once folded, the Mul (which never folds) has a static
    shape again and the Shape of it folds: an answer kept from before the fold must not be reused."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape_x"), h.make_node("Gather", ["s", "i3"], ["w"], name="gather", axis=0)]
    outs = []
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("Range", ["zero", "w", "one"], [p + "r"], name=p + "range"),
                  h.make_node("Reshape", [p + "r", "col"], [p + "rc"], name=p + "reshape"),
                  h.make_node("Cast", [p + "rc"], [p + "rcf"], name=p + "cast", to=T.FLOAT),
                  h.make_node("Mul", [p + "rcf", p + "g"], [p + "m"], name=p + "mul"),
                  h.make_node("Add", [p + "m", "zf"], [p + "a"], name=p + "add"),
                  h.make_node("Shape", [p + "a"], [p + "s2"], name=p + "shape"),
                  h.make_node("Relu", ["y"], [p + "y1"], name=p + "relu1"), h.make_node("Relu", [p + "y1"], [p + "y2"], name=p + "relu2"),
                  h.make_node("Shape", [p + "y2"], [p + "sy"], name=p + "shape_y"),  # dynamic: asked in every folding run
                  h.make_node("Expand", [p + "y2", p + "s2"], [p + "out"], name=p + "expand")]
        outs += [vi(p + "out", T.FLOAT, None), vi(p + "sy", T.INT64, [2])]
    inits = [init("i3", np.array(3, np.int64)), init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
             init("col", np.array([-1, 1], np.int64)), init("zf", np.array(0.0, np.float32))]
    inputs = [vi("x", T.FLOAT, [1, 3, 4, 5]), vi("y", T.FLOAT, ["n", 1])] + [vi(f"b{i}_g", T.FLOAT, [1]) for i in range(n)]
    return make_model(nodes, inputs, outs, inits, opset=13)


def _computed_reshape_blocks(n: int) -> onnx.ModelProto:
    """n blocks: Reshape(graph input, Abs(Shape(x)[2:4])) -> Mul -> Add 0 -> Shape -> Expand. Data propagation
    stops at the Abs, so the Reshape's shape is unknown until constant folding makes its shape input a constant;
    the Reshape itself never folds (its data is a graph input) and its shape input was never asked about: only
    the news that the shape input became constant can drop the "nothing new" NoopElimination's question left."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape_x"), h.make_node("Gather", ["s", "i23"], ["hw0"], name="gather", axis=0),
             h.make_node("Abs", ["hw0"], ["hw"], name="abs")]
    outs = []
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("Reshape", [p + "g", "hw"], [p + "rs"], name=p + "reshape"),
                  h.make_node("Mul", [p + "rs", "k"], [p + "m"], name=p + "mul"),
                  h.make_node("Add", [p + "m", "zf"], [p + "a"], name=p + "add"),
                  h.make_node("Shape", [p + "a"], [p + "s2"], name=p + "shape"),
                  h.make_node("Expand", ["y", p + "s2"], [p + "out"], name=p + "expand")]
        outs.append(vi(p + "out", T.FLOAT, None))
    inits = [init("i23", np.array([2, 3], np.int64)), init("k", np.array(2.0, np.float32)), init("zf", np.array(0.0, np.float32))]
    inputs = [vi("x", T.FLOAT, [1, 3, 4, 5]), vi("y", T.FLOAT, [1, 5])] + [vi(f"b{i}_g", T.FLOAT, [20]) for i in range(n)]
    return make_model(nodes, inputs, outs, inits, opset=13)


@pytest.mark.parametrize("build", [lambda: _anchor_blocks(1), lambda: _anchor_blocks(20), lambda: _computed_reshape_blocks(3),
                                   lambda: _foldable_blocks(12),
                                   _if_fold_chain, _transformer_blocks])
def test_a_nothing_new_reinference_is_kept_until_something_up_its_inputs_changes(monkeypatch, build):
    """reinferred's "nothing new" answers are dropped when something up their inputs changes instead of after
    every change anywhere: what the optimizer model removes, rewires and makes constant is what dropping them
    all after every change gives, with fewer re-inference steps where shapes are asked again and again."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    steps = [0]
    real = ort_optimizer._Optimizer._reinfer_node

    def counted(self, scope, value, depth):
        steps[0] += 1
        return real(self, scope, value, depth)

    monkeypatch.setattr(ort_optimizer._Optimizer, "_reinfer_node", counted)
    model = onnx.shape_inference.infer_shapes(build())
    results = {}
    for durable, budget in ((False, None), (True, None), (True, 3)):
        monkeypatch.setattr(ort_optimizer, "DURABLE_REINFERENCE", durable)
        if budget is not None:  # past FORGET_BUDGET it falls back to dropping them all after every change
            monkeypatch.setattr(ort_optimizer, "FORGET_BUDGET", budget)
        steps[0] = 0
        out = ort_optimizer.optimize(GraphIndex(model))
        results[durable, budget] = ({k: vars(r) for k, r in out.removed.items()}, dict(out.alias), set(out.constants), steps[0])
    every, kept = results[False, None], results[True, None]
    assert kept[:3] == every[:3] == results[True, 3][:3] and every[0]
    assert kept[3] <= every[3]
    if model.graph.node[-1].name.endswith("expand"):  # every block's Shape folds once its shape computation has
        names = {n.index: n.name for n in GraphIndex(model).nodes}
        folded = {names[i] for i, r in every[0].items() if r["reason"] == "shape-folding"}
        assert {n.name for n in model.graph.node if n.name.endswith("_shape")} <= folded
        if len(model.graph.node) > 20:
            assert kept[3] < every[3]


@pytest.mark.parametrize("build", [lambda: _foldable_blocks(12), _if_fold_chain, _transformer_blocks, _cse_after_a_rewrite])
def test_a_pass_that_found_nothing_is_not_run_again_until_something_changes(monkeypatch, build):
    """_Optimizer._pass: a pass that found nothing in a graph is skipped there until a removal or
    ConstantSharing changes what it reads; what the optimizer model removes, rewires and makes constant is what
    running every pass in every round gives, with fewer passes run."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    ran = [0]
    for name in ("cse", "rewrite_rules", "constant_folding", "reshape_fusion", "matmul_add_fusion", "transpose_cancel",
                 "contiguous_reshapes"):
        real = getattr(ort_optimizer._Optimizer, name)

        def counted(self, scope, real=real):
            ran[0] += 1
            return real(self, scope)

        monkeypatch.setattr(ort_optimizer._Optimizer, name, counted)
    results = {}
    for skip in (False, True):
        monkeypatch.setattr(ort_optimizer, "SKIP_UNCHANGED_PASSES", skip)
        ran[0] = 0
        out = ort_optimizer.optimize(GraphIndex(build()))
        results[skip] = ({k: vars(r) for k, r in out.removed.items()}, dict(out.alias), set(out.constants), ran[0])
    every, skipping = results[False], results[True]
    assert skipping[:3] == every[:3] and every[0]
    assert skipping[3] < every[3]
    if build is _cse_after_a_rewrite:
        assert sorted(r["reason"] for r in every[0].values()) == ["cse", "identity", "if-constant", "if-constant"]


@pytest.mark.parametrize("build", [_if_fold_chain, _transformer_blocks, _cse_after_a_rewrite])
def test_the_order_the_passes_leave_is_the_order_of_the_optimized_graph(build):
    """Optimized.orders, which the partitioner's queue reuses, is ORT's node order of each graph as the passes
    left it (computed afresh, it is the same list), for the main graph at least."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    gi = GraphIndex(build())
    out = ort_optimizer.optimize(gi)
    assert id(gi.scopes[0]) in out.orders
    for scope in gi.scopes:
        if id(scope) in out.orders:
            assert out.orders[id(scope)] == ort_optimizer.ort_topological_order(scope, out)


def test_a_node_rewired_to_a_constant_after_a_folding_run_is_folded_on_the_next():
    """What lets the later runs skip nodes: every change to a node's inputs (a value made constant, a value
    rewired by a removal) marks its readers; a reader marked since the last run is looked at again."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    nodes = [h.make_node("Identity", ["x"], ["i"], name="ident"), h.make_node("Neg", ["i"], ["y"], name="neg")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], [init("k", np.ones(4, np.float32))])
    gi = GraphIndex(m)
    opt = ort_optimizer._Optimizer(gi, "all", lambda n: True)
    main = gi.scopes[0]
    opt._tracking = True
    assert not opt.constant_folding(main) and not opt.constant_folding(main)
    ident, neg = main.nodes
    opt.remove(ident, "eliminated", "test", "a later pass rewires its readers to k", {"i": "k"})
    assert opt.constant_folding(main) and opt.out.removed[neg.index].reason == "constant-folding"


def test_ort_order_is_the_reverse_dfs_from_the_last_leaf_with_producers_by_index():
    """GraphViewer's order as the optimizer model uses it (CSE keeps the first node of it): leaves started
    from the last, producers pushed by ascending index (so the highest is visited first), a node emitted on
    leaving; a value read twice is one edge."""
    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    nodes = [h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Neg", ["x"], ["b"], name="b"),
             h.make_node("Add", ["b", "a"], ["c"], name="c"), h.make_node("Mul", ["a", "a"], ["d"], name="d"),
             h.make_node("Concat", ["a", "b", "a", "c"], ["e"], name="e", axis=0)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("d", T.FLOAT, [2]), vi("e", T.FLOAT, [8])])
    gi = GraphIndex(m)
    assert [n.name for n in ort_optimizer.ort_topological_order(gi.scopes[0])] == ["b", "a", "c", "e", "d"]
