"""equal-cast: a Cast so both Equal inputs share one dtype (ORT has no mixed-type Equal kernel)."""

from __future__ import annotations

import onnx
from onnx import TensorProto

from onnxlint.fixers.base import Applicability, FixContext, fixer
from onnxlint.model.graph import GraphIndex

# the wider type wins: casting the narrower input keeps every value
_RANK: dict[int, int] = {TensorProto.DOUBLE: 9, TensorProto.FLOAT: 8, TensorProto.FLOAT16: 7, TensorProto.INT64: 6, TensorProto.INT32: 5,
         TensorProto.INT16: 4, TensorProto.INT8: 3, TensorProto.UINT8: 2, TensorProto.BOOL: 1}


def can_fix(node, rule=None) -> bool:
    """Lint time: both input dtypes are known (and differ)."""
    a, b = node.input_type(0).dtype, node.input_type(1).dtype if len(node.inputs) > 1 else None
    return bool(a and b and a != b)


def value_types(model: onnx.ModelProto) -> dict[str, int]:
    """elem_type of every value onnx's shape inference can type, in every graph (bodies included), as the lint's
    index reads them (value infos, initializers, Constant values)."""
    index = GraphIndex(onnx.shape_inference.infer_shapes(model))
    return {name: TensorProto.DataType.Value(vt.dtype.upper())
            for scope in index.scopes for name, vt in scope.types.items() if vt.dtype}


@fixer("equal-cast", Applicability.SAFE, "insert a Cast so both Equal inputs share one dtype", can_fix=can_fix)
def equal_cast(ctx: FixContext) -> onnx.ModelProto:
    import onnx_graphsurgeon as gs

    graph = ctx.graph()
    hits = [h for h in ctx.found(graph) if h.node.op == "Equal" and len(h.node.inputs) == 2]
    if not hits:
        return ctx.model
    types = value_types(ctx.model)
    for hit in hits:
        n = hit.node
        ta, tb = types.get(n.inputs[0].name), types.get(n.inputs[1].name)
        if not (ta and tb and ta != tb):
            continue
        to = ta if _RANK.get(ta, 0) >= _RANK.get(tb, 0) else tb
        j = 1 if to == ta else 0
        src = n.inputs[j]
        cast_out = gs.Variable(f"{src.name}_cast_{n.name or 'equal'}", dtype=onnx.helper.tensor_dtype_to_np_dtype(to))
        cast = gs.Node("Cast", f"{n.name or 'Equal'}_cast", {"to": to}, [src], [cast_out])
        n.inputs[j] = cast_out
        at = next(k for k, x in enumerate(hit.graph.nodes) if x is n)
        hit.graph.nodes.insert(at, cast)  # right before the Equal: the graph stays sorted
    return ctx.from_graph(graph)
