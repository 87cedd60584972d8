"""The shortcuts that make lint fast must not change what it finds."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from conftest import chain_with_if, init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.model import loading
from onnxlint.model.loading import wire as loading_wire


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


def _constant_weight_model():
    """Weights as Constant nodes (paddle2onnx's detectors): large float ones (raw, typed float16), and what keeps
    its data: a small one, a large int64 one (inference may read integer values), one inside an If body, one
    of another domain and a `value_floats` one."""
    rng = np.random.default_rng(1)
    big = h.make_tensor("wb", T.FLOAT, [64, 64], rng.standard_normal((64, 64)).astype(np.float32).tobytes(), raw=True)
    half = h.make_tensor("wh", T.FLOAT16, [64, 64], np.ones((64, 64), np.float16).view(np.uint16).flatten().tolist())
    ints = h.make_tensor("wi", T.INT64, [64, 64], np.arange(64 * 64, dtype=np.int64).tobytes(), raw=True)
    body = h.make_graph([h.make_node("Constant", [], ["t"], value=big)], "then", [], [vi("t", T.FLOAT, [64, 64])])
    nodes = [
        h.make_node("Constant", [], ["wb"], name="cb", value=big),
        h.make_node("MatMul", ["x", "wb"], ["m1"], name="mm1"),
        h.make_node("Constant", [], ["wh"], name="ch", value=half),
        h.make_node("Cast", ["wh"], ["whf"], name="cast", to=T.FLOAT),
        h.make_node("MatMul", ["m1", "whf"], ["m2"], name="mm2"),
        h.make_node("Constant", [], ["wi"], name="ci", value=ints),
        h.make_node("Cast", ["wi"], ["wif"], name="cast2", to=T.FLOAT),
        h.make_node("MatMul", ["m2", "wif"], ["m3"], name="mm3"),
        h.make_node("Constant", [], ["small"], name="cs", value=h.make_tensor("s", T.FLOAT, [1], [2.0])),
        h.make_node("Constant", [], ["wf"], name="cf", value_floats=np.ones(2048, np.float32).tolist()),
        h.make_node("Constant", [], ["wx"], name="cx", domain="custom", value=big),
        h.make_node("If", ["c"], ["y2"], name="if", then_branch=body, else_branch=body),
        h.make_node("Mul", ["m3", "small"], ["y"], name="mul"),
    ]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 64]), vi("c", T.BOOL, [])],
                   [vi("y", T.FLOAT, [1, 64]), vi("y2", T.FLOAT, [64, 64])])
    m.opset_import.append(h.make_opsetid("custom", 1))
    return m


def test_inference_gets_no_large_float_constant_values(save):
    """A lint's shape inference is sent the model without the data of its main graph's large floating-point
    Constant values too (it reads their dtype and dims), and the inferred model gets them back: it is the one a
    whole parse infers, and the parsed model keeps them. Integer values, small ones, those in a body or of
    another domain, and other kinds of value are sent as they are."""
    m = _constant_weight_model()
    path = save(m)
    lean, whole = loading.load(path, lean=True), loading.load(path)
    assert lean.model == whole.model  # no initializer here: parsed whole
    assert lean.stripped_constants == [(0, 0), (2, 0)]
    sent = onnx.ModelProto()
    sent.ParseFromString(lean.weightless)
    expected = onnx.ModelProto()
    expected.CopyFrom(m)
    expected.graph.node[0].attribute[0].t.ClearField("raw_data")
    expected.graph.node[2].attribute[0].t.ClearField("int32_data")
    assert sent == expected and len(lean.weightless) < len(whole.raw) - 64 * 64 * 6
    loading.infer_shapes(lean)
    loading.infer_shapes(whole)
    assert lean.inferred is not None and lean.inferred == whole.inferred and lean.inference_error is None
    assert lean.strict_error == whole.strict_error and lean.stripped_constants == [] and lean.weightless is None
    # a node that is not that Constant where the positions say: nothing is put back (infer_shapes infers again)
    other = onnx.ModelProto()
    other.CopyFrom(whole.inferred)
    other.graph.node[0].attribute[0].t.ClearField("raw_data")
    other.graph.node[2].attribute[0].t.ClearField("int32_data")
    other.graph.node[2].op_type = "Identity"
    assert not loading_wire.restore_constants(other, whole.model, [(0, 0), (2, 0)])
    assert not other.graph.node[0].attribute[0].t.HasField("raw_data")
    assert loading_wire.restore_constants(other, whole.model, [(0, 0)])
    assert other.graph.node[0].attribute[0].t == whole.model.graph.node[0].attribute[0].t


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
    assert "if:then_branch/neg_outer" in nodes and "if:else_branch/id_outer" in nodes


def test_nodes_sharing_a_signature_keep_their_own_attribute_verdicts(save, lint_json):
    """Kernel verdicts are shared between same-typed nodes; attribute rejections are not."""
    W, R = init("W", np.ones((1, 8, 4), np.float32)), init("R", np.ones((1, 8, 2), np.float32))
    nodes = [h.make_node("LSTM", ["x", "W", "R"], ["", "h0"], name="plain", hidden_size=2),
             h.make_node("LSTM", ["x", "W", "R"], ["", "h1"], name="clipped", hidden_size=2, clip=1.0)]
    m = make_model(nodes, [vi("x", T.FLOAT, [3, 1, 4])], [vi("h0", T.FLOAT, [1, 1, 2]), vi("h1", T.FLOAT, [1, 1, 2])], [W, R])
    rc, findings = lint_json(save(m), "--target", "ort-cuda")
    fallback = {f["node"] for f in findings if f["code"] == "OLX210"}
    assert fallback == {"clipped"}


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
    order = [f["node"] for f in findings if f["node"] and not f["node"].startswith("input:")]
    positions = [next(i for i, n in enumerate(nodes) if order_name == n.name) for order_name in order]
    assert positions == sorted(positions)


def test_graph_index_leaves_no_reference_cycles():
    """Nodes hold their scope weakly: dropping the index frees every node at once, with no work for the GC."""
    import gc

    from onnxlint.model.graph import GraphIndex

    m = chain_with_if(2000)
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

    from onnxlint.model.graph import GraphIndex, StatusIndex

    class Verdict:
        def __init__(self, node, status):
            self.node, self.status = node, status

    class Pred(StatusIndex):
        def __init__(self):
            self.nodes = {}

    gi = GraphIndex(chain_with_if(10))
    pred = Pred()
    for n in gi.nodes:
        pred.record(n.index, Verdict(n, "device"))
    del gi, n
    gc.collect()
    inner = [v.node for v in pred.nodes.values() if v.node.op_type == "Neg"][0]
    assert inner.scope.owner.op_type == "If" and inner.scope.parent.type_of("v0").dtype == "float"


@pytest.mark.parametrize("big_graph", [False, True])
def test_consumers_are_each_values_readers_in_node_order_as_tuples(monkeypatch, big_graph):
    """A scope's consumers: a value's readers, in node order, as a tuple, for one, two and more readers (the walk
    keeps up to two in a tuple, a list past that, made a tuple again when the walk is done), in the main graph and
    in a body that reads an outer value; a node reading one value twice is its reader twice."""
    from onnxlint.model import graph

    if big_graph:
        monkeypatch.setattr(graph, "INTERN_NODES", 0)
    body_nodes = [h.make_node("Neg", ["d"], [f"b{k}"], name=f"neg{k}") for k in range(3)]
    body = h.make_graph(body_nodes + [h.make_node("Sum", ["b0", "b1", "b2"], ["t"], name="sum")], "then", [],
                        [vi("t", T.FLOAT, [2])])
    nodes = [h.make_node("Relu", ["x"], [name], name=f"r_{name}") for name in "abcd"]
    readers = {"a": 1, "b": 2, "c": 3, "d": 5}
    for name, count in readers.items():
        nodes += [h.make_node("Abs", [name], [f"{name}{k}"], name=f"abs_{name}{k}") for k in range(count)]
    nodes.append(h.make_node("Add", ["d0", "d0"], ["twice"], name="add"))
    nodes.append(h.make_node("If", ["cond"], ["y"], name="if", then_branch=body, else_branch=body))
    gi = graph.GraphIndex(make_model(nodes, [vi("x", T.FLOAT, [2]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, [2])]))
    for scope in gi.scopes:
        want: dict = {}
        for n in scope.nodes:
            for name in n.inputs:
                want.setdefault(name, []).append(n)
        assert scope.consumers == {name: tuple(reader) for name, reader in want.items()}, scope.path
        assert all(readers.__class__ is tuple for readers in scope.consumers.values()), scope.path
    main, then_scope = gi.scopes[0], gi.scopes[1]
    assert [len(main.consumers[name]) for name in "xabcd"] == [4, 1, 2, 3, 5] and len(main.consumers["d0"]) == 2
    assert [n.name for n in then_scope.consumers["d"]] == ["neg0", "neg1", "neg2"]
    assert not hasattr(gi, "_grown")


def test_interned_index_of_a_big_graph_is_the_same(monkeypatch):
    from onnxlint.model import graph

    m = chain_with_if(300)
    plain = graph.GraphIndex(m)
    monkeypatch.setattr(graph, "INTERN_NODES", 0)
    interned = graph.GraphIndex(m)
    assert [(n.location, n.inputs, n.outputs, plain.signature(n)) for n in plain.nodes] == \
           [(n.location, n.inputs, n.outputs, interned.signature(n)) for n in interned.nodes]
    # a value's name is one str in a big graph's index: its producer's output, its readers' inputs, its type's key
    shared = 0
    for n in interned.nodes:
        for name in n.inputs:
            producer = n.scope.producer_of(name)
            if producer is not None:
                assert any(out is name for out in producer.outputs), name
                shared += 1
        for name in n.outputs:
            assert all(key is name for key in n.scope.types if key == name)
    assert shared > 300 and not hasattr(interned, "_names")  # the walk's table of names went with it


def test_an_index_without_node_protos_reads_each_nodes_own_proto(save, monkeypatch):
    """The lint's index of a big graph (loading.index_model) holds no NodeProto wrapper per node (400 MB at 1M
    nodes): each node reads its proto from its graph's node list when asked, the same one the index that keeps
    them holds, in the main graph, control-flow bodies and local functions alike."""
    from onnxlint.model import graph

    monkeypatch.setattr(graph, "INTERN_NODES", 0)  # every graph is a big one

    m = chain_with_if(5)
    f = h.make_function("local", "Twice", ["a"], ["b"], [h.make_node("Relu", ["a"], ["m"], name="f_relu"),
                                                          h.make_node("Relu", ["m"], ["b"], name="f_relu2")],
                        [h.make_opsetid("", 17)])
    m.functions.append(f)
    m.opset_import.append(h.make_opsetid("local", 1))
    m.graph.node.append(h.make_node("Twice", ["v5"], ["w"], domain="local", name="call", doc_string="twice"))
    m.graph.node.append(h.make_node("Relu", ["w"], ["w2"]))  # no name: located by op and position
    kept, lazy = graph.GraphIndex(m), graph.GraphIndex(m, keep_protos=False)
    assert len(kept.nodes) == len(lazy.nodes) == 12 and any(n.scope.is_function for n in lazy.nodes)
    assert all(n._proto is None and n._name is None for n in lazy.nodes)  # names read from the protos too
    assert [(n.name, n.location) for n in kept.nodes] == [(n.name, n.location) for n in lazy.nodes]
    assert "graph/Relu#7" in {n.location for n in lazy.nodes} and "graph/if:then_branch/then_id" in {n.location for n in lazy.nodes}
    assert [n.proto.SerializeToString() for n in kept.nodes] == [n.proto.SerializeToString() for n in lazy.nodes]
    assert [n.proto.name for n in lazy.nodes] == [n.name for n in lazy.nodes]
    # what a finding names a node by: its name, its location's node_path, its doc_string, with or without protos
    from onnxlint.model.locations import node_path

    for n in kept.nodes + lazy.nodes:
        assert n.named() == (n.name, node_path(n.location), n.proto.doc_string), n
    assert ("", "Relu#7", "") in [n.named() for n in lazy.nodes] and ("call", "call", "twice") in [n.named() for n in lazy.nodes]
    assert ("f_relu", "function:local.Twice/f_relu", "") in [n.named() for n in lazy.nodes]
    assert ("then_id", "if:then_branch/then_id", "") in [n.named() for n in lazy.nodes]
    index = loading.index_model(loading.load(save(m), lean=True))
    assert all(n._proto is None for n in index.nodes)
    assert [n.proto.name for n in index.nodes] == [n.name for n in kept.nodes]
    monkeypatch.setattr(graph, "INTERN_NODES", 200_000)  # a small graph keeps its protos (each read would make one)
    assert all(n._proto is not None for n in graph.GraphIndex(m, keep_protos=False).nodes)


def _flags_of(proto: onnx.NodeProto) -> int:
    from onnxlint.model import graph

    if not proto.attribute:
        return 0
    return graph.HAS_ATTRIBUTES | (graph.HOLDS_GRAPH if any(a.type in (5, 10) for a in proto.attribute) else 0)


def test_attribute_flags_are_the_protos_with_or_without_them(monkeypatch):
    """A lint's index (keep_protos False) answers attribute_flags from the walk's column (each scope holds it),
    also for a node kept after its index is gone; an index that keeps its protos reads them (a fixer may change
    a node's attributes)."""
    import gc

    from onnxlint.model import graph

    m = chain_with_if(4)
    m.graph.node.insert(1, h.make_node("Split", ["v1"], ["p", "q"], axis=0, name="split"))
    for big in (False, True):
        monkeypatch.setattr(graph, "INTERN_NODES", 0 if big else 200_000)
        lazy, kept = graph.GraphIndex(m, keep_protos=False), graph.GraphIndex(m)
        want = [_flags_of(n.proto) for n in kept.nodes]
        assert want.count(0) > 1 and graph.HAS_ATTRIBUTES in want and graph.HAS_ATTRIBUTES | graph.HOLDS_GRAPH in want
        assert [n.attribute_flags() for n in lazy.nodes] == want == [n.attribute_flags() for n in kept.nodes]
        assert all(s.node_flags is lazy.node_flags for s in lazy.scopes) and all(s.node_flags is None for s in kept.scopes)
        split = kept.by_op["Split"][0]
        split.proto.ClearField("attribute")  # what a fixer's index sees next
        assert split.attribute_flags() == 0
        split.proto.attribute.append(h.make_attribute("axis", 0))
        nodes = list(lazy.nodes)
        del lazy
        gc.collect()
        assert [n.attribute_flags() for n in nodes] == want


def test_shape_sized_reads_every_named_value_in_each_kind_of_scope():
    """shape_sized: no input or output known to hold more than SHAPE_SIZED elements (a main graph's types read
    from its own dict, a body's through type_of: a body sees its outer values), unknown and unnamed ones passed
    over."""
    from onnxlint.model import graph

    big, small = vi("big", onnx.TensorProto.FLOAT, [64, 64]), vi("small", onnx.TensorProto.INT64, [4])
    then_g = h.make_graph([h.make_node("Identity", ["big"], ["t"], name="reads_outer_big"),
                           h.make_node("Identity", ["small"], ["t2"], name="reads_outer_small")], "then", [],
                          [vi("t2", onnx.TensorProto.INT64, [4])])
    else_g = h.make_graph([h.make_node("Neg", ["small"], ["e"], name="makes_big")], "else", [],
                          [vi("e", onnx.TensorProto.FLOAT, [2, 1024])])
    nodes = [h.make_node("Relu", ["x"], ["big"], name="writes_big"), h.make_node("Shape", ["x"], ["small"], name="small"),
             h.make_node("Relu", ["u"], ["u2"], name="unknown"),
             h.make_node("Resize", ["small", "", "", "small"], ["r"], name="skips_empty"),
             h.make_node("Add", ["small", "big"], ["s"], name="reads_big_second"),
             h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    m = make_model(nodes, [vi("x", onnx.TensorProto.FLOAT, [None, 4]), vi("c", onnx.TensorProto.BOOL, []),
                           vi("u", onnx.TensorProto.FLOAT, None)], [vi("y", onnx.TensorProto.FLOAT, [2])])
    m.graph.value_info.extend([big, small])
    gi = graph.GraphIndex(m)
    sized = {n.name: graph.shape_sized(n) for n in gi.nodes}
    assert sized == {"writes_big": False, "small": True, "unknown": True, "skips_empty": True,
                     "reads_big_second": False, "if": True, "reads_outer_big": False, "reads_outer_small": True,
                     "makes_big": False}


def test_shape_sized_is_what_the_iterator_pipeline_gave(monkeypatch):
    """shape_sized reads each named input and output in a loop: the same answer, node by node, as the pipeline of
    iterators it replaced (filter(None, ...) over the names; the main graph's dict, UNKNOWN through type_of in a
    body), also where a Constant typed the empty name as a large tensor (an empty name is no value: passed over)
    and in a big graph's index (interned names)."""
    from itertools import chain

    from onnxlint.model import graph

    def pipeline(node):
        scope = node.scope
        names = filter(None, chain(node.inputs, node.outputs))
        for vt in filter(None, map(scope.types.get, names)) if scope.parent is None else map(scope.type_of, names):
            n = graph.least_elements(vt)
            if n is not None and n > graph.SHAPE_SIZED:
                return False
        return True

    m = chain_with_if(6)
    big = h.make_tensor("e", T.FLOAT, [64, 64], np.zeros(4096, np.float32))
    m.graph.node.insert(0, h.make_node("Constant", [], [""], value=big, name="typed_empty"))
    m.graph.node.insert(1, h.make_node("Resize", ["v0", "", "", "k"], ["rs"], name="empty_inputs"))
    m.graph.value_info.extend([vi("v2", T.FLOAT, [64, 64]), vi("v3", T.FLOAT, [2, None]), vi("v6", T.FLOAT, [40, 40])])
    for big_graph in (False, True):
        monkeypatch.setattr(graph, "INTERN_NODES", 0 if big_graph else 200_000)
        gi = graph.GraphIndex(m, keep_protos=False)
        assert gi.scopes[0].types[""].numel() == 4096
        got = [graph.shape_sized(n) for n in gi.nodes]
        assert got == [pipeline(n) for n in gi.nodes]
        assert got[1] and got.count(False) == 5  # the Relus writing and reading v2 and v6, the bodies reading v6


def test_signature_is_each_values_type_string_in_every_kind_of_scope(monkeypatch):
    """GraphIndex.signature: (domain, op, opset, the inputs' and outputs' type strings as type_of gives them,
    None for an empty name), read from one dict of type strings where the scope's own dict holds every type;
    a body reads its outer values' types, and a scope with a value named "" (a Constant may write one) reads
    each through type_of."""
    from onnxlint.model import graph

    m = chain_with_if(3)
    m.graph.node.insert(0, h.make_node("Constant", [], ["k"], value=h.make_tensor("k", onnx.TensorProto.INT64, [1], [2])))
    m.graph.node.insert(1, h.make_node("Resize", ["v0", "", "", "k"], ["rs"], name="resize"))
    m.graph.value_info.append(vi("v2", onnx.TensorProto.FLOAT16, [2]))
    odd = onnx.ModelProto()
    odd.CopyFrom(m)
    odd.graph.node.insert(0, h.make_node("Constant", [], [""], value=h.make_tensor("e", onnx.TensorProto.BOOL, [], [1])))
    for big in (False, True):
        monkeypatch.setattr(graph, "INTERN_NODES", 0 if big else 200_000)
        for model in (m, odd):
            gi = graph.GraphIndex(model, keep_protos=False)
            want = [(n.domain, n.op_type, n.opset, tuple(n.scope.type_of(v).type_str if v else None for v in n.inputs),
                     tuple(n.scope.type_of(v).type_str if v else None for v in n.outputs)) for n in gi.nodes]
            assert [gi.signature(n) for n in gi.nodes] == want
            assert ("tensor(float)", None, None, "tensor(int64)") in {w[3] for w in want}  # resize
            assert any(w[4] == ("tensor(float16)",) for w in want) and any(w[3] == ("tensor(float16)",) for w in want)
            assert len({id(gi.signature(n)) for n in gi.nodes}) == len(set(want))  # one object a distinct signature
            assert (gi.scopes[0].type_strs is False) == (model is odd) and gi.scopes[1].type_strs is False


def _types_read_the_long_way(g: onnx.GraphProto) -> dict:
    """A graph's value types as the index read them before it skipped WhichOneof for a typed tensor: each
    value_info of the inputs, value_info and outputs through value_type_of, a later one kept where the earlier
    had no type string, or no shape and the later one has."""
    from onnxlint.model import graph

    types: dict = {i.name: graph.ValueType(*graph._tensor_type_str(i.data_type), tuple(i.dims)) for i in g.initializer}
    for v in [*g.input, *g.value_info, *g.output]:
        if v.type.WhichOneof("value") is None:
            continue
        vt, old = graph.value_type_of(v.type), types.get(v.name)
        if old is None or old.type_str is None or (old.shape is None and vt.shape is not None):
            types[v.name] = vt
    return types


@pytest.mark.parametrize("big_graph", [False, True])
def test_scope_types_are_value_type_of_each_value_info(monkeypatch, big_graph):
    """GraphIndex's scope types: a tensor of a known dtype read without WhichOneof, anything else (a tensor of
    no dtype with a shape, a sequence, an optional, a value_info with no type at all) as value_type_of reads
    it, in the same order; reading a tensor_type that is not set leaves the value_info as it was."""
    from onnxlint.model import graph

    if big_graph:
        monkeypatch.setattr(graph, "INTERN_NODES", 0)
    untyped_dtype = h.make_tensor_value_info("nodtype", T.UNDEFINED, [3, "n"])
    seq = h.make_value_info("seq", h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, [2])))
    opt = h.make_value_info("opt", h.make_optional_type_proto(h.make_tensor_type_proto(T.INT64, [])))
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r"), h.make_node("Identity", ["a"], ["nodtype"], name="i"),
             h.make_node("SequenceConstruct", ["a"], ["seq"], name="s"), h.make_node("Identity", ["w"], ["notype"]),
             h.make_node("Relu", ["nodtype"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, None]), vi("w", T.FLOAT, None)], [vi("y", T.FLOAT, [3, "n"])],
                   [init("w", np.ones((2,), np.float32))])
    m.graph.value_info.extend([vi("a", T.FLOAT16, None), vi("a", T.FLOAT16, [2, 2]), untyped_dtype, seq, opt,
                               onnx.ValueInfoProto(name="notype")])
    before = m.SerializeToString()
    types = graph.GraphIndex(m, keep_protos=False).scopes[0].types
    want = _types_read_the_long_way(m.graph)
    assert [(k, v.type_str, v.dtype, v.shape) for k, v in types.items()] == \
           [(k, v.type_str, v.dtype, v.shape) for k, v in want.items()]
    assert types["nodtype"].shape == (3, "n") and types["nodtype"].type_str is None and types["a"].shape == (2, 2)
    assert types["seq"].type_str == "seq(tensor(float))" and types["seq"].shape is None and "notype" not in types
    assert m.SerializeToString() == before
