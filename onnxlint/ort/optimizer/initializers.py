"""Constant initializers as ORT's optimizer sees them (graph_utils::GetConstantInitializer): an initializer or a
Constant node's value visible from a graph, read as a small array when it is one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import numpy_helper

from onnxlint.model.graph import in_file_array
from onnxlint.ort.optimizer.optimized import Array

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope

VALUE_MAX_ELEMENTS = 64  # an initializer's value is read (small_array) up to this many elements


def same_dim(x: object, y: object) -> bool:
    """Two dims ORT's shape inference knows to be equal: the same value, or the same symbolic name from the
    model. onnx's inference names the dims it cannot know (unk__N) and shares a name along one path; ORT's leaves
    them unnamed, so such a name proves nothing."""
    if isinstance(x, int):
        return x == y
    return isinstance(x, str) and x == y and bool(x) and not x.startswith("unk__")


def constant_tensor(scope: GraphScope, value: str) -> onnx.TensorProto | None:
    """The tensor of an initializer or of a Constant node (any of its value_* forms) visible from scope."""
    t = scope.constant(value)
    if t is not None:
        return t
    s: GraphScope | None = scope
    while s is not None:
        p = s.producer.get(value)
        if p is not None:
            if p.op_type != "Constant" or p.domain != "ai.onnx":
                return None
            return constant_node_tensor(p.proto)
        s = s.parent
    return None


def constant_node_tensor(proto: onnx.NodeProto) -> onnx.TensorProto | None:
    for a in proto.attribute:
        try:
            if a.name == "value":
                value: onnx.TensorProto = a.t
                return value
            if a.name == "value_int":
                return _from_array(np.array(a.i, np.int64))
            if a.name == "value_ints":
                return _from_array(np.array(list(a.ints), np.int64))
            if a.name == "value_float":
                return _from_array(np.array(a.f, np.float32))
            if a.name == "value_floats":
                return _from_array(np.array(list(a.floats), np.float32))
            if a.name in ("value_string", "value_strings"):
                return onnx.helper.make_tensor("s", onnx.TensorProto.STRING, [] if a.name == "value_string" else [len(a.strings)],
                                               [a.s] if a.name == "value_string" else list(a.strings))
        except Exception:  # noqa: BLE001
            return None
    return None


def small_array(t: onnx.TensorProto | None, limit: int = VALUE_MAX_ELEMENTS) -> Array | None:
    """An in-file value as the rules read it (graph.in_file_array); an external one is unknown here on purpose (the
    simulation's accuracy was measured so; ORT's folding of external initializers is not modelled)."""
    arr: Array | None = in_file_array(t, limit) if t is not None else None
    return arr


def _from_array(arr: Array) -> onnx.TensorProto:
    t: onnx.TensorProto = numpy_helper.from_array(arr)
    return t
