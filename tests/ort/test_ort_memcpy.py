"""Memcpy boundaries (ort.memcpy): the copies ORT inserts between host and device after partitioning."""

import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import FLOATS, INF, _place, _tables

import onnxlint.ort.partitioner as placement
from onnxlint.model import graph, loading
from onnxlint.model.graph import GraphIndex
from onnxlint.ort import memcpy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from gen_cuda_memory import registrations  # noqa: E402


def test_a_graph_input_read_on_both_sides_gets_one_memcpy():
    """transformer_memcpy.cc: a graph input read by a CPU node and a CUDA node gets one MemcpyFromHost (the
    attention node tests: Q read by a CPU Shape computation and a CUDA MatMul); read by CUDA nodes only it gets
    none (the session copies it in); an initializer never does (duplicated per device)."""
    def model(cpu_reader: bool, x_is_init: bool = False):
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu")]
        if cpu_reader:
            nodes.append(h.make_node("Sin", ["x"], ["s"], name="sin"))  # a CPU kernel only (tables below)
        inputs = [] if x_is_init else [vi("x", T.FLOAT, [2, 8])]
        inits = [init("x", np.ones((2, 8), np.float32))] if x_is_init else []
        outs = [vi("r", T.FLOAT, [2, 8])] + ([vi("s", T.FLOAT, [2, 8])] if cpu_reader else [])
        return make_model(nodes, inputs, outs, inits)

    tables = _tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]})
    by, pl = _place(model(cpu_reader=True), tables=tables)
    assert by["sin"].ep == placement.CPU and by["relu"].ep == placement.CUDA
    assert [(b.value, b.direction, b.producer, b.consumer.name, b.bytes) for b in pl.boundaries] == [("x", "to-device", None, "relu", 64)]
    assert not _place(model(cpu_reader=False), tables=tables)[1].boundaries
    assert not _place(model(cpu_reader=True, x_is_init=True), tables=tables)[1].boundaries


def test_an_expanded_function_counts_copies_on_the_provider_its_body_runs_on():
    """ORT expands a CastLike with no kernel into a Cast on CUDA: its output read by a CPU node needs a
    MemcpyToHost (the attention `_expanded` node tests: 2,124 -> 2,320 of ORT's 2,332 Memcpy nodes on 1.24.4)."""
    nodes = [h.make_node("CastLike", ["x", "like"], ["c"], name="castlike"),
             h.make_node("Sin", ["c"], ["y"], name="sin")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 8]), vi("like", T.FLOAT16, [1])], [vi("y", T.FLOAT16, [2, 8])], opset=19)
    by, pl = _place(m, tables=_tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]}))
    assert by["castlike"].status == "expanded" and by["castlike"].ep == placement.CUDA and by["sin"].ep == placement.CPU
    assert [(b.value, b.direction, b.producer.name, b.consumer.name, b.bytes) for b in pl.boundaries] == [
        ("c", "to-host", "castlike", "sin", 32)]


def test_memcpy_of_an_inlined_if_branch_is_counted_in_the_graph_around_it():
    """ORT inlines the branch of an If on a constant condition into the enclosing graph (checked with 1.24.4's
    optimized model): a graph input read by a CUDA node outside and a CPU node inside the branch gets one copy,
    and the If's output, made by a CUDA node in the branch and read by a CPU node, one MemcpyToHost."""
    tables = _tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]})
    else_g = h.make_graph([h.make_node("Relu", ["x"], ["eo"], name="erelu")], "else", [], [vi("eo", T.FLOAT, [2, 8])])
    then_b = h.make_graph([h.make_node("Sin", ["x"], ["to"], name="tsin")], "then", [], [vi("to", T.FLOAT, [2, 8])])
    m = make_model([h.make_node("Relu", ["x"], ["r"], name="relu"),
                    h.make_node("If", ["c"], ["io"], name="if", then_branch=then_b, else_branch=else_g)],
                   [vi("x", T.FLOAT, [2, 8])], [vi("r", T.FLOAT, [2, 8]), vi("io", T.FLOAT, [2, 8])],
                   [init("c", np.array(True))], opset=17)
    _, pl = _place(m, "all", tables=tables)
    assert [(b.value, b.direction, b.producer, b.consumer.name) for b in pl.boundaries] == [("x", "to-device", None, "relu")]
    then_c = h.make_graph([h.make_node("Relu", ["x"], ["to"], name="trelu")], "then", [], [vi("to", T.FLOAT, [2, 8])])
    m = make_model([h.make_node("If", ["c"], ["io"], name="if", then_branch=then_c, else_branch=else_g),
                    h.make_node("Sin", ["io"], ["s"], name="sin"), h.make_node("Relu", ["io"], ["r"], name="relu")],
                   [vi("x", T.FLOAT, [2, 8])], [vi("s", T.FLOAT, [2, 8]), vi("r", T.FLOAT, [2, 8])],
                   [init("c", np.array(True))], opset=17)
    _, pl = _place(m, "all", tables=tables)
    assert [(b.value, b.direction, b.producer.name, b.consumer.name) for b in pl.boundaries] == [("to", "to-host", "trelu", "sin")]


def _genai_attention_mask() -> onnx.ModelProto:
    """The GenAI builder's attn_mask_reformat: seqlens_k = Cast(ReduceSum(mask) - 1), total_sequence_length =
    Cast(Gather(Shape(mask), 1)) (GetCpuPreferredNodes keeps the latter on CPU), both read by GroupQueryAttention."""
    nodes = [h.make_node("ReduceSum", ["attention_mask", "one"], ["rs"], name="reduce_sum", keepdims=0),
             h.make_node("Sub", ["rs", "one"], ["sub"], name="sub"),
             h.make_node("Cast", ["sub"], ["seqlens_k"], name="seqlens_cast", to=T.INT32),
             h.make_node("Shape", ["attention_mask"], ["shape"], name="shape"),
             h.make_node("Gather", ["shape", "one_s"], ["total"], name="gather", axis=0),
             h.make_node("Cast", ["total"], ["total_seq_len"], name="total_cast", to=T.INT32),
             h.make_node("GroupQueryAttention", ["q", "", "", "past_key", "past_value", "seqlens_k", "total_seq_len"],
                         ["out", "present_key", "present_value"], name="gqa", domain="com.microsoft", num_heads=4, kv_num_heads=2)]
    return make_model(nodes, [vi("q", T.FLOAT16, ["B", "S", 128]), vi("attention_mask", T.INT64, ["B", "T"]),
                              vi("past_key", T.FLOAT16, ["B", 2, "P", 16]), vi("past_value", T.FLOAT16, ["B", 2, "P", 16])],
                      [vi("out", T.FLOAT16, None), vi("present_key", T.FLOAT16, None), vi("present_value", T.FLOAT16, None)],
                      [init("one", np.array([1], np.int64)), init("one_s", np.array(1, np.int64))],
                      extra_opsets=[("com.microsoft", 1)])


def test_group_query_attention_reads_total_sequence_length_from_host_memory():
    # ORT 1.24.4 and 1.31.1 (real sessions): Gather and its Cast on CPU (cpu-preferred), no Memcpy node: the CUDA
    # kernel takes input 6 in host memory (contrib_ops/cuda/bert/group_query_attention.cc, ort-cuda-memory.json);
    # onnxlint counted a copy to the device on every GenAI CUDA model
    index = GraphIndex(onnx.shape_inference.infer_shapes(_genai_attention_mask()))
    for version in ("1.24.4", "1.31.1"):
        pl = placement.simulate(index, "ort-cuda", version, optimization="disabled")
        by = {p.node.name: p for p in pl.nodes.values()}
        assert by["gqa"].ep == placement.CUDA and by["gather"].ep == by["total_cast"].ep == placement.CPU
        assert pl.boundaries == []


def test_the_host_memory_table_generator_reads_a_registration_macro():
    src = ("#define REGISTER_KERNEL_TYPED(T) \\\n  ONNX_OPERATOR_TYPED_KERNEL_EX( \\\n      GroupQueryAttention, \\\n      kMSDomain, \\\n"
           "      1, \\\n      T, \\\n      kCudaExecutionProvider, \\\n      (*KernelDefBuilder::Create()) \\\n"
           "          .MayInplace(3, 1) \\\n          .InputMemoryType(OrtMemTypeCPUInput, 6), \\\n      GroupQueryAttention<T>);\n"
           "ONNX_OPERATOR_KERNEL_EX(Shape, kOnnxDomain, 15, kCudaExecutionProvider,\n"
           "    (*KernelDefBuilder::Create()).OutputMemoryType(OrtMemTypeCPUOutput, 0), Shape);\n"
           "ONNX_OPERATOR_KERNEL_EX(Shape, kOnnxDomain, 15, kCpuExecutionProvider, (*KernelDefBuilder::Create()), Shape);\n")
    assert registrations(src) == [("GroupQueryAttention", 1, [6], []), ("Shape", 15, [], [0])]


def _read_through_an_identity() -> tuple[onnx.ModelProto, str, Any]:
    """relu reads y, which EliminateIdentity rewires to the graph input x, read on CPU by sin: relu is x's
    device-side reader only as it reads y after the transformers."""
    nodes = [h.make_node("Identity", ["x"], ["y"], name="id"), h.make_node("Relu", ["y"], ["r"], name="relu"),
             h.make_node("Sin", ["x"], ["s"], name="sin")]
    model = make_model(nodes, [vi("x", T.FLOAT, [2, 8])], [vi("r", T.FLOAT, [2, 8]), vi("s", T.FLOAT, [2, 8])])
    return model, "all", _tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]})


def _a_copy_per_edge_of_a_folded_dequantize_linear() -> tuple[onnx.ModelProto, str, Any]:
    """dq0 folds with its QDQ node unit; mul keeps a copy of it of its own, on CPU (16-bit), and reads nothing
    else on the host side: its one crossing is the copy's."""
    u16 = np.uint16
    nodes = [h.make_node("DequantizeLinear", ["bq", "s", "zp"], ["b"], domain="com.microsoft", name="dq0"),
             h.make_node("Relu", ["b"], ["bi"], name="mid"),
             h.make_node("QuantizeLinear", ["bi", "s2", "zp2"], ["q"], domain="com.microsoft", name="q"),
             h.make_node("DequantizeLinear", ["q", "s2", "zp2"], ["d"], domain="com.microsoft", name="dq1"),
             h.make_node("Add", ["x", "d"], ["y"], name="add"), h.make_node("Relu", ["x"], ["rx"], name="rx"),
             h.make_node("Mul", ["rx", "b"], ["z"], name="mul")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None), vi("z", T.FLOAT, None)],
                   [init("bq", np.array([1, 2, 3, 4], u16)), init("s", np.array(0.01, np.float32)), init("zp", np.array(0, u16)),
                    init("s2", np.array(0.02, np.float32)), init("zp2", np.array(0, u16))], extra_opsets=[("com.microsoft", 1)])
    return m, "basic", None  # the shipped tables


def _read_through_inlined_branches() -> tuple[onnx.ModelProto, str, Any]:
    """Two Ifs on a constant condition, each then-branch an Identity of the graph input x: inlined, relu and sin
    read x through their If's output, and no node of the main graph reads x itself."""
    def branch(k: int, op: str, out: str) -> onnx.GraphProto:
        return h.make_graph([h.make_node(op, ["x"], [out], name=f"{op}{k}")], f"b{k}{op}", [], [vi(out, T.FLOAT, [2, 8])])

    nodes = [h.make_node("If", ["c"], ["y1"], name="if1", then_branch=branch(1, "Identity", "t1"), else_branch=branch(1, "Neg", "e1")),
             h.make_node("If", ["c"], ["y2"], name="if2", then_branch=branch(2, "Identity", "t2"), else_branch=branch(2, "Neg", "e2")),
             h.make_node("Relu", ["y1"], ["r"], name="relu"), h.make_node("Sin", ["y2"], ["s"], name="sin")]
    model = make_model(nodes, [vi("x", T.FLOAT, [2, 8])], [vi("r", T.FLOAT, [2, 8]), vi("s", T.FLOAT, [2, 8])],
                       [init("c", np.array(True))])
    return model, "all", _tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]})


@pytest.mark.parametrize("intern_nodes", [200_000, 0])  # verdicts as a dict; as codes (a big model's)
@pytest.mark.parametrize("case,want", [
    (_read_through_an_identity, [("x", "to-device", None, "relu", 64)]),
    (_read_through_inlined_branches, [("x", "to-device", None, "relu", 64)]),
    (_a_copy_per_edge_of_a_folded_dequantize_linear, [("d", "to-device", "dq1", "add", None), ("b", "to-device", "dq0", "mul", None)]),
])
def test_memcpy_visits_only_the_nodes_an_edge_may_cross_at_and_finds_what_visiting_all_finds(monkeypatch, intern_nodes, case, want):
    """memcpy.CROSSABLE_ONLY leaves out CUDA nodes that read device-side outputs only: a node that reads a graph
    input only through a rewired name (one the graph reads itself or not), or a copy per edge of a removed
    DequantizeLinear, is still visited."""
    monkeypatch.setattr(graph, "INTERN_NODES", intern_nodes)
    model, level, tables = case()
    got = []
    for crossable_only in (True, False):
        monkeypatch.setattr(memcpy, "CROSSABLE_ONLY", crossable_only)
        index = GraphIndex(onnx.shape_inference.infer_shapes(model))
        pl = placement.Simulator(index, "ort-cuda", "1.24.4", optimization=level, tables=tables).run()
        assert pl.nodes.in_index_order() == (intern_nodes == 0)  # both ways of reading the verdicts' order
        got.append([(b.value, b.direction, b.producer.name if b.producer else None, b.consumer.name, b.bytes) for b in pl.boundaries])
    assert got[0] == got[1] == want


def _group_norms(case: str) -> onnx.ModelProto:
    """GroupNormalization-21 in an opset-23 model between the nodes of the probes measured on ORT 1.23.0 and 1.23.2
    (the truth harness): relu -> gn -> relu; the graph's input and output; the input read by a CUDA Relu too; two
    in a row; its output read by a CPU Transpose and a CUDA Relu; its scale made by a CUDA Relu."""
    def gn(x: str, y: str, name: str = "gn", scale: str = "s") -> onnx.NodeProto:
        return h.make_node("GroupNormalization", [x, scale, "b"], [y], num_groups=4, name=name)

    relu = lambda x, y: h.make_node("Relu", [x], [y], name=f"relu_{y}")  # noqa: E731
    nodes, outs = {
        "relu_both": ([relu("x", "r"), gn("r", "g"), relu("g", "y")], ["y"]),
        "graph_io": ([gn("x", "y")], ["y"]),
        "input_shared": ([gn("x", "y"), relu("x", "y2")], ["y", "y2"]),
        "two": ([relu("x", "r"), gn("r", "g1", "gn1"), gn("g1", "g2", "gn2"), relu("g2", "y")], ["y"]),
        "cpu_and_cuda_readers": ([relu("x", "r"), gn("r", "g"), h.make_node("Transpose", ["g"], ["y"], perm=[0, 1, 3, 2]),
                                  relu("g", "y2")], ["y", "y2"]),
        "scale_from_cuda": ([relu("x", "r"), relu("sc", "sr"), gn("r", "g", scale="sr"), relu("g", "y")], ["y"]),
    }[case]
    inputs = [vi("x", T.FLOAT, ["N", 16, 8, 8])] + ([vi("sc", T.FLOAT, [16])] if case == "scale_from_cuda" else [])
    return make_model(nodes, inputs, [vi(o, T.FLOAT, ["N", 16, 8, 8]) for o in outs],
                      [init("s", np.ones(16, np.float32)), init("b", np.zeros(16, np.float32))], opset=23, ir=11)


@pytest.mark.parametrize("intern_nodes", [200_000, 0])  # verdicts as a dict; as codes (a big model's)
@pytest.mark.parametrize("case,to_host,to_device", [
    ("relu_both", 4, 9), ("graph_io", 3, 8), ("input_shared", 3, 9), ("two", 7, 17), ("cpu_and_cuda_readers", 4, 9),
    ("scale_from_cuda", 5, 9)])
def test_a_function_body_inlined_on_both_providers_has_its_copies_counted(monkeypatch, tmp_path, intern_nodes, case, to_host,
                                                                           to_device):
    """ORT 1.23 has no CUDA Cast, Reshape or Shape at opset 23: the GroupNormalization-21 body it inlines runs
    partly on CPU, and its MemcpyTransformer copies between the body's own nodes (11 per body) and between them and
    the nodes around (the numbers ORT 1.23.0 and 1.23.2 insert at every level). onnxlint counted none of either
    (producer set's vision_block_dy_op23: 7 of ORT's 19); on 1.24.4 the body runs on CUDA: no copy."""
    monkeypatch.setattr(graph, "INTERN_NODES", intern_nodes)
    onnx.save(_group_norms(case), tmp_path / "m.onnx")
    index = loading.index_model(loading.load(tmp_path / "m.onnx"))  # as the CLI reads it (onnx infers no GN's output)
    for level in ("disabled", "all"):
        got = []
        for crossable_only in (True, False):
            monkeypatch.setattr(memcpy, "CROSSABLE_ONLY", crossable_only)
            pl = placement.simulate(index, "ort-cuda", "1.23.2", optimization=level)
            assert {p.status for p in pl.nodes.values() if p.node.op_type == "GroupNormalization"} == {"expanded"}
            got.append(sorted((b.value, b.direction) for b in pl.boundaries))
        assert got[0] == got[1]
        assert [d for _, d in got[0]].count("to-host") == to_host and [d for _, d in got[0]].count("to-device") == to_device
        assert not placement.simulate(index, "ort-cuda", "1.24.4", optimization=level).boundaries
    if case == "relu_both":  # ORT's: the body's X3D, ..., the Relu's output in, the body's output out
        assert {v for v, _ in got[0]} == {"r", "g", *(f"gn/{v}" for v in (
            "BiasReshaped", "C", "Epsilon", "InstanceShape", "N", "NormalizedT", "ScaleReshaped", "X3D",
            "Biased", "NewShape", "NormalizedU"))}


def _shared_initializer(case: str, n: int = 32) -> onnx.ModelProto:
    """An initializer of n floats read by a CPU node and by a CUDA Add (opset 21, ORT 1.23: no CUDA Identity-21 or
    Reshape-21), the probes measured on onnxruntime-gpu 1.20.2, 1.22.0, 1.23.0, 1.23.2, 1.24.4 and 1.31.1."""
    w = np.ones(n, np.float32)
    x = [vi("x", T.FLOAT, [n])]
    if case == "identity":
        nodes = [h.make_node("Identity", ["w"], ["wi"], name="ident"), h.make_node("Add", ["x", "wi"], ["y"], name="add"),
                 h.make_node("Add", ["x", "w"], ["z"], name="add2")]
        return make_model(nodes, x, [vi("y", T.FLOAT, [n]), vi("z", T.FLOAT, [n])], [init("w", w)], opset=21, ir=10)
    if case == "constant":  # a Constant's value_floats: an initializer ORT keeps in memory too
        nodes = [h.make_node("Constant", [], ["w"], value_floats=w.tolist(), name="const"),
                 h.make_node("Identity", ["w"], ["wi"], name="ident"), h.make_node("Add", ["x", "wi"], ["y"], name="add"),
                 h.make_node("Add", ["x", "w"], ["z"], name="add2")]
        return make_model(nodes, x, [vi("y", T.FLOAT, [n]), vi("z", T.FLOAT, [n])], opset=21, ir=10)
    if case == "reshape":  # a Reshape-21 of a shape only known at run time: kept at every level
        nodes = [h.make_node("Reshape", ["w", "s"], ["y"], name="reshape"), h.make_node("Add", ["x", "w"], ["z"], name="add2")]
        return make_model(nodes, [*x, vi("s", T.INT64, [1])], [vi("y", T.FLOAT, None), vi("z", T.FLOAT, [n])], [init("w", w)],
                          opset=21, ir=10)
    # host_input: int64[16] read as a CUDA Reshape's shape (host memory) and by a CUDA Add (opset 19: both on CUDA)
    nodes = [h.make_node("Reshape", ["x", "w"], ["y"], name="reshape"), h.make_node("Add", ["xi", "w"], ["z"], name="add2")]
    return make_model(nodes, [vi("x", T.FLOAT, [16]), vi("xi", T.INT64, [16])], [vi("y", T.FLOAT, None), vi("z", T.INT64, [16])],
                      [init("w", np.ones(16, np.int64))], opset=19, ir=10)


@pytest.mark.parametrize("case,n,refused_at", [
    ("identity", 32, {"disabled"}), ("identity", 31, set()), ("constant", 32, {"disabled"}),
    ("reshape", 32, {"disabled", "basic"}), ("host_input", 16, {"disabled", "basic"})])
def test_ort_1_23_refuses_a_copy_of_an_initializer_it_keeps_in_memory(tmp_path, case, n, refused_at):
    """ORT 1.23 keeps an initializer over 127 bytes in memory outside the proto; read by a CUDA node and by a CPU node
    (or a CUDA kernel's host-memory input), the MemcpyTransformer gives the CUDA nodes a copy that session creation
    refuses ('!utils::HasExternalDataInMemory(tensor_proto) was false'): on 1.23.0 and 1.23.2 at each level where
    the CPU reader stays (at basic ORT removes the Identity); 31 floats load; 1.22.0 and 1.24.4 load them all. Not
    claimed at `all` (ORT refuses the reshape and host_input ones there too: fusions onnxlint does not model may
    change readers). The producer set's int4 QDQ BERT at `disabled` (torch's Identity of a shared LayerNorm weight)."""
    onnx.save(_shared_initializer(case, n), tmp_path / "m.onnx")
    index = loading.index_model(loading.load(tmp_path / "m.onnx"))
    for version in ("1.22.0", "1.23.2", "1.24.4"):
        for level in ("disabled", "basic", "all"):
            pl = placement.simulate(index, "ort-cuda", version, optimization=level)
            refused = {p.reason for p in pl.nodes.values() if p.status == "refused"}
            want = version == "1.23.2" and level in refused_at
            assert refused == ({"initializer-copy"} if want else set()), (version, level)
            if want:
                assert "(over 127 bytes) is read by" in pl.refused and "SaveInitializedTensors" in pl.refused


def test_an_initializer_in_an_external_data_file_is_not_claimed(tmp_path):
    """ORT 1.23.2 loads the identity case with the initializer in an external data file (read later, not kept in
    memory at load): no claim."""
    onnx.save(_shared_initializer("identity"), tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    index = loading.index_model(loading.load(tmp_path / "m.onnx"))
    assert placement.simulate(index, "ort-cuda", "1.23.2", optimization="disabled").refused is None
