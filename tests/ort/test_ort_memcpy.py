"""Memcpy boundaries (ort.memcpy): the copies ORT inserts between host and device after partitioning."""

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import FLOATS, INF, _place, _tables

import onnxlint.ort.partitioner as placement


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
