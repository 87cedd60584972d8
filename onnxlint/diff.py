"""What a fix changes, in nodes and opsets, for --diff."""

from __future__ import annotations

from collections import Counter

import onnx


def _nodes(model: onnx.ModelProto) -> Counter:
    return Counter((n.op_type, n.name) for n in model.graph.node)


def describe(before: onnx.ModelProto, after: onnx.ModelProto) -> str:
    a, b = _nodes(before), _nodes(after)
    removed = a - b
    added = b - a
    parts = []
    if removed:
        parts.append("removed " + ", ".join(f"{op}({name or '?'})" for op, name in sorted(removed)))
    if added:
        parts.append("added " + ", ".join(f"{op}({name or '?'})" for op, name in sorted(added)))
    changed = sum(1 for x, y in zip(before.graph.node, after.graph.node)
                  if x.name == y.name and x.op_type == y.op_type and x.SerializeToString() != y.SerializeToString())
    if changed:
        parts.append(f"{changed} node(s) changed in place")
    ob = {o.domain or "ai.onnx": o.version for o in before.opset_import}
    oa = {o.domain or "ai.onnx": o.version for o in after.opset_import}
    for d in sorted(set(ob) | set(oa)):
        if ob.get(d) != oa.get(d):
            parts.append(f"opset {d}: {ob.get(d)} -> {oa.get(d)}")
    ib = {i.name: i.type.tensor_type.elem_type for i in before.graph.input}
    ia = {i.name: i.type.tensor_type.elem_type for i in after.graph.input}
    for name in ib:
        if name in ia and ib[name] != ia[name]:
            parts.append(f"input {name}: {onnx.TensorProto.DataType.Name(ib[name])} -> {onnx.TensorProto.DataType.Name(ia[name])}")
    return "; ".join(parts) or "no structural change"
