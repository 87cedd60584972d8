"""GetCpuPreferredNodes (ort.cpu_preferred): small shape computations ORT keeps on CPU on purpose."""

import numpy as np
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _place, _tables

import onnxlint.ort.partitioner as placement
from onnxlint.model import graph
from onnxlint.ort import cpu_preferred


def test_cpu_preferred_sees_constant_value_ints():
    # CenterCropPad's expansion: Gather(Shape(x), Constant(value_ints)) - a Constant node's value_ints is a small
    # initializer for ORT, so GetCpuPreferredNodes keeps the Gather on CPU (was predicted on CUDA)
    nodes = [h.make_node("Constant", [], ["axes"], name="c", value_ints=[1, 2]),
             h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "axes"], ["g"], name="gather"),
             h.make_node("Concat", ["g", "g"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["a", "b", "c"])], [vi("y", T.FLOAT, None)], opset=19)
    by, _ = _place(m)
    assert by["gather"].status == "deliberate" and by["concat"].status == "deliberate" and by["reshape"].status == "device"


def test_a_folded_value_whose_size_is_learnt_after_folding_counts_as_a_small_initializer():
    """fasterrcnn op11's image padding: Concat(CPU shape values, ConstantOfShape(folded)) -> ... -> Pad pads.
    onnx's inference cannot size the ConstantOfShape; ORT, re-inferring after folding it, can, so the Concat
    reads a small initializer and a CPU tensor and is CPU-preferred (was predicted on CUDA: 5 misses)."""
    nodes = [h.make_node("Shape", ["x"], ["sx"], name="shape_x"),
             h.make_node("Gather", ["sx", "i0"], ["g"], name="gather_x", axis=0),
             h.make_node("Abs", ["g"], ["a"], name="abs"),  # no data propagation through Abs
             h.make_node("ConstantOfShape", ["a"], ["ones"], name="cos", value=init("v", np.array([1], np.int64))),
             h.make_node("Shape", ["z"], ["sz"], name="shape_z"),
             h.make_node("Gather", ["sz", "i01"], ["nz"], name="gather_z", axis=0),
             h.make_node("Concat", ["nz", "ones"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["z", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 2]), vi("z", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)],
                   [init("i0", np.array([0], np.int64)), init("i01", np.array([0, 1], np.int64))], opset=17)
    extra = {"Abs": [[13, INF, ANY]], "ConstantOfShape": [[9, INF, ANY]]}
    by, _ = _place(m, "all", tables=_tables(cuda_extra=extra, cpu_extra=extra))
    assert by["cos"].status == "folded" and by["concat"].status == "deliberate" and by["concat"].ep == placement.CPU


def test_the_queue_reaches_the_readers_of_names_rewired_to_a_cpu_tensor_either_way():
    """_Candidates: the readers of a name a transformer rewired (opt.alias, the whole model's), through a chain of
    rewirings, become candidates when what it resolves to becomes a CPU tensor; a rewired name itself is no
    one's input. Both ways of finding them give the same: by what each aliased name resolves to (a scope that
    reads fewer names than the model aliases) and from the value back through the rewirings (the other)."""
    from onnxlint.model.graph import GraphIndex
    from onnxlint.ort.cpu_preferred import _Candidates
    from onnxlint.ort.optimizer.optimized import Optimized

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Identity", ["s"], ["own"], name="own_reader"),
             h.make_node("Identity", ["s1"], ["r1"], name="reads_s1"),
             h.make_node("Identity", ["s2"], ["r2"], name="reads_s2"),
             h.make_node("Identity", ["t"], ["r3"], name="reads_t")]
    index = GraphIndex(make_model(nodes, [vi("x", T.FLOAT, [2]), vi("s1", T.INT64, [1]), vi("s2", T.INT64, [1]),
                                          vi("t", T.INT64, [1])], [vi("r3", T.INT64, None)]))
    scope = index.scopes[0]
    rewired = {"s1": "s", "s2": "s1", "t": "u"}  # s2 -> s1 -> s; t elsewhere
    for padding in (0, 100):  # 100 more aliased names than the scope reads: the other way
        opt = Optimized("all", alias={**rewired, **{f"pad{i}": "nowhere" for i in range(padding)}})
        queue = _Candidates(scope, opt)
        assert (queue.rewired_from is None) == (padding > 0)
        queue.on_cpu("s")
        queue.on_cpu("s1")  # rewired: its readers read s
        assert sorted(n.name for n in queue) == ["own_reader", "reads_s1", "reads_s2"]


def test_the_queue_follows_a_chain_of_rewirings_back_as_far_as_resolve_follows_it_forward():
    """A chain of rewirings longer than Optimized.resolve follows (100): a name further back resolves to a name on
    the chain, not to the CPU tensor, and its reader is no candidate of it, either way of finding them."""
    from onnxlint.model.graph import GraphIndex
    from onnxlint.ort.cpu_preferred import _Candidates
    from onnxlint.ort.optimizer.optimized import Optimized

    chain = {"a1": "s", **{f"a{k}": f"a{k - 1}" for k in range(2, 106)}}  # a105 -> a104 -> ... -> a1 -> s
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape")]
    nodes += [h.make_node("Identity", [name], [f"r_{name}"], name=f"reads_{name}") for name in chain]
    index = GraphIndex(make_model(nodes, [vi("x", T.FLOAT, [2]), *(vi(name, T.INT64, [1]) for name in chain)],
                                  [vi("r_a1", T.INT64, None)]))
    for padding in (0, 200):  # from the value back through the rewirings; by what each aliased name resolves to
        opt = Optimized("all", alias={**chain, **{f"pad{i}": "nowhere" for i in range(padding)}})
        queue = _Candidates(index.scopes[0], opt)
        assert (queue.rewired_from is None) == (padding > 0)
        queue.on_cpu("s")
        want = sorted(f"reads_{name}" for name in chain if opt.resolve(name) == "s")
        assert sorted(n.name for n in queue) == want and len(want) == 100


@pytest.mark.parametrize("intern_nodes", [200_000, 0])  # verdicts as a dict; as codes (a big model's)
def test_a_reader_of_a_cpu_tensor_at_a_host_memory_input_is_left_out_of_the_queue_with_the_same_placement(monkeypatch, intern_nodes):
    """cpu_preferred.SKIP_HOST_INPUT_READERS: a Reshape that reads the shape computation's output as its shape (an
    input its CUDA kernel takes in host memory) stays on CUDA without being judged; one that reads it as its data
    is still judged (and goes to CPU: all its inputs are CPU tensors); an Identity read-through as well."""
    monkeypatch.setattr(graph, "INTERN_NODES", intern_nodes)
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["g"], name="gather", axis=0),
             h.make_node("Concat", ["g", "one"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="as_shape"),
             h.make_node("Identity", ["shp"], ["shp2"], name="id"),
             h.make_node("Reshape", ["z", "shp2"], ["y2"], name="through_identity"),
             h.make_node("Reshape", ["shp", "flat"], ["y3"], name="as_data")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["a", "b"]), vi("z", T.FLOAT, ["a", "b"])],
                   [vi("y", T.FLOAT, None), vi("y2", T.FLOAT, None), vi("y3", T.INT64, None)],
                   [init("i0", np.array([0], np.int64)), init("one", np.array([-1], np.int64)), init("flat", np.array([-1], np.int64))])
    got = []
    for skip in (True, False):
        monkeypatch.setattr(cpu_preferred, "SKIP_HOST_INPUT_READERS", skip)
        by, _ = _place(m, "all")
        got.append({name: (p.ep, p.status) for name, p in by.items()})
    assert got[0] == got[1]
    assert got[0]["as_shape"] == got[0]["through_identity"] == (placement.CUDA, "device")
    assert got[0]["gather"] == got[0]["concat"] == got[0]["as_data"] == (placement.CPU, "deliberate")
