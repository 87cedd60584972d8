"""CUDAExecutionProvider::GetCapability refusals (ort.cuda_capability), each from a case where onnxlint and
ORT's partitioner disagreed (onnxruntime-gpu under stub CUDA libraries)."""

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _one, _place

import onnxlint.ort.partitioner as placement


def test_argmax_select_last_index_refused_by_cuda_getcapability():
    last = _one("ArgMax", [("x", T.FLOAT, [2, 3])], [("y", T.INT64, [1, 3])], select_last_index=1)
    first = _one("ArgMax", [("x", T.FLOAT, [2, 3])], [("y", T.INT64, [1, 3])], select_last_index=0)
    p = _place(last)[0]["n"]
    assert (p.status, p.reason, p.ep) == ("fallback", "capability", placement.CPU) and "select_last_index" in p.detail
    assert _place(first)[0]["n"].status == "device"


def test_lstm_peepholes_and_gru_default_linear_before_reset_refused():
    x, w, r = ("x", T.FLOAT, [2, 1, 3]), ("w", T.FLOAT, [1, 12, 3]), ("r", T.FLOAT, [1, 12, 3])
    ins = [x, w, r, ("", None, None), ("", None, None), ("", None, None), ("", None, None), ("p", T.FLOAT, [1, 9])]
    peep = make_model([h.make_node("LSTM", ["x", "w", "r", "", "", "", "", "p"], ["y"], name="n", hidden_size=3)],
                      [vi(*i) for i in ins if i[1] is not None], [vi("y", T.FLOAT, [2, 1, 1, 3])], opset=14)
    plain = make_model([h.make_node("LSTM", ["x", "w", "r"], ["y"], name="n", hidden_size=3)],
                       [vi(*x), vi(*w), vi(*r)], [vi("y", T.FLOAT, [2, 1, 1, 3])], opset=14)
    assert _place(peep)[0]["n"].reason == "capability" and "peephole" in _place(peep)[0]["n"].detail
    assert _place(plain)[0]["n"].status == "device"
    gw, gr = ("w", T.FLOAT, [1, 9, 3]), ("r", T.FLOAT, [1, 9, 3])
    gru = lambda **a: make_model([h.make_node("GRU", ["x", "w", "r"], ["y"], name="n", hidden_size=3, **a)],  # noqa: E731
                                 [vi(*x), vi(*gw), vi(*gr)], [vi("y", T.FLOAT, [2, 1, 1, 3])], opset=14)
    assert _place(gru())[0]["n"].reason == "capability"  # linear_before_reset defaults to 0: cuDNN implements 1 only
    assert _place(gru(linear_before_reset=1))[0]["n"].status == "device"


def test_convtranspose_pads_compared_per_axis():
    def deconv(**a):
        return make_model([h.make_node("ConvTranspose", ["x", "w"], ["y"], name="n", **a)], [vi("x", T.FLOAT, [1, 2, 4, 4])],
                          [vi("y", T.FLOAT, [1, 2, "h", "w"])], [init("w", np.ones((2, 2, 3, 3), np.float32))], opset=13)

    assert _place(deconv(pads=[1, 2, 1, 2]))[0]["n"].status == "device"  # begin (1, 2) == end (1, 2): symmetric per axis
    assert _place(deconv(pads=[0, 0, 1, 1]))[0]["n"].reason == "capability"
    assert _place(deconv(auto_pad="SAME_UPPER", strides=[2, 2]))[0]["n"].reason == "capability"
