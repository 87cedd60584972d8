"""batchnorm-inference: BatchNormalization in training mode becomes its inference form."""

from __future__ import annotations

from typing import Any, Iterable

import onnx

from onnxlint.fixers.base import Applicability, FixContext, fixer, graft, gs_locations, is_read, truncate


def _to_inference(graph: Any, nodes: Iterable[Any]) -> None:
    """Each training-mode BatchNormalization of these gs nodes whose running-statistics outputs nothing reads
    keeps its first output and loses training_mode (inference: the learned mean and variance)."""
    for n in nodes:
        if n.op != "BatchNormalization" or n.domain not in ("", "ai.onnx", None):
            continue
        if any(is_read(graph, o) for o in n.outputs[1:]):
            continue
        truncate(n.outputs, 1)
        n.attrs.pop("training_mode", None)


def _inference_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    """BatchNormalization in training mode cannot run in an inference session (ORT rejects it), so the
    behaviour to keep is its inference form: training_mode=0 with the learned statistics."""
    import onnx_graphsurgeon as gs

    graph = gs.import_onnx(model)  # read only: graft() copies the model
    _to_inference(graph, [n for _, _, n in gs_locations(graph)])
    return graft(model, graph)


def can_fix(node, rule=None) -> bool:
    """Lint time: the running-statistics outputs are unused."""
    from onnxlint.fixers.dropout import _used

    return node.op_type == "BatchNormalization" and not _used(node, [o for o in node.outputs[1:] if o])


@fixer("batchnorm-inference", Applicability.SAFE, "set BatchNormalization training_mode=0 and drop the running-stat outputs",
       reference=_inference_reference, can_fix=can_fix,
       intended=("normalises with the learned running statistics, not the batch's, as the eval-mode export does",
                 "the original run with training_mode=0"))
def batchnorm_inference(ctx: FixContext) -> onnx.ModelProto:
    graph = ctx.graph()
    _to_inference(graph, [hit.node for hit in ctx.found(graph)])
    return ctx.from_graph(graph)
