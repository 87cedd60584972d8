"""int64-to-int32 (unsafe): INT64 constants stored as INT32 behind a Cast, and INT64 graph inputs taken as
INT32 (cast to INT64 inside), where every value fits (TensorRT 8.x has no INT64 and clamps).

Constants: every graph (If/Loop/Scan bodies included); a tensor with a value outside int32 is left alone.
Graph inputs change the model's interface (callers must pass int32), which is why the fix is unsafe."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxlint.fixers.base import Applicability, FixContext, fixer
from onnxlint.model.graph import iter_graphs

I32 = np.iinfo(np.int32)


def _fits(arr: np.ndarray) -> bool:
    return not arr.size or (int(arr.min()) >= I32.min and int(arr.max()) <= I32.max)


def _rename_uses(g: onnx.GraphProto, old: str, new: str) -> None:
    for n in g.node:
        for k, x in enumerate(n.input):
            if x == old:
                n.input[k] = new


def can_fix(node, rule=None) -> bool:
    """Lint time: every INT64 constant input of the node fits in int32."""
    for name in node.inputs:
        t = node.scope.constant(name) if name else None
        if t is not None and t.data_type == TensorProto.INT64:
            if t.data_location == TensorProto.EXTERNAL or not _fits(numpy_helper.to_array(t)):
                return False
    return True


@fixer("int64-to-int32", Applicability.UNSAFE, "store INT64 constants as INT32 behind a Cast, and take INT64 graph inputs as INT32, "
       "where every value fits (TensorRT 8.x)", can_fix=can_fix)
def int64_to_int32(ctx: FixContext) -> onnx.ModelProto:
    model = ctx.model
    wanted = {n for ref in ctx.nodes for n in ref.inputs if n}
    for g in iter_graphs(model):
        casts = []
        for init in g.initializer:
            if init.data_type != TensorProto.INT64 or init.data_location == TensorProto.EXTERNAL:
                continue
            if ctx.nodes and init.name not in wanted:
                continue
            arr = numpy_helper.to_array(init)
            if not _fits(arr):
                continue
            name = init.name
            init.CopyFrom(numpy_helper.from_array(arr.astype(np.int32), f"{name}__int32"))
            casts.append(helper.make_node("Cast", [f"{name}__int32"], [name], to=TensorProto.INT64,
                                          name=f"{name}_to_int64"))
        for n in g.node:
            if n.op_type == "Constant" and n.output and (not ctx.nodes or n.output[0] in wanted):
                for a in n.attribute:
                    if a.name == "value" and a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.INT64:
                        arr = numpy_helper.to_array(a.t)
                        if not _fits(arr):
                            continue
                        out = n.output[0]
                        a.t.CopyFrom(numpy_helper.from_array(arr.astype(np.int32)))
                        n.output[0] = f"{out}__int32"
                        casts.append(helper.make_node("Cast", [f"{out}__int32"], [out], to=TensorProto.INT64,
                                                      name=f"{out}_to_int64"))
        if casts:
            # a Cast goes right after what it casts: initializer casts first, Constant casts after their node
            nodes: list[onnx.NodeProto] = []
            by_src = {c.input[0]: c for c in casts}
            inits = [c for c in casts if not any(n.output and n.output[0] == c.input[0] for n in g.node)]
            nodes.extend(inits)
            for n in g.node:
                nodes.append(n)
                if n.op_type == "Constant" and n.output and n.output[0] in by_src:
                    nodes.append(by_src[n.output[0]])
            del g.node[:]
            g.node.extend(nodes)
    g = model.graph
    init_names = {i.name for i in g.initializer}
    casts = []
    for inp in g.input:
        if inp.name in ctx.inputs and inp.name not in init_names and inp.type.tensor_type.elem_type == TensorProto.INT64:
            inp.type.tensor_type.elem_type = TensorProto.INT32
            inner = f"{inp.name}__as_int64"
            for sub in iter_graphs(model):  # bodies read outer-scope values by name too
                _rename_uses(sub, inp.name, inner)
            casts.append(helper.make_node("Cast", [inp.name], [inner], to=TensorProto.INT64, name=f"{inp.name}_to_int64"))
    if casts:
        nodes = casts + list(g.node)
        del g.node[:]
        g.node.extend(nodes)
    return model
