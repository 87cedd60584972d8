"""Constant tensors of one graph, for value_types. A fixer reading a constant input asks the node's scope
(`NodeRef.scope.constant(name)`, the lookup the lint uses: initializers and Constant nodes, this graph's then
an enclosing graph's), never a lookup of its own."""

from __future__ import annotations

import onnx
from onnx import TensorProto


def constant_tensors(graph: onnx.GraphProto) -> dict[str, TensorProto]:
    """Initializers and Constant-node values of one graph, by value name."""
    out = {i.name: i for i in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and n.output:
            for a in n.attribute:
                if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                    out[n.output[0]] = a.t
    return out


def value_types(model: onnx.ModelProto) -> dict[str, int]:
    """elem_type of every value onnx's shape inference can type, in every graph (bodies included)."""
    from onnxlint.graph import iter_graphs

    inferred = onnx.shape_inference.infer_shapes(model)
    types: dict[str, int] = {}
    for g in iter_graphs(inferred):
        for v in list(g.value_info) + list(g.input) + list(g.output):
            if v.type.HasField("tensor_type"):
                types[v.name] = v.type.tensor_type.elem_type
        types.update({name: t.data_type for name, t in constant_tensors(g).items()})
    return types
