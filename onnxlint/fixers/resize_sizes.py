"""resize-sizes: an align_corners Resize with constant scales gets an explicit, exactly equivalent `sizes`."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from onnxlint.fixers.base import FixContext, fixer
from onnxlint.fixers.constants import constant_tensors
from onnxlint.graph import iter_graphs


def _uses_scales(n: onnx.NodeProto) -> bool:
    return (n.op_type == "Resize" and n.domain in ("", "ai.onnx") and len(n.input) >= 3 and bool(n.input[2])
            and (len(n.input) < 4 or not n.input[3])
            and any(a.name == "coordinate_transformation_mode" and a.s == b"align_corners" for a in n.attribute))


def _static_shapes(model: onnx.ModelProto) -> dict[str, list[int]]:
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for v in (v for g in iter_graphs(inferred) for v in list(g.input) + list(g.value_info)):
        tt = v.type.tensor_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            out[v.name] = [d.dim_value for d in tt.shape.dim]
    return out


@fixer("resize-sizes", True,
       "give an align_corners Resize an explicit 'sizes' input (from its static input shape and constant scales)")
def resize_sizes(ctx: FixContext) -> onnx.ModelProto:
    """With align_corners the sampling positions depend on the input and output lengths only, so 'sizes' =
    floor(input * scales) gives the same result, and TensorRT is exact with sizes, not with scales."""
    model = ctx.model
    if ctx.opset < 11:
        return model
    candidates = [r for r in ctx.nodes if r.scope.graph is not None and _uses_scales(r.proto)]
    if not candidates:
        return model
    shapes = _static_shapes(model)
    taken = {i.name for g in iter_graphs(model) for i in g.initializer} | {
        o for g in iter_graphs(model) for n in g.node for o in n.output}
    for ref in candidates:
        n, g = ref.proto, ref.scope.graph
        consts = constant_tensors(g)
        shape, scales = shapes.get(n.input[0]), consts.get(n.input[2])
        if shape is None or scales is None or scales.data_location == TensorProto.EXTERNAL:
            continue
        scales = numpy_helper.to_array(scales).astype(np.float32).reshape(-1)
        if scales.size != len(shape):
            continue
        sizes = np.floor(np.asarray(shape, np.float32) * scales).astype(np.int64)
        name = f"{n.name or 'resize'}_sizes"
        while name in taken:
            name += "_"
        taken.add(name)
        g.initializer.append(numpy_helper.from_array(sizes, name))
        x, roi = n.input[0], n.input[1]
        del n.input[:]
        n.input.extend([x, roi, "", name])
    return model
