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
    if shape is None or scales is None or len(shape) != scales.size:
        return None
    if not all(isinstance(d, int) and d > 0 for d in shape):
        return None
    # Resize computes in float32 (ORT) and floors; the same expression keeps the sizes ORT produced
    return np.floor(np.asarray(shape, np.float32) * scales.astype(np.float32)).astype(np.int64)


def can_fix(node, rule=None) -> bool:
    """Lint time: the input shape is static and the scales are a constant of matching length."""
    n = node.proto
    if node.op_type != "Resize" or node.domain != "ai.onnx" or (node.opset or 0) < 11 or _has_sizes(n):
        return False
    if len(n.input) < 3 or not n.input[2]:
        return False
    scales = _scales(node.scope.constant(n.input[2]))
    return _sizes_for(node.input_type(0).shape, scales) is not None


def _static_shapes(model: onnx.ModelProto) -> dict[str, list[int]]:
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for v in (v for g in iter_graphs(inferred) for v in list(g.input) + list(g.value_info)):
        tt = v.type.tensor_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            out[v.name] = [d.dim_value for d in tt.shape.dim]
    return out


@fixer("resize-sizes", True,
       "give an align_corners Resize an explicit 'sizes' input (from its static input shape and constant scales)",
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
    shapes = _static_shapes(model)
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
        sizes = _sizes_for(shapes.get(n.input[0]), _scales(ref.scope.constant(n.input[2])))
        if sizes is None:
            continue
        base = n.name or "resize"
        sizes_name = fresh(f"{base}_sizes")
        g.initializer.append(numpy_helper.from_array(sizes, sizes_name))
        x = n.input[0]
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
