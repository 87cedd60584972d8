"""loading.native's pipes to its children: a bigger buffer (fewer wake-ups), the same bytes through them."""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnxlint.model.loading import native

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="the children and F_SETPIPE_SZ are Linux's")


def _model(elements: int) -> onnx.ModelProto:
    """A model of about 4 x elements bytes: an initializer that inference copies into its answer."""
    w = nh.from_array(np.arange(elements, dtype=np.float32).reshape(1, elements), "w")
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, elements])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_pipe_buffer_is_set() -> None:
    import fcntl

    r, w = native._pipe()
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            if int(f.read()) < native.PIPE_BYTES:
                pytest.skip("this system allows smaller pipes")
        assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) == native.PIPE_BYTES
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("elements", [10, 3 << 20 >> 2, 5 << 20 >> 2])  # bytes: under, over 2 and 5 x PIPE_BYTES
def test_round_trip_through_the_kept_worker(elements: int) -> None:
    """The answer read back through the worker's pipes is what the same call gives in-process, whole: models
    under and over the pipe's buffer, sent down (a second call: the first one's payload comes by the fork)."""
    model = _model(elements)
    want = onnx.shape_inference.infer_shapes(model).SerializeToString()
    native.shutdown()
    try:
        for _ in range(2):  # the first is forked with its payload, the second goes down the request pipe
            got = native.infer_shapes(model)
            assert got.SerializeToString() == want
    finally:
        native.shutdown()
