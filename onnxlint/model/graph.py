"""One pass over a model: every node (subgraphs and local functions included) with a readable location,
producers and consumers, value types, constants and the opset in effect.

Walks are iterative so a 200-deep nest of If bodies does not hit Python's recursion limit.
"""

from __future__ import annotations

import math
import sys
import weakref
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterable, MutableMapping, Sequence

from onnxlint.model.graph_walks import _GRAPH, _GRAPHS, _TENSOR
from onnxlint.model.graph_walks import graph_bodies as graph_bodies  # the proto-level walks, kept importable here
from onnxlint.model.graph_walks import iter_graphs as iter_graphs
from onnxlint.model.graph_walks import scan_attributes as scan_attributes
from onnxlint.model.locations import body_path, function_path, node_path
from onnxlint.model.node_verdicts import NodeVerdicts, field_position

if TYPE_CHECKING:  # onnx is imported where a proto is read, not on import: `import onnxlint.model.graph` stays cheap
    import onnx

_EXTERNAL = 1  # TensorProto.DataLocation EXTERNAL
HAS_ATTRIBUTES, HOLDS_GRAPH = 1, 2  # GraphIndex.node_flags: a node has attributes; one of them is a graph

STANDARD_DOMAINS = {"ai.onnx", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training", "ai.onnx.preview"}
ORT_DOMAINS = {"com.microsoft", "com.microsoft.nchwc", "com.ms.internal.nhwc", "com.microsoft.mlfeaturizers", "com.microsoft.dml"}


_intern = sys.intern
INTERN_NODES = 200_000  # above this many nodes in the main graph the index interns value names (memory over time)


def norm_domain(domain: str) -> str:
    return domain or "ai.onnx"


@lru_cache(maxsize=None)
def dtype_name(elem_type: int) -> str | None:
    """TensorProto enum -> ORT/ONNX spelling used in type constraints ('float', 'int64', 'float8e4m3fn')."""
    if not elem_type:
        return None
    from onnx import TensorProto

    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return None


class ValueType:
    """What is known of a value: 'tensor(float)' style type string, elem dtype and dims (None = unknown dim).

    The dims are read from the TypeProto only when a rule asks: most values are only ever asked their dtype."""

    __slots__ = ("type_str", "dtype", "_shape", "_tensor")

    def __init__(self, type_str: str | None = None, dtype: str | None = None, shape: tuple | None = None,
                 tensor: "onnx.TypeProto.Tensor | None" = None):
        self.type_str = type_str
        self.dtype = dtype
        self._shape = shape
        self._tensor = tensor  # read dims from here on first use

    @property
    def shape(self) -> tuple | None:
        """ints, strings (symbolic) or None per dim; None when the rank is unknown."""
        t = self._tensor
        if t is not None:
            self._tensor = None
            if t.HasField("shape"):
                dims = []
                for d in t.shape.dim:
                    w = d.WhichOneof("value")
                    dims.append(d.dim_value if w == "dim_value" else (d.dim_param or None) if w == "dim_param" else None)
                self._shape = tuple(dims)
        return self._shape

    def __repr__(self) -> str:
        return f"ValueType({self.type_str!r}, {self.shape!r})"

    @property
    def rank(self) -> int | None:
        shape = self.shape
        return None if shape is None else len(shape)

    @property
    def static(self) -> bool:
        shape = self.shape
        return shape is not None and all(isinstance(d, int) and d >= 0 for d in shape)

    def numel(self) -> int | None:
        if not self.static:
            return None
        n = 1
        for d in self.shape or ():
            n *= d
        return n


UNKNOWN = ValueType()


@lru_cache(maxsize=None)
def _tensor_type_str(elem_type: int) -> tuple[str | None, str | None]:
    dtype = dtype_name(elem_type)
    return (f"tensor({dtype})" if dtype else None), dtype


def value_type_of(tp: onnx.TypeProto) -> ValueType:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        t = tp.tensor_type
        type_str, dtype = _tensor_type_str(t.elem_type)
        return ValueType(type_str, dtype, None, t)
    if kind == "sequence_type":
        inner = value_type_of(tp.sequence_type.elem_type)
        return ValueType(f"seq({inner.type_str})" if inner.type_str else None, None, None)
    if kind == "optional_type":
        inner = value_type_of(tp.optional_type.elem_type)
        return ValueType(f"optional({inner.type_str})" if inner.type_str else None, None, None)
    return ValueType()


class Names(list):
    """A scope's input or output names, in their order, whose `in` is a set's where there are many: the optimizer
    passes ask `value in scope.outputs` for each node, and a graph of tens of thousands of outputs made each pass
    quadratic. Built once, never changed; a few names (most bodies' own) are searched as the list they are."""

    __slots__ = ("_set",)

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)
        self._set = frozenset(self) if len(self) > 16 else None

    def __contains__(self, name: object) -> bool:
        found = self._set
        return name in found if found is not None else list.__contains__(self, name)


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
    consumers: dict[str, Sequence["NodeRef"]] = field(default_factory=dict)  # tuples once the index is built
    constants: dict[str, onnx.TensorProto] = field(default_factory=dict)  # Constant-node outputs
    nodes: list["NodeRef"] = field(default_factory=list)
    is_function: bool = False
    _input_set: set | None = None
    index_ref: Any = None  # weakref to the GraphIndex (a strong one would be a cycle)
    # the NodeProtos of this scope (graph.node or a function's node) and the index of the first one's NodeRef:
    # where a NodeRef made without its proto (GraphIndex keep_protos=False) reads it
    node_protos: Any = None
    first_index: int = 0
    # the index's node_flags where it promised its node lists unchanged (keep_protos False: a lint's), read by
    # NodeRef.attribute_flags; None: read from the proto
    node_flags: bytearray | None = None
    # the dict.get of {value name: type string} of its typed values where this scope's own dict holds every type
    # its nodes read (a main graph or a function body, with no value named ""), else False; None until the first
    # GraphIndex.signature of one of its nodes
    type_strs: Any = None

    def _visible(self, table: str, name: str) -> Any:
        """`name` in this graph's `table` or an enclosing graph's: a body sees its outer scopes' values."""
        scope: GraphScope | None = self
        while scope is not None:
            got = getattr(scope, table).get(name)
            if got is not None:
                return got
            scope = scope.parent
        return None

    @property
    def root(self) -> "GraphScope":
        """The outermost scope around this one: the main graph, or the local function a body is in."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def type_of(self, name: str) -> ValueType:
        if self.parent is None:  # the main graph or a function: its own types (most scopes asked, most often)
            return self.types.get(name) or UNKNOWN
        return self._visible("types", name) or UNKNOWN

    def producer_of(self, name: str) -> "NodeRef | None":
        """The node that makes `name`, in this graph or an enclosing one (an implicit input of a body)."""
        if self.parent is None:
            return self.producer.get(name)
        return self._visible("producer", name)

    def constant(self, name: str) -> onnx.TensorProto | None:
        """Initializer or Constant-node value visible from this scope (ORT turns Constant nodes into initializers)."""
        scope: GraphScope | None = self
        while scope is not None:
            t = scope.initializers.get(name) or scope.constants.get(name)
            if t is not None:
                return t
            scope = scope.parent
        return None

    def constant_behind(self, name: str, hops: int = 16) -> onnx.TensorProto | None:
        """The initializer or Constant `name` is, looking through up to `hops` Identity nodes (torch exporters
        emit `Identity(initializer)` for shared constants; ORT's constant folding and TensorRT's parser see a
        constant); None: a computed value or a graph input."""
        scope: GraphScope = self
        for _ in range(hops):
            t = scope.constant(name)
            if t is not None:
                return t
            prod = scope.producer_of(name)
            if prod is None or prod.op_type != "Identity" or prod.domain != "ai.onnx" or not prod.inputs or not prod.inputs[0]:
                return None
            scope, name = prod.scope, prod.inputs[0]
        return None

    def is_graph_input(self, name: str) -> bool:
        if self._input_set is None or len(self._input_set) != len(self.inputs):
            self._input_set = set(self.inputs)
        return name in self._input_set and name not in self.initializers


class NodeRef:
    """One node with what every rule asks for read out of the proto once (proto field access is slow).

    A node and its scope refer to each other (scope.nodes/producer/consumers, node.scope): the GraphIndex
    breaks those cycles when it is freed (GraphIndex.__del__), so a model's ~8 objects per node go at once by
    reference counting instead of waiting for a full collection of the cyclic GC. Keep the index (or a
    StatusIndex that recorded the node: it keeps the index) while using its nodes."""

    __slots__ = ("index", "_proto", "scope", "domain", "opset", "op_type", "_name", "inputs", "outputs")

    def __init__(self, index: int, proto: onnx.NodeProto | None, scope: GraphScope, domain: str,
                 opset: int | None, op_type: str, name: str | None, inputs: tuple, outputs: tuple):
        self.index = index
        self._proto = proto  # None: read from the scope's node list when asked (GraphIndex keep_protos=False)
        self.scope = scope
        self.domain = domain
        self.opset = opset
        self.op_type = op_type
        self._name = name  # None: read from the proto when asked (as _proto)
        self.inputs = inputs
        self.outputs = outputs

    def __repr__(self) -> str:
        return f"NodeRef({self.location!r}, {self.op_type})"

    @property
    def name(self) -> str:
        """The node's name (may be empty). Without its proto (keep_protos=False) it is read from the proto when
        asked: a few nodes' names are (findings, removals), while keeping them all cost a string a node (57 MB at
        1M nodes)."""
        nm = self._name
        if nm is None:  # self.proto.name, without the property's call
            p = self._proto
            if p is None:
                scope = self.scope
                p = scope.node_protos[self.index - scope.first_index]
            return p.name
        return nm

    @property
    def location(self) -> str:
        """`scope path/name`, or `scope path/op#position` for a node without a name: made when asked, not kept
        (a string a node, 65 MB at 1M nodes, for the few nodes findings and placements name)."""
        return self._located(self.name)

    def named(self) -> tuple[str, str | None, str | bytes]:
        """(name, node_path of its location, doc_string): what a finding names it by, the proto read once (without
        its proto, each read makes the proto's wrapper); a main-graph node's path made without its location."""
        p = self._proto
        scope = self.scope
        if p is None:
            p = scope.node_protos[self.index - scope.first_index]
        nm = self._name
        if nm is None:
            nm = p.name
        if scope.path == "graph":  # node_path(self.location): the location less its "graph/"
            return nm, nm or f"{self.op_type}#{self.index - scope.first_index}", p.doc_string
        return nm, node_path(self._located(nm)), p.doc_string

    def _located(self, nm: str) -> str:
        scope = self.scope
        if nm:
            return f"{scope.path}/{nm}"
        return f"{scope.path}/{self.op_type}#{self.index - scope.first_index}"

    @property
    def proto(self) -> onnx.NodeProto:
        p = self._proto
        if p is None:
            scope = self.scope
            return scope.node_protos[self.index - scope.first_index]
        return p

    def attribute_flags(self) -> int:
        """HAS_ATTRIBUTES | HOLDS_GRAPH: from what the index's walk read, when the index promised its node lists
        unchanged (keep_protos False: a lint's; GraphScope.node_flags); else from the proto."""
        flags = self.scope.node_flags
        if flags is not None:
            return flags[self.index]
        attrs = self.proto.attribute
        if not attrs:
            return 0
        return HAS_ATTRIBUTES | (HOLDS_GRAPH if any(a.type in (_GRAPH, _GRAPHS) for a in attrs) else 0)

    def attr(self, name: str):
        for a in self.proto.attribute:
            if a.name == name:
                return attribute_value(a)
        return None

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.proto.attribute)

    def input_type(self, i: int) -> ValueType:
        ins = self.inputs
        if i >= len(ins) or not ins[i]:
            return UNKNOWN
        return self.scope.type_of(ins[i])

    def output_type(self, i: int) -> ValueType:
        outs = self.outputs
        if i >= len(outs) or not outs[i]:
            return UNKNOWN
        return self.scope.type_of(outs[i])


SHAPE_SIZED = 1024  # elements: what a shape computation makes (a few int64 vectors); an image or activation is more


def least_elements(vt: ValueType) -> int | None:
    """The fewest elements a value of this type can hold: the product of its known dims (a dynamic dim is at
    least 1); None when the rank is unknown."""
    shape = vt.shape
    if shape is None:
        return None
    n = 1
    for d in shape:
        if isinstance(d, int) and d > 0:
            n *= d
    return n


def shape_sized(node: NodeRef) -> bool:
    """Whether the node may be a shape computation by its size: none of its inputs and outputs is known (by the
    inferred shapes) to hold more than SHAPE_SIZED elements; an unknown shape gets the benefit of the doubt. An
    image-sized GridSample that ORT keeps on CPU because its inputs are CPU tensors is not: its size, not why
    it is there, decides whether running it on CPU is harmless."""
    scope = node.scope
    # a main graph's own dict, read without type_of's call (GraphScope.type_of): an untyped value (None there,
    # UNKNOWN from type_of: no elements known) is passed over, most values of a big model without inference; a
    # loop, not a pipeline of iterators (four made a call: -28 % of its time at 250k nodes)
    get = scope.types.get if scope.parent is None else scope.type_of
    for names in (node.inputs, node.outputs):
        for name in names:
            if name:
                vt = get(name)
                if vt is not None:
                    n = least_elements(vt)
                    if n is not None and n > SHAPE_SIZED:
                        return False
    return True


class StatusIndex:
    """For predictions whose .nodes map node index -> verdict (.status, .node), written through record().

    Most nodes get the COMMON status ('device', 'supported'); rules ask for the others, so those are kept
    aside as they are recorded and listing them never walks every node."""

    COMMON = ""
    VERDICT: Any = None  # the verdict class (record_as): a dataclass, the node its first field, a status among them
    nodes: MutableMapping[int, Any]  # a dict, or a NodeVerdicts (one code a node)

    def record(self, index: int, verdict: Any) -> None:
        self.nodes[index] = verdict
        self._noted(index, verdict.node, verdict.status)

    def record_as(self, index: int, node: NodeRef, fields: tuple[Any, ...]) -> None:
        """record(index, VERDICT(node, *fields)), fields being all of the verdict's fields but the node, in order:
        in a big model the verdict is not made, only its code kept (NodeVerdicts.set_fields; the partitioner and
        the parser record a million nodes from a few verdicts)."""
        nodes = self.nodes
        if isinstance(nodes, NodeVerdicts) and nodes.set_fields(index, node, self.VERDICT, fields):
            self._noted(index, node, fields[field_position(self.VERDICT, "status")])
        else:
            self.record(index, self.VERDICT(node, *fields))

    def recorder(self) -> Callable[[int, NodeRef, tuple[Any, ...]], None]:
        """record_as, for a loop that records every node of a model (the partitioner, the TensorRT parser): the
        mapping, the verdict class and where its status is looked up once, and _noted asked only where it has
        something to do (the index to keep, a node of unusual status, a status cache to drop). A verdict of a
        smaller model goes straight into the mapping's dict (NodeVerdicts._plain), not through set_fields,
        record and NodeVerdicts.__setitem__ (they would put it there)."""
        nodes = self.nodes
        if not isinstance(nodes, NodeVerdicts):
            return self.record_as
        cls, common, at, d = self.VERDICT, self.COMMON, field_position(self.VERDICT, "status"), self.__dict__
        set_fields, noted, record = nodes.set_fields, self._noted, self.record

        def record_as(index: int, node: NodeRef, fields: tuple[Any, ...]) -> None:
            plain = nodes._plain  # a smaller model's verdicts, a dict once the first is recorded: stored at once
            if plain is not None:
                plain[index] = cls(node, *fields)
            elif not set_fields(index, node, cls, fields):
                record(index, cls(node, *fields))
                return
            if fields[at] != common or "_index" not in d or "_status_cache" in d:
                noted(index, node, fields[at])

        return record_as

    def _noted(self, index: int, node: Any, status: str) -> None:
        """What is kept beside a recorded verdict: the index it came from, the nodes of unusual status."""
        if "_index" not in self.__dict__:  # verdicts outlive the GraphIndex (api.predict): keep it
            scope = getattr(node, "scope", None)
            ref = getattr(scope, "index_ref", None)
            self.__dict__["_index"] = ref() if ref is not None else None
        if status != self.COMMON:
            self.__dict__.setdefault("_unusual", set()).add(index)
        self.__dict__.pop("_status_cache", None)

    def by_status(self, with_common: bool = True) -> dict[str, list[NodeRef]]:
        key = "_status_cache"
        cache = self.__dict__.setdefault(key, {})
        if with_common not in cache:
            nodes = self.nodes
            out: dict[str, list[NodeRef]] = {}
            index = self.__dict__.get("_index")
            if with_common and isinstance(nodes, NodeVerdicts):
                out = nodes.nodes_by("status")  # no verdict object made a node
            elif isinstance(nodes, NodeVerdicts) and nodes.in_index_order() and index is not None:
                # codes: the verdict under i is index.nodes[i]'s (NodeVerdicts.set_fields), its status read from
                # its code, no verdict made (a third of the nodes are unusual at 1M)
                status_of, of_index = nodes.fields_getter(("status",)), index.nodes
                for i in sorted(self.__dict__.get("_unusual", ())):
                    status = status_of(i)[0]  # type: ignore[index]  # i is recorded: it has a verdict
                    if status != self.COMMON:
                        out.setdefault(status, []).append(of_index[i])
            else:
                verdicts = nodes.values() if with_common else [nodes[i] for i in sorted(self.__dict__.get("_unusual", ()))]
                for v in verdicts:
                    if with_common or v.status != self.COMMON:
                        out.setdefault(v.status, []).append(v.node)
            cache[with_common] = out
        return cache[with_common]


def small_array(scope: GraphScope, t: onnx.TensorProto, limit: int) -> Any:
    """The value of a tensor of at most limit elements as a numpy array, or None (larger, unreadable). An
    external one is read from the model's own data file where the lint's index was given the way
    (GraphIndex.read_external), never by numpy_helper.to_array, which reads it relative to the working folder."""
    if t.data_location != _EXTERNAL:
        return in_file_array(t, limit)
    if math.prod(t.dims) > limit:
        return None
    index = scope.index_ref() if scope.index_ref is not None else None
    read = index.read_external if index is not None else None
    return read(t) if read is not None else None


def in_file_array(t: onnx.TensorProto, limit: int) -> Any:
    """The value of a tensor of at most limit elements kept in the model file, as a numpy array; None for a larger,
    external (the ORT simulation's reads: ort.optimizer.initializers) or unreadable one."""
    if math.prod(t.dims) > limit or t.data_location == _EXTERNAL:
        return None
    from onnx import numpy_helper

    try:
        return numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - a weight-less copy of a large tensor, an odd dtype
        return None


def attribute_value(a: onnx.AttributeProto):
    if a.type == _GRAPH or a.type == _GRAPHS:
        return "<graph>"
    import onnx
    from onnx import helper

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

    def __init__(self, model: onnx.ModelProto, keep_protos: bool = True):
        """keep_protos False: in a big graph (over INTERN_NODES nodes) the nodes read their NodeProto (and their
        name) from the model's node lists when asked instead of holding one wrapper object each (400 MB of the
        index's 1.1 GB at 1M nodes; the names 57 MB more), for an index of a model whose node lists nobody
        changes while it is in use (the lint's, loading.index_model; a fixer's index keeps them). A smaller graph
        keeps them: each read then makes a wrapper again (230k reads at 100k nodes, 3 % of the lint's time)."""
        self.model = model
        self._keep_protos = keep_protos
        self.opsets: dict[str, int] = {}
        for imp in model.opset_import:
            d = norm_domain(imp.domain)
            self.opsets.setdefault(d, imp.version)
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.nodes: list[NodeRef] = []
        # node index -> HAS_ATTRIBUTES | HOLDS_GRAPH, as the walk read them (attribute_flags): one byte a node
        self.node_flags = bytearray()
        self.scopes: list[GraphScope] = []
        self.by_op: dict[str, list[NodeRef]] = {}
        self._by_domain: dict[str, list[NodeRef]] | None = None
        self._signatures: list | None = None
        self._distinct_sigs: dict[tuple, tuple] = {}
        self._ref = weakref.ref(self)
        # (cost, nodes, control-flow bodies) of onnx's inference as loading's budget walk counted it on the model
        # before inference, when this index is of the inferred model (loading.index_model); else None
        self.inference_work: tuple[int, int, int] | None = None
        # the values of small external tensors, read from the model's own data files (loading.index_model sets
        # it: external.small_value_reader); None: an external tensor's value is unknown
        self.read_external: Callable[[onnx.TensorProto], Any] | None = None
        # the model as read where this index is of a copy onnx's inference made (loading.index_model sets it): what
        # ORT itself reads (load_refusal.load_refusal); and facts of it computed once by whoever asks first
        self.source_model = model
        self.memo: dict[str, Any] = {}
        # a big graph's value names: name -> the one str the index keeps for it (protobuf hands out a new str at
        # each read: a name is read as one output, as inputs and as a value_info). A dict of the walk's own, not
        # sys.intern: the same sharing, and the table goes with the walk (its strs stay, in the nodes and types)
        names: dict[str, str] = {}
        self._names = names.setdefault
        # (a scope's consumers, a value name) where the walk made the readers of the value a list (_seal_consumers)
        self._grown: list[tuple[dict[str, Any], str]] = []
        self._walk(model.graph)
        del self._names
        self._seal_consumers()

    @property
    def big(self) -> bool:
        """Over INTERN_NODES nodes in the main graph: memory is spent sparingly (interned names, no wrapper per
        node, a prediction's verdicts as codes), at some cost in time."""
        return self._big

    def __del__(self) -> None:
        """Break the node <-> scope cycles: with the index gone, reference counting frees every node now."""
        for scope in self.__dict__.get("scopes", ()):
            scope.nodes.clear()
            scope.producer.clear()
            scope.consumers.clear()

    # ------------------------------------------------------------------ build
    def _make_scope(self, path, graph, parent, owner, opsets) -> GraphScope:
        scope = GraphScope(path=path, graph=graph, parent=parent, owner=owner, opsets=opsets)
        scope.index_ref = self._ref
        if not self._keep_protos:  # its node lists promised unchanged: NodeRef.attribute_flags reads the walk's
            scope.node_flags = self.node_flags
        if graph is not None:
            scope.inputs = Names(i.name for i in graph.input)
            scope.outputs = Names(o.name for o in graph.output)
            for init in graph.initializer:
                scope.initializers[init.name] = init
                scope.types[init.name] = ValueType(*_tensor_type_str(init.data_type), tuple(init.dims))
            types, same = scope.types, (self._names if self._big else None)  # big: one str for all its reads (_walk)
            for part in (graph.input, graph.value_info, graph.output):
                for vi in part:
                    tp = vi.type
                    t = tp.tensor_type  # read, not set: an unset message field reads as its default (elem_type 0)
                    elem_type = t.elem_type
                    if elem_type:  # a tensor of a known dtype, most values: value_type_of inlined, no WhichOneof
                        vt = ValueType(*_tensor_type_str(elem_type), None, t)
                    else:
                        kind = tp.WhichOneof("value")
                        if kind is None:
                            continue
                        vt = ValueType(None, None, None, t) if kind == "tensor_type" else value_type_of(tp)
                    name = vi.name
                    if same is not None:
                        name = same(name, name)
                    old = types.get(name)
                    if old is None or old.type_str is None or (old.shape is None and vt.shape is not None):
                        types[name] = vt
        self.scopes.append(scope)
        return scope

    def _function_scopes(self) -> list[tuple[GraphScope, Any]]:
        """A scope for each local function's body, with its nodes, for the walk (after the main graph's)."""
        out = []
        for f in self.model.functions:
            f_opsets = dict(self.opsets)
            for imp in f.opset_import:
                f_opsets[norm_domain(imp.domain)] = imp.version
            fscope = self._make_scope(function_path(f.domain, f.name), None, None, None, f_opsets)
            fscope.is_function = True
            fscope.inputs, fscope.outputs = Names(f.input), Names(f.output)
            out.append((fscope, f.node))
        return out

    def _walk(self, root: onnx.GraphProto) -> GraphScope:
        self._big = big = len(root.node) > INTERN_NODES
        main = self._make_scope("graph", root, None, None, self.opsets)
        stack: deque[tuple[GraphScope, Any]] = deque([(main, root.node), *self._function_scopes()])
        nodes, by_op, flags = self.nodes, self.by_op, self.node_flags
        add_node, add_flags = nodes.append, flags.append
        same, add_grown = self._names, self._grown.append
        keep = self._keep_protos or not big
        GRAPH, GRAPHS, TENSOR = _GRAPH, _GRAPHS, _TENSOR
        while stack:
            scope, protos = stack.popleft()
            scope.node_protos, scope.first_index = protos, len(nodes)
            pending = []
            opsets, producer = scope.opsets, scope.producer
            consumers: dict[str, Any] = scope.consumers  # a tuple for up to two readers, a list for more (_seal_consumers)
            opset_of = opsets.get
            add_scope_node = scope.nodes.append
            for proto in protos:
                op, nm = _intern(proto.op_type), proto.name
                if nm.__class__ is not str:  # not UTF-8: protobuf hands it over as bytes (the lint repairs the model)
                    raise TypeError(f"node name {nm!r} is not UTF-8 text")
                dom = proto.domain or "ai.onnx"
                if big:  # value names shared (names): -27 % of the index's memory
                    # (map over a slice: a third of the time of a comprehension over the repeated field)
                    ins, outs = proto.input[:], proto.output[:]
                    ins, outs = tuple(map(same, ins, ins)), tuple(map(same, outs, outs))
                else:
                    ins, outs = tuple(proto.input[:]), tuple(proto.output[:])  # a slice is a list: quicker to copy
                ref = NodeRef(len(nodes), proto if keep else None, scope, dom, opset_of(dom), op, nm if keep else None,
                              ins, outs)
                add_node(ref)
                add_flags(0)
                add_scope_node(ref)
                lst = by_op.get(op)
                if lst is None:
                    by_op[op] = [ref]
                else:
                    lst.append(ref)
                for out in outs:
                    if out:
                        producer[out] = ref
                for inp in ins:
                    if inp:
                        lst = consumers.get(inp)
                        if lst is None:
                            consumers[inp] = (ref,)
                        elif lst.__class__ is not tuple:
                            lst.append(ref)
                        elif len(lst) == 1:
                            consumers[inp] = (lst[0], ref)
                        else:  # a third reader: a list from now on, made a tuple again by _seal_consumers
                            consumers[inp] = [*lst, ref]
                            add_grown((consumers, inp))
                attrs = proto.attribute
                if not attrs:
                    continue
                flags[-1] = HAS_ATTRIBUTES
                if op == "Constant" and dom == "ai.onnx" and outs:
                    for a in attrs:
                        if a.name == "value" and a.type == TENSOR:
                            scope.constants[outs[0]] = a.t
                            if outs[0] not in scope.types:
                                scope.types[outs[0]] = ValueType(*_tensor_type_str(a.t.data_type), tuple(a.t.dims))
                for a in attrs:
                    kind = a.type
                    if kind != GRAPH and kind != GRAPHS:
                        continue
                    flags[ref.index] = HAS_ATTRIBUTES | HOLDS_GRAPH
                    subs = [a.g] if kind == GRAPH else list(a.graphs)
                    for k, g in enumerate(subs):
                        path = body_path(scope.path, ref.location[len(scope.path) + 1:], a.name)
                        sub = self._make_scope(path if len(subs) == 1 else f"{path}[{k}]", g, scope, ref, scope.opsets)
                        pending.append((sub, g.node))
            stack.extend(pending)
        return main

    def _seal_consumers(self) -> None:
        """Each scope's consumers as tuples once the walk is done: lists, grown by appends, hold spare room (~30 MB
        at 1M nodes, alive as long as the index). The walk keeps a value's first two readers in a tuple already and
        notes the values whose readers it made a list (_grown, few: most values have one or two readers), so no pass
        over every value of every scope is made here."""
        for consumers, name in self._grown:
            consumers[name] = tuple(consumers[name])
        del self._grown

    # ------------------------------------------------------------------ queries (built on first use)
    def by_domain(self) -> dict[str, list[NodeRef]]:
        if self._by_domain is None:
            self._by_domain = {}
            for n in self.nodes:
                self._by_domain.setdefault(n.domain, []).append(n)
        return self._by_domain

    def signature(self, node: NodeRef) -> tuple:
        """(domain, op, opset, input type strings, output type strings): all a kernel lookup depends on."""
        sigs = self._signatures
        if sigs is None:
            sigs = self._signatures = [None] * len(self.nodes)
        sig = sigs[node.index]
        if sig is None:
            scope = node.scope
            get = scope.type_strs
            if get is None:
                types = scope.types
                get = scope.type_strs = False if scope.parent is not None or "" in types else \
                    {name: vt.type_str for name, vt in types.items() if vt.type_str is not None}.get
            if get:  # the main graph or a function body: one dict holds every type; mapped, no Python loop a
                # value (a million signatures at 1M nodes), an untyped value's None from the dict
                ins, outs = tuple(map(get, node.inputs)), tuple(map(get, node.outputs))
            else:
                type_of = scope.type_of
                ins = tuple([type_of(v).type_str if v else None for v in node.inputs])
                outs = tuple([type_of(v).type_str if v else None for v in node.outputs])
            sig = (node.domain, node.op_type, node.opset, ins, outs)
            sig = sigs[node.index] = self._distinct_sigs.setdefault(sig, sig)  # most nodes share a few dozen
        return sig

    def values_with_dtype(self, wanted) -> set[str]:
        """Names of values (any scope) whose dtype satisfies wanted(dtype); distinct dtypes are judged once."""
        verdict: dict = {}
        out: set[str] = set()
        for scope in self.scopes:
            for name, vt in scope.types.items():
                d = vt.dtype
                ok = verdict.get(d)
                if ok is None:
                    ok = verdict[d] = bool(wanted(d))
                if ok:
                    out.add(name)
        return out

    def readers_of(self, names: set[str]) -> list[NodeRef]:
        """Nodes reading any of names, in any scope (subgraph nodes that read outer values included)."""
        if not names:
            return []
        return [n for scope in self.scopes for name in names for n in scope.consumers.get(name, ())]

    def is_local_function(self, node: NodeRef) -> bool:
        return bool(self.functions) and (node.proto.domain, node.op_type) in self.functions

    def graph_inputs(self) -> list[onnx.ValueInfoProto]:
        inits = {i.name for i in self.model.graph.initializer}
        return [i for i in self.model.graph.input if i.name not in inits]
