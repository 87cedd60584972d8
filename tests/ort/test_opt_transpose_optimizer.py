"""TransposeOptimizer, its cancellation part and its Shape handler (ort.optimizer.transpose_optimizer)."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _removed

import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex
from onnxlint.ort import memcpy


def test_transposes_cancelled_through_a_softmax():
    """Transpose(perm) -> LogSoftmax (opset 13+, last axis) -> Transpose(inverse perm): ORT's TransposeOptimizer
    pushes the first through and cancels both (the expanded SoftmaxCrossEntropyLoss); a non-inverse pair stays."""
    def model(perm2):
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
                 h.make_node("Transpose", ["r"], ["t"], name="t1", perm=[0, 2, 1]),
                 h.make_node("LogSoftmax", ["t"], ["l"], name="lsm", axis=-1),
                 h.make_node("Transpose", ["l"], ["u"], name="t2", perm=perm2),
                 h.make_node("Relu", ["u"], ["y"], name="relu2")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3, 4])], [vi("y", T.FLOAT, None)], opset=13)

    assert set(_removed(model([0, 2, 1]))) == {"t1", "t2"}
    assert not _removed(model([1, 0, 2]))


def _shape_of_transpose(extra=None, opset=17):
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3], name="T"), h.make_node("Shape", ["t"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i"], ["g"], axis=0, name="gat"), h.make_node("Unsqueeze", ["g", "ax"], ["u"], name="unsq"),
             h.make_node("Concat", ["u", "m1"], ["c"], axis=0, name="cat"), h.make_node("Reshape", ["x", "c"], ["y"], name="resh")]
    outs = [vi("y", T.FLOAT, None)]
    if extra:
        nodes.append(h.make_node(extra, ["t", "w" if extra == "MatMul" else "t"], ["z"], name="other"))
        outs.append(vi("z", T.FLOAT, None))
    return make_model(nodes, [vi("x", T.FLOAT, ["N", "S", 4, 8])], outs,
                      [init("i", np.array(1, np.int64)), init("ax", np.array([0], np.int64)), init("m1", np.array([-1], np.int64)),
                       init("w", np.ones((8, 8), np.float32))], opset=opset)


def test_a_transpose_read_by_a_shape_moves_past_it_as_a_gather_on_cpu():
    """HandleShape: Shape(Transpose(x)) becomes Gather(Shape(x), perm); the Gather is a shape computation ORT keeps on
    CPU; the Transpose goes when the Shape was its only reader. Not when a MatMul (no handler) also reads it.
    Measured on 1.24.4 and 1.31.1 at opsets 13 and 17, basic and all; at 'disabled' nothing moves."""
    for version in ("1.24.4", "1.31.1"):
        for opset in (13, 17):
            index = GraphIndex(onnx.shape_inference.infer_shapes(_shape_of_transpose(opset=opset)))
            pl = placement.simulate(index, "ort-cuda", version, optimization="basic")
            by = {p.node.name: p for p in pl.nodes.values()}
            made = [(c.op_type, c.ep, c.by, c.source.name) for c in pl.created]
            assert made == [("Gather", placement.CPU, "TransposeOptimizer", "shape")]
            assert by["T"].status == "eliminated" and by["shape"].ep == placement.CUDA
            index = GraphIndex(onnx.shape_inference.infer_shapes(_shape_of_transpose("Mul", opset)))
            pl = placement.simulate(index, "ort-cuda", version, optimization="all")
            assert [c.op_type for c in pl.created] == ["Gather"] and {p.node.name: p for p in pl.nodes.values()}["T"].status == "device"
            index = GraphIndex(onnx.shape_inference.infer_shapes(_shape_of_transpose("MatMul", opset)))
            assert not placement.simulate(index, "ort-cuda", version, optimization="all").created
            assert not placement.simulate(index, "ort-cuda", version, optimization="disabled").created


def test_the_gather_of_a_shape_that_falls_back_to_cpu_stays_on_cuda():
    """Shape-21 has no CUDA kernel before 1.24: the Shape falls back to CPU, and GetCpuPreferredNodes, which starts
    from the host outputs of CUDA nodes, starts nothing from it; the Gather the TransposeOptimizer puts after it
    runs on CUDA, as the model's own Gather of it does (measured on 1.22.0 and 1.23.2 at opsets 21 and 23, basic
    and all; on 1.24.4 the Shape runs on CUDA and both Gathers on CPU). onnxlint put the created one on CPU."""
    for version, opset, ep in (("1.22.0", 21, placement.CUDA), ("1.23.2", 21, placement.CUDA), ("1.23.2", 23, placement.CUDA),
                               ("1.23.2", 17, placement.CPU), ("1.24.4", 21, placement.CPU)):
        model = _shape_of_transpose(opset=opset)
        model.ir_version = 10 if opset <= 22 else 11
        for level in ("basic", "all"):
            pl = placement.simulate(GraphIndex(onnx.shape_inference.infer_shapes(model)), "ort-cuda", version, optimization=level)
            by = {p.node.name: p for p in pl.nodes.values()}
            assert [(c.op_type, c.ep) for c in pl.created] == [("Gather", ep)], (version, opset, level)
            assert by["gat"].ep == ep


@pytest.mark.parametrize("crossable_only", [True, False])
def test_the_cuda_gather_after_a_moved_shape_reads_it_through_a_copy_and_makes_its_output(monkeypatch, crossable_only):
    """Before 1.24 the Gather the TransposeOptimizer puts after a Shape-21 that falls back to CPU runs on CUDA: it
    reads the Shape's output through a MemcpyFromHost, and its output, the Shape's value now, is device-side (a CPU
    reader gets a MemcpyToHost). Shape(Transpose(x)) read by a graph output, the Transpose by a CUDA Relu: 2 copies
    on 1.22.0 and 1.23.2 at basic and all, 3 with a CPU Unsqueeze-21 of the shape, none on 1.24.4 (the probes measured
    with the truth harness). onnxlint counted only the Relu's."""
    monkeypatch.setattr(memcpy, "CROSSABLE_ONLY", crossable_only)
    for cpu_reader, copies in ((False, 2), (True, 3)):
        nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3], name="T"), h.make_node("Shape", ["t"], ["s"], name="shape"),
                 h.make_node("Relu", ["t"], ["z"], name="relu")]
        outs = [vi("z", T.FLOAT, None)]
        if cpu_reader:
            nodes.append(h.make_node("Unsqueeze", ["s", "ax"], ["su"], name="unsq"))
            outs.append(vi("su", T.INT64, None))
        else:
            outs.append(vi("s", T.INT64, None))
        m = make_model(nodes, [vi("x", T.FLOAT, ["N", "S", 4, 8])], outs, [init("ax", np.array([0], np.int64))], opset=21, ir=10)
        index = GraphIndex(onnx.shape_inference.infer_shapes(m))
        for version, want in (("1.22.0", copies), ("1.23.2", copies), ("1.24.4", 0)):
            for level in ("basic", "all"):
                pl = placement.simulate(index, "ort-cuda", version, optimization=level)
                assert len(pl.boundaries) == want, (cpu_reader, version, level, pl.boundaries)
