"""ORT's TensorRT EP (TensorrtExecutionProvider::GetCapability): TensorRT takes what its parser supports, the
rest falls through to CUDA, then CPU."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from onnxlint.model.graph import GraphIndex, NodeRef

CONTROL_FLOW = ("If", "Loop", "Scan")  # GetCapability's control_flow_op_set_
# the copies of local-function bodies (ORT inlines each call) counted past the model's own nodes: functions calling
# the next one twice, 30 deep (2 KB), are 2^29 copies; past this, a body is counted at its first call only
EXPANSION_LIMIT = 1 << 18


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
    refused: str | None = None  # why ORT's loader refuses the model (Placement.loader_refused), whatever the EPs
    notes: list[str] = field(default_factory=list)

    def summary_line(self) -> str:
        if self.refused:
            return f"ORT refuses this model: {self.refused}"
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
    short: list[str] = []
    nodes = _ort_nodes(cuda, index, short)  # a node's key is its position in this list
    claimed = {k for k, v in enumerate(nodes) if (p := trt.get(v.node)) is not None and p.status != "unsupported"}
    # a control-flow node with a body node TensorRT does not take stays out (innermost bodies first: a body's
    # own control-flow nodes are decided before the node that owns the body)
    body_nodes: dict[int, list[int]] = {}
    for k, v in enumerate(nodes):
        if v.owner >= 0:
            body_nodes.setdefault(v.owner, []).append(k)
    for k in sorted((k for k in body_nodes if k in claimed and nodes[k].node.op_type in CONTROL_FLOW),
                    key=lambda k: -nodes[k].depth):
        if any(b not in claimed for b in body_nodes[k]):
            claimed.discard(k)
    part = TrtPartition(0, len(claimed), claimed={nodes[k].node.index for k in claimed}, notes=short)
    if getattr(cuda, "loader_refused", lambda: False)():
        part.refused = cuda.refused  # type: ignore[attr-defined]  # a Placement: ORT loads the model before any EP
    for k, v in enumerate(nodes):
        if k in claimed:
            continue
        p = cuda.get(v.node)
        if p is None:
            continue
        (part.cuda_nodes if p.ep == "CUDAExecutionProvider" else part.cpu_nodes if p.ep else part.unsupported).append(
            v.node.location)
    # connected components of claimed nodes (edges through values inside a graph); a claimed control-flow node's
    # bodies are part of its engine
    parent = {k: k for k in claimed}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    made: dict[int, dict[Any, int]] = {}  # per graph: value -> the claimed node that makes it there
    for k in claimed:
        v = nodes[k]
        got = made.get(v.graph)
        if got is None:
            got = made[v.graph] = {}
        for o in v.outputs:
            if o:
                got[o] = k
    by_graph: dict[int, list[int]] = {}  # each graph's own claimed nodes (not those inside a claimed body)
    for k, v in enumerate(nodes):
        if k not in claimed:
            continue
        if v.owner >= 0 and v.owner in claimed:
            parent[find(k)] = find(v.owner)
        else:
            by_graph.setdefault(v.graph, []).append(k)
        got = made[v.graph]
        for inp in v.inputs:
            prod = got.get(inp) if inp else None
            if prod is not None:
                parent[find(k)] = find(prod)
    # GetCapability consolidates a graph's supported groups into one TensorRT subgraph unless that makes a cycle
    # (a node it does not take reads from the group and feeds it)
    edges: dict[int, tuple[dict[Any, int], dict[Any, list[int]]]] = {}  # made on first need, for every graph
    for g, own in by_graph.items():
        if len({find(k) for k in own}) > 1 and not _cycle_through_others(own, claimed, nodes, g, edges):
            for k in own[1:]:
                parent[find(k)] = find(own[0])
    part.subgraphs = len({find(k) for k in claimed})
    return part


class _OrtNode:
    """A node of a graph ORT holds once loaded: graph (which graph: the main one, 0, or a control-flow body, of a
    call's copy where it is one), owner (the position of the control-flow node whose body the graph is, -1 for
    none), depth (bodies around it), its values named in its graph (a function body's inputs and outputs are the
    call's; a copy's own values are (call, name))."""

    __slots__ = ("node", "graph", "owner", "depth", "inputs", "outputs")

    def __init__(self, node: NodeRef, graph: int, owner: int, depth: int, inputs: Any, outputs: Any) -> None:
        self.node, self.graph, self.owner, self.depth, self.inputs, self.outputs = \
            node, graph, owner, depth, inputs, outputs


def _ort_nodes(cuda: Verdicts, index: GraphIndex, short: list[str] | None = None) -> list[_OrtNode]:
    """The nodes of every graph ORT holds once it has loaded the model (in_ort_graph), a local function's body
    copied into the caller's graph at each call (ORT inlines every call: a body called twice is twice in the
    graph); a function that calls itself is not expanded again (onnx and ORT cannot inline it). Past
    EXPANSION_LIMIT nodes walked beyond the model's own, a function already expanded is not expanded again (each
    body is walked at most once more: bounded work), and `short` gets a note saying so."""
    bodies: dict[int, list[Any]] = {}  # control-flow node index -> its body scopes
    for scope in index.scopes:
        if scope.owner is not None:
            bodies.setdefault(scope.owner.index, []).append(scope)
    fscopes = [s for s in index.scopes if s.is_function]
    functions = {(f.domain, f.name): s for f, s in zip(index.model.functions, fscopes)} \
        if len(fscopes) == len(index.model.functions) else {}
    out: list[_OrtNode] = []
    graphs = [0]  # the number of graphs so far
    # the nodes walked (copies ORT drops, a body's Constants, count too: a body of Constants alone adds nothing to
    # out, and was walked 2^29 times all the same)
    limit, walked, expanded, skipped = len(index.nodes) + EXPANSION_LIMIT, [0], set(), set()

    def walk(scope: Any, call: tuple[int, ...], graph: int, owner: int, depth: int, names: dict[str, Any],
             calling: tuple[Any, ...]) -> None:
        plain = not call and not names  # the model's own graphs: values by their names

        def name(v: str) -> Any:
            got = names.get(v)
            return got if got is not None else (call, v) if call else v

        walked[0] += len(scope.nodes)
        for n in scope.nodes:
            if functions and index.is_local_function(n):
                fkey = (n.proto.domain, n.op_type)
                fscope = functions.get(fkey)
                if fscope is None or fkey in calling:
                    continue
                if fkey in expanded and walked[0] > limit:
                    skipped.add(fkey)
                    continue
                expanded.add(fkey)
                formal = dict(zip(fscope.inputs, [name(v) if v else None for v in n.inputs]))
                formal.update((f, name(v)) for f, v in zip(fscope.outputs, n.outputs) if v)
                walk(fscope, call + (n.index,), graph, owner, depth, {f: v for f, v in formal.items() if v is not None},
                     calling + (fkey,))
                continue
            if not in_ort_graph(n, cuda, index):
                if n.index in bodies and _inlined(n, cuda):  # its branch's nodes are the graph's now
                    for body in bodies[n.index]:  # (the branch dropped is: its nodes are not in ORT's graph)
                        outs = dict(names)
                        outs.update((b, name(v)) for b, v in zip(body.outputs, n.outputs) if b and v)
                        walk(body, call, graph, owner, depth, outs, calling)
                continue
            k = len(out)
            out.append(_OrtNode(n, graph, owner, depth, n.inputs if plain else [name(v) if v else v for v in n.inputs],
                                n.outputs if plain else [name(v) if v else v for v in n.outputs]))
            for body in bodies.get(n.index, ()):
                graphs[0] += 1
                walk(body, call, graphs[0], k, depth + 1, names, calling)

    walk(index.scopes[0], (), 0, -1, 0, {}, ())
    if skipped and short is not None:
        short.append(f"ort-trt: the calls of local functions ORT inlines make more than {EXPANSION_LIMIT:,} copies of "
                     f"their nodes; past that, a function's body is counted at its first call only "
                     f"({len(skipped):,} function{'s' if len(skipped) != 1 else ''}): the counts above are short")
    return out


def _inlined(node: NodeRef, cuda: Verdicts) -> bool:
    """An If on a constant condition: ORT's constant folding (Level 1, before partitioning) puts the nodes of the
    branch taken into the If's graph in its place (the placement marks the If folded, the other branch's nodes
    eliminated)."""
    p = cuda.get(node)
    return node.op_type == "If" and p is not None and p.status == "folded" and p.reason == "if-constant"


def _cycle_through_others(own: list[int], claimed: set[int], nodes: list[_OrtNode], graph: int,
                          edges: dict[int, tuple[dict[Any, int], dict[Any, list[int]]]]) -> bool:
    """Whether a node of the graph TensorRT does not take is both reached from its claimed nodes (own, positions
    in nodes) and reaches them (edges through values inside the graph; removed and Constant nodes are no nodes of
    ORT's graph). edges: graph -> (value -> its producer, value -> its readers), filled here on the first call."""
    if not edges:
        for k, v in enumerate(nodes):
            got = edges.get(v.graph)
            if got is None:
                got = edges[v.graph] = ({}, {})
            for o in v.outputs:
                if o:
                    got[0][o] = k
            for i in v.inputs:
                if i:
                    got[1].setdefault(i, []).append(k)
    made, read = edges[graph]

    def walk(step: Any) -> set[int]:
        seen: set[int] = set()
        todo = [m for k in own for m in step(k) if m not in claimed]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(x for x in step(m) if x not in claimed and x not in seen)
        return seen

    def readers(k: int) -> list[int]:
        return [c for o in nodes[k].outputs if o for c in read.get(o, ())]

    def writers(k: int) -> list[int]:
        return [p for i in nodes[k].inputs if i and (p := made.get(i)) is not None]

    return bool(walk(readers) & walk(writers))
