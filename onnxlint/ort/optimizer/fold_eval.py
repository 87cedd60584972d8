"""Values of the small shape computations ORT's constant folding replaces, computed with numpy.

The optimizer model needs the value of a folded node when a later rule reads it (a Reshape's target shape, an
Expand's shape, an If's condition, a Range's length). Those are shape-sized int64 tensors built by a handful of
ops; onnx.reference computes them too, but importing it and building an evaluator per node cost more than the
rest of a lint of a small model. Here the common ops run directly, with ONNX's semantics (integer Div truncates,
Reshape's 0 copies a dim, Slice clamps per the spec); anything else returns None and the caller asks
onnx.reference. `tests/ort/test_ort_fold_eval.py` checks every op here against onnx.reference.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

Attrs = dict[str, Any]
Inputs = list[Any]  # input values (None: an absent optional input)
Outputs = list[Any]
Op = Callable[[Attrs, int, Inputs], Outputs]

_NUMERIC = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BOOL,
            onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
            onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}


MAX_ELEMENTS = 1 << 20  # a result larger than this is no shape computation: left alone (and never allocated)


class _Unsupported(Exception):
    """This node, these inputs: leave it to onnx.reference."""


class _TooLarge(Exception):
    """The result would exceed MAX_ELEMENTS: nobody should compute it."""


TOO_LARGE: list[np.ndarray] = []  # evaluate's answer for a result too large to compute (the caller must not try)


def by_reference(node: onnx.NodeProto, domain: str, opset: int, feeds: dict[str, np.ndarray]) -> list[Any] | None:
    """The node's outputs by onnx.reference (domain: "ai.onnx" for the default one), for the ops `evaluate` does
    not compute (imported only then: its import is slow); None where onnx.reference cannot run it."""
    try:
        from onnx.reference import ReferenceEvaluator

        proto = onnx.NodeProto()
        proto.CopyFrom(node)
        graph = helper.make_graph(
            [proto], "fold", [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                              for k, a in feeds.items()],
            [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in node.output if o])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain if domain != "ai.onnx" else "", opset)])
        return list(ReferenceEvaluator(model).run(None, feeds))
    except Exception:  # noqa: BLE001 - an op onnx.reference cannot run: the value stays unknown
        return None


def evaluate(node: onnx.NodeProto, opset: int, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    """The outputs of an ai.onnx node given its input values (None for an absent optional input), None when
    this module does not compute that op or those inputs, or TOO_LARGE (compare with `is`) when the result
    would exceed MAX_ELEMENTS."""
    if node.domain not in ("", "ai.onnx"):
        return None
    fn = _OPS.get(node.op_type)
    if fn is None:
        return None
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    try:
        with np.errstate(all="raise"):
            out = fn(attrs, opset, inputs)
    except _TooLarge:
        return TOO_LARGE
    except (_Unsupported, ValueError, IndexError, TypeError, FloatingPointError, ZeroDivisionError, OverflowError,
            MemoryError):
        return None
    return [np.asarray(o) for o in out]


def _need(inputs: Inputs, k: int) -> np.ndarray:
    if k >= len(inputs) or inputs[k] is None:
        raise _Unsupported
    return np.asarray(inputs[k])


def _capped(shape: Any) -> None:
    dims = [int(d) for d in shape]
    if 0 in dims:
        return
    n = 1
    for d in dims:
        n *= d
        if n > MAX_ELEMENTS:  # at once: a product of thousands of huge dims would be a huge integer
            raise _TooLarge


def _ints(a: np.ndarray) -> list[int]:
    if a.dtype.kind not in "iu":
        raise _Unsupported
    return [int(x) for x in a.reshape(-1)]


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise _Unsupported
    return axis + rank if axis < 0 else axis


def _identity(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    return [_need(x, 0)]


def _cast(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    to = attrs.get("to")
    a = _need(x, 0)
    if to not in _NUMERIC or a.dtype.kind not in "biuf" or attrs.get("saturate", 1) != 1:
        raise _Unsupported
    return [a.astype(helper.tensor_dtype_to_np_dtype(to))]


def _reshape(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data, shape = _need(x, 0), _ints(_need(x, 1))
    if not attrs.get("allowzero", 0):
        if any(d == 0 and i >= data.ndim for i, d in enumerate(shape)):
            raise _Unsupported  # a 0 copies a dim the input does not have: invalid (onnx.reference and ORT refuse)
        shape = [data.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if any(d < -1 for d in shape) or shape.count(-1) > 1:
        raise _Unsupported
    return [data.reshape(shape)]


def _axes(attrs: Attrs, opset: int, x: Inputs, since: int) -> list[int] | None:
    if opset < since:
        axes = attrs.get("axes")
        return None if axes is None else [int(a) for a in axes]
    return _ints(np.asarray(x[1])) if len(x) > 1 and x[1] is not None else None


def _unsqueeze(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data = _need(x, 0)
    axes = _axes(attrs, opset, x, 13)
    if not axes:
        raise _Unsupported
    rank = data.ndim + len(axes)
    norm = sorted(_axis(a, rank) for a in axes)
    if len(set(norm)) != len(norm):
        raise _Unsupported
    out = data
    for a in norm:
        out = np.expand_dims(out, a)
    return [out]


def _squeeze(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data = _need(x, 0)
    axes = _axes(attrs, opset, x, 13)
    if axes is None:
        return [data.reshape([d for d in data.shape if d != 1])]
    norm = tuple(sorted({_axis(a, data.ndim) for a in axes}))
    if any(data.shape[a] != 1 for a in norm):
        raise _Unsupported
    return [np.squeeze(data, axis=norm)]


def _concat(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    parts = [np.asarray(v) for v in x if v is not None]
    if not parts or len({p.dtype for p in parts}) != 1 or len({p.ndim for p in parts}) != 1 or parts[0].ndim == 0:
        raise _Unsupported
    return [np.concatenate(parts, axis=_axis(int(attrs.get("axis", 0)), parts[0].ndim))]


def _constant_of_shape(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    shape = _ints(_need(x, 0))
    value = attrs.get("value")
    if value is not None and value.data_location == onnx.TensorProto.EXTERNAL:
        raise _Unsupported  # never read: to_array reads it from the working folder
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    if fill.size != 1 or any(d < 0 for d in shape):
        raise _Unsupported
    _capped(shape)
    return [np.full(shape, fill[0], dtype=fill.dtype)]


def _gather(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data, idx = _need(x, 0), _need(x, 1)
    if idx.dtype.kind not in "iu" or data.ndim == 0:
        raise _Unsupported
    axis = _axis(int(attrs.get("axis", 0)), data.ndim)
    n = data.shape[axis]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise _Unsupported
    return [np.take(data, idx.astype(np.int64), axis=axis)]


def _binary(fn: Callable[[Any, Any], Any]) -> Op:
    def run(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
        a, b = _need(x, 0), _need(x, 1)
        if a.dtype != b.dtype or a.dtype.kind not in "iuf":
            raise _Unsupported
        return [np.asarray(fn(a, b)).astype(a.dtype, copy=False)]
    return run


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.asarray(a / b)
    if np.any(b == 0):
        raise _Unsupported
    q = np.floor_divide(a, b)
    # ONNX integer Div truncates toward zero; floor_divide rounds down: one more where the signs differ
    return np.asarray(q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))))


def _mod(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    a, b = _need(x, 0), _need(x, 1)
    if a.dtype != b.dtype or a.dtype.kind not in "iuf" or (a.dtype.kind != "f" and np.any(b == 0)):
        raise _Unsupported
    if attrs.get("fmod", 0):
        return [np.fmod(a, b)]
    if a.dtype.kind == "f":
        raise _Unsupported  # the spec requires fmod=1 for floats
    return [np.mod(a, b)]


def _compare(fn: Callable[[Any, Any], Any]) -> Op:
    def run(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
        a, b = _need(x, 0), _need(x, 1)
        if a.dtype != b.dtype or a.dtype.kind not in "biuf":
            raise _Unsupported
        return [np.asarray(fn(a, b), dtype=bool)]
    return run


def _where(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    c, a, b = _need(x, 0), _need(x, 1), _need(x, 2)
    if c.dtype != bool or a.dtype != b.dtype:
        raise _Unsupported
    return [np.where(c, a, b)]


def _expand(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data, shape = _need(x, 0), _ints(_need(x, 1))
    out_shape = np.broadcast_shapes(data.shape, tuple(shape))
    _capped(out_shape)
    return [np.array(np.broadcast_to(data, out_shape))]


def _range(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    start, limit, delta = _need(x, 0), _need(x, 1), _need(x, 2)
    if start.size != 1 or limit.size != 1 or delta.size != 1 or not start.dtype == limit.dtype == delta.dtype \
            or start.dtype.kind != "i":
        raise _Unsupported  # float Ranges: the length depends on rounding (onnx.reference, ORT differ): not here
    s, lim, d = start.reshape(-1)[0], limit.reshape(-1)[0], delta.reshape(-1)[0]
    if d == 0:
        raise _Unsupported
    span, step = int(lim) - int(s), int(d)
    n = max(-(-span // step), 0)  # ceil((limit - start) / delta), exactly
    if n > MAX_ELEMENTS:
        raise _TooLarge
    return [(s + d * np.arange(n, dtype=start.dtype)).astype(start.dtype)]


def _slice(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data = _need(x, 0)
    if opset < 10:
        starts, ends = list(attrs.get("starts", [])), list(attrs.get("ends", []))
        axes = list(attrs.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = _ints(_need(x, 1)), _ints(_need(x, 2))
        axes = _ints(np.asarray(x[3])) if len(x) > 3 and x[3] is not None else list(range(len(starts)))
        steps = _ints(np.asarray(x[4])) if len(x) > 4 and x[4] is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps) or data.ndim == 0:
        raise _Unsupported
    index: list[slice] = [slice(None)] * data.ndim
    seen: set[int] = set()
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax = _axis(ax, data.ndim)
        if sp == 0 or ax in seen:
            raise _Unsupported
        seen.add(ax)
        dim = data.shape[ax]
        st = st + dim if st < 0 else st
        en = en + dim if en < 0 else en
        if sp > 0:
            st, en = min(max(st, 0), dim), min(max(en, 0), dim)
            index[ax] = slice(st, en, sp)
        else:
            st, en = min(max(st, 0), dim - 1), min(max(en, -1), dim - 1)
            index[ax] = slice(st, en if en >= 0 else None, sp)
    return [data[tuple(index)]]


def _tile(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data, reps = _need(x, 0), _ints(_need(x, 1))
    if len(reps) != data.ndim or any(r < 0 for r in reps):
        raise _Unsupported
    _capped([d * r for d, r in zip(data.shape, reps)])
    return [np.tile(data, reps)]


def _transpose(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    data = _need(x, 0)
    perm = attrs.get("perm")
    return [np.transpose(data, None if perm is None else [int(p) for p in perm])]


def _unary(fn: Callable[[Any], Any], kinds: str = "if") -> Op:
    def run(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
        a = _need(x, 0)
        if a.dtype.kind not in kinds:
            raise _Unsupported
        return [np.asarray(fn(a)).astype(a.dtype, copy=False)]
    return run


def _not(attrs: Attrs, opset: int, x: Inputs) -> Outputs:
    a = _need(x, 0)
    if a.dtype != bool:
        raise _Unsupported
    return [np.logical_not(a)]


_OPS: dict[str, Op] = {
    "Identity": _identity, "Cast": _cast, "Reshape": _reshape, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
    "Concat": _concat, "ConstantOfShape": _constant_of_shape, "Gather": _gather,
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply), "Div": _binary(_int_div),
    "Mod": _mod, "Equal": _compare(np.equal), "Less": _compare(np.less), "Greater": _compare(np.greater),
    "Where": _where, "Expand": _expand, "Range": _range, "Slice": _slice, "Tile": _tile, "Transpose": _transpose,
    "Neg": _unary(np.negative), "Abs": _unary(np.abs), "Ceil": _unary(np.ceil, "f"), "Floor": _unary(np.floor, "f"),
    "Sqrt": _unary(np.sqrt, "f"), "Not": _not,
}
