"""Inputs on which onnx's C++ never returns, found before the call: a model of a few hundred bytes would
otherwise cost the call's whole CPU-time limit (native.CALL_CPU_SECONDS), once per model of a folder.

onnx 1.23's Einsum inference (onnx/defs/math/utils.cc, einsumShapeInference) steps over an input term's
characters and, at one that is neither a letter nor the term's first "...", counts it without moving on: the
loop never ends (onnx 1.21 steps on). ONNX's Einsum spec allows letters, "..." and spaces in a term, so such
an equation is one no exporter writes, and ORT refuses it when the node runs ("The only subscript labels allowed
are ...", "Found a '.' not part of an ellipsis"): skipping inference for it loses nothing a valid model has."""

from __future__ import annotations

from typing import Any

_OPS = (b"Einsum",)  # the op types whose inference is screened: a model without them is not parsed
_LETTERS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def screen(payload: bytes) -> str | None:
    """Why onnx's shape inference must not be given payload (a serialized ModelProto), or None. A payload
    without any screened op type's name is not parsed."""
    if not any(op in payload for op in _OPS):
        return None
    import onnx

    try:
        model = onnx.ModelProto.FromString(payload)
    except Exception:  # noqa: BLE001 - onnx's own parse answers for a payload that is not a model
        return None
    return _einsum(model)


def screen_model(model: Any) -> str | None:
    """screen, for a ModelProto in hand (not serialized for it): a model without an Einsum node is not walked
    twice (the op types are read first)."""
    if not _names_an_einsum(model):
        return None
    return _einsum(model)


def _names_an_einsum(model: Any) -> bool:
    import onnx

    GRAPH, GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
    stack = [model.graph.node, *(f.node for f in model.functions)]
    while stack:
        for n in stack.pop():
            if n.op_type == "Einsum":
                return True
            for a in n.attribute:
                if a.type == GRAPH:
                    stack.append(a.g.node)
                elif a.type == GRAPHS:
                    stack.extend(g.node for g in a.graphs)
    return False


def _einsum(model: Any) -> str | None:
    """The first Einsum equation onnx 1.23's inference loops on: one of an ONNX Einsum node, or a string a
    local function's Einsum takes its equation from (an attribute of that name anywhere, followed through
    functions that pass it on)."""
    import onnx

    GRAPH, GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
    referenced: set[str] = set()  # attribute names a function body's Einsum reads its equation from
    passed: dict[str, set[str]] = {}  # attribute name -> the names it is passed on to inside a function
    strings: list[tuple[str, str, bytes]] = []  # (attribute name, node name, value) of every string attribute
    stack = [list(model.graph.node)]
    for f in model.functions:
        stack.append(list(f.node))
        strings.extend((a.name, f.name, a.s) for a in f.attribute_proto if a.s)
    while stack:
        for n in stack.pop():
            einsum = n.op_type == "Einsum" and n.domain in ("", "ai.onnx")
            for a in n.attribute:
                if a.s:  # onnx's getAttribute reads `s` whatever the attribute's type or reference says
                    if einsum and a.name == "equation" and (why := _endless(a.s)):
                        return f"Einsum node {n.name or '(unnamed)'!r}: {why}"
                    strings.append((a.name, n.name, a.s))
                if a.ref_attr_name:
                    if einsum and a.name == "equation":
                        referenced.add(a.ref_attr_name)
                    passed.setdefault(a.name, set()).add(a.ref_attr_name)
                if a.type == GRAPH:
                    stack.append(list(a.g.node))
                elif a.type == GRAPHS:
                    stack.extend(list(g.node) for g in a.graphs)
    names, todo = set(referenced), list(referenced)
    while todo:  # a call passes its own attribute on: F(eq=@outer) inside G, G(outer="...")
        for outer in passed.get(todo.pop(), ()):
            if outer not in names:
                names.add(outer)
                todo.append(outer)
    for name, holder, value in strings:
        if name in names and (why := _endless(value)):
            return f"attribute {name!r} of {holder or '(unnamed)'!r}, a local function's Einsum equation: {why}"
    return None


def _endless(equation: bytes) -> str | None:
    """What makes onnx 1.23's Einsum inference loop on equation, or None: an input term (before "->", between
    commas, spaces removed as onnx removes them) with a character that is neither a letter nor its first "..."."""
    left = equation.replace(b" ", b"").split(b"->", 1)[0]
    for term in left.split(b","):
        rest = term.replace(b"...", b"", 1)
        odd = next((c for c in rest if c not in _LETTERS), None)
        if odd is not None:
            shown = term if len(term) <= 24 else term[:24] + b"..."
            return (f"the equation's input term {shown.decode('utf-8', 'replace')!r} holds {chr(odd)!r}, neither "
                    f"a letter nor the term's '...', and onnx 1.23's shape inference never ends on such a term")
    return None
