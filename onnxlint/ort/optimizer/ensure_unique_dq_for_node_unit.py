"""EnsureUniqueDQForNodeUnit (core/optimizer/qdq_transformer/ensure_unique_dq_for_node_unit.cc).

InferenceSession::TransformGraph runs it before the Level-1 transformers, at every optimization level (optimizations
disabled too: QDQ node units must not overlap): a DequantizeLinear read by several node inputs of its own graph is
copied, one copy per reading input (an input that reads it twice is two edges), named `<name>/duplicated` (then
`_token_N`). The original stays with the first edge, or with none when its output is also a graph output or a
control-flow body reads it. Each copy runs where the original runs (same op, same inputs), and each copy's output
crosses to its reader on its own: an int32 bias DequantizeLinear (CPU only) read by 15 CUDA nodes costs 15 Memcpy
nodes, not one. Measured on 1.24.4 and 1.31.1 (ai.onnx DequantizeLinear at opsets 17, 21 and 23, com.microsoft's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from onnxlint.ort import schema_registry

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef

NAME = "EnsureUniqueDQForNodeUnit"
# QDQ::MatchDQNode: the DequantizeLinear versions it takes (the newest ORT source: 10, 13, 19, 21, com.microsoft 1;
# measured on 1.24.4 and 1.31.1: 23 too; later versions not measured, not copied)
DQ_VERSIONS = {"ai.onnx": (10, 13, 19, 21, 23), "com.microsoft": (1,)}


@dataclass
class UniqueDQ:
    """The copies the transformer makes: per DequantizeLinear (node index), the (reader, input slot) edges that
    read a copy; and the DQ outputs read through copies (each reading input has its own value)."""

    copies: dict[int, list[tuple[NodeRef, int]]] = field(default_factory=dict)
    outputs: set[str] = field(default_factory=set)

    def count(self) -> int:
        return sum(map(len, self.copies.values()))


def match_dq_node(n: NodeRef) -> bool:
    """QDQ::MatchDQNode: a DequantizeLinear of a version the QDQ transformers take."""
    versions = DQ_VERSIONS.get(n.domain)
    return n.op_type == "DequantizeLinear" and versions is not None \
        and schema_registry.since_version(n.op_type, n.opset, n.domain) in versions


def apply(index: GraphIndex) -> UniqueDQ:
    """The DequantizeLinear copies ORT makes in every graph of the model (local functions, which ORT inlines
    into their callers under new names, are left out)."""
    out = UniqueDQ()
    body_reads: dict[int, set[str]] | None = None
    slots: dict[int, dict[str, list[int]]] = {}  # a wide reader's input slots by value, made once (_slots_of)
    for dq in index.by_op.get("DequantizeLinear", ()):
        scope = dq.scope
        if scope.root.is_function or not dq.outputs or not dq.outputs[0] or not match_dq_node(dq):
            continue
        value = dq.outputs[0]
        readers = {id(r): r for r in scope.consumers.get(value, ())}  # a node reading it twice is listed twice
        edges = [(r, i) for r in readers.values() for i in _slots_of(r, value, slots)]
        graph_output = value in scope.outputs
        if not edges or (len(edges) == 1 and not graph_output):
            continue
        if body_reads is None:
            body_reads = _read_by_bodies(index)
        keep_original_apart = graph_output or value in body_reads.get(id(scope), ())
        copied = edges if keep_original_apart else edges[1:]
        if copied:
            out.copies[dq.index] = copied
            out.outputs.add(value)
    return out


_WIDE = 16  # inputs of a reader past which its slots are looked up, not scanned, per DQ it reads


def _slots_of(reader: NodeRef, value: str, slots: dict[int, dict[str, list[int]]]) -> list[int]:
    """The input slots of reader holding value, in order. A reader of N DQs (a Concat of N inputs) would be
    scanned once per DQ, N x N: past _WIDE inputs its slots by value are made once."""
    if len(reader.inputs) <= _WIDE:
        return [i for i, v in enumerate(reader.inputs) if v == value]
    by_value = slots.get(id(reader))
    if by_value is None:
        by_value = slots[id(reader)] = {}
        for i, v in enumerate(reader.inputs):
            by_value.setdefault(v, []).append(i)
    return by_value.get(value, [])


def _read_by_bodies(index: GraphIndex) -> dict[int, set[str]]:
    """id(scope) -> the values of scope that a control-flow body inside it (at any depth) reads (implicit inputs
    of the node holding the body), for every graph at once."""
    reads: dict[int, set[str]] = {}
    for s in index.scopes:
        if s.parent is None or s.root.is_function:
            continue
        for value in s.consumers:
            if value in s.producer or value in s.inputs or value in s.initializers:
                continue
            p: GraphScope | None = s.parent
            while p is not None and value not in p.producer and value not in p.inputs and value not in p.initializers:
                p = p.parent
            if p is not None:
                reads.setdefault(id(p), set()).add(value)
    return reads
