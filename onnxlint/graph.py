"""One pass over a model: every node (subgraphs and local functions included) with a readable location,
producers and consumers, value types, constants and the opset in effect.

Walks are iterative so a 200-deep nest of If bodies does not hit Python's recursion limit.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterator

import onnx
from onnx import AttributeProto, TensorProto, helper

STANDARD_DOMAINS = {"ai.onnx", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training", "ai.onnx.preview"}
ORT_DOMAINS = {"com.microsoft", "com.microsoft.nchwc", "com.ms.internal.nhwc", "com.microsoft.mlfeaturizers", "com.microsoft.dml"}
CONTROL_FLOW = {"If", "Loop", "Scan", "SequenceMap"}


def iter_graphs(model: onnx.ModelProto) -> Iterator[onnx.GraphProto]:
    """The main graph and every control-flow body, iteratively (no recursion limit)."""
    stack = [model.graph]
    while stack:
        g = stack.pop()
        yield g
        for node in g.node:
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    stack.append(a.g)
                elif a.type == AttributeProto.GRAPHS:
                    stack.extend(a.graphs)


def norm_domain(domain: str) -> str:
    return domain or "ai.onnx"


def dtype_name(elem_type: int) -> str | None:
    """TensorProto enum -> ORT/ONNX spelling used in type constraints ('float', 'int64', 'float8e4m3fn')."""
    if not elem_type:
        return None
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return None


@dataclass
class ValueType:
    """What is known of a value: 'tensor(float)' style type string, elem dtype and dims (None = unknown dim)."""

    type_str: str | None = None
    dtype: str | None = None
    shape: tuple | None = None  # ints, strings (symbolic) or None per dim; None when rank unknown

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) and d >= 0 for d in self.shape)

    def numel(self) -> int | None:
        if not self.static:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return n


def value_type_of(tp: onnx.TypeProto) -> ValueType:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        t = tp.tensor_type
        dtype = dtype_name(t.elem_type)
        shape = None
        if t.HasField("shape"):
            dims = []
            for d in t.shape.dim:
                w = d.WhichOneof("value")
                dims.append(d.dim_value if w == "dim_value" else (d.dim_param or None) if w == "dim_param" else None)
            shape = tuple(dims)
        return ValueType(f"tensor({dtype})" if dtype else None, dtype, shape)
    if kind == "sequence_type":
        inner = value_type_of(tp.sequence_type.elem_type)
        return ValueType(f"seq({inner.type_str})" if inner.type_str else None, None, None)
    if kind == "optional_type":
        inner = value_type_of(tp.optional_type.elem_type)
        return ValueType(f"optional({inner.type_str})" if inner.type_str else None, None, None)
    return ValueType()


@dataclass
class GraphScope:
    """One graph body: the main graph, a control-flow body or a local function."""

    path: str
    graph: onnx.GraphProto | None
    parent: "GraphScope | None"
    owner: "NodeRef | None"
    opsets: dict[str, int]
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    initializers: dict[str, onnx.TensorProto] = field(default_factory=dict)
    types: dict[str, ValueType] = field(default_factory=dict)
    producer: dict[str, "NodeRef"] = field(default_factory=dict)
    consumers: dict[str, list["NodeRef"]] = field(default_factory=dict)
    constants: dict[str, onnx.TensorProto] = field(default_factory=dict)  # Constant-node outputs
    nodes: list["NodeRef"] = field(default_factory=list)
    is_function: bool = False

    def resolve(self, name: str) -> "GraphScope | None":
        scope = self
        while scope is not None:
            if name in scope.types or name in scope.initializers or name in scope.producer or name in scope.inputs:
                return scope
            scope = scope.parent
        return None

    def type_of(self, name: str) -> ValueType:
        scope = self
        while scope is not None:
            vt = scope.types.get(name)
            if vt is not None:
                return vt
            scope = scope.parent
        return ValueType()

    def initializer(self, name: str) -> onnx.TensorProto | None:
        scope = self
        while scope is not None:
            t = scope.initializers.get(name)
            if t is not None:
                return t
            scope = scope.parent
        return None

    def constant(self, name: str) -> onnx.TensorProto | None:
        """Initializer or Constant-node value visible from this scope (ORT turns Constant nodes into initializers)."""
        scope = self
        while scope is not None:
            t = scope.initializers.get(name) or scope.constants.get(name)
            if t is not None:
                return t
            scope = scope.parent
        return None

    def is_graph_input(self, name: str) -> bool:
        return name in self.inputs and name not in self.initializers


@dataclass(eq=False)
class NodeRef:
    index: int
    proto: onnx.NodeProto
    scope: GraphScope
    location: str
    domain: str
    opset: int | None

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def name(self) -> str:
        return self.proto.name

    @property
    def inputs(self) -> list[str]:
        return list(self.proto.input)

    @property
    def outputs(self) -> list[str]:
        return list(self.proto.output)

    def attr(self, name: str):
        for a in self.proto.attribute:
            if a.name == name:
                return attribute_value(a)
        return None

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.proto.attribute)

    def input_type(self, i: int) -> ValueType:
        ins = self.proto.input
        if i >= len(ins) or not ins[i]:
            return ValueType()
        return self.scope.type_of(ins[i])

    def output_type(self, i: int) -> ValueType:
        outs = self.proto.output
        if i >= len(outs) or not outs[i]:
            return ValueType()
        return self.scope.type_of(outs[i])


def attribute_value(a: onnx.AttributeProto):
    if a.type == AttributeProto.GRAPH or a.type == AttributeProto.GRAPHS:
        return "<graph>"
    try:
        v = helper.get_attribute_value(a)
    except Exception:  # malformed attribute: treat as unknown
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list):
        return [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
    if isinstance(v, onnx.TensorProto):
        return v
    return v


class GraphIndex:
    """The whole model, indexed once."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.opsets: dict[str, int] = {}
        for imp in model.opset_import:
            d = norm_domain(imp.domain)
            self.opsets.setdefault(d, imp.version)
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.nodes: list[NodeRef] = []
        self.scopes: list[GraphScope] = []
        self.by_op: dict[str, list[NodeRef]] = {}
        self.main = self._walk(model.graph)

    # ------------------------------------------------------------------ build
    def _make_scope(self, path, graph, parent, owner, opsets) -> GraphScope:
        scope = GraphScope(path=path, graph=graph, parent=parent, owner=owner, opsets=opsets)
        if graph is not None:
            scope.inputs = [i.name for i in graph.input]
            scope.outputs = [o.name for o in graph.output]
            for init in graph.initializer:
                scope.initializers[init.name] = init
                dt = dtype_name(init.data_type)
                scope.types[init.name] = ValueType(f"tensor({dt})" if dt else None, dt, tuple(init.dims))
            for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
                if vi.type.WhichOneof("value"):
                    vt = value_type_of(vi.type)
                    old = scope.types.get(vi.name)
                    if old is None or old.type_str is None or (old.shape is None and vt.shape is not None):
                        scope.types[vi.name] = vt
        self.scopes.append(scope)
        return scope

    def _walk(self, root: onnx.GraphProto) -> GraphScope:
        main = self._make_scope("graph", root, None, None, self.opsets)
        stack: deque[tuple[GraphScope, list]] = deque([(main, list(root.node))])
        for f in self.model.functions:
            f_opsets = dict(self.opsets)
            for imp in f.opset_import:
                f_opsets[norm_domain(imp.domain)] = imp.version
            fscope = self._make_scope(f"function:{f.domain + '.' if f.domain else ''}{f.name}", None, None, None, f_opsets)
            fscope.is_function = True
            fscope.inputs = list(f.input)
            fscope.outputs = list(f.output)
            stack.append((fscope, list(f.node)))
        while stack:
            scope, protos = stack.popleft()
            pending = []
            for i, proto in enumerate(protos):
                label = proto.name if proto.name else f"{proto.op_type}#{i}"
                dom = norm_domain(proto.domain)
                ref = NodeRef(len(self.nodes), proto, scope, f"{scope.path}/{label}", dom, scope.opsets.get(dom))
                self.nodes.append(ref)
                scope.nodes.append(ref)
                self.by_op.setdefault(proto.op_type, []).append(ref)
                for out in proto.output:
                    if out:
                        scope.producer[out] = ref
                for inp in proto.input:
                    if inp:
                        scope.consumers.setdefault(inp, []).append(ref)
                if proto.op_type == "Constant" and dom == "ai.onnx" and proto.output:
                    for a in proto.attribute:
                        if a.name == "value" and a.type == AttributeProto.TENSOR:
                            scope.constants[proto.output[0]] = a.t
                            if proto.output[0] not in scope.types:
                                dt = dtype_name(a.t.data_type)
                                scope.types[proto.output[0]] = ValueType(f"tensor({dt})", dt, tuple(a.t.dims))
                for a in proto.attribute:
                    subs = [a.g] if a.type == AttributeProto.GRAPH else list(a.graphs) if a.type == AttributeProto.GRAPHS else []
                    for k, g in enumerate(subs):
                        name = a.name if len(subs) == 1 else f"{a.name}[{k}]"
                        sub = self._make_scope(f"{ref.location}:{name}", g, scope, ref, scope.opsets)
                        pending.append((sub, list(g.node)))
            stack.extend(pending)
        return main

    # ------------------------------------------------------------------ queries
    def iter_nodes(self) -> Iterator[NodeRef]:
        return iter(self.nodes)

    def is_local_function(self, node: NodeRef) -> bool:
        return (node.proto.domain, node.op_type) in self.functions

    def graph_inputs(self) -> list[onnx.ValueInfoProto]:
        inits = {i.name for i in self.model.graph.initializer}
        return [i for i in self.model.graph.input if i.name not in inits]


def topo_order(scope: GraphScope) -> list[NodeRef]:
    """Kahn's order of a scope's nodes; nodes in a cycle keep file order at the end."""
    indeg: dict[int, int] = {}
    local = {n.index: n for n in scope.nodes}
    deps: dict[int, set[int]] = {}
    for n in scope.nodes:
        ds = set()
        for inp in n.proto.input:
            p = scope.producer.get(inp)
            if p is not None and p.index != n.index:
                ds.add(p.index)
        deps[n.index] = ds
        indeg[n.index] = len(ds)
    users: dict[int, list[int]] = {}
    for i, ds in deps.items():
        for d in ds:
            users.setdefault(d, []).append(i)
    ready = deque(n.index for n in scope.nodes if indeg[n.index] == 0)
    order: list[NodeRef] = []
    seen = set()
    while ready:
        i = ready.popleft()
        if i in seen:
            continue
        seen.add(i)
        order.append(local[i])
        for u in users.get(i, ()):
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    if len(order) < len(scope.nodes):
        order += [n for n in scope.nodes if n.index not in seen]
    return order
