"""The questions ORT's transformers ask of a node before they change it (core/graph/graph_utils.cc,
core/optimizer/utils.cc), asked of the optimizer's state."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeGuard

import numpy as np

from onnxlint.ort import schema_registry
from onnxlint.ort.optimizer.optimized import NON_DETERMINISTIC

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState


# optimizer_utils' kMSDomainDeterministicOps: the com.microsoft ops constant folding and CSE take for deterministic
MS_DETERMINISTIC = frozenset({"QuantizeLinear", "DequantizeLinear"})


def is_operation_deterministic(domain: str, op_type: str) -> bool:
    """optimizer_utils::IsOperationDeterministic: an ai.onnx op but the random ones, com.microsoft's QuantizeLinear
    and DequantizeLinear; any other domain is taken for non-deterministic (measured on 1.24.4 and 1.31.1:
    com.microsoft::QuantizeLinear of constants is folded, two identical com.microsoft::Gelu stay apart)."""
    if domain == "ai.onnx":
        return op_type not in NON_DETERMINISTIC
    return domain == "com.microsoft" and op_type in MS_DETERMINISTIC


def since(n: NodeRef) -> int | None:
    """The since-version of the node's schema."""
    return schema_registry.since_version(n.op_type, n.opset, n.domain)


def is_supported(n: NodeRef | None, state: OptimizerState, op: str, versions: tuple[int, ...]) -> TypeGuard[NodeRef]:
    """graph_utils::IsSupportedOptypeVersionAndDomain: a live ai.onnx `op` of one of these since-versions."""
    return n is not None and n.op_type == op and n.domain == "ai.onnx" and not state.is_removed(n) \
        and since(n) in versions


def producer(state: OptimizerState, scope: GraphScope, v: str) -> NodeRef | None:
    """The node of scope producing what v reads now."""
    return scope.producer.get(state.resolve(v)) if v else None


def one_element(state: OptimizerState, scope: GraphScope, v: str) -> bool:
    """Whether v's dims are all known and multiply to 1 (as int64: numpy's product, which wraps past 2**63)."""
    shp = state.shape(scope, v)
    if shp is None or not all(isinstance(d, int) for d in shp):
        return False
    n = math.prod(shp)  # numpy's answer wherever the product fits an int64 (a call to numpy costs 60 times more)
    return (n if -2**63 <= n < 2**63 else int(np.prod(shp))) == 1


def single_reader(state: OptimizerState, scope: GraphScope, value: str) -> NodeRef | None:
    """The one live node reading value in this graph (None: several, none, or a graph output)."""
    if not value or value in scope.outputs:
        return None
    readers = state.live_readers(value)
    return readers[0] if len(readers) == 1 and readers[0].scope is scope else None


def is_edge(state: OptimizerState, scope: GraphScope, value: str) -> bool:
    """Whether value reaches its reader along a graph edge: produced by a node of this graph that is still
    there (a folded node's output is an initializer now)."""
    r = state.resolve(value)
    if state.is_folded(r) or state.tensor(scope, r) is not None:
        return False  # folded, an initializer, or a Constant node's output (ORT makes those initializers)
    p = scope.producer.get(r)
    return p is not None and not state.is_removed(p)


def can_remove(state: OptimizerState, scope: GraphScope, node: NodeRef, replaced_by_initializer: bool = False) -> bool:
    """graph_utils::CanRemoveNode as the rewrite rules other than EliminateIdentity use it: a node whose
    output is a graph output stays (measured: a Cast to its own type feeding a graph output is kept), and
    RemoveNode must know what its consumers read instead: the node has exactly one input edge (an input
    produced by a node of this graph; initializers and graph inputs are no edges), or no edge and a single
    input (measured: Dropout(graph input, ratio, training_mode) stays). A node replaced by a new
    initializer (UnsqueezeElimination) needs no input edge."""
    if any(o in scope.outputs for o in node.outputs if o):
        return False
    if replaced_by_initializer:
        return True
    ins = [v for v in node.inputs if v]
    edges = sum(1 for v in ins if is_edge(state, scope, v))
    return edges == 1 or (edges == 0 and len(ins) == 1)


def bypass_ok(state: OptimizerState, scope: GraphScope, node: NodeRef) -> bool:
    """graph_utils::CanRemoveNode: a node whose output is a graph output can only go when its input can take
    over that name (produced by a node of this graph, used nowhere else)."""
    out = node.outputs[0] if node.outputs else ""
    if out not in scope.outputs:
        return True
    src = state.resolve(node.inputs[0]) if node.inputs else ""
    if not src or src not in scope.producer or src in scope.outputs:
        return False
    return len(state.live_readers(src)) == 1
