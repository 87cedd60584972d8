"""double-inputs-to-float (unsafe): float64 graph inputs become float32, cast back to float64 inside."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from onnxlint.fixers.base import FixContext, fixer
from onnxlint.graph import iter_graphs


@fixer("double-inputs-to-float", False, "change float64 graph inputs to float32 and cast inside (changes the interface)")
def double_inputs_to_float(ctx: FixContext) -> onnx.ModelProto:
    model = ctx.model
    g = model.graph
    casts = []
    for inp in g.input:
        tt = inp.type.tensor_type
        if tt.elem_type == TensorProto.DOUBLE and inp.name not in {i.name for i in g.initializer}:
            tt.elem_type = TensorProto.FLOAT
            inner = f"{inp.name}__as_double"
            for sub in iter_graphs(model):  # bodies read outer-scope values by name too
                for n in sub.node:
                    for k, x in enumerate(n.input):
                        if x == inp.name:
                            n.input[k] = inner
            casts.append(helper.make_node("Cast", [inp.name], [inner], to=TensorProto.DOUBLE, name=f"{inp.name}_to_double"))
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model
