"""Unique node names for the session, so every node can be found in ORT's placement log.

ORT logs each node as "OpType (name)", main graph and control-flow bodies together: an unnamed node logs as
"Relu ()" and two nodes of one name (the same name in both branches of an If) cannot be told apart. A name
with a line break or another unprintable character, or with a block header's words ("placed on ["), would be
read as log lines of its own: the model could say where its nodes ran. Such nodes are renamed in the copy the
session loads; the lint's location of every node stays what it was.
"""

from __future__ import annotations

from collections import Counter

import onnx

from onnxlint.model.graph import iter_graphs
from onnxlint.support.escape import field_text


def unique_names(model: onnx.ModelProto) -> dict[str, str]:
    """Rename, in place, every unnamed node and every repeat of a name (the first keeps it) in the main graph and
    its control-flow bodies. Returns new name -> the last part of the node's lint location (an unnamed node's
    `Op#i`, else its old name); {} when nothing needed renaming. Local functions are left alone: ORT inlines
    them under names of its own."""
    graphs = list(iter_graphs(model))
    count = Counter(n.name for g in graphs for n in g.node if n.name)
    if all(n.name and count[n.name] == 1 and _loggable(n.name) for g in graphs for n in g.node):
        return {}
    taken = set(count)
    kept: set[str] = set()
    renamed: dict[str, str] = {}
    for g in graphs:
        for i, node in enumerate(g.node):
            own = bool(node.name) and _loggable(node.name)
            if own and count[node.name] == 1:
                continue
            if own and node.name not in kept:
                kept.add(node.name)
                continue
            shown = field_text(node.name) or f"{node.op_type}#{i}"
            base = shown if own or not node.name else f"{node.op_type}#{i}"
            new, k = base, 1
            while new in taken or (node.name and new == node.name):
                new, k = f"{base}~{k}", k + 1
            taken.add(new)
            renamed[new] = shown
            node.name = new
    return renamed


def _loggable(name: str | bytes) -> bool:
    """Whether ORT's log line of a node of this name reads as that one line: printable (no line break of any kind
    Python's splitlines knows), and no words of a placement block's header. A name that is not UTF-8 (protobuf
    hands it over as bytes) is not: ORT's log and the lint's locations would not agree on it."""
    return isinstance(name, str) and name.isprintable() and "placed on [" not in name
