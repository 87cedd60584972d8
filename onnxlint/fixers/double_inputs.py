"""double-inputs-to-float (unsafe): float64 graph inputs become float32, cast back to float64 inside."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto

from onnxlint.fixers.base import Applicability, FixContext, fixer


@fixer("double-inputs-to-float", Applicability.UNSAFE, "change float64 graph inputs to float32 and cast inside (changes the interface)")
def double_inputs_to_float(ctx: FixContext) -> onnx.ModelProto:
    import onnx_graphsurgeon as gs

    graph = ctx.graph()
    casts = []
    for inp in graph.inputs:
        if not isinstance(inp, gs.Variable) or inp.dtype != np.float64:
            continue  # an input with an initializer is a constant: not the interface
        inner = gs.Variable(f"{inp.name}__as_double", dtype=np.float64, shape=inp.shape)
        for reader in list(inp.outputs):  # a body's nodes read outer-scope values too: they are readers here
            for k, t in enumerate(reader.inputs):
                if t is inp:
                    reader.inputs[k] = inner
        inp.dtype = np.float32
        casts.append(gs.Node("Cast", f"{inp.name}_to_double", {"to": TensorProto.DOUBLE}, [inp], [inner]))
    graph.nodes[:0] = casts
    return ctx.from_graph(graph)
