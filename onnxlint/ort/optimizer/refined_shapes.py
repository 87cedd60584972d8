"""Shapes as onnx's shape inference with data propagation knows them (the shapes ORT's own inference gives a
Shape -> Gather -> Concat -> Reshape chain), computed lazily, and the guards that keep that inference from
spelling out huge integer tensors."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import onnx
from onnx import numpy_helper

from onnxlint.model.graph import scan_attributes

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex

Dims = tuple[Any, ...]  # a shape: ints where known, None (or a symbolic name, as declared) where not
DATA_PROP_MAX_ELEMENTS = 1 << 20
# where the control-flow bodies of a model are (_body_positions): (the main graph's scope, id(scope) ->
# {position of a node in that graph -> [the scopes of its bodies]})
Bodies = tuple[Any, dict[int, dict[int, list[Any]]]]


class RefinedShapes:
    """Value shapes from onnx's shape inference with data propagation (Shape -> Gather -> Concat -> Reshape),
    name -> dims (None where not a number), read like a dict (get, in, []).

    Lazy: the inference (a second pass of onnx's over the whole model) runs on the first lookup, and a value's
    dims are converted when asked for; the optimizer asks only where the index's own shape is not all numbers.
    Not run past the shape-inference budget (loading.over_inference_budget), nor when a large integer
    initializer exists: data propagation materialises integer tensors as shape data (gigabytes for a 2 GiB
    int64 tensor). Float weights, however large, are never read by it: a detector with big conv weights
    keeps its propagated shapes (they decide which shape nodes ORT keeps on CPU)."""

    def __init__(self, model: onnx.ModelProto | None, flat: bool = False, has_range: bool = True,
                 graphs: list[onnx.GraphProto] | None = None, work: tuple[int, int, int] | None = None, bodies: Bodies | None = None,
                 nodes: int | None = None, notes: list[str] | None = None):
        self._model = model
        # where a crash of onnx's C++ inference is said (Optimized.notes: one placement note for the model)
        self._notes = notes if notes is not None else []
        # name -> the last value_info of that name in the inferred model (None: not inferred yet); its type is
        # the answer when it has a shape, else _types (the last one that has one) decides
        self._infos: dict[str, onnx.ValueInfoProto] | None = None if model is not None else {}
        self._types: dict[str, onnx.TypeProto] | None = None
        self._inferred: onnx.GraphProto | None = None
        self._dims: dict[str, Dims] = {}
        # what the graph index already knows, so that no walk over every node asks again: no control-flow body
        # and no local function (flat), no Range node anywhere (has_range False), the model's graphs (graphs),
        # what the budget walk before the first inference counted (work: cost, nodes, bodies), and where the
        # bodies are (bodies: _body_positions)
        self._flat, self._has_range, self._graphs, self._work, self._bodies = flat, has_range, graphs, work, bodies
        self._nodes = nodes  # the nodes of the model's graphs and bodies (local functions' left out), when known

    def _over_budget(self, model: onnx.ModelProto) -> bool:
        """loading.over_inference_budget on the inferred model, without its walk where the count made before
        the first inference bounds it (loading.reinference_within_budget)."""
        from onnxlint.model import loading

        if self._nodes is not None and self._nodes > loading.inference.INFER_MAX_NODES:
            return True  # what over_inference_budget's walk would find, from the index's count
        if not self._flat and self._work is not None and self._graphs is not None \
                and loading.reinference_within_budget(self._work, self._graphs):
            return False
        return loading.over_inference_budget(model, flat=self._flat) is not None

    def _load(self) -> dict[str, onnx.ValueInfoProto]:
        model, self._model, self._infos = self._model, None, {}
        if model is None or self._over_budget(model) \
                or _data_propagation_too_costly(model, self._flat, self._has_range, self._graphs):
            return self._infos
        from onnxlint.model.loading import native

        try:  # in the native worker: data propagation's C++ crashes on models plain inference passes (onnx#5212)
            inferred = native.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
        except native.NativeCrash as exc:
            self._notes.append(f"{exc} (with data propagation): the shapes of plain inference are used instead")
            return self._infos
        except Exception:  # noqa: BLE001 - fall back to the index's shapes
            return self._infos
        self._inferred = inferred.graph
        # the last entry of each name, its shape checked when asked (the optimizer asks for a fifth of them)
        self._infos = {vi.name: vi for g in _walk_order(inferred.graph, self._flat, self._bodies)
                       for part in (g.input, g.value_info, g.output) for vi in part}
        return self._infos

    def _type(self, name: str) -> onnx.TypeProto | None:
        """_shaped_types(inferred)[name]: the last entry of that name, or, when it has no shape (a name given
        twice, the later one unshaped), the last one that has one."""
        vi = (self._infos if self._infos is not None else self._load()).get(name)
        if vi is None:
            return None
        t = vi.type
        if t.tensor_type.HasField("shape"):
            return t
        if self._types is None:
            self._types = _shaped_types(self._inferred, self._flat, self._bodies) if self._inferred is not None else {}
        return self._types.get(name)

    def get(self, name: str, default: Dims | None = None) -> Dims | None:
        got = self._dims.get(name)
        if got is None:
            t = self._type(name)
            if t is None:
                return default
            got = self._dims[name] = tuple([d.dim_value if d.WhichOneof("value") == "dim_value" else None
                                            for d in t.tensor_type.shape.dim])
        return got

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> Dims:
        got = self.get(name)
        if got is None:
            raise KeyError(name)
        return got


def refined_shapes(index: GraphIndex, notes: list[str] | None = None) -> RefinedShapes:
    return RefinedShapes(index.model, flat=len(index.scopes) == 1, has_range="Range" in index.by_op,
                         graphs=_model_graphs(index), work=index.inference_work, bodies=_body_positions(index),
                         nodes=sum(len(s.nodes) for s in index.scopes if not s.root.is_function), notes=notes)


def _body_positions(index: GraphIndex) -> Bodies | None:
    """Where the control-flow bodies of index.model are, to find them in a copy of the model (the inferred
    one: inference adds no node) without a walk over every node: (the main graph's scope, id(scope) ->
    {position of a node in that graph -> [the scopes of its bodies, in attribute order]}); None when there is
    no body. Bodies inside local functions are left out (iter_graphs does not list them)."""
    out: dict[int, dict[int, list[Any]]] = {}
    for s in index.scopes:
        owner = s.owner
        if owner is None or s.graph is None or s.root.is_function:
            continue
        around = owner.scope
        # a scope's nodes are indexed one after another (GraphIndex._walk): the first one's index is its start
        out.setdefault(id(around), {}).setdefault(owner.index - around.nodes[0].index, []).append(s)
    return (index.scopes[0], out) if out else None


def _model_graphs(index: GraphIndex) -> list[onnx.GraphProto]:
    """The graphs graph.iter_graphs(index.model) yields (the main graph and its control-flow bodies, not those
    inside a local function), read from the index's scopes instead of a walk over every node."""
    return [s.graph for s in index.scopes if s.graph is not None and not s.root.is_function]


def _shaped_types(graph: onnx.GraphProto, flat: bool = False, bodies: Bodies | None = None) -> dict[str, onnx.TypeProto]:
    """Every tensor value of graph and its subgraphs that has a shape -> its TypeProto (the last one seen, in
    the order a recursive walk visits them). flat: the caller knows graph holds no subgraph; bodies: where
    they are (_body_positions of an index of graph's model or of a copy of it)."""
    out: dict[str, onnx.TypeProto] = {}
    for g in _walk_order(graph, flat, bodies):
        for part in (g.input, g.value_info, g.output):
            # a type that is not a tensor reads an empty tensor_type, which has no shape
            out.update({vi.name: t for vi in part if (t := vi.type).tensor_type.HasField("shape")})
    return out


def _walk_order(graph: onnx.GraphProto, flat: bool = False, bodies: Bodies | None = None) -> list[onnx.GraphProto]:
    """graph and its control-flow bodies in the order a recursive walk visits them (depth first, in node and
    attribute order). A loop over a stack, not a recursive closure: a closure that calls itself is a reference
    cycle, freed only by the cyclic GC, which the linter pauses. flat: graph holds no subgraph (its nodes are
    not walked); bodies: _body_positions, which names the nodes holding one (the others are not read), unless
    graph does not match it (then every node is)."""
    if flat:
        return [graph]
    if bodies:
        found = _bodies_at(graph, bodies)
        if found is not None:
            return found
    out = []
    stack = [graph]
    while stack:
        g = stack.pop()
        out.append(g)
        subgraphs: list[onnx.GraphProto] = []
        scan_attributes(g.node, subgraphs)
        stack.extend(reversed(subgraphs))  # depth first, in order: what the recursive walk did
    return out


def _bodies_at(graph: onnx.GraphProto, bodies: Bodies) -> list[onnx.GraphProto] | None:
    """_walk_order(graph) read only at the nodes _body_positions names; None when graph's nodes there are not
    those of the index (another op, another number of bodies, a node missing)."""
    main, at = bodies
    out = []
    stack = [(graph, main)]
    while stack:
        g, scope = stack.pop()
        out.append(g)
        found: list[tuple[onnx.GraphProto, Any]] = []
        nodes = g.node
        for pos, scopes in sorted(at.get(id(scope), {}).items()):
            if pos >= len(nodes) or nodes[pos].op_type != scopes[0].owner.op_type:
                return None
            subgraphs: list[onnx.GraphProto] = []
            scan_attributes([nodes[pos]], subgraphs)
            if len(subgraphs) != len(scopes):
                return None
            found.extend(zip(subgraphs, scopes))
        stack.extend(reversed(found))
    if len(out) != 1 + sum(len(scopes) for per_graph in at.values() for scopes in per_graph.values()):
        return None  # a body the walk did not reach (its owner inside a body that is not there)
    return out



_INTEGER_TYPES = (onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.INT16, onnx.TensorProto.INT8,
                  onnx.TensorProto.UINT64, onnx.TensorProto.UINT32, onnx.TensorProto.UINT16, onnx.TensorProto.UINT8)


def _data_propagation_too_costly(model: onnx.ModelProto, flat: bool = False, has_range: bool = True,
                                 graphs: list[onnx.GraphProto] | None = None) -> bool:
    """An integer initializer, a constant Range, or a 1-D value over DATA_PROP_MAX_ELEMENTS: onnx's data
    propagation would spell it out as shape data (RefinedShapes skips the inference then). Every op with a data
    propagation function (Add, Mul, Sub, Cast, Concat, Gather, Slice, Squeeze, Unsqueeze) does so for a 1-D
    input of a known length that is not an initializer, whatever its dtype, at a cost in memory per element
    (benchmarks/README.md, "Budgets"). model is the inferred one: its value_info has the lengths
    plain inference knows, and a 1-D Reshape output of a length only data propagation would find (a flatten
    to a computed `[N]`) is sized by the Reshape's data input. A long 1-D length that only data propagation
    finds otherwise (Expand, ConstantOfShape or Range to a computed length) is not caught here: the call's memory
    limit stops it (loading.native.CALL_MEMORY, a placement note says so). flat: no subgraph
    (the main graph alone is read); has_range False: no Range node anywhere (none is looked for); graphs: the
    model's graphs as iter_graphs lists them, when known (_model_graphs)."""
    from onnxlint.model.graph import iter_graphs

    for g in ([model.graph] if flat else graphs if graphs is not None else iter_graphs(model)):
        for t in g.initializer:
            if t.data_type in _INTEGER_TYPES and math.prod(t.dims) > DATA_PROP_MAX_ELEMENTS:
                return True
        unsized: set[str] = set()  # 1-D values of a length plain inference does not know
        for part in (g.input, g.value_info, g.output):
            for vi in part:
                dims = vi.type.tensor_type.shape.dim
                if len(dims) == 1:
                    if dims[0].dim_value > DATA_PROP_MAX_ELEMENTS:
                        return True
                    if dims[0].WhichOneof("value") != "dim_value":
                        unsized.add(vi.name)
        if unsized and _long_flatten(g, unsized):
            return True
        if has_range and _long_constant_range(g):
            return True
    return False


def _long_flatten(graph: onnx.GraphProto, unsized: set[str]) -> bool:
    """A Reshape in graph whose output is one of the 1-D values `unsized` (length unknown to plain inference)
    and whose data input has more than DATA_PROP_MAX_ELEMENTS elements by its static shape: data propagation
    would learn the length and spell the value out."""
    wanted = {n.input[0] for n in graph.node if n.op_type == "Reshape" and n.input and n.output
              and n.output[0] in unsized}
    if not wanted:
        return False
    for part in (graph.input, graph.value_info, graph.output):
        for vi in part:
            if vi.name in wanted:
                dims = vi.type.tensor_type.shape.dim
                if all(d.WhichOneof("value") == "dim_value" for d in dims) \
                        and math.prod(d.dim_value for d in dims) > DATA_PROP_MAX_ELEMENTS:
                    return True
    return any(t.name in wanted and math.prod(t.dims) > DATA_PROP_MAX_ELEMENTS for t in graph.initializer)


def _long_constant_range(graph: onnx.GraphProto) -> bool:
    """A Range over constants longer than DATA_PROP_MAX_ELEMENTS: onnx's data propagation spells its whole output
    out as shape dims (gigabytes for a long one), so such a model gets no data propagation. A Range with a
    computed bound cannot be sized here and is let through (data propagation only runs on what it can compute)."""
    if not any(n.op_type == "Range" for n in graph.node):
        return False
    # an external bound is left out: onnx's data propagation cannot parse external data either (and to_array would
    # read it relative to the working folder)
    small = {t.name: t for t in graph.initializer if (len(t.dims) == 0 or (len(t.dims) == 1 and t.dims[0] == 1))
             and t.data_location != onnx.TensorProto.EXTERNAL}
    for n in graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.ByteSize() < 64 and a.t.data_location != onnx.TensorProto.EXTERNAL:
                    small[n.output[0]] = a.t
    for n in graph.node:
        if n.op_type != "Range" or len(n.input) < 3 or not all(v in small for v in n.input[:3]):
            continue
        try:
            start, limit, delta = (float(numpy_helper.to_array(small[v]).reshape(-1)[0]) for v in n.input[:3])
        except Exception:  # noqa: BLE001 - an odd tensor: cannot size it, play safe
            return True
        if delta == 0 or abs((limit - start) / delta) > DATA_PROP_MAX_ELEMENTS:
            return True
    return False

