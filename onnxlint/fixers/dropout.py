"""dropout-inference: a training-mode Dropout becomes Identity (inference semantics)."""

from __future__ import annotations

import copy

import numpy as np
import onnx
from onnx import numpy_helper

from onnxlint.fixers.base import Applicability, FixContext, fixer, is_read, truncate
from onnxlint.model.graph import iter_graphs


def _inference_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    """The original with every Dropout's training_mode forced to false (Dropout is then the identity)."""
    m = copy.deepcopy(model)
    for g in iter_graphs(m):
        for n in g.node:
            if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
                name = f"{n.input[2]}__onnxlint_false"
                g.initializer.append(numpy_helper.from_array(np.array(False), name))
                n.input[2] = name
    return m


def _used(node, names) -> bool:
    """Whether any of these outputs is read (in the node's graph or a body below it) or is a graph output."""
    scope = node.scope
    if any(n in scope.outputs or scope.consumers.get(n) for n in names):
        return True
    return False


def can_fix(node, rule=None) -> bool:
    """Lint time: the mask output is unused (else removing it would change the graph's interface)."""
    return node.op_type == "Dropout" and not _used(node, [o for o in node.outputs[1:] if o])


@fixer("dropout-inference", Applicability.SAFE, "replace training-mode Dropout with Identity (inference semantics)",
       reference=_inference_reference, can_fix=can_fix,
       intended=("passes its input through instead of dropping at random, as the eval-mode export does",
                 "the original run with training_mode=0"))
def dropout_inference(ctx: FixContext) -> onnx.ModelProto:
    graph = ctx.graph()
    for hit in ctx.found(graph):
        n = hit.node
        if n.op != "Dropout" or n.domain not in ("", "ai.onnx", None):
            continue
        if len(n.outputs) > 1 and is_read(graph, n.outputs[1]):
            continue  # the mask is used: removing it would change the graph's interface
        n.op = "Identity"
        n.attrs.clear()
        truncate(n.inputs, 1)  # ratio and training_mode; the run's cleanup drops what nothing else reads
        truncate(n.outputs, 1)
    return ctx.from_graph(graph)
