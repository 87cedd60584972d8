"""CommonSubexpressionElimination (core/optimizer/common_subexpression_elimination.cc): a deterministic node
(IsOperationDeterministic: ai.onnx but the random ops, com.microsoft's Q/DQ) with the same op, domain,
attributes and inputs as an earlier one (in ORT's order) is removed; its consumers read the earlier one's
outputs. An ai.onnx DequantizeLinear is never merged (IsNodeSupported: a DQ stays in one QDQ node unit;
measured on 1.24.4 and 1.31.1: two identical DQs, and two identical com.microsoft::Gelu, stay apart)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import onnx
from onnx import numpy_helper

from onnxlint.model.graph import HOLDS_GRAPH
from onnxlint.ort.optimizer.graph_utils import is_operation_deterministic

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState
    from onnxlint.ort.releases import Release

SKIP_SETTLED = True  # False: every run looks at every node (the same answer, slower; for tests)
TWINS_ONLY = True  # False: a run looks at every node of ORT's order, not only those that may be alike (for tests)
_GRAPH, _GRAPHS, _TENSOR = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS, onnx.AttributeProto.TENSOR
Attributes = tuple[tuple[str, Any], ...]


def cse_attributes(n: NodeRef, typed_tensors: bool = True) -> Attributes | None:
    """A node's attributes as CSE compares them (sorted name, bytes), None when CSE never merges it (random
    ops, other domains' ops but com.microsoft's Q/DQ, an ai.onnx DequantizeLinear, control flow, and, unless
    typed_tensors (Release.cse_typed_tensor_attributes), a tensor attribute not stored as raw bytes)."""
    if not is_operation_deterministic(n.domain, n.op_type) or (n.domain == "ai.onnx" and n.op_type == "DequantizeLinear"):
        return None
    if not n.attribute_flags():
        return ()
    attrs = n.proto.attribute
    typed = not typed_tensors
    items = []
    for a in attrs:  # one pass (read once per node: ~100k at 100k nodes)
        kind = a.type
        if kind == _GRAPH or kind == _GRAPHS:
            return None
        if kind == _TENSOR:
            if typed and not a.t.HasField("raw_data"):
                return None
            items.append((a.name, _tensor_key(a.t)))
        else:
            items.append((a.name, a.SerializeToString()))
    if len(items) > 1:
        items.sort()
    return tuple(items)


def _tensor_key(t: onnx.TensorProto) -> tuple[Any, ...]:
    """A tensor attribute as CSE compares it: dtype, dims and value, not its name (measured: two ConstantOfShape
    values named differently are merged; on 1.31.1 a typed-field value and an equal raw one are too)."""
    try:
        if t.data_location == onnx.TensorProto.EXTERNAL:  # never read (to_array reads it from the working folder)
            raise ValueError("external")
        return (t.data_type, tuple(t.dims), numpy_helper.to_array(t).tobytes())
    except Exception:  # noqa: BLE001 - an undecodable or external tensor: compared by its bytes
        return (t.data_type, tuple(t.dims), t.SerializeToString())


class CommonSubexpressionElimination:
    name = "CommonSubexpressionElimination"

    def __init__(self, release: Release, node_count: int):
        self._typed = release.cse_typed_tensor_attributes
        # node index -> what CSE compares a node by but its inputs and attributes: (domain, op, opset, output count)
        # (None: never merged; False: not read yet); a list: 8 bytes a node
        self._kinds: list[tuple[Any, ...] | None | bool] = [False] * node_count
        # each distinct kind once, shared by the nodes that have it (a few dozen in a model of repeated blocks)
        self._distinct: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        # node index -> its attributes as CSE compares them (cse_attributes), read only for a node that has the
        # kind and the inputs of an earlier one: most nodes are unlike every other by those alone, and their
        # attributes are never read (a third of the nodes of a transformer have some)
        self._attrs: dict[int, Attributes | None] = {}
        # id(scope) -> state.canon_version() when a run over it ended with no two live nodes alike
        self._settled: dict[int, tuple[int, int]] = {}

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        """A run that ended with every live node unlike the others (no duplicate kept for being a graph output)
        is not repeated while no input was rewired since: each live node compares as it did, and removals only
        drop nodes, so the run would find nothing (ORT's order, which picks the first of two, does not matter)."""
        version = state.canon_version()
        if SKIP_SETTLED and self._settled.get(id(scope)) == version:
            return False
        self._settled.pop(id(scope), None)
        # id(kind) -> inputs -> the nodes with them so far, in ORT's order (one node, or a list once two differ in
        # their attributes): kinds are the distinct ones (_distinct), so their ids tell them apart; no (kind,
        # inputs) key tuple made per node (64 MB at 1M nodes, at the lint's peak)
        seen: dict[int, dict[tuple[Any, ...], NodeRef | list[NodeRef]]] = {}
        changed = kept = False
        copies = state.dq_copied()
        cached = self._kinds
        canon_inputs = state.input_canon(scope)
        # the nodes another live node may be alike to (with EnsureUniqueDQForNodeUnit's copies: every node)
        for n in state.twin_candidates(scope) if TWINS_ONLY and not copies else state.nodes(scope):
            kind = cached[n.index]
            if kind is False:
                kind = cached[n.index] = _kind(n)
                if kind is not None:
                    kind = cached[n.index] = self._distinct.setdefault(kind, kind)
            if kind is None:
                continue
            if copies:  # an input reading a DequantizeLinear ORT copied per reading input reads a value of its own
                ins = tuple((v, n.index, i) if v and state.read_per_edge(v) else state.canon(scope, v) for i, v in enumerate(n.inputs))
            else:
                ins = canon_inputs(n.inputs)
            alike = seen.get(id(kind))
            if alike is None:
                alike = seen[id(kind)] = {}
            before = alike.get(ins)
            if before is None:
                alike[ins] = n
                continue
            first = self._first_alike(n, before)
            if first is None:
                alike[ins] = [*before, n] if isinstance(before, list) else [before, n]
                continue
            if any(o in scope.outputs for o in n.outputs if o):
                kept = True
                continue  # a graph output keeps its producer
            state.remove(n, "eliminated", "cse", f"duplicate of {first.name or first.op_type}: ORT's common-subexpression elimination "
                         f"removes it", dict(zip(n.outputs, first.outputs)), twin=first)
            changed = True
        if not kept:
            self._settled[id(scope)] = state.canon_version()
        return changed

    def _first_alike(self, n: NodeRef, before: NodeRef | list[NodeRef]) -> NodeRef | None:
        """The first of the earlier nodes of n's kind and inputs whose attributes are n's (None: none, or n is
        never merged for one of them: cse_attributes)."""
        mine = self._attributes(n)
        if mine is None:
            return None
        for m in before if isinstance(before, list) else (before,):
            if self._attributes(m) == mine:
                return m
        return None

    def _attributes(self, n: NodeRef) -> Attributes | None:
        if n.index in self._attrs:
            return self._attrs[n.index]
        got = self._attrs[n.index] = cse_attributes(n, self._typed)
        return got


def _kind(n: NodeRef) -> tuple[Any, ...] | None:
    """What CSE compares a node by but its inputs and attributes, None for a node it never merges whatever its
    attributes (random ops, other domains' ops but com.microsoft's Q/DQ, an ai.onnx DequantizeLinear, control
    flow): cse_attributes' None answers but the one its attributes' values give."""
    if not is_operation_deterministic(n.domain, n.op_type) or (n.domain == "ai.onnx" and n.op_type == "DequantizeLinear") \
            or n.attribute_flags() & HOLDS_GRAPH:
        return None
    return (n.domain, n.op_type, n.opset, len(n.outputs))
