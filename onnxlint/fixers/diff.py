"""What a fix changes, for --diff: a unified diff of the model's text form (onnx's printer, `onnx.printer.to_text`),
the changed lines with three lines of context, as `git diff` shows source.

The text form is the printer's, one node a line (a control-flow body indented under its node), with what would
bury the change left out: an initializer's values are shown only when small (shape constants, which a fold
changes); a larger one is its dtype, dims and a digest of its bytes (an external one: of its data's location,
never read); initializers are listed by name. Value infos (shapes the exporter annotated) are left out: a fix's changes to them are noise.
"""

from __future__ import annotations

import difflib

import onnx
import onnx.printer

from onnxlint.support import digest

SHOWN_VALUES = 16  # an initializer with at most this many elements shows its values
CONTEXT = 3  # unchanged lines around each change, as `diff -u`
MAX_LINES = 200_000  # past this a model's text is not diffed (difflib is superlinear): the structural summary instead


# the characters str.splitlines breaks a line at. The printer writes a name as it is, so a node, value or graph name
# holding one (or a domain, a string attribute) broke the diff's line there: the name's rest began a line of its own,
# raw (a forged `+++`/`@@`/`+` line, a reviewer misled about what the fix changes). Each is first replaced by a
# stand-in no printer writes (a plane-15 private-use character), and the stand-in by its escape once the lines
# are split: `a\nb` shows as `a\nb`, in its line, as the text output shows the name.
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_STAND_IN = {ord(ch): chr(0xF0000 + ord(ch)) for ch in _BREAKS}
_ESCAPED = {ord(ch): {"\n": "\\n", "\r": "\\r"}.get(ch, f"\\x{ord(ch):02x}" if ord(ch) <= 0xFF else f"\\u{ord(ch):04x}")
            for ch in _BREAKS}
_SHOWN = {ord(_STAND_IN[k]): shown for k, shown in _ESCAPED.items()}  # a stand-in, as the break it stands for
_BREAK_BYTES = tuple(ch.encode() for ch in _BREAKS)


def _unbroken(msg: object) -> None:
    """Every string and bytes field of a protobuf message, nested messages included, with its line breaks
    replaced by their stand-ins (in place: the caller's copy)."""
    stack = [msg]
    while stack:
        m = stack.pop()
        for fd, value in m.ListFields():  # type: ignore[attr-defined]
            # protobuf 6 has is_repeated (and no label in its upb descriptors); older ones only label
            repeated = fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == fd.LABEL_REPEATED
            if fd.type == fd.TYPE_MESSAGE:
                stack.extend(value if repeated else [value])
            elif fd.type in (fd.TYPE_STRING, fd.TYPE_BYTES) and fd.name != "raw_data":  # a tensor's values, not text
                items = list(value) if repeated else [value]
                fixed = [_stand_in(v) for v in items]
                if fixed != items:
                    if repeated:
                        del value[:]
                        value.extend(fixed)
                    else:
                        setattr(m, fd.name, fixed[0])


def _stand_in(v: str | bytes) -> str | bytes:
    if isinstance(v, bytes):
        if not any(b in v for b in _BREAK_BYTES):
            return v
        return v.decode("utf-8", "surrogateescape").translate(_STAND_IN).encode("utf-8", "surrogateescape")
    return v.translate(_STAND_IN) if any(ch in v for ch in _BREAKS) else v


def _lines(proto: object) -> list[str]:
    """The printer's text of a proto (a copy the caller may change), split into lines at the printer's own
    breaks only, each stand-in shown as its escape."""
    _unbroken(proto)
    return [ln.translate(_SHOWN) for ln in onnx.printer.to_text(proto).splitlines()]  # type: ignore[arg-type]


def _initializer(t: onnx.TensorProto) -> str:
    dtype = onnx.helper.tensor_dtype_to_string(t.data_type).replace("TensorProto.", "").lower()
    dims = ",".join(str(d) for d in t.dims)
    n = 1
    for d in t.dims:
        n *= d
    if t.data_location != onnx.TensorProto.EXTERNAL and n <= SHOWN_VALUES:
        try:
            from onnx import numpy_helper

            values = numpy_helper.to_array(t).ravel().tolist()
            return f"   <{dtype}[{dims}] {_name(t.name)} = {values}>"
        except Exception:  # a tensor numpy cannot hold: its digest below
            pass
    where = "external data " if t.data_location == onnx.TensorProto.EXTERNAL else ""
    return f"   <{dtype}[{dims}] {_name(t.name)} = {where}blake2b:{digest.hexdigest(t.SerializeToString())[:16]}>"


def _name(name: str) -> str:
    return name.translate(_ESCAPED)


def text_lines(model: onnx.ModelProto) -> list[str]:
    """The model as the printer writes it, one node a line, initializers summarised (see the module doc)."""
    header = onnx.ModelProto()
    header.CopyFrom(model)
    del header.functions[:]
    g = header.graph
    for field in ("node", "initializer", "value_info", "sparse_initializer"):
        g.ClearField(field)
    lines = _lines(header)
    body_end = lines.pop() if lines and lines[-1] == "}" else None
    # by name: their order means nothing (onnxslim reorders them), and a diff of the order would bury the change
    lines.extend(_initializer(t) for t in sorted(model.graph.initializer, key=lambda t: t.name))
    for node in model.graph.node:
        lines.extend("   " + ln for ln in _node_lines(node))
    if body_end is not None:
        lines.append(body_end)
    for f in model.functions:
        copy = onnx.FunctionProto()
        copy.CopyFrom(f)
        lines.extend(_lines(copy))
    return lines


def _node_lines(node: onnx.NodeProto) -> list[str]:
    """The printer's lines for one node: the body of a graph holding only it (onnx < 1.22's printer takes no node;
    a node printed alone is the same lines)."""
    g = onnx.GraphProto(name="_")
    g.node.append(node)
    return _lines(g)[1:-1]


def unified(before: onnx.ModelProto, after: onnx.ModelProto, name: str) -> str:
    """`--- a/NAME` / `+++ b/NAME` and the hunks that change; '' when the text forms are the same."""
    a, b = text_lines(before), text_lines(after)
    name = _name(name.lstrip("/"))  # `a/models/m.onnx` as git writes it, also for an absolute path; its breaks escaped
    if max(len(a), len(b)) > MAX_LINES:
        return "\n".join([f"--- a/{name}", f"+++ b/{name}", f"@@ {len(a)} lines -> {len(b)} lines: too long to diff; "
                          "what changes @@", *describe_lines(before, after)]) + "\n"
    out = list(difflib.unified_diff(a, b, f"a/{name}", f"b/{name}", n=CONTEXT, lineterm=""))
    return "\n".join(out) + "\n" if out else ""


def _nodes(model: onnx.ModelProto) -> dict[tuple[str, str], tuple[str, str, bytes]]:
    """(scope path, node key) -> (op, shown name, serialized node). Unnamed nodes are keyed by their outputs."""
    from onnxlint.model.graph import GraphIndex

    out = {}
    index = GraphIndex(model)  # keeps the nodes' scopes alive
    for ref in index.nodes:
        n = ref.proto
        key = n.name or f"{n.op_type}->{','.join(n.output)}"
        shown = ref.location if n.name else f"{ref.scope.path}/{n.op_type}({', '.join(o for o in n.output if o)})"
        out[(ref.scope.path, key)] = (n.op_type, shown, n.SerializeToString(deterministic=True))
    return out


def describe_lines(before: onnx.ModelProto, after: onnx.ModelProto) -> list[str]:
    """Removed, added and changed nodes one per line, grouped by op, then the opset and graph-input changes: what
    a model too large to diff as text shows instead."""
    a, b = _nodes(before), _nodes(after)
    rows: list[tuple[str, int, str]] = []
    for k, (op, shown, _) in a.items():
        if k not in b:
            rows.append((op, 0, f"- {_name(op)} {_name(shown)}"))
    for k, (op, shown, _) in b.items():
        if k not in a:
            rows.append((op, 1, f"+ {_name(op)} {_name(shown)}"))
        elif a[k][2] != b[k][2]:
            rows.append((op, 2, f"~ {_name(op)} {_name(shown)}" + ("" if a[k][0] == op else f" (was {_name(a[k][0])})")))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    lines = [r[2] for r in rows]
    ob = {o.domain or "ai.onnx": o.version for o in before.opset_import}
    oa = {o.domain or "ai.onnx": o.version for o in after.opset_import}
    for d in sorted(set(ob) | set(oa)):
        if ob.get(d) != oa.get(d):
            lines.append(f"opset {_name(d)}: {ob.get(d)} -> {oa.get(d)}")
    ib = {i.name: i.type.tensor_type.elem_type for i in before.graph.input}
    ia = {i.name: i.type.tensor_type.elem_type for i in after.graph.input}
    for name in ib:
        if name in ia and ib[name] != ia[name]:
            lines.append(f"input {_name(name)}: {onnx.TensorProto.DataType.Name(ib[name])} -> "
                         f"{onnx.TensorProto.DataType.Name(ia[name])}")
    nb, na = len(before.graph.initializer), len(after.graph.initializer)
    if nb != na:
        lines.append(f"initializers: {nb} -> {na}")
    return lines or ["no structural change"]
