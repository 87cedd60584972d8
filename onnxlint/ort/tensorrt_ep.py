"""ORT's TensorRT EP (TensorrtExecutionProvider::GetCapability): TensorRT takes what its parser supports, the
rest falls through to CUDA, then CPU."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from onnxlint.model.graph import GraphIndex, NodeRef

CONTROL_FLOW = ("If", "Loop", "Scan")  # GetCapability's control_flow_op_set_


class Verdicts(Protocol):
    """A prediction read per node (a Placement, TensorRT's verdicts)."""

    def get(self, node: NodeRef) -> Any: ...


@dataclass
class TrtPartition:
    subgraphs: int
    trt_nodes: int
    cuda_nodes: list[str] = field(default_factory=list)  # node locations
    cpu_nodes: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)  # node indices TensorRT takes

    def summary_line(self) -> str:
        return (f"{self.trt_nodes} node{'s' if self.trt_nodes != 1 else ''} in {self.subgraphs} TensorRT "
                f"subgraph{'s' if self.subgraphs != 1 else ''}, {len(self.cuda_nodes)} fall through to CUDA, "
                f"{len(self.cpu_nodes)} to CPU" + (f", {len(self.unsupported)} with no provider" if self.unsupported else ""))


def in_ort_graph(node: NodeRef, cuda: Verdicts, index: GraphIndex) -> bool:
    """Whether the node is one of the graph GetCapability is handed: ORT turns a Constant node into an initializer
    when it loads the graph (every graph, bodies too), inlines a model-local function's call into its body (whose
    nodes are indexed themselves), and its Level-1 transformers remove folded and eliminated nodes before
    partitioning (InsertCastTransformer's duplicate-Cast removal comes after it: that node is still there)."""
    if node.op_type == "Constant" and node.domain == "ai.onnx":
        return False
    if index.is_local_function(node):
        return False
    p = cuda.get(node)
    return p is None or not (p.status == "folded" or (p.status == "eliminated" and p.reason != "duplicate-cast"))


def partition(trt: Verdicts, cuda: Verdicts, index: GraphIndex) -> TrtPartition:
    """Chain the TensorRT prediction with the CUDA/CPU placement and count TensorRT-claimed subgraphs.

    trt: onnxlint.tensorrt.predict()'s verdicts, the same the tensorrt target reports: ORT's TensorRT EP asks the
    parser which nodes it supports (supports_model), and a node whose verdict is `unsupported` (no importer, a
    rejected dtype, op version, attribute or output count, an input that must be constant) is left to CUDA,
    then CPU (cuda: the ort-cuda placement). GetCapability runs on each graph ORT holds: the main graph and every
    control-flow body. An If/Loop/Scan is TensorRT's only when every node of its bodies is (then the bodies run
    inside its engine: no TensorRT subgraphs of their own); otherwise each body's supported nodes are fused there.
    A node is counted once, so the count never exceeds the nodes ORT holds. Subgraphs: each graph's connected
    groups of supported nodes, one when consolidating them makes no cycle (GetCapability's consolidation)."""
    nodes = [n for n in index.nodes if in_ort_graph(n, cuda, index)]
    claimed = {n.index for n in nodes if (p := trt.get(n)) is not None and p.status != "unsupported"}
    # a control-flow node with a body node TensorRT does not take stays out (innermost bodies first: a body's
    # own control-flow nodes are decided before the node that owns the body)
    body_nodes: dict[int, list[int]] = {}
    for n in nodes:
        owner = n.scope.owner
        if owner is not None:
            body_nodes.setdefault(owner.index, []).append(n.index)
    for n in sorted((n for n in nodes if n.op_type in CONTROL_FLOW and n.index in claimed),
                    key=lambda n: -_depth(n)):
        if any(i not in claimed for i in body_nodes.get(n.index, ())):
            claimed.discard(n.index)
    part = TrtPartition(0, len(claimed), claimed=claimed)
    for n in nodes:
        if n.index in claimed:
            continue
        p = cuda.get(n)
        if p is None:
            continue
        (part.cuda_nodes if p.ep == "CUDAExecutionProvider" else part.cpu_nodes if p.ep else part.unsupported).append(n.location)
    # connected components of claimed nodes (edges through values inside a scope); a claimed control-flow node's
    # bodies are part of its engine
    parent = {i: i for i in claimed}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_scope: dict[int, list[NodeRef]] = {}  # each graph's own claimed nodes (not those inside a claimed body)
    for n in nodes:
        if n.index not in claimed:
            continue
        owner = n.scope.owner
        if owner is not None and owner.index in claimed:
            parent[find(n.index)] = find(owner.index)
        else:
            by_scope.setdefault(id(n.scope), []).append(n)
        for inp in n.inputs:
            prod = n.scope.producer.get(inp)
            if prod is not None and prod.index in claimed:
                parent[find(n.index)] = find(prod.index)
    # GetCapability consolidates a graph's supported groups into one TensorRT subgraph unless that makes a cycle
    # (a node it does not take reads from the group and feeds it)
    kept = {n.index for n in nodes}
    for own in by_scope.values():
        if len({find(n.index) for n in own}) > 1 and not _cycle_through_others(own, claimed, kept):
            for n in own[1:]:
                parent[find(n.index)] = find(own[0].index)
    part.subgraphs = len({find(i) for i in claimed})
    return part


def _cycle_through_others(own: list[NodeRef], claimed: set[int], kept: set[int]) -> bool:
    """Whether a node of the graph TensorRT does not take is both reached from its claimed nodes and reaches them
    (edges through values inside the graph; removed and Constant nodes are no nodes of ORT's graph)."""
    scope = own[0].scope

    def walk(step: Any) -> set[int]:
        seen: set[int] = set()
        todo = [m for n in own for m in step(n) if m.index not in claimed and m.index in kept]
        while todo:
            m = todo.pop()
            if m.index in seen:
                continue
            seen.add(m.index)
            todo.extend(x for x in step(m) if x.index not in claimed and x.index in kept and x.index not in seen)
        return seen

    def consumers(n: NodeRef) -> list[NodeRef]:
        return [c for o in n.outputs if o for c in scope.consumers.get(o, ())]

    def producers(n: NodeRef) -> list[NodeRef]:
        return [p for i in n.inputs if i and (p := scope.producer.get(i)) is not None]

    return bool(walk(consumers) & walk(producers))


def _depth(node: NodeRef) -> int:
    d, scope = 0, node.scope
    while scope.owner is not None:
        d, scope = d + 1, scope.owner.scope
    return d
