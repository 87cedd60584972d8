"""equal-cast: a Cast so both Equal inputs share one dtype (ORT has no mixed-type Equal kernel)."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from onnxlint.fixers.base import FixContext, fixer
from onnxlint.fixers.constants import value_types

# the wider type wins: casting the narrower input keeps every value
_RANK: dict[int, int] = {TensorProto.DOUBLE: 9, TensorProto.FLOAT: 8, TensorProto.FLOAT16: 7, TensorProto.INT64: 6, TensorProto.INT32: 5,
         TensorProto.INT16: 4, TensorProto.INT8: 3, TensorProto.UINT8: 2, TensorProto.BOOL: 1}


def can_fix(node, rule=None) -> bool:
    """Lint time: both input dtypes are known (and differ)."""
    a, b = node.input_type(0).dtype, node.input_type(1).dtype if len(node.inputs) > 1 else None
    return bool(a and b and a != b)


@fixer("equal-cast", True, "insert a Cast so both Equal inputs share one dtype", can_fix=can_fix)
def equal_cast(ctx: FixContext) -> onnx.ModelProto:
    targets = [n for n in ctx.nodes if n.op_type == "Equal" and len(n.proto.input) == 2]
    if not targets:
        return ctx.model
    types = value_types(ctx.model)
    # casts to insert, by graph and by the position of the Equal they feed
    by_graph: dict[int, tuple[onnx.GraphProto, dict[int, onnx.NodeProto]]] = {}
    for ref in targets:
        g = ref.scope.graph
        if g is None:
            continue
        n = ref.proto
        ta, tb = types.get(n.input[0]), types.get(n.input[1])
        if not (ta and tb and ta != tb):
            continue
        to = ta if _RANK.get(ta, 0) >= _RANK.get(tb, 0) else tb
        j = 1 if to == ta else 0
        cast_out = f"{n.input[j]}_cast_{n.name or 'equal'}"
        cast = helper.make_node("Cast", [n.input[j]], [cast_out], to=to, name=f"{n.name or 'Equal'}_cast")
        n.input[j] = cast_out
        by_graph.setdefault(id(ref.scope), (g, {}))[1][ref.scope.nodes.index(ref)] = cast
    for g, casts in reversed(list(by_graph.values())):  # innermost first: a rebuild copies the bodies
        nodes: list[onnx.NodeProto] = []
        for pos, n in enumerate(g.node):
            if pos in casts:
                nodes.append(casts[pos])
            nodes.append(n)
        del g.node[:]
        g.node.extend(nodes)
    return ctx.model
