"""fold-shapes: constant-fold shape subgraphs so ORT places no shape computation on the CPU."""

from __future__ import annotations

import onnx

from onnxlint.fixers.base import FixContext, fixer


@fixer("fold-shapes", True, "constant-fold shape subgraphs with onnx-graphsurgeon so ORT has no CPU shape nodes")
def fold_shapes(ctx: FixContext) -> onnx.ModelProto:
    model = ctx.model
    import onnx_graphsurgeon as gs

    graph = gs.import_onnx(model)
    graph.fold_constants().cleanup().toposort()
    out = gs.export_onnx(graph)
    out.ir_version = model.ir_version
    return out
