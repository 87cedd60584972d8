"""The work an ONNX node's evaluation costs, known before it runs: every evaluation onnxlint performs (the static
model of ORT's constant folding, fold-shapes' own folder, the check before onnxslim's folding) asks here first.

Caps on a result's size are not enough: a 334-byte model's RegexFullMatch of `(a+)+b` on 40 characters takes hours
(each character doubles the time, and Python's `re` cannot be interrupted), a RoiAlign with a huge
sampling_ratio takes gigabytes and seconds for a one-element output, a ConstantOfShape or a Tile whose shape is
computed allocates what its inputs ask for. So each op has a cost function (`work`) that reads only its
inputs' shapes, the values of the small inputs that size it (a shape, repeats, pads, a window size) and its
attributes, and says how many elements its output has at most and how many element operations computing it
takes; an op without one (a new one, an image decoder, a regular expression) is not evaluated. A `Budget`
holds the work one model may spend, per node and in all; what it refused is said once, in one line.

Every ai.onnx op is classified (tests/security/test_gate_budget.py checks the list against onnx's schemas).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

NODE_WORK = 1 << 22  # element operations one evaluation may take (a PY-weighted unit: a Python loop step)
MODEL_WORK = 1 << 26  # all evaluations of one model
PY = 256  # onnx.reference runs these per element in Python: a unit of their work costs this many
VALUE_MAX = 1 << 16  # an input whose value sizes the output (a shape, pads) is read only when this small


SATURATED = 1 << 62  # a count past this is "too many" (saturating: a product of 65,536 huge dims stays one word)


def prod(values: Any) -> int:
    """math.prod, saturating at SATURATED: a shape of thousands of dims near 2^63 would otherwise build an integer of
    millions of bits, quadratic work before any budget is asked."""
    n = 1
    for v in values:
        v = int(v)
        if v == 0:
            return 0
        n = min(n * abs(v), SATURATED) if n < SATURATED else SATURATED
    return n


class Refused(Exception):
    """Not evaluated: why, in a few words."""


@dataclass(frozen=True)
class Meta:
    """An input known by its type only (no value): its shape (None: unknown), numpy dtype (None: unknown) and,
    when the shape is not known, how many elements it has at most (what made it said so; None: unknown)."""

    shape: tuple[int, ...] | None
    dtype: Any = None
    elements: int | None = None


Input = Any  # np.ndarray | Meta | None (an absent optional input)


@dataclass(frozen=True)
class Cost:
    elements: int  # the output's elements, all outputs together (an upper bound)
    work: int  # element operations, weighted (PY for the per-element Python implementations)


def _shape(x: Input) -> tuple[int, ...]:
    if x is None:
        raise Refused("an input is absent")
    shape = x.shape if isinstance(x, (np.ndarray, Meta)) else np.shape(x)
    if shape is None:
        raise Refused("an input's shape is not known")
    return tuple(int(d) for d in shape)


def size(x: Input) -> int:
    """An input's elements (a Meta of unknown shape: its bound; Refused when neither is known)."""
    return _n(x)


def _n(x: Input) -> int:
    if isinstance(x, Meta) and x.shape is None and x.elements is not None:
        return x.elements
    return 0 if x is None else prod(_shape(x))


def _bytes(x: Input) -> int:
    """A string tensor's size in bytes (its strings' lengths); other tensors' elements."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        return sum(len(s) if isinstance(s, (str, bytes)) else 1 for s in x.reshape(-1)) + x.size
    if isinstance(x, Meta) and x.dtype is not None and np.dtype(x.dtype) == object:
        raise Refused("the strings' lengths are not known")
    return _n(x)


def _ints(x: Input, what: str) -> list[int]:
    """The value of a small integer input (a shape, repeats, pads, sizes)."""
    if not isinstance(x, np.ndarray):
        raise Refused(f"its {what} is not a known value")
    if x.size > VALUE_MAX or x.dtype.kind not in "iu":
        raise Refused(f"its {what} is not a small integer tensor")
    return [int(v) for v in x.reshape(-1)]


def _floats(x: Input, what: str) -> list[float]:
    if not isinstance(x, np.ndarray) or x.size > VALUE_MAX or x.dtype.kind not in "iuf":
        raise Refused(f"its {what} is not a known value")
    values = [float(v) for v in x.reshape(-1)]
    if not all(math.isfinite(v) for v in values):
        raise Refused(f"its {what} is not finite")
    return values


def _at(ins: Sequence[Input], k: int) -> Input:
    return ins[k] if k < len(ins) else None


def _count(dims: Sequence[int]) -> int:
    if any(d < 0 for d in dims):
        raise Refused("a negative dimension")
    return prod(dims)


Attrs = dict[str, Any]
CostFn = Callable[[Attrs, int, Sequence[Input]], Cost]


# ----------------------------------------------------------------------------- classes of ops


def _elementwise(factor: int = 1) -> CostFn:
    """Output as large as the broadcast of the inputs; a few operations per element."""
    def cost(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
        shapes = [_shape(x) for x in ins if x is not None]
        if not shapes:
            raise Refused("no input")
        try:
            out = prod(np.broadcast_shapes(*shapes))
        except ValueError:
            raise Refused("its inputs do not broadcast") from None
        return Cost(out, factor * (out + sum(_n(x) for x in ins)))
    return cost


def _like_first(factor: int = 1) -> CostFn:
    """Output as large as the first input (casts, normalizations, reductions: at most as large), the other inputs
    read once."""
    def cost(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
        n = _n(_at(ins, 0))
        return Cost(n, factor * (2 * n + sum(_n(x) for x in ins[1:])))
    return cost


def _sorting(outputs: Callable[[int, int], int]) -> CostFn:
    """Unique, NonZero, Compress: outputs(n, rank) elements at most, n log n to sort."""
    def cost(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
        n = _n(_at(ins, 0))
        rank = max(len(_shape(ins[0])), 1)
        return Cost(outputs(n, rank), n * (max(n, 2).bit_length() + rank) + sum(_n(x) for x in ins[1:]))
    return cost


def _top_k(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x = _shape(_at(ins, 0))
    k = _ints(_at(ins, 1), "k") if opset >= 10 else [int(attrs.get("k", 0))]
    axis = int(attrs.get("axis", -1))
    axis = axis + len(x) if axis < 0 else axis
    if len(k) != 1 or not 0 <= axis < len(x) or not 0 <= k[0] <= x[axis]:
        raise Refused("its k or axis do not fit the input")
    n = prod(x)
    out = 2 * (n // max(x[axis], 1)) * k[0]
    return Cost(out, n * max(n, 2).bit_length() + out)


def _strings(factor: int = 4) -> CostFn:
    """String ops other than regular expressions: linear in the bytes."""
    def cost(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
        size = sum(_bytes(x) for x in ins if x is not None)
        stop = sum(len(str(s)) for s in attrs.get("stopwords") or ())
        return Cost(size + _n(_at(ins, 0)), PY * factor * (size + stop + 1))
    return cost


def _cast(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x = _at(ins, 0)
    size = _bytes(x)
    strings = attrs.get("to") == 8 or (isinstance(x, (np.ndarray, Meta)) and x.dtype is not None and np.dtype(x.dtype) == object)
    return Cost(_n(x), (PY if strings else 2) * (size + 1))


def _gather(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    data, idx = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if not data:
        raise Refused("a scalar to gather from")
    axis = int(attrs.get("axis", 0))
    axis = axis + len(data) if axis < 0 else axis
    if not 0 <= axis < len(data):
        raise Refused("its axis is out of range")
    out = prod(data[:axis]) * prod(idx) * prod(data[axis + 1:])
    return Cost(out, out + prod(idx))


def _gather_nd(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    data, idx = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if not idx:
        raise Refused("scalar indices")
    k, batch = idx[-1], int(attrs.get("batch_dims", 0))
    if not 0 <= batch + k <= len(data):
        raise Refused("its indices reach past the data's rank")
    out = prod(idx[:-1]) * prod(data[batch + k:])
    return Cost(out, out + prod(idx))


def _scatter(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    n = _n(_at(ins, 0))
    return Cost(n, 2 * n + sum(_n(x) for x in ins[1:]))


def _concat(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    n = sum(_n(x) for x in ins)
    return Cost(n, 2 * n)


def _shape_op(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    return Cost(len(_shape(_at(ins, 0))) + 1, len(_shape(_at(ins, 0))) + 1)


def _constant(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    value = attrs.get("value")
    n = int(prod(getattr(value, "dims", ()) or ())) if value is not None else 1
    return Cost(n, n)


def _constant_of_shape(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    n = _count(_ints(_at(ins, 0), "shape"))
    return Cost(n, n)


def _expand(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    target = _ints(_at(ins, 1), "shape")
    try:
        out = prod(np.broadcast_shapes(_shape(ins[0]), tuple(target)))
    except ValueError:
        raise Refused("its shape does not broadcast") from None
    return Cost(out, out + _n(ins[0]))


def _tile(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    out = _n(_at(ins, 0)) * _count(_ints(_at(ins, 1), "repeats"))
    return Cost(out, out)


def _range(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    start, limit, delta = (_floats(_at(ins, k), "bounds") for k in range(3))
    if len(start) != 1 or len(limit) != 1 or len(delta) != 1 or delta[0] == 0:
        raise Refused("its start, limit and delta are not three scalars, delta not zero")
    n = max(math.ceil((limit[0] - start[0]) / delta[0]), 0)
    return Cost(n, n)


def _pad(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    data = _shape(_at(ins, 0))
    pads = [int(p) for p in attrs.get("pads", ())] if opset < 11 else _ints(_at(ins, 1), "pads")
    axes = list(range(len(data)))
    if opset >= 18 and _at(ins, 3) is not None:
        axes = [a + len(data) if a < 0 else a for a in _ints(ins[3], "axes")]
    if len(pads) != 2 * len(axes) or not all(0 <= a < len(data) for a in axes):
        raise Refused("its pads do not match its axes")
    out = list(data)
    for k, a in enumerate(axes):
        out[a] += pads[k] + pads[k + len(axes)]
    n = _count(out)
    return Cost(n, n + _n(ins[0]))


def _one_hot(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    depth = _floats(_at(ins, 1), "depth")
    if len(depth) != 1 or depth[0] < 0:
        raise Refused("its depth is not one non-negative number")
    out = _n(_at(ins, 0)) * int(depth[0])
    return Cost(out, out)


def _resize(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    """Resize and Upsample: the output from sizes or scales; onnx.reference interpolates in Python, 4^rank taps
    for cubic."""
    data = _shape(_at(ins, 0))
    sizes_at, scales_at = (3, 2) if opset >= 11 else (None, 1)
    if sizes_at is not None and _at(ins, sizes_at) is not None and _n(ins[sizes_at]) > 0:
        sizes = _ints(ins[sizes_at], "sizes")
        axes = [int(a) for a in attrs.get("axes", range(len(data)))]
        out = list(data)
        for a, size in zip(axes, sizes):
            out[a] = size
    else:
        scales = _floats(_at(ins, scales_at), "scales") if opset >= 9 else [float(s) for s in attrs.get("scales", ())]
        axes = [int(a) for a in attrs.get("axes", range(len(data)))]
        if len(scales) != len(axes) or any(s < 0 for s in scales):
            raise Refused("its scales do not match the input")
        out = list(data)
        for a, scale in zip(axes, scales):
            out[a] = math.floor(data[a] * scale)
    n = _count(out)
    taps = 4 ** len(data) if attrs.get("mode", b"nearest") in (b"cubic", "cubic") else 2 ** len(data)
    return Cost(n, PY * n * min(taps, 1 << 20) + _n(ins[0]))


def _center_crop_pad(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    data = list(_shape(_at(ins, 0)))
    shape = _ints(_at(ins, 1), "shape")
    axes = [int(a) for a in attrs.get("axes", range(len(data)))]
    if len(shape) != len(axes):
        raise Refused("its shape does not match its axes")
    for a, s in zip(axes, shape):
        data[a] = s
    n = _count(data)
    return Cost(n, n + _n(ins[0]))


def _eye_like(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    n = _n(_at(ins, 0))
    return Cost(n, n)


def _window(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    size = _ints(_at(ins, 0), "size")
    if len(size) != 1:
        raise Refused("its size is not a scalar")
    n = _count(size)
    return Cost(n, 8 * n)


def _mel(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    bins, dft = _ints(_at(ins, 0), "num_mel_bins"), _ints(_at(ins, 1), "dft_length")
    if len(bins) != 1 or len(dft) != 1:
        raise Refused("its sizes are not scalars")
    n = _count([bins[0], dft[0] // 2 + 1])
    return Cost(n, PY * n)


def _matmul(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    a, b = _shape(_at(ins, 0)), _shape(_at(ins, 3 if len(ins) == 8 else 1))  # QLinearMatMul: b is input 3
    if not a or not b:
        raise Refused("a scalar operand")
    a2, b2 = (a if len(a) > 1 else (1, *a)), (b if len(b) > 1 else (*b, 1))
    if a2[-1] != b2[-2]:
        raise Refused("its operands do not multiply")
    try:
        batch = prod(np.broadcast_shapes(a2[:-2], b2[:-2]))
    except ValueError:
        raise Refused("its batch dimensions do not broadcast") from None
    out = batch * a2[-2] * b2[-1]
    return Cost(out, out * max(a2[-1], 1) + _n(ins[0]) + _n(ins[1]))


def _gemm(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    a, b = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if len(a) != 2 or len(b) != 2:
        raise Refused("its operands are not matrices")
    m, k = (a[1], a[0]) if attrs.get("transA") else a
    n = b[0] if attrs.get("transB") else b[1]
    return Cost(m * n, m * n * max(k, 1) + _n(_at(ins, 2)))


def _einsum(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    equation = attrs.get("equation", b"")
    equation = (equation.decode() if isinstance(equation, bytes) else str(equation)).replace(" ", "")
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    if "." in equation or len(terms) != len([x for x in ins if x is not None]):
        raise Refused("an equation with an ellipsis or not one term per input")
    dims: dict[str, int] = {}
    for term, x in zip(terms, ins):
        shape = _shape(x)
        if len(term) != len(shape):
            raise Refused("an equation term whose rank is not its input's")
        for letter, d in zip(term, shape):
            dims[letter] = max(dims.get(letter, 1), d)
    if not rhs and "->" not in equation:
        rhs = "".join(sorted(c for c in dims if lhs.count(c) == 1))
    out = prod(dims.get(c, 1) for c in rhs)
    return Cost(out, prod(dims.values()) * len(terms) + out)


def _det(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    shape = _shape(_at(ins, 0))
    if len(shape) < 2:
        raise Refused("not a matrix")
    batch, n = prod(shape[:-2]), shape[-1]
    return Cost(batch, batch * n ** 3 + 1)


def _spatial_attrs(attrs: Attrs, kernel: Sequence[int], spatial: Sequence[int]) -> tuple[list[int], list[int], list[int], str]:
    rank = len(kernel)
    strides = [int(s) for s in attrs.get("strides", [1] * rank)]
    dilations = [int(d) for d in attrs.get("dilations", [1] * rank)]
    pads = [int(p) for p in attrs.get("pads", [0] * (2 * rank))]
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank or len(spatial) != rank:
        raise Refused("its strides, dilations or pads do not match the kernel")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations) or any(p < 0 for p in pads):
        raise Refused("a stride or dilation below 1, or a negative pad")
    return strides, dilations, pads, auto


def _window_out(attrs: Attrs, kernel: Sequence[int], spatial: Sequence[int], ceil: bool = False) -> tuple[list[int], int]:
    """(output spatial dims, elements of the padded input a reference implementation allocates)."""
    strides, dilations, pads, auto = _spatial_attrs(attrs, kernel, spatial)
    rank = len(kernel)
    out, padded = [], 1
    for i in range(rank):
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-spatial[i] // strides[i])
            total = max((o - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - spatial[i], 0)
        else:
            total = pads[i] + pads[i + rank] if auto != "VALID" else 0
            span = spatial[i] + total - ((kernel[i] - 1) * dilations[i] + 1)
            if span < 0:
                raise Refused("its window is larger than the padded input")
            o = (-(-span // strides[i]) if ceil else span // strides[i]) + 1
        out.append(o)
        padded *= spatial[i] + total
    return out, padded


def _conv(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    """Conv, ConvInteger, QLinearConv, DeformConv: output from the shapes and attributes; work = output x the
    kernel's size x its input channels; the padded input a reference implementation allocates counts too."""
    w_at = 3 if len(ins) >= 8 else 1  # QLinearConv: x, x_scale, x_zp, w, ...
    x, w = _shape(_at(ins, 0)), _shape(_at(ins, w_at))
    if len(x) < 3 or len(w) != len(x):
        raise Refused("its input and weight ranks do not match")
    kernel = [int(k) for k in attrs.get("kernel_shape", w[2:])]
    out, padded = _window_out(attrs, kernel, x[2:])
    n = _count([x[0], w[0], *out])
    per = prod(w[1:])
    return Cost(n, PY * n * max(per, 1) // 16 + x[0] * x[1] * padded + _n(ins[w_at]))


def _conv_transpose(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x, w = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if len(x) < 3 or len(w) != len(x):
        raise Refused("its input and weight ranks do not match")
    rank = len(x) - 2
    kernel = [int(k) for k in attrs.get("kernel_shape", w[2:])]
    strides, dilations, pads, _ = _spatial_attrs(attrs, kernel, x[2:])
    group = int(attrs.get("group", 1))
    if attrs.get("output_shape"):
        spatial = [int(d) for d in attrs["output_shape"]][-rank:]
    else:
        extra = [int(p) for p in attrs.get("output_padding", [0] * rank)]
        spatial = [strides[i] * (x[2 + i] - 1) + extra[i] + ((kernel[i] - 1) * dilations[i] + 1) - pads[i] - pads[i + rank]
                   for i in range(rank)]
    n = _count([x[0], w[1] * group, *spatial])
    full = _count([x[0], w[1] * group, *[strides[i] * x[2 + i] + kernel[i] * dilations[i] for i in range(rank)]])
    return Cost(n, PY * _n(ins[0]) * max(prod(w[1:]), 1) // 16 + full + n)


def _pool(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x = _shape(_at(ins, 0))
    kernel = [int(k) for k in attrs.get("kernel_shape", ())]
    if len(x) < 3 or len(kernel) != len(x) - 2:
        raise Refused("its kernel does not match the input")
    out, padded = _window_out(attrs, kernel, x[2:], ceil=bool(attrs.get("ceil_mode", 0)))
    n = _count([x[0], x[1], *out])
    return Cost(2 * n, PY * n * max(prod(kernel), 1) + x[0] * x[1] * padded)


def _roi_align(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    """num_rois x C x output_height x output_width bins, each averaging sampling_ratio^2 points (when 0: as many as
    the roi's extent over the bin, read from the rois' values), in Python."""
    x, rois = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if len(x) != 4 or len(rois) != 2 or rois[1] != 4:
        raise Refused("its input or rois are not 4-D and [num_rois, 4]")
    oh, ow = int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1))
    ratio = int(attrs.get("sampling_ratio", 0))
    if oh < 1 or ow < 1 or ratio < 0:
        raise Refused("a non-positive output size or a negative sampling_ratio")
    if ratio > 0:
        samples = ratio * ratio
    else:
        boxes = _floats(_at(ins, 1), "rois")
        scale = abs(float(attrs.get("spatial_scale", 1.0)))
        samples = max((math.ceil(abs(boxes[k + 3] - boxes[k + 1]) * scale / oh) or 1)
                      * (math.ceil(abs(boxes[k + 2] - boxes[k]) * scale / ow) or 1) for k in range(0, len(boxes), 4)) \
            if boxes else 1
    n = rois[0] * x[1] * oh * ow
    return Cost(n, PY * n * samples + _n(ins[0]))


def _max_roi_pool(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x, rois = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    pooled = [int(p) for p in attrs.get("pooled_shape", ())]
    if len(x) != 4 or len(rois) != 2 or len(pooled) != 2:
        raise Refused("its input, rois or pooled_shape do not fit")
    n = rois[0] * x[1] * pooled[0] * pooled[1]
    return Cost(n, PY * rois[0] * x[1] * x[2] * x[3] + n)


def _max_unpool(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x = _shape(_at(ins, 0))
    if _at(ins, 2) is not None:
        n = _count(_ints(ins[2], "output_shape"))
    else:
        kernel = [int(k) for k in attrs.get("kernel_shape", ())]
        strides = [int(s) for s in attrs.get("strides", [1] * len(kernel))]
        pads = [int(p) for p in attrs.get("pads", [0] * 2 * len(kernel))]
        if len(x) < 3 or len(kernel) != len(x) - 2 or len(strides) != len(kernel) or len(pads) != 2 * len(kernel):
            raise Refused("its kernel does not match the input")
        r = len(kernel)
        n = _count([x[0], x[1], *[(x[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + r] for i in range(r)]])
    return Cost(n, n + PY * _n(ins[0]))


def _grid_sample(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x, grid = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if len(x) < 3 or len(grid) != len(x):
        raise Refused("its input and grid ranks do not match")
    n = x[0] * x[1] * prod(grid[1:-1])
    return Cost(n, PY * n * 4 ** (len(x) - 2) + _n(ins[0]))


def _affine_grid(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    size = _ints(_at(ins, 1), "size")
    if len(size) < 3:
        raise Refused("its size is not N, C and spatial dims")
    n = _count([size[0], *size[2:], len(size) - 2])
    return Cost(n, 4 * n)


def _col2im(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x = _shape(_at(ins, 0))
    image, block = _ints(_at(ins, 1), "image_shape"), _ints(_at(ins, 2), "block_shape")
    if len(x) != 3 or not block or prod(block) <= 0:
        raise Refused("its input or block shape do not fit")
    n = _count([x[0], x[1] // prod(block), *image])
    return Cost(n, PY * _n(ins[0]) + n)


def _rnn(gates: int) -> CostFn:
    def cost(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
        x, w, r = _shape(_at(ins, 0)), _shape(_at(ins, 1)), _shape(_at(ins, 2))
        if len(x) != 3 or len(w) != 3 or len(r) != 3:
            raise Refused("its input or weights are not 3-D")
        layout = int(attrs.get("layout", 0))
        seq, batch = (x[1], x[0]) if layout else (x[0], x[1])
        dirs, hidden = w[0], w[1] // gates
        n = seq * dirs * batch * hidden * 3
        return Cost(n, seq * batch * (_n(ins[1]) + _n(ins[2])) + n)
    return cost


def _attention(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    """Attention (opset 23), LinearAttention: Q, K, V; the score matrix is q_len x kv_len per head."""
    q, k, v = (_shape(_at(ins, i)) for i in range(3))
    if len(q) < 3 or len(k) < 3 or len(v) < 3:
        raise Refused("its Q, K or V are not 3-D or 4-D")
    scores = prod(q[:-1]) * k[-2]
    out = prod(q[:-1]) * v[-1]
    return Cost(out + scores, scores * (q[-1] + v[-1] + 4) + out)


def _nms(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    boxes, scores = _shape(_at(ins, 0)), _shape(_at(ins, 1))
    if len(boxes) != 3 or len(scores) != 3:
        raise Refused("its boxes or scores are not 3-D")
    n = boxes[1]
    return Cost(scores[0] * scores[1] * n * 3, PY * scores[0] * scores[1] * n * n + _n(ins[1]))


def _dft(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    x = _shape(_at(ins, 0))
    length = _ints(_at(ins, 1), "dft_length") if _at(ins, 1) is not None else []
    if length and (len(length) != 1 or length[0] < 0):
        raise Refused("its dft_length is not one non-negative number")
    axis = int(attrs.get("axis", 1)) if opset < 20 else (_ints(_at(ins, 2), "axis")[0] if _at(ins, 2) is not None else -2)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        raise Refused("its axis is out of range")
    n = _n(ins[0]) // max(x[axis], 1) * (length[0] if length else x[axis]) * 2
    return Cost(n, n * max(n, 2).bit_length() * 4 + _n(ins[0]))


def _stft(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    signal = _shape(_at(ins, 0))
    step = _ints(_at(ins, 1), "frame_step")
    window = _at(ins, 2)
    length = _ints(_at(ins, 3), "frame_length") if _at(ins, 3) is not None else [_n(window)]
    if len(signal) < 2 or len(step) != 1 or step[0] < 1 or len(length) != 1 or length[0] < 1:
        raise Refused("its signal, frame_step or frame_length do not fit")
    frames = max((signal[1] - length[0]) // step[0] + 1, 0)
    n = signal[0] * frames * length[0] * 2
    return Cost(n, n * max(length[0], 2).bit_length() * 4 + _n(ins[0]))


def _dropout(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
    """Inference mode: its input (and a mask); training mode draws random numbers."""
    training = _at(ins, 2)
    if training is not None and (not isinstance(training, np.ndarray) or bool(np.asarray(training).reshape(-1)[:1].any())):
        raise Refused("a Dropout in training mode: its value is random")
    n = _n(_at(ins, 0))
    return Cost(2 * n, 3 * n)


def _refused(reason: str) -> CostFn:
    def cost(attrs: Attrs, opset: int, ins: Sequence[Input]) -> Cost:
        raise Refused(reason)
    return cost


REGEX = _refused("a regular expression: its matching time is not bounded by its input's size, and Python's re "
                 "cannot be interrupted")
RANDOM = _refused("a random op: its value is not constant")
GRAPH = _refused("it holds a graph")
SEQUENCE = _refused("sequences and optionals are not evaluated")
IMAGE = _refused("decoding an image: its output's size is not bounded by its input's")
UNBOUNDED = _refused("no bound on its work is known")


# ----------------------------------------------------------------------------- the table

# one data input (and scalar or per-axis parameters: Clip's bounds, a quantization's scale and zero point along
# an axis or in blocks, which do not broadcast as numpy does): as large as the first input
_UNARY = ("Abs Acos Acosh Asin Asinh Atan Atanh BitwiseNot Ceil Celu Clip Cos Cosh Elu Erf Exp Floor Gelu HardSigmoid "
          "HardSwish Identity IsInf IsNaN LeakyRelu Log Mish Neg Not Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin "
          "Sinh Softplus Softsign Sqrt Swish Tan Tanh ThresholdedRelu CastLike BitCast DynamicQuantizeLinear "
          "QuantizeLinear DequantizeLinear RotaryEmbedding SwiGLU")
_BROADCAST = ("Add And BitShift BitwiseAnd BitwiseOr BitwiseXor Div Equal Greater GreaterOrEqual Less LessOrEqual Max "
              "Mean Min Mod Mul Or Pow PRelu Sub Sum Where Xor")
_LIKE_FIRST = ("ArgMax ArgMin BatchNormalization CumProd CumSum DepthToSpace Flatten GlobalAveragePool GlobalLpPool "
               "GlobalMaxPool GroupNormalization Hardmax InstanceNormalization LayerNormalization LogSoftmax "
               "LpNormalization MeanVarianceNormalization NegativeLogLikelihoodLoss RMSNormalization ReduceL1 ReduceL2 "
               "ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Reshape "
               "ReverseSequence Slice Softmax SoftmaxCrossEntropyLoss SpaceToDepth Split Squeeze Transpose Trilu Unsqueeze")

COSTS: dict[str, CostFn] = {
    **{op: _like_first() for op in _UNARY.split()},
    **{op: _elementwise() for op in _BROADCAST.split()},
    **{op: _like_first() for op in _LIKE_FIRST.split()},
    "LRN": _like_first(16), "Cast": _cast,
    "TopK": _top_k, "Unique": _sorting(lambda n, rank: 4 * n), "NonZero": _sorting(lambda n, rank: n * rank),
    "Compress": _sorting(lambda n, rank: n),
    "Gather": _gather, "GatherElements": _like_first(), "GatherND": _gather_nd,
    "Scatter": _scatter, "ScatterElements": _scatter, "ScatterND": _scatter, "TensorScatter": _scatter,
    "Concat": _concat, "Shape": _shape_op, "Size": _shape_op, "Constant": _constant,
    "ConstantOfShape": _constant_of_shape, "Expand": _expand, "Tile": _tile, "Range": _range, "Pad": _pad,
    "OneHot": _one_hot, "Resize": _resize, "Upsample": _resize, "CenterCropPad": _center_crop_pad, "EyeLike": _eye_like,
    "HannWindow": _window, "HammingWindow": _window, "BlackmanWindow": _window, "MelWeightMatrix": _mel,
    "MatMul": _matmul, "MatMulInteger": _matmul, "QLinearMatMul": _matmul, "Gemm": _gemm, "Einsum": _einsum, "Det": _det,
    "Conv": _conv, "ConvInteger": _conv, "QLinearConv": _conv, "DeformConv": _conv, "ConvTranspose": _conv_transpose,
    "AveragePool": _pool, "MaxPool": _pool, "LpPool": _pool, "MaxRoiPool": _max_roi_pool, "RoiAlign": _roi_align,
    "MaxUnpool": _max_unpool, "GridSample": _grid_sample, "AffineGrid": _affine_grid, "Col2Im": _col2im,
    "RNN": _rnn(1), "GRU": _rnn(3), "LSTM": _rnn(4), "Attention": _attention, "LinearAttention": _attention,
    "NonMaxSuppression": _nms, "DFT": _dft, "STFT": _stft,
    "StringConcat": _strings(), "StringNormalizer": _strings(), "StringSplit": _strings(),
    "RegexFullMatch": REGEX, "ImageDecoder": IMAGE, "TfIdfVectorizer": UNBOUNDED, "CausalConvWithState": UNBOUNDED,
    "Dropout": _dropout,
    **{op: RANDOM for op in "Bernoulli Multinomial RandomNormal RandomNormalLike RandomUniform RandomUniformLike".split()},
    **{op: GRAPH for op in ("If", "Loop", "Scan", "SequenceMap")},
    **{op: SEQUENCE for op in ("ConcatFromSequence SequenceAt SequenceConstruct SequenceEmpty SequenceErase "
                               "SequenceInsert SequenceLength SplitToSequence Optional OptionalGetElement "
                               "OptionalHasElement").split()},
}
# ops of other domains whose cost is that of an elementwise op (ORT's quantization ops, for onnxslim's folding)
DOMAIN_COSTS: dict[tuple[str, str], CostFn] = {
    ("com.microsoft", "DequantizeLinear"): _like_first(), ("com.microsoft", "QuantizeLinear"): _like_first(),
}


def cost(op_type: str, domain: str, opset: int, attrs: Attrs, inputs: Sequence[Input]) -> Cost:
    """What evaluating the node costs at most; Refused when that is not known (or not bounded)."""
    fn = COSTS.get(op_type) if domain in ("", "ai.onnx") else DOMAIN_COSTS.get((domain, op_type))
    if fn is None:
        raise Refused("no bound on its work is known" if domain in ("", "ai.onnx") else f"an op of domain {domain}")
    try:
        return fn(attrs, opset, inputs)
    except Refused:
        raise
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, ZeroDivisionError, AttributeError):
        raise Refused("its inputs or attributes do not fit the op") from None


# ----------------------------------------------------------------------------- the budget of one model


@dataclass
class Budget:
    """The work one model's evaluations may spend: each at most `node`, all together at most `model`. What was
    refused is kept, per op type, for the one line that says so (`summary`)."""

    node: int = NODE_WORK
    model: int = MODEL_WORK
    spent: int = 0
    refused: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # op type -> (node, why, times)

    def allow(self, op_type: str, domain: str, opset: int, attrs: Attrs, inputs: Sequence[Input],
              name: str = "", max_elements: int | None = None) -> bool:
        """Whether the node may be evaluated now (its work is then spent). A refusal is recorded for summary(),
        except an output past max_elements (the caller's cap on what it evaluates: a weight, not a refusal)."""
        try:
            c = cost(op_type, domain, opset, attrs, inputs)
            if max_elements is not None and c.elements > max_elements:
                return False  # a cap on the result's size, the caller's (a weight, not a shape computation): no note
            if c.work > self.node:
                raise Refused(f"{c.work:,} units of work, past the budget of {self.node:,} for one node")
            if self.spent + c.work > self.model:
                raise Refused(f"the model's evaluation budget ({self.model:,} units) is spent")
        except Refused as exc:
            self.note(op_type, name, str(exc))
            return False
        self.spent += c.work
        return True

    def note(self, op_type: str, name: str, why: str) -> None:
        got = self.refused.get(op_type)
        self.refused[op_type] = (got[0], got[1], got[2] + 1) if got else (name, why, 1)

    def summary(self, what: str) -> str | None:
        """One line: what was not evaluated and why (None: everything asked was)."""
        if not self.refused:
            return None
        parts = []
        for op, (name, why, times) in self.refused.items():
            more = f" and {times - 1} more" if times > 1 else ""
            parts.append(f"{op} {name!r}{more} ({why})" if name else f"{op}{more} ({why})")
        return f"{what}: not evaluated: {'; '.join(parts)}"
