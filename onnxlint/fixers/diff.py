"""What a fix changes, for --diff: removed, added and changed nodes one per line, grouped by op, then the
opset and graph-input changes."""

from __future__ import annotations

import onnx

from onnxlint.model.graph import GraphIndex


def _nodes(model: onnx.ModelProto) -> dict[tuple[str, str], tuple[str, str, bytes]]:
    """(scope path, node key) -> (op, shown name, serialized node). Unnamed nodes are keyed by their outputs."""
    out = {}
    index = GraphIndex(model)  # keeps the nodes' scopes alive
    for ref in index.nodes:
        n = ref.proto
        key = n.name or f"{n.op_type}->{','.join(n.output)}"
        shown = ref.location if n.name else f"{ref.scope.path}/{n.op_type}({', '.join(o for o in n.output if o)})"
        out[(ref.scope.path, key)] = (n.op_type, shown, n.SerializeToString(deterministic=True))
    return out


def describe_lines(before: onnx.ModelProto, after: onnx.ModelProto) -> list[str]:
    a, b = _nodes(before), _nodes(after)
    rows: list[tuple[str, int, str]] = []
    for k, (op, shown, _) in a.items():
        if k not in b:
            rows.append((op, 0, f"- {op} {shown}"))
    for k, (op, shown, _) in b.items():
        if k not in a:
            rows.append((op, 1, f"+ {op} {shown}"))
        elif a[k][2] != b[k][2]:
            rows.append((op, 2, f"~ {op} {shown}" + ("" if a[k][0] == op else f" (was {a[k][0]})")))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    lines = [r[2] for r in rows]
    ob = {o.domain or "ai.onnx": o.version for o in before.opset_import}
    oa = {o.domain or "ai.onnx": o.version for o in after.opset_import}
    for d in sorted(set(ob) | set(oa)):
        if ob.get(d) != oa.get(d):
            lines.append(f"opset {d}: {ob.get(d)} -> {oa.get(d)}")
    ib = {i.name: i.type.tensor_type.elem_type for i in before.graph.input}
    ia = {i.name: i.type.tensor_type.elem_type for i in after.graph.input}
    for name in ib:
        if name in ia and ib[name] != ia[name]:
            lines.append(f"input {name}: {onnx.TensorProto.DataType.Name(ib[name])} -> "
                         f"{onnx.TensorProto.DataType.Name(ia[name])}")
    nb, na = len(before.graph.initializer), len(after.graph.initializer)
    if nb != na:
        lines.append(f"initializers: {nb} -> {na}")
    return lines or ["no structural change"]


def describe(before: onnx.ModelProto, after: onnx.ModelProto) -> str:
    """The same, one string (one change per line)."""
    return "\n".join(describe_lines(before, after))
