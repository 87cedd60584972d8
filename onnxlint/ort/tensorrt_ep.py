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
    A node is counted once per copy ORT holds, so the count never exceeds the nodes ORT holds: a model-local
    function's body is inlined at every call, into the caller's graph (_ort_nodes). Subgraphs: each graph's
    connected groups of supported nodes, one when consolidating them makes no cycle (GetCapability's
    consolidation)."""
    nodes = _ort_nodes(cuda, index)
    claimed = {v.key for v in nodes if (p := trt.get(v.node)) is not None and p.status != "unsupported"}
    # a control-flow node with a body node TensorRT does not take stays out (innermost bodies first: a body's
    # own control-flow nodes are decided before the node that owns the body)
    body_nodes: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for v in nodes:
        if v.owner is not None:
            body_nodes.setdefault(v.owner, []).append(v.key)
    for v in sorted((v for v in nodes if v.node.op_type in CONTROL_FLOW and v.key in claimed), key=lambda v: -v.depth):
        if any(k not in claimed for k in body_nodes.get(v.key, ())):
            claimed.discard(v.key)
    part = TrtPartition(0, len(claimed), claimed={v.node.index for v in nodes if v.key in claimed})
    for v in nodes:
        if v.key in claimed:
            continue
        p = cuda.get(v.node)
        if p is None:
            continue
        (part.cuda_nodes if p.ep == "CUDAExecutionProvider" else part.cpu_nodes if p.ep else part.unsupported).append(
            v.node.location)
    # connected components of claimed nodes (edges through values inside a graph); a claimed control-flow node's
    # bodies are part of its engine
    parent = {k: k for k in claimed}

    def find(k: tuple[int, ...]) -> tuple[int, ...]:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    producer: dict[tuple[Any, Any], tuple[int, ...]] = {}  # (graph, value) -> the node that makes it there
    consumers: dict[tuple[Any, Any], list[_OrtNode]] = {}
    for v in nodes:
        for o in v.outputs:
            producer[(v.graph, o)] = v.key
        for i in v.inputs:
            consumers.setdefault((v.graph, i), []).append(v)
    by_key = {v.key: v for v in nodes}
    by_graph: dict[Any, list[_OrtNode]] = {}  # each graph's own claimed nodes (not those inside a claimed body)
    for v in nodes:
        if v.key not in claimed:
            continue
        if v.owner is not None and v.owner in claimed:
            parent[find(v.key)] = find(v.owner)
        else:
            by_graph.setdefault(v.graph, []).append(v)
        for inp in v.inputs:
            prod = producer.get((v.graph, inp))
            if prod is not None and prod in claimed:
                parent[find(v.key)] = find(prod)
    # GetCapability consolidates a graph's supported groups into one TensorRT subgraph unless that makes a cycle
    # (a node it does not take reads from the group and feeds it)
    for own in by_graph.values():
        if len({find(v.key) for v in own}) > 1 and not _cycle_through_others(own, claimed, producer, consumers, by_key):
            for v in own[1:]:
                parent[find(v.key)] = find(own[0].key)
    part.subgraphs = len({find(k) for k in claimed})
    return part


@dataclass
class _OrtNode:
    """A node of a graph ORT holds once loaded: key (the index path: the calls it was inlined through, then its own
    node index), graph (which graph: the main one or a control-flow body, of a call's copy where it is one),
    owner (the key of the control-flow node whose body the graph is), depth (bodies around it), its values named
    in its graph (a function body's inputs and outputs are the call's)."""

    key: tuple[int, ...]
    node: NodeRef
    graph: Any
    owner: tuple[int, ...] | None
    depth: int
    inputs: list[Any]
    outputs: list[Any]


def _ort_nodes(cuda: Verdicts, index: GraphIndex) -> list[_OrtNode]:
    """The nodes of every graph ORT holds once it has loaded the model (in_ort_graph), a local function's body
    copied into the caller's graph at each call (ORT inlines every call: a body called twice is twice in the
    graph); a function that calls itself is not expanded again (onnx and ORT cannot inline it)."""
    bodies: dict[int, list[Any]] = {}  # control-flow node index -> its body scopes
    for scope in index.scopes:
        if scope.owner is not None:
            bodies.setdefault(scope.owner.index, []).append(scope)
    fscopes = [s for s in index.scopes if s.is_function]
    functions = {(f.domain, f.name): s for f, s in zip(index.model.functions, fscopes)} \
        if len(fscopes) == len(index.model.functions) else {}
    out: list[_OrtNode] = []

    def walk(scope: Any, call: tuple[int, ...], graph: Any, owner: tuple[int, ...] | None, depth: int,
             names: dict[str, Any], calling: tuple[Any, ...]) -> None:
        def name(v: str) -> Any:
            got = names.get(v)
            return got if got is not None else (call, v)

        for n in scope.nodes:
            key = call + (n.index,)
            if functions and index.is_local_function(n):
                fkey = (n.proto.domain, n.op_type)
                fscope = functions.get(fkey)
                if fscope is None or fkey in calling:
                    continue
                formal = dict(zip(fscope.inputs, [name(v) if v else None for v in n.inputs]))
                formal.update((f, name(v)) for f, v in zip(fscope.outputs, n.outputs) if v)
                walk(fscope, key, graph, owner, depth, {f: v for f, v in formal.items() if v is not None},
                     calling + (fkey,))
                continue
            if not in_ort_graph(n, cuda, index):
                if n.index in bodies and _inlined(n, cuda):  # its branch's nodes are the graph's now
                    for body in bodies[n.index]:  # (the branch dropped is: its nodes are not in ORT's graph)
                        outs = dict(names)
                        outs.update((b, name(v)) for b, v in zip(body.outputs, n.outputs) if b and v)
                        walk(body, call, graph, owner, depth, outs, calling)
                continue
            out.append(_OrtNode(key, n, graph, owner, depth, [name(v) for v in n.inputs if v],
                                [name(v) for v in n.outputs if v]))
            for body in bodies.get(n.index, ()):
                walk(body, call, (key, id(body)), key, depth + 1, names, calling)

    main = index.scopes[0]
    walk(main, (), (), None, 0, {}, ())
    return out


def _inlined(node: NodeRef, cuda: Verdicts) -> bool:
    """An If on a constant condition: ORT's constant folding (Level 1, before partitioning) puts the nodes of the
    branch taken into the If's graph in its place (the placement marks the If folded, the other branch's nodes
    eliminated)."""
    p = cuda.get(node)
    return node.op_type == "If" and p is not None and p.status == "folded" and p.reason == "if-constant"


def _cycle_through_others(own: list[_OrtNode], claimed: set[tuple[int, ...]], producer: dict[Any, Any],
                          consumers: dict[Any, Any], by_key: dict[Any, Any]) -> bool:
    """Whether a node of the graph TensorRT does not take is both reached from its claimed nodes and reaches them
    (edges through values inside the graph; removed and Constant nodes are no nodes of ORT's graph)."""
    graph = own[0].graph

    def walk(step: Any) -> set[tuple[int, ...]]:
        seen: set[tuple[int, ...]] = set()
        todo = [m for v in own for m in step(v) if m.key not in claimed]
        while todo:
            m = todo.pop()
            if m.key in seen:
                continue
            seen.add(m.key)
            todo.extend(x for x in step(m) if x.key not in claimed and x.key not in seen)
        return seen

    def readers(v: _OrtNode) -> list[_OrtNode]:
        return [c for o in v.outputs for c in consumers.get((graph, o), ())]

    def writers(v: _OrtNode) -> list[_OrtNode]:
        return [by_key[p] for i in v.inputs if (p := producer.get((graph, i))) is not None]

    return bool(walk(readers) & walk(writers))
