"""batchnorm-inference: BatchNormalization in training mode becomes its inference form."""

from __future__ import annotations

import copy

import onnx

from onnxlint.fixers.base import FixContext, fixer
from onnxlint.graph import GraphIndex, iter_graphs


def _to_inference(model: onnx.ModelProto, nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    used = {i for g in iter_graphs(model) for n in g.node for i in n.input} | {o.name for o in model.graph.output}
    for n in nodes:
        if n.op_type != "BatchNormalization" or n.domain not in ("", "ai.onnx"):
            continue
        if any(o and o in used for o in n.output[1:]):
            continue
        del n.output[1:]
        keep = [a for a in n.attribute if a.name != "training_mode"]
        del n.attribute[:]
        n.attribute.extend(keep)
    return model


def _inference_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    """BatchNormalization in training mode cannot run in an inference session (ORT rejects it), so the
    behaviour to keep is its inference form: training_mode=0 with the learned statistics."""
    m = copy.deepcopy(model)
    return _to_inference(m, [n.proto for n in GraphIndex(m).nodes])


def can_fix(node, rule=None) -> bool:
    """Lint time: the running-statistics outputs are unused."""
    from onnxlint.fixers.dropout import _used

    return node.op_type == "BatchNormalization" and not _used(node, [o for o in node.outputs[1:] if o])


@fixer("batchnorm-inference", True, "set BatchNormalization training_mode=0 and drop the running-stat outputs",
       reference=_inference_reference, can_fix=can_fix,
       intended=("normalises with the learned running statistics, not the batch's, as the eval-mode export does",
                 "the original run with training_mode=0"))
def batchnorm_inference(ctx: FixContext) -> onnx.ModelProto:
    return _to_inference(ctx.model, [n.proto for n in ctx.nodes])
