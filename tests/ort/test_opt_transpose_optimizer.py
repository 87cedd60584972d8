"""TransposeOptimizer, its cancellation part (ort.optimizer.transpose_optimizer)."""

from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _removed


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
