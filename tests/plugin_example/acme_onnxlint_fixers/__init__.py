"""acme-drop-identity: removes the Identity nodes its findings name (rule ACME900 in rules.yaml beside this
package), through the onnx-graphsurgeon Graph the fix context hands out. Dead nodes and order are left to
onnxlint, which cleans up and sorts once after every fixer; the numeric check and the safe write are onnxlint's."""

from __future__ import annotations

from onnxlint.fixers.base import Applicability, FixContext, fixer


@fixer("acme-drop-identity", Applicability.SAFE, summary="remove Identity nodes: their readers read the Identity's input")
def drop_identity(ctx: FixContext):
    graph = ctx.graph()
    outputs = {t.name for t in graph.outputs}
    for node in graph.nodes:
        if node.op == "Identity" and node.name in ctx.node_names and node.outputs[0].name not in outputs:
            source, result = node.inputs[0], node.outputs[0]
            for reader in list(result.outputs):
                for i, t in enumerate(reader.inputs):
                    if t is result:
                        reader.inputs[i] = source
    return ctx.from_graph(graph)
