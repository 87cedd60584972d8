"""The partitioner (ort.partitioner): kernel lookup per EP, verdict vocabulary. The kernel tables are given here
(a few rows as ORT's binaries register them), so the tests pin the placement logic, not the shipped data."""

import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _place, _tables

import onnxlint.ort.partitioner as placement
import onnxlint.ort.verdicts as verdicts
from onnxlint.model.graph import GraphIndex


def test_statuses_and_reasons_are_declared():
    assert {"device", "fallback", "deliberate", "unsupported", "expanded", "folded", "eliminated", "refused",
            "skipped"} == set(verdicts.STATUSES)
    assert set(verdicts.GONE_STATUSES) <= set(verdicts.STATUSES)
    for r in ("capability", "cpu-preferred", "constant-folding", "shape-folding", "cse", "identity", "model-opset", "kernel-init",
              "function-cpu"):
        assert r in verdicts.REASONS
    import inspect

    params = list(inspect.signature(placement.simulate).parameters)
    assert params[:5] == ["index", "target", "ort_version", "rejects", "reject_ops"] and "optimization" in params
    with pytest.raises(ValueError):
        placement.Simulator(GraphIndex(make_model([], [], [])), "ort-cuda", "1.24.4", optimization="extended", tables=_tables())


def test_kernel_without_type_constraints_nonmaxsuppression():
    # CUDA registers NonMaxSuppression 10 and 11+ with no type constraint at all: any type binds (was a false alarm)
    m = make_model([h.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"], name="nms")],
                   [vi("boxes", T.FLOAT, [1, 6, 4]), vi("scores", T.FLOAT, [1, 1, 6])], [vi("sel", T.INT64, ["k", 3])], opset=13)
    by, _ = _place(m)
    assert by["nms"].status == "device" and by["nms"].ep == placement.CUDA


@pytest.mark.parametrize("optimization", ["disabled", "all"])
def test_a_local_function_nothing_calls_is_not_placed(optimization):
    """ORT inlines a model-local function at each call and drops one nothing calls (its optimized model of such a
    model holds the called body alone): a Unique in an uncalled function is no fallback; called, it is (the test
    tables register no Unique kernel)."""
    def model(call_unique):
        body = [h.make_node("Unique", ["a"], ["b"], name="unique")]
        fn = h.make_function("local", "U", ["a"], ["b"], body, [h.make_opsetid("", 17)])
        relu = h.make_function("local", "R", ["a"], ["b"], [h.make_node("Relu", ["a"], ["b"], name="relu")],
                               [h.make_opsetid("", 17)])
        m = make_model([h.make_node("U" if call_unique else "R", ["x"], ["y"], name="call", domain="local")],
                       [vi("x", T.FLOAT, [6])], [vi("y", T.FLOAT, ["n"] if call_unique else [6])], opset=17)
        m.opset_import.append(h.make_opsetid("local", 1))
        m.functions.extend([fn, relu])
        return m

    by, _ = _place(model(False), optimization)
    assert "unique" not in by and by["relu"].ep == placement.CUDA
    by, _ = _place(model(True), optimization)
    assert by["unique"].ep != placement.CUDA and by["unique"].reason == "not-registered" and "relu" not in by
