"""RemoveDuplicateCastTransformer (ort.insert_cast_transformer): after partitioning, at every level, optimizations
disabled included. The expected placements and Memcpy counts are ORT's own (onnxruntime-gpu 1.24.4 and 1.31.1,
real sessions on these models with optimizations disabled)."""

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _place, _tables

import onnxlint.ort.partitioner as placement
from onnxlint.ort.insert_cast_transformer import unsafe_cast


def _casts_model():
    nodes = [h.make_node("Cast", ["n32"], ["d"], name="to_double", to=T.DOUBLE),
             h.make_node("Cast", ["d"], ["i"], name="back_to_int32", to=T.INT32),
             h.make_node("Add", ["i", "one"], ["o1"], name="add"),
             h.make_node("Cast", ["m"], ["b"], name="to_bool", to=T.BOOL),
             h.make_node("Cast", ["b"], ["b2"], name="bool_to_bool", to=T.BOOL),
             h.make_node("Where", ["b2", "x", "y"], ["o2"], name="where"),
             h.make_node("Cast", ["n64"], ["n64_32"], name="to_int32", to=T.INT32),
             h.make_node("Cast", ["n64_32"], ["n64_64"], name="back_to_int64", to=T.INT64),
             h.make_node("Add", ["n64_64", "n64"], ["o3"], name="add64")]
    return make_model(nodes, [vi("n32", T.INT32, ["N"]), vi("m", T.FLOAT, ["N"]), vi("x", T.FLOAT, ["N"]), vi("y", T.FLOAT, ["N"]),
                              vi("n64", T.INT64, ["N"])],
                      [vi("o1", T.INT32, ["N"]), vi("o2", T.FLOAT, ["N"]), vi("o3", T.INT64, ["N"])],
                      [init("one", np.array([1], np.int32))], opset=19)


def _tables_with_where(version):
    return _tables(cuda_extra={"Where": [[16, INF, ANY]]}, cpu_extra={"Where": [[16, INF, ANY]], "Unique": [[11, INF, ANY]]},
                   version=version)


@pytest.mark.parametrize("level", ["disabled", "basic", "all"])
@pytest.mark.parametrize("version", ["1.24.4", "1.31.1"])
def test_a_cast_pair_back_to_its_input_type_goes_at_every_level(version, level):
    by, _ = _place(_casts_model(), level, tables=_tables_with_where(version), version=version)
    # int32 -> double -> int32: ORT removes both (their readers read n32)
    for n in ("to_double", "back_to_int32"):
        assert by[n].status == "eliminated" and by[n].reason == "duplicate-cast" and by[n].ep is None, (n, by[n])
    # int64 -> int32 -> int64: the first Cast loses information (UnsafeCast), the second widens again: both stay
    assert by["to_int32"].ep == by["back_to_int64"].ep == placement.CUDA
    # float -> bool -> bool: with optimizations, CastElimination (Level 1) removes the bool -> bool Cast first;
    # without, 1.24.4 removes the first Cast after partitioning and 1.31.1 keeps a lossy Cast before a Cast to bool
    if level != "disabled":
        assert by["bool_to_bool"].status == "eliminated" and by["bool_to_bool"].reason == "cast"
        assert by["to_bool"].status == "device"
    elif version == "1.24.4":
        assert by["to_bool"].status == "eliminated" and by["bool_to_bool"].status == "device"
    else:
        assert by["to_bool"].status == by["bool_to_bool"].status == "device" and by["to_bool"].ep == placement.CUDA


def test_memcpy_nodes_follow_the_rewired_graph():
    # n8 -> Cast(double) -> Cast(int8) -> Unique (CPU only): ORT removes both Casts, then inserts no Memcpy
    # (Unique reads the graph input); with the Casts placed on CUDA there would be one
    nodes = [h.make_node("Cast", ["n8"], ["d"], name="to_double", to=T.DOUBLE),
             h.make_node("Cast", ["d"], ["i"], name="back_to_int8", to=T.INT8),
             h.make_node("Unique", ["i"], ["u"], name="unique")]
    model = make_model(nodes, [vi("n8", T.INT8, ["N"])], [vi("u", T.INT8, None)])
    int8 = ["tensor(int8)", "tensor(double)"]
    tables = _tables(cuda_extra={"Cast": [[13, INF, {"T1": int8, "T2": int8}]]},
                     cpu_extra={"Cast": [[13, INF, {"T1": int8, "T2": int8}]], "Unique": [[11, INF, ANY]]})
    by, pl = _place(model, "disabled", tables=tables)
    assert by["to_double"].status == by["back_to_int8"].status == "eliminated"
    assert by["unique"].ep == placement.CPU and pl.boundaries == []
    # one Cast alone stays on CUDA: its output is copied to the host for Unique
    by, pl = _place(make_model(nodes[:1] + [h.make_node("Unique", ["d"], ["u"], name="unique")], [vi("n8", T.INT8, ["N"])],
                               [vi("u", T.DOUBLE, None)]), "disabled", tables=tables)
    assert by["to_double"].ep == placement.CUDA and [(b.value, b.direction) for b in pl.boundaries] == [("d", "to-host")]


def test_unsafe_cast_follows_the_type_groups():
    assert unsafe_cast("tensor(float)", "tensor(int64)") and unsafe_cast("tensor(int64)", "tensor(int32)")
    assert unsafe_cast("tensor(int32)", "tensor(uint32)") and unsafe_cast("tensor(int64)", "tensor(double)")
    assert not unsafe_cast("tensor(int32)", "tensor(double)") and not unsafe_cast("tensor(uint8)", "tensor(int16)")
    assert unsafe_cast("tensor(float16)", "tensor(bfloat16)") and unsafe_cast("tensor(string)", "tensor(float)")
    assert not unsafe_cast("tensor(bool)", "tensor(bool)") and not unsafe_cast("tensor(float16)", "tensor(float)")


def test_a_cast_that_writes_the_name_it_reads_is_not_rewired_onto_itself(tmp_path):
    """A model that writes a name twice, the second time by a Cast of it to its own type (Mul -> v, Cast(v) -> v):
    the Cast is its own reader and casts back to its input's type, and rewiring v to v made the duplicate-Cast
    removal and the Memcpy pass loop for ever with ORT's optimizations disabled (found by a review). It stays a
    placed node. Run in a child, so that a loop fails the test instead of stopping the suite. ORT refuses the model
    ("Duplicate definition of name (v)": OLX007, and `onnxlint placement` says so), so the simulation is asked
    directly, without the lint's Graph::Resolve answer, as a caller of partitioner.simulate may."""
    nodes = [h.make_node("Mul", ["x", "x"], ["v"], name="mul"),
             h.make_node("Cast", ["v"], ["v"], name="cast_onto_itself", to=T.FLOAT),
             h.make_node("Abs", ["v"], ["y"], name="abs")]
    path = tmp_path / "m.onnx"
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=17), path)
    code = ("import json, sys, onnx\nfrom onnxlint.model.graph import GraphIndex\nfrom onnxlint.ort import partitioner\n"
            "pl = partitioner.simulate(GraphIndex(onnx.load(sys.argv[1])), 'ort-cuda', optimization='disabled')\n"
            "print(json.dumps({p.node.name: [p.status, p.ep] for p in pl.nodes.values()}))")
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    by = json.loads(run.stdout)
    assert tuple(by["cast_onto_itself"]) == ("device", "CUDAExecutionProvider"), by
