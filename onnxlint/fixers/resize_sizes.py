"""resize-sizes: an align_corners Resize with constant scales gets an explicit, exactly equivalent `sizes`.

Torch exports at opsets 11-20 give Resize `roi` and `scales` as Constant nodes (empty tensors when unused)
or as empty names (opset 13+, where both are optional). Resize-11/12 have no optional inputs: there roi and
scales stay present (an empty float tensor), so the rewritten node is [X, roi, <empty scales>, sizes];
from opset 13 it is [X, roi or "", "", sizes].
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from onnxlint.fixers.base import FixContext, fixer
from onnxlint.graph import iter_graphs


def _is_align_corners(n: onnx.NodeProto) -> bool:
    return any(a.name == "coordinate_transformation_mode" and a.s == b"align_corners" for a in n.attribute)


def _has_sizes(n: onnx.NodeProto) -> bool:
    return len(n.input) > 3 and bool(n.input[3])


def _scales(const: TensorProto | None) -> np.ndarray | None:
    if const is None or const.data_location == TensorProto.EXTERNAL:
        return None
    arr = numpy_helper.to_array(const).astype(np.float64).reshape(-1)
    return arr if arr.size else None


def _sizes_for(shape, scales: np.ndarray | None) -> np.ndarray | None:
    """floor(input * scales) as Resize computes its output size; None unless the shape is fully static."""
    plan = _plan(shape, scales)
    return plan[1] if plan is not None and plan[0] == 0 else None


def _plan(shape, scales: np.ndarray | None) -> tuple[int, np.ndarray] | None:
    """(k, tail): the output's first k dims are the input's own at run time (dynamic dims, a batch, at scale 1:
    read from Shape(X)), the rest floor(input * scales) as Resize computes them (a constant); None when a
    dynamic dim is scaled or follows a static one."""
    if shape is None or scales is None or len(shape) != scales.size:
        return None
    static = [isinstance(d, int) and d > 0 for d in shape]
    k = static.index(True) if True in static else len(shape)
    if not all(static[k:]) or any(scales[:k] != 1.0):
        return None
    # Resize computes in float32 (ORT) and floors; the same expression keeps the sizes ORT produced
    tail = np.floor(np.asarray(shape[k:], np.float32) * scales[k:].astype(np.float32)).astype(np.int64)
    return k, tail


def can_fix(node, rule=None) -> bool:
    """Lint time: the scales are a constant of matching length, and the input shape static but for leading dims
    (a dynamic batch) at scale 1."""
    n = node.proto
    if node.op_type != "Resize" or node.domain != "ai.onnx" or (node.opset or 0) < 11 or _has_sizes(n):
        return False
    if len(n.input) < 3 or not n.input[2]:
        return False
    scales = _scales(node.scope.constant(n.input[2]))
    return _plan(node.input_type(0).shape, scales) is not None


def _shapes(model: onnx.ModelProto) -> dict[str, list[int | None]]:
    """Inferred shapes by value name: an int per static dim, None per dynamic one."""
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for v in (v for g in iter_graphs(inferred) for v in list(g.input) + list(g.value_info)):
        tt = v.type.tensor_type
        if tt.HasField("shape"):
            out[v.name] = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    return out


@fixer("resize-sizes", True,
       "give an align_corners Resize an explicit 'sizes' input (from its static input shape and constant scales; a "
       "dynamic batch at scale 1 is read from Shape at run time)",
       can_fix=can_fix)
def resize_sizes(ctx: FixContext) -> onnx.ModelProto:
    """With align_corners the sampling positions depend on the input and output lengths only, so 'sizes' =
    floor(input * scales) gives the same result, and TensorRT is exact with sizes, not with scales."""
    model = ctx.model
    opset = ctx.opset
    if opset < 11:
        return model
    candidates = [r for r in ctx.nodes if r.scope.graph is not None and r.op_type == "Resize"
                  and _is_align_corners(r.proto) and not _has_sizes(r.proto) and len(r.proto.input) >= 3
                  and r.proto.input[2]]
    if not candidates:
        return model
    shapes = _shapes(model)
    taken = {i.name for g in iter_graphs(model) for i in g.initializer} | {
        o for g in iter_graphs(model) for n in g.node for o in n.output}

    def fresh(base: str) -> str:
        name = base
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    for ref in candidates:
        n, g = ref.proto, ref.scope.graph
        if g is None:
            continue
        # the one constant lookup every fixer and the lint use: this graph's, then an enclosing graph's
        plan = _plan(shapes.get(n.input[0]), _scales(ref.scope.constant(n.input[2])))
        if plan is None:
            continue
        k, tail = plan
        base = n.name or "resize"
        x = n.input[0]
        sizes_name = fresh(f"{base}_sizes")
        if k == 0:
            g.initializer.append(numpy_helper.from_array(tail, sizes_name))
        else:  # sizes = Concat(Shape(X)[:k], tail): the batch stays dynamic (nodes sorted by the run's tidy)
            names = {w: fresh(f"{base}_{w}") for w in ("shape", "head", "tail", "zero", "k")}
            g.initializer.extend([numpy_helper.from_array(tail, names["tail"]),
                                  numpy_helper.from_array(np.array([0], np.int64), names["zero"]),
                                  numpy_helper.from_array(np.array([k], np.int64), names["k"])])
            g.node.extend([
                onnx.helper.make_node("Shape", [x], [names["shape"]], name=f"{base}_sizes_shape"),
                onnx.helper.make_node("Slice", [names["shape"], names["zero"], names["k"]], [names["head"]],
                                      name=f"{base}_sizes_head"),
                onnx.helper.make_node("Concat", [names["head"], names["tail"]], [sizes_name], axis=0,
                                      name=f"{base}_sizes_concat")])
        roi = n.input[1] if len(n.input) > 1 else ""
        if opset < 13:
            # Resize-11/12: roi and scales are required inputs; an unused one is an empty float tensor
            if not roi:
                roi = fresh(f"{base}_roi")
                g.initializer.append(numpy_helper.from_array(np.zeros(0, np.float32), roi))
            scales_name = fresh(f"{base}_no_scales")
            g.initializer.append(numpy_helper.from_array(np.zeros(0, np.float32), scales_name))
        else:
            scales_name = ""
        del n.input[:]
        n.input.extend([x, roi, scales_name, sizes_name])
    return model
