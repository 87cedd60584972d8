"""Static model of ORT's Level-1 graph transformers, the ones that run BEFORE partitioning.

At session creation (inference_session.cc TransformGraph) ORT applies, at ORT_ENABLE_BASIC and above (the default
is ORT_ENABLE_ALL), the Level-1 transformers (onnxruntime/core/optimizer/graph_transformer_utils.cc), repeated
until nothing changes, then partitions the graph between the execution providers. Nodes these transformers
remove never reach the CUDA EP's GetCapability, so they can neither fall back to CPU nor need a Memcpy.
This module marks those nodes; `placement.simulate(..., optimization=...)` then skips them.

Modelled (read from ORT's source):
  * ConstantFolding (constant_folding.cc): a deterministic ai.onnx node, without subgraphs, whose inputs are
    all constant initializers becomes an initializer, provided a CPU kernel exists; DequantizeLinear is never
    folded (QDQ); Shape is folded when the requested dims of its input are all known, and a Gather/Slice of a
    Shape output is folded when the dims it picks are known; the node chain that only fed a folded node is
    removed with it; an If on a constant condition is inlined (its other branch dropped). Shapes are the
    ones onnx infers with data propagation, and, where those leave dims unknown, onnx's inference of the
    producer again with the folded values as input data (ORT re-runs shape inference on each node after a
    fold); folded values are computed on demand (onnx.reference, shape-sized tensors only).
  * ConstantSharing (constant_sharing.cc): initializers of <= 8 elements with the same dtype, shape and bytes
    become one, so CommonSubexpressionElimination sees them as one value. It runs once (the first step, right
    after the rule-based pass) and on the main graph only; an initializer a subgraph reads at that moment is
    left alone (verbose transformer log of 1.24.4: ConstantSharing appears in step 1 only).
  * CommonSubexpressionElimination (common_subexpression_elimination.cc): a deterministic node with the same
    op, domain, attributes and inputs as an earlier one is removed; its consumers read the earlier outputs.
  * Rewrite rules: EliminateIdentity, EliminateDropout, CastElimination (Cast to its input's type),
    UnsqueezeElimination (an Unsqueeze, axes as an attribute, of an initializer),
    NoopElimination (Add/Sub 0, Mul/Div 1, one-element constants), EliminateSlice (a Slice that keeps
    everything), ExpandElimination (a target shape the input already has), ConvBNFusion / ConvAddFusion /
    ConvMulFusion (a BatchNormalization / Add / Mul with constant per-channel operands after a Conv with
    constant weights), BatchNormalizationMulFusion / BatchNormalizationAddFusion (BatchNormalization-7).
  * MatMulAddFusion (matmul_add_fusion.cc): MatMul + Add of a bias become one Gemm.
  * TransposeOptimizer, its certain part: a Transpose cancelled by the inverse Transpose after it, directly or
    through one unary op or softmax. ReshapeFusion's contiguous Reshapes from 1.31 (measured there, not on 1.24).
  * ReshapeFusion (reshape_fusion.cc): the Shape->Gather->Unsqueeze->Concat subgraph that builds a Reshape's
    shape from its own input's dims (plus constants and at most one other value) becomes a constant; from 1.31
    a dim of another tensor counts when that one dim is known to be the same.
Not modelled: Level-2/3 fusions (they run after partitioning, on nodes already placed), the rest of the
TransposeOptimizer (pushing Transposes elsewhere), QDQ propagation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import onnx
from onnx import numpy_helper

from onnxlint.graph import scan_attributes

if TYPE_CHECKING:
    from onnxlint.graph import NodeRef

LEVELS = ("disabled", "basic", "all")
NON_DETERMINISTIC = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}
SHARE_MAX_ELEMENTS = 8  # constant_sharing.cc: only small initializers are shared
MAX_ITERATIONS = 10  # GraphTransformerManager's steps per level
# Folding a Gather/Slice of the known dims of a partly symbolic Shape ("enhanced shape constant folding") exists in
# ORT's source behind a session option; the releases measured (1.20.2, 1.24.4, 1.31.1) do not do it by default.
ENHANCED_SHAPE_FOLDING = False
SHAPE_VERSIONS = (1, 13, 15, 19, 21, 23, 24, 25)  # measured: 1.24.4 fuses Shape-15 subgraphs


@dataclass
class Removed:
    status: str  # folded | eliminated
    reason: str
    detail: str


@dataclass
class Optimized:
    level: str
    removed: dict[int, Removed] = field(default_factory=dict)  # node index -> why it is gone
    alias: dict[str, str] = field(default_factory=dict)  # value -> value its consumers read instead
    constants: set[str] = field(default_factory=set)  # values that are initializers after optimization
    shapes: dict[str, tuple] | RefinedShapes = field(default_factory=dict)  # shapes known after data propagation
    # (scope, value) -> dims as ORT knows them after folding, asked on demand (GetCpuPreferredNodes needs the size
    # of a folded input); it holds the optimizer: release() it when done (the pair is a reference cycle)
    sizer: Callable[[Any, str], Any] | None = field(default=None, repr=False, compare=False)
    # id(scope) -> ort_topological_order(scope, self) as the passes last computed it, for the graph as they left
    # it (the partitioner's queue orders by it: not computed again)
    orders: dict[int, list] = field(default_factory=dict, repr=False, compare=False)

    def release(self) -> None:
        self.sizer = None
        self.orders = {}  # read by the partitioner's queue only, before this

    def resolve(self, value: str) -> str:
        seen = 0
        while value in self.alias and seen < 100:
            value = self.alias[value]
            seen += 1
        return value

    def is_removed(self, node) -> bool:
        return node.index in self.removed


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
                 graphs: list | None = None, work: tuple[int, int, int] | None = None, bodies: tuple | None = None):
        self._model = model
        # name -> the last value_info of that name in the inferred model (None: not inferred yet); its type is
        # the answer when it has a shape, else _types (the last one that has one) decides
        self._infos: dict[str, onnx.ValueInfoProto] | None = None if model is not None else {}
        self._types: dict[str, onnx.TypeProto] | None = None
        self._inferred: onnx.GraphProto | None = None
        self._dims: dict[str, tuple] = {}
        # what the graph index already knows, so that no walk over every node asks again: no control-flow body
        # and no local function (flat), no Range node anywhere (has_range False), the model's graphs (graphs),
        # what the budget walk before the first inference counted (work: cost, nodes, bodies), and where the
        # bodies are (bodies: _body_positions)
        self._flat, self._has_range, self._graphs, self._work, self._bodies = flat, has_range, graphs, work, bodies

    def _over_budget(self, model: onnx.ModelProto) -> bool:
        """loading.over_inference_budget on the inferred model, without its walk where the count made before
        the first inference bounds it (loading.reinference_within_budget)."""
        from onnxlint import loading

        if not self._flat and self._work is not None and self._graphs is not None \
                and loading.reinference_within_budget(self._work, self._graphs):
            return False
        return loading.over_inference_budget(model, flat=self._flat) is not None

    def _load(self) -> dict[str, onnx.ValueInfoProto]:
        model, self._model, self._infos = self._model, None, {}
        if model is None or self._over_budget(model) \
                or _data_propagation_too_costly(model, self._flat, self._has_range, self._graphs):
            return self._infos
        try:
            inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
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

    def get(self, name: str, default: tuple | None = None) -> tuple | None:
        got = self._dims.get(name)
        if got is None:
            t = self._type(name)
            if t is None:
                return default
            got = self._dims[name] = tuple(d.dim_value if d.WhichOneof("value") == "dim_value" else None
                                           for d in t.tensor_type.shape.dim)
        return got

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> tuple:
        got = self.get(name)
        if got is None:
            raise KeyError(name)
        return got


def _refined_shapes(index) -> RefinedShapes:
    return RefinedShapes(index.model, flat=len(index.scopes) == 1, has_range="Range" in index.by_op,
                         graphs=_model_graphs(index), work=index.inference_work, bodies=_body_positions(index))


def _body_positions(index) -> tuple | None:
    """Where the control-flow bodies of index.model are, to find them in a copy of the model (the inferred
    one: inference adds no node) without a walk over every node: (the main graph's scope, id(scope) ->
    {position of a node in that graph -> [the scopes of its bodies, in attribute order]}); None when there is
    no body. Bodies inside local functions are left out (iter_graphs does not list them)."""
    out: dict[int, dict[int, list]] = {}
    for s in index.scopes:
        owner = s.owner
        if owner is None or s.graph is None or s.root.is_function:
            continue
        around = owner.scope
        # a scope's nodes are indexed one after another (GraphIndex._walk): the first one's index is its start
        out.setdefault(id(around), {}).setdefault(owner.index - around.nodes[0].index, []).append(s)
    return (index.scopes[0], out) if out else None


def _model_graphs(index) -> list:
    """The graphs graph.iter_graphs(index.model) yields (the main graph and its control-flow bodies, not those
    inside a local function), read from the index's scopes instead of a walk over every node."""
    return [s.graph for s in index.scopes if s.graph is not None and not s.root.is_function]


def _shaped_types(graph: onnx.GraphProto, flat: bool = False, bodies: tuple | None = None) -> dict[str, onnx.TypeProto]:
    """Every tensor value of graph and its subgraphs that has a shape -> its TypeProto (the last one seen, in
    the order a recursive walk visits them). flat: the caller knows graph holds no subgraph; bodies: where
    they are (_body_positions of an index of graph's model or of a copy of it)."""
    out: dict[str, onnx.TypeProto] = {}
    for g in _walk_order(graph, flat, bodies):
        for part in (g.input, g.value_info, g.output):
            # a type that is not a tensor reads an empty tensor_type, which has no shape
            out.update({vi.name: t for vi in part if (t := vi.type).tensor_type.HasField("shape")})
    return out


def _walk_order(graph: onnx.GraphProto, flat: bool = False, bodies: tuple | None = None) -> list:
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
        subgraphs: list = []
        scan_attributes(g.node, subgraphs)
        stack.extend(reversed(subgraphs))  # depth first, in order: what the recursive walk did
    return out


def _bodies_at(graph: onnx.GraphProto, bodies: tuple) -> list | None:
    """_walk_order(graph) read only at the nodes _body_positions names; None when graph's nodes there are not
    those of the index (another op, another number of bodies, a node missing)."""
    main, at = bodies
    out = []
    stack = [(graph, main)]
    while stack:
        g, scope = stack.pop()
        out.append(g)
        found: list[tuple] = []
        nodes = g.node
        for pos, scopes in sorted(at.get(id(scope), {}).items()):
            if pos >= len(nodes) or nodes[pos].op_type != scopes[0].owner.op_type:
                return None
            subgraphs: list = []
            scan_attributes([nodes[pos]], subgraphs)
            if len(subgraphs) != len(scopes):
                return None
            found.extend(zip(subgraphs, scopes))
        stack.extend(reversed(found))
    if len(out) != 1 + sum(len(scopes) for per_graph in at.values() for scopes in per_graph.values()):
        return None  # a body the walk did not reach (its owner inside a body that is not there)
    return out


DATA_PROP_MAX_ELEMENTS = 1 << 20
VALUE_MAX_ELEMENTS = 64  # an initializer's value is read (_small_array) up to this many elements
FOLD_EVAL_MAX_ELEMENTS = 4096  # folded values computed on demand (shape-sized tensors only)
REINFER_MAX_DEPTH = 200  # producers walked back to find a folded value (Python's recursion limit is 1000)
# ReshapeFusion fuses a Reshape/Squeeze/Unsqueeze chain ending in a static shape into one Reshape; measured on
# 1.31.1, not on 1.24.4 (releases in between not measured: left out for them)
CONTIGUOUS_RESHAPES_SINCE = (1, 31)
# ReshapeFusion's "copy this dim" (0) for Gather(Shape(x'), k) when x' is not the Reshape's input: 1.24.4 wants
# x' of the very same shape (CompareShape); 1.31.1 fuses when dim k alone is the same (measured: a qkv Reshape
# [B, T, 3, 4, C/4] of x [B, T, 64] becomes [0, 0, 3, 4, -1]); releases in between not measured
DIM_MATCH_SINCE = (1, 31)
REINFER_BUDGET = 10_000  # re-inference steps per model (a detector of a few thousand nodes needs ~3k)
FORGET_BUDGET = 100_000  # names looked at when dropping reinferred's kept answers after changes, per model
_ELEM_TYPES = {f"tensor({name.lower()})": int(num) for name, num in onnx.TensorProto.DataType.items() if num}


_INTEGER_TYPES = (onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.INT16, onnx.TensorProto.INT8,
                  onnx.TensorProto.UINT64, onnx.TensorProto.UINT32, onnx.TensorProto.UINT16, onnx.TensorProto.UINT8)


def _data_propagation_too_costly(model: onnx.ModelProto, flat: bool = False, has_range: bool = True,
                                 graphs: list | None = None) -> bool:
    """An integer initializer, a constant Range, or a 1-D value over DATA_PROP_MAX_ELEMENTS: onnx's data
    propagation would spell it out as shape data (RefinedShapes skips the inference then). Every op with a data
    propagation function (Add, Mul, Sub, Cast, Concat, Gather, Slice, Squeeze, Unsqueeze) does so for a 1-D
    input of a known length that is not an initializer, whatever its dtype: measured ~140 bytes an element (a
    5M-element graph input into an Add: +686 MB). model is the inferred one: its value_info has the lengths
    plain inference knows, and a 1-D Reshape output of a length only data propagation would find (a flatten
    to a computed `[N]`) is sized by the Reshape's data input. A long 1-D length that only data propagation
    finds otherwise (Expand, ConstantOfShape or Range to a computed length) is not caught. flat: no subgraph
    (the main graph alone is read); has_range False: no Range node anywhere (none is looked for); graphs: the
    model's graphs as iter_graphs lists them, when known (_model_graphs)."""
    from onnxlint.graph import iter_graphs

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
    out as shape dims (20M elements took 5.6 GB), so such a model gets no data propagation. A Range with a
    computed bound cannot be sized here and is let through (data propagation only runs on what it can compute)."""
    if not any(n.op_type == "Range" for n in graph.node):
        return False
    small = {t.name: t for t in graph.initializer if len(t.dims) == 0 or (len(t.dims) == 1 and t.dims[0] == 1)}
    for n in graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.ByteSize() < 64:
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


def _same_dim(x, y) -> bool:
    """Two dims ORT's shape inference knows to be equal: the same value, or the same symbolic name from the
    model. onnx's inference names the dims it cannot know (unk__N) and shares a name along one path; ORT's leaves
    them unnamed, so such a name proves nothing."""
    if isinstance(x, int):
        return x == y
    return isinstance(x, str) and x == y and bool(x) and not x.startswith("unk__")


def constant_tensor(scope, value: str) -> onnx.TensorProto | None:
    """The tensor of an initializer or of a Constant node (any of its value_* forms) visible from scope."""
    t = scope.constant(value)
    if t is not None:
        return t
    s = scope
    while s is not None:
        p = s.producer.get(value)
        if p is not None:
            if p.op_type != "Constant" or p.domain != "ai.onnx":
                return None
            return _constant_node_tensor(p.proto)
        s = s.parent
    return None


def _constant_node_tensor(proto) -> onnx.TensorProto | None:
    for a in proto.attribute:
        try:
            if a.name == "value":
                return a.t
            if a.name == "value_int":
                return numpy_helper.from_array(np.array(a.i, np.int64))
            if a.name == "value_ints":
                return numpy_helper.from_array(np.array(list(a.ints), np.int64))
            if a.name == "value_float":
                return numpy_helper.from_array(np.array(a.f, np.float32))
            if a.name == "value_floats":
                return numpy_helper.from_array(np.array(list(a.floats), np.float32))
            if a.name in ("value_string", "value_strings"):
                return onnx.helper.make_tensor("s", onnx.TensorProto.STRING, [] if a.name == "value_string" else [len(a.strings)],
                                               [a.s] if a.name == "value_string" else list(a.strings))
        except Exception:  # noqa: BLE001
            return None
    return None


def _small_array(t: onnx.TensorProto | None, limit: int = VALUE_MAX_ELEMENTS):
    if t is None:
        return None
    if math.prod(t.dims) > limit or t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    try:
        return numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - weight-less copy of a large tensor, odd dtype
        return None


def ort_topological_order(scope, opt: Optimized | None = None) -> list:
    """GraphViewer's topological order: a reverse DFS from the leaf nodes (no consumer in the graph), started
    from the last leaf, visiting each node's producers sorted by node index (pushed ascending, so the highest
    index is visited first), nodes emitted on leaving. CSE keeps the first node of this order."""
    removed = opt.removed if opt is not None else {}
    alias = opt.alias if opt is not None else {}
    resolve = opt.resolve if opt is not None else None
    nodes = [n for n in scope.nodes if n.index not in removed and not (n.op_type == "Constant" and n.domain == "ai.onnx")]
    producer = {}
    for n in nodes:
        for o in n.outputs:
            if o:
                producer[o] = n
    get = producer.get
    inputs_of: dict[int, list] = {}
    has_consumer: set[int] = set()
    for n in nodes:  # one pass, ~100 ns a value: it runs before every optimizer pass that follows a change
        ins: dict[int, NodeRef] = {}
        for v in n.inputs:
            if not v:
                continue
            if v in alias and resolve is not None:
                v = resolve(v)
            p = get(v)
            if p is not None:
                ins[p.index] = p
        if ins:
            has_consumer.update(ins)
            inputs_of[n.index] = [ins[k] for k in sorted(ins)] if len(ins) > 1 else list(ins.values())
    order: list = []
    visited: set[int] = set()
    stack = [(n, False) for n in nodes if n.index not in has_consumer]
    pop, push, emit, seen = stack.pop, stack.append, order.append, visited.add
    while stack:
        n, leave = pop()
        if leave:
            emit(n)
            continue
        i = n.index
        if i in visited:
            continue
        seen(i)
        push((n, True))
        for p in inputs_of.get(i, ()):
            if p.index not in visited:
                push((p, False))
    return order


DROPOUT_IGNORES_TRAINING_MODE_UNTIL = (1, 31)  # newest release measured; see _Optimizer._training
# CSE compares a tensor-valued attribute by its raw bytes only, before 1.31: two ConstantOfShape nodes whose
# `value` is stored in float_data stay apart on 1.20.2 and 1.24.4 and are merged on 1.31.1 (measured with ORT's
# optimized-model output on one-node-pair models; with raw_data they are merged on all three)
TYPED_TENSOR_ATTRIBUTE_CSE_SINCE = (1, 31)


_GRAPH, _GRAPHS, _TENSOR = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS, onnx.AttributeProto.TENSOR


def _cse_attributes(n, release: tuple[int, int] = (99, 0)) -> tuple | None:
    """A node's attributes as CSE compares them (sorted name, bytes), None when CSE never merges it (random
    ops, control flow, and before TYPED_TENSOR_ATTRIBUTE_CSE_SINCE a tensor attribute not stored as raw bytes)."""
    if n.op_type in NON_DETERMINISTIC:
        return None
    attrs = n.proto.attribute
    if not attrs:
        return ()
    typed = release < TYPED_TENSOR_ATTRIBUTE_CSE_SINCE
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


def _tensor_key(t: onnx.TensorProto) -> tuple:
    """A tensor attribute as CSE compares it: dtype, dims and value, not its name (measured: two ConstantOfShape
    values named differently are merged; on 1.31.1 a typed-field value and an equal raw one are too)."""
    try:
        return (t.data_type, tuple(t.dims), numpy_helper.to_array(t).tobytes())
    except Exception:  # noqa: BLE001 - an undecodable tensor: compared by its bytes
        return (t.data_type, tuple(t.dims), t.SerializeToString())


class _Optimizer:
    def __init__(self, index, level: str, has_cpu_kernel, release: tuple[int, int] = (99, 0)):
        self.index = index
        self.level = level
        self.has_cpu_kernel = has_cpu_kernel
        self.out = Optimized(level)
        self.out.shapes = _refined_shapes(index)
        self.readers: dict[str, list] = {}
        for scope in index.scopes:
            for name, nodes in scope.consumers.items():
                self.readers.setdefault(name, []).extend(nodes)
        self.ir = index.model.ir_version
        # per (scope, value): canon()'s answer; it reads only the index, never what the passes change (a weight
        # shared by every block was otherwise checked against all its readers per reader: quadratic)
        self._canon: dict[tuple[int, str], object] = {}
        self._shareable: set[str] | None = None  # main-graph initializers ConstantSharing merges (_share_once)
        # the passes' node order is recomputed only after a removal or an alias (all it depends on): a pass that
        # changed nothing hands the next one the same order (a 100k-node graph: 16 orders became ~6)
        self._changes = 0
        self._found_nothing: dict[tuple[object, int], int] = {}  # (pass, scope) -> _changes when it last found nothing
        self._orders: dict[int, tuple[int, list]] = {}
        # node index -> its attributes for CSE (None: never merged; False: not read yet); a list: 8 bytes a node
        self._cse_attrs: list[tuple | None | bool] = [False] * len(index.nodes)
        self._folded_values: dict[tuple[int, str], object] = {}  # folded_value's answers
        # reinferred's answers: (graph change count, dims or None, whether None holds only until the graph changes)
        self._reinfer: dict[tuple[int, str], tuple] = {}
        self._reinfer_steps = 0
        self._bases: dict[tuple[int, str], tuple] = {}  # _base's answers
        self._rewired_to: dict[str, list[str]] = {}  # v -> the names rewired to v (alias k -> v): resolve's chains backwards
        self._durable = DURABLE_REINFERENCE  # reinferred's "nothing new" kept until something up its inputs changes
        self._forget_steps = 0  # names _forget_reinferred looked at, against FORGET_BUDGET
        self._kept = 0  # kept "nothing new" answers in _reinfer
        self.release = release  # the ORT release modelled (major, minor); (99, 0): the newest behaviour
        self._bodies: dict[int, list] | None = None  # node -> the bodies it holds (_bodies_of)
        self._reader_ids: dict[str, set[int]] = {}  # value -> ids of the nodes in readers[value] (merges)
        # constant folding after its first run over the main graph looks again only at the nodes whose inputs
        # changed since (a value made constant or rewired: `_touch`), and at every Shape and If (their verdicts
        # read shapes and values further up); a 100k-node graph's second run over 100k nodes checked ~0
        self._fold_kind: list[int | None] = [None] * len(index.nodes)  # _FOLD_* (None: not read yet)
        self._touched: list[int] = [0] * len(index.nodes)  # node index -> when an input last changed
        self._clock = 0
        self._tracking = False  # while the main graph converges (bodies are folded whole every run)
        self._fold_started: int | None = None  # the clock when the main graph's last folding run began
        # a body node rewired while the main graph converges (an If inlined, its branch's Identity removed): a
        # main-graph reader of the If's output now reads through a body value, whose readers `readers` does not
        # follow (bodies reuse names); folding then looks at every main-graph node again, as ORT does
        self._fold_all = False

    # ------------------------------------------------------------------ value facts
    def tensor(self, scope, value: str) -> onnx.TensorProto | None:
        """The constant initializer (or Constant node value) behind a value, or None."""
        s = scope
        while s is not None:
            t = s.initializers.get(value)
            if t is not None:
                if self.ir >= 4 and s.graph is not None and value in s.inputs:
                    return None  # an initializer that is also a graph input can be overridden: not constant
                return t
            t = s.constants.get(value)
            if t is not None:
                return t
            p = s.producer.get(value)
            if p is not None:
                return _constant_node_tensor(p.proto) if p.op_type == "Constant" and p.domain == "ai.onnx" else None
            s = s.parent
        return None

    def is_constant(self, scope, value: str) -> bool:
        value = self.out.resolve(value)
        return value in self.out.constants or self.tensor(scope, value) is not None

    def shape(self, scope, value: str):
        """Dims (None where unknown): data propagation's (RefinedShapes, inferred on first use), else the index's;
        where some are unknown, what ORT's shape inference learns again after folding (`reinferred`)."""
        value = self.out.resolve(value)
        base, static = self._base(scope, value)
        if static:
            return base
        again = self.reinferred(scope, value)
        return again if again is not None else base

    def _base(self, scope, value: str) -> tuple:
        """(dims, whether every dim is a number): the index's when static, else data propagation's, else the
        index's (None where unknown). Both read only the index and data propagation's answers, which stay as
        they are while the optimizer runs: kept per value (reinferred asks again about every value up a shape
        computation after changes of the graph)."""
        key = (id(scope), value)
        got = self._bases.get(key)
        if got is None:
            dims = self._index_or_propagated_shape(scope, value)
            got = self._bases[key] = (dims, dims is not None and all(isinstance(d, int) for d in dims))
        return got

    def _index_or_propagated_shape(self, scope, value: str):
        shp = scope.type_of(value).shape
        if shp is not None and all(isinstance(d, int) for d in shp):
            return tuple(shp)  # static already: data propagation (a second inference) cannot add to it
        s = self.out.shapes.get(value)
        if s is not None:
            return s
        return None if shp is None else tuple(d if isinstance(d, int) else None for d in shp)

    def reinferred(self, scope, value: str, depth: int = 0):
        """ConstantFolding re-runs shape inference on each node after one before it was folded
        (Graph::UpdateShapeInference): a Pad whose pads were computed, a Reshape/Expand of a computed shape get
        static output shapes, which lets later Shape nodes fold. This is onnx's inference of the producer with
        the folded values as input data (infer_node_outputs), on demand; None when it learns nothing new."""
        key = (id(scope), value)
        got_before = self._reinfer.get(key)
        if got_before is not None and (got_before[1] is not None or not got_before[2] or got_before[0] == self._changes):
            # a shape learnt stays learnt; "nothing new" holds until something up its inputs changes
            # (_forget_reinferred drops it then), or, answered "for now", until the graph changes
            return got_before[1]
        self._reinfer[key] = (self._changes, None, True)  # a cycle answers None, for now
        self._reinfer_steps += 1
        if self._reinfer_steps > REINFER_BUDGET:
            return None  # bounded: a huge dynamic graph is not re-inferred node by node forever
        got, for_now = self._reinfer_node(scope, value, depth)
        if got is not None or (self._durable and not for_now):
            self._reinfer[key] = (self._changes, got, for_now)
            self._kept += got is None
        return got

    def _reinfer_node(self, scope, value: str, depth: int) -> tuple:
        """reinferred's answer for value, and whether a None answer holds only until the graph next changes (it
        met the depth limit, the budget or a cycle, itself or up its inputs) rather than until something up its
        inputs changes (`_forget_reinferred`)."""
        p = scope.producer.get(value)
        if p is None:
            return None, False
        if depth > REINFER_MAX_DEPTH:
            return None, True
        gone = self.out.removed.get(p.index)
        # a folded producer's output is an initializer now, its shape what inference gives on the folded inputs
        if (gone is not None and gone.status != "folded") or p.op_type == "Constant" \
                or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in p.proto.attribute):
            return None, False
        # first, cheaply: does any input know more than the first inference did (a folded value, a shape learnt)?
        known: dict[str, tuple] = {}
        new = for_now = False
        for v in p.inputs:
            if not v or v in known:
                continue
            r = self.out.resolve(v)
            dims, static = self._base(scope, r)
            if not static:
                better = self.reinferred(scope, r, depth + 1)
                if better is not None:
                    dims, new = better, True
                elif self._reinfer[(id(scope), r)][2]:
                    for_now = True
            if r in self.out.constants and self.tensor(scope, r) is None:
                new = True  # folded: an initializer for ORT now, with a value
            known[v] = (r, dims)
        if not new:
            return None, for_now
        types: dict[str, onnx.TypeProto] = {}
        data: dict[str, onnx.TensorProto] = {}
        for v, (r, dims) in known.items():
            elem = _ELEM_TYPES.get(scope.type_of(r).type_str or "")
            if elem is None:
                return None, for_now
            arr = self.value(scope, r)
            if arr is not None:
                data[v] = numpy_helper.from_array(np.asarray(arr), v)
            types[v] = onnx.helper.make_tensor_type_proto(elem, None if dims is None else [d if isinstance(d, int) else None
                                                                                              for d in dims])
        try:
            schema = onnx.defs.get_schema(p.op_type, p.opset, "" if p.domain == "ai.onnx" else p.domain)
            out = onnx.shape_inference.infer_node_outputs(schema, p.proto, types, data)
        except Exception:  # noqa: BLE001 - onnx cannot infer this node: nothing learnt
            return None, for_now
        t = out.get(value)
        if t is None or t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
            return None, for_now
        got = tuple(d.dim_value if d.WhichOneof("value") == "dim_value" else None for d in t.tensor_type.shape.dim)
        base = self._base(scope, value)[0]
        if base is not None and sum(isinstance(d, int) for d in got) <= sum(isinstance(d, int) for d in base):
            return None, for_now
        return got, for_now

    def _forget_reinferred(self, changed: list[str], produced_in=None) -> None:
        """reinferred's "nothing new" answers that may no longer hold after a change, dropped: those of the
        readers of the changed values (made constant or rewired; produced_in: the scope whose node producing
        them was removed, whose own answers go first), then, down the graph, of the readers of every value whose
        answer went. An answer reads its producer's state, its inputs' states (through rewiring: a name whose
        rewiring chain passes through a changed one reads the change too) and the answers of the inputs it asked
        about; an input whose answer is not kept was not asked about, so the walk stops there."""
        if not self._kept:
            return  # no kept "nothing new" answer to drop (none is kept unless _durable)
        reinfer, readers, rewired_to = self._reinfer, self.readers, self._rewired_to
        drop = [(produced_in, o) for o in changed] if produced_in is not None else []
        pending = [] if produced_in is not None else list(changed)
        expanded: set[str] = set()
        steps = self._forget_steps
        while drop or pending:
            while drop:
                scope, o = drop.pop()
                key = (id(scope), o)
                got = reinfer.get(key)
                if got is None or got[1] is not None:
                    continue  # not asked about, or a shape learnt (kept)
                del reinfer[key]
                self._kept -= not got[2]
                pending.append(o)
            while pending:
                name = pending.pop()
                if name in expanded:
                    continue
                expanded.add(name)
                steps += 1
                pending.extend(rewired_to.get(name, ()))
                drop.extend((n.scope, x) for n in readers.get(name, ()) for x in n.outputs if x)
            if steps > FORGET_BUDGET:
                # a long rewiring chain changed at its head again and again (a 20k chain of inlined Ifs): from
                # here on "nothing new" holds only until the next change, as without keeping it (bounded by
                # REINFER_BUDGET); the answers so far are dropped, the shapes learnt kept
                self._durable = False
                self._reinfer = {k: got for k, got in reinfer.items() if got[1] is not None}
                self._kept = 0
                break
        self._forget_steps = steps

    def value(self, scope, value: str):
        value = self.out.resolve(value)
        got = _small_array(self.tensor(scope, value))
        if got is None and value in self.out.constants:
            got = self.folded_value(scope, value)
        return got

    def _one_element_value(self, scope, value: str):
        """value(scope, value) when it has one element, else None: a constant of 2 to 64 elements, which value()
        would convert only to be turned down, is not converted (NoopElimination asks of every Add/Sub/Mul/Div)."""
        t = self.tensor(scope, self.out.resolve(value))
        if t is not None and t.data_location != onnx.TensorProto.EXTERNAL:
            elements = math.prod(t.dims)
            if elements != 1 and elements <= VALUE_MAX_ELEMENTS:
                return None
        got = self.value(scope, value)
        return got if got is not None and got.size == 1 else None

    def folded_value(self, scope, value: str, depth: int = 0):
        """The value of an output constant folding replaced, computed on demand from its inputs' values (small
        tensors only: what ORT's re-run shape inference and later rules read, e.g. an Expand's or a Reshape's
        shape, an If's condition). None when it cannot be had cheaply."""
        key = (id(scope), value)
        if key in self._folded_values:
            return self._folded_values[key]
        self._folded_values[key] = None  # a cycle or a failure answers None
        s, p = scope, None
        while s is not None and p is None:
            p = s.producer.get(value)
            s = s.parent
        got = None
        if p is not None and depth < 64:
            got = self._evaluate(p, value, depth)
        self._folded_values[key] = got
        return got

    def _evaluate(self, node, value: str, depth: int):
        scope = node.scope
        if node.op_type == "Shape" and node.domain == "ai.onnx":
            shp = self.shape(scope, node.inputs[0]) if node.inputs else None
            if shp is None:
                return None
            rank = len(shp)
            start, end = node.attr("start") or 0, node.attr("end")
            start = max(0, min(rank, start + rank if start < 0 else start))
            end = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
            picked = shp[start:end]
            return np.array(picked, np.int64) if all(isinstance(d, int) for d in picked) else None
        for o in node.outputs:  # sized before running anything: a ConstantOfShape or Range may ask for gigabytes
            if not o:
                continue
            dims = self.shape(scope, o)
            if dims is None or not all(isinstance(d, int) and d >= 0 for d in dims) \
                    or int(np.prod(dims, dtype=np.int64)) > FOLD_EVAL_MAX_ELEMENTS:
                return None
        feeds = {}
        for v in node.inputs:
            if not v:
                continue
            r = self.out.resolve(v)
            arr = _small_array(self.tensor(scope, r), FOLD_EVAL_MAX_ELEMENTS)
            if arr is None and r in self.out.constants:
                arr = self.folded_value(scope, r, depth + 1)
            if arr is None:
                return None
            feeds[v] = arr
        from onnxlint import fold_eval

        got = fold_eval.evaluate(node.proto, node.opset, [feeds.get(v) if v else None for v in node.inputs])
        if got is fold_eval.TOO_LARGE:
            return None  # a value_info that lies about the size: onnx.reference would try to allocate it
        if got is not None:
            outs: list = got
        else:
            outs = self._reference(node, feeds)
            if outs is None:
                return None
        names = [o for o in node.outputs if o]
        for name, arr in zip(names, outs):
            if name == value:
                arr = np.asarray(arr)
                return arr if arr.size <= FOLD_EVAL_MAX_ELEMENTS else None
        return None

    @staticmethod
    def _reference(node, feeds: dict):
        """onnx.reference for the ops fold_eval does not compute (imported only then: it costs ~50 ms)."""
        try:
            from onnx.reference import ReferenceEvaluator

            proto = onnx.NodeProto()
            proto.CopyFrom(node.proto)
            graph = onnx.helper.make_graph(
                [proto], "fold", [onnx.helper.make_tensor_value_info(k, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                                  for k, a in feeds.items()],
                [onnx.helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in node.outputs if o])
            model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(node.domain if node.domain != "ai.onnx"
                                                                                           else "", node.opset)])
            return list(ReferenceEvaluator(model).run(None, feeds))
        except Exception:  # noqa: BLE001 - an op onnx.reference cannot run: the value stays unknown
            return None

    def live(self, value: str, scope) -> bool:
        if value in scope.outputs:
            return True
        return any(not self.out.is_removed(r) for r in self.readers.get(value, ()))  # live_readers, short-circuited

    def live_readers(self, value: str) -> list:
        """The nodes still reading value (rewired ones included, removed ones not)."""
        return [r for r in self.readers.get(value, ()) if not self.out.is_removed(r)]

    # ------------------------------------------------------------------ driver
    def run(self) -> Optimized:
        if self.level == "disabled":
            return self.out
        # model-local functions are inlined at load; their copies are not indexed here
        order = [scope for scope in self.index.scopes if not scope.is_function]
        for scope in order:  # step 1 opens with the rule-based transformer, recursing into every subgraph
            self._pass(self.rewrite_rules, scope)
        self._share_once()
        self._found_nothing.clear()  # what a pass found before ConstantSharing no longer says what it would find
        for scope in order:  # a graph before its bodies: what a body sees of the graph around it is settled
            self._converge(scope)
        self.out.orders = {sid: order for sid, (changes, order) in self._orders.items() if changes == self._changes}
        # placement may still ask for shapes (out.sizer): keep what shape() reads, drop the passes' indexes
        self.readers, self._reader_ids, self._orders, self._canon, self._cse_attrs = {}, {}, {}, {}, []
        self._shareable, self._bodies = set(), None
        self.out.sizer = self.shape
        return self.out

    def _converge(self, scope) -> None:
        """One graph's passes until nothing changes (GraphTransformerManager's steps)."""
        self._tracking = scope.parent is None
        try:
            self._iterate(scope)
        finally:
            self._tracking = False

    def _iterate(self, scope) -> None:
        run = self._pass
        for _ in range(MAX_ITERATIONS):
            changed = run(self.cse, scope)
            changed |= run(self.rewrite_rules, scope)
            changed |= run(self.constant_folding, scope)
            changed |= run(self.reshape_fusion, scope)
            changed |= run(self.matmul_add_fusion, scope)
            changed |= run(self.transpose_cancel, scope)
            if self.release >= CONTIGUOUS_RESHAPES_SINCE:
                changed |= run(self.contiguous_reshapes, scope)
            if not changed:
                break

    def _pass(self, fn, scope) -> bool:
        """fn(scope), unless fn found nothing there last time and nothing has changed since: a pass reads only
        the graph and what `remove` changes (the one way a pass changes anything, counted in _changes), so it
        would find nothing again. The last round of a graph's passes, which only confirms that nothing changes,
        mostly goes (100k nodes: ~0.5 s of its ~0.9 s)."""
        key = (getattr(fn, "__func__", fn), id(scope))  # the function, not the bound method (no cycle to self)
        changes = self._changes
        if SKIP_UNCHANGED_PASSES and self._found_nothing.get(key) == changes:
            return False
        changed = fn(scope)
        if not changed and self._changes == changes:
            self._found_nothing[key] = changes
        return changed

    def _touch(self, value: str) -> None:
        """The readers of value see an input change: made constant, or rewired. Constant folding looks at them
        again (main-graph readers rewired to value included: `remove` merges them), and reinferred's answers
        that read value go."""
        if self._tracking:
            self._clock += 1
            for r in self.readers.get(value, ()):
                self._touched[r.index] = self._clock
        self._forget_reinferred([value])

    def _made_constant(self, value: str) -> None:
        self.out.constants.add(value)
        self._touch(value)

    def remove(self, node, status: str, reason: str, detail: str, alias: dict | None = None) -> None:
        self._changes += 1
        self.out.removed[node.index] = Removed(status, reason, detail)
        self._forget_reinferred([o for o in node.outputs if o], node.scope)
        for k, v in (alias or {}).items():
            if k and v and k != v:
                self.out.alias[k] = v
                self._rewired_to.setdefault(v, []).append(k)  # before _touch(k): k's rewired names read the change
                if self._tracking and node.scope.parent is not None:
                    self._fold_all = True
                self._touch(k)
                # ORT rewires k's consumers to v: later rules that count v's consumers see them. Main graph only:
                # `readers` is keyed by name, and bodies reuse names (5,000 If branches each with a `t`), so a
                # merge there would copy every body's readers each time (quadratic)
                moved = self.readers.get(k, ()) if node.scope.parent is None else ()
                if moved:
                    v = self.out.resolve(v)  # the value the consumers end up reading (an Identity chain's head)
                    have = self.readers.setdefault(v, [])
                    ids = self._reader_ids.get(v)
                    if ids is None:
                        ids = self._reader_ids[v] = {id(r) for r in have}
                    for r in moved:
                        if id(r) not in ids:
                            ids.add(id(r))
                            have.append(r)

    def nodes(self, scope) -> list:
        """The scope's live nodes in ORT's order (shared by passes between changes: never mutate it)."""
        got = self._orders.get(id(scope))
        if got is not None and got[0] == self._changes:
            return got[1]
        order = [n for n in ort_topological_order(scope, self.out) if not self.out.is_removed(n)]
        self._orders[id(scope)] = (self._changes, order)
        return order

    # ------------------------------------------------------------------ CSE (+ constant sharing)
    SHARE_TYPES = (1, 10, 11, 6, 7)  # float, float16, double, int32, int64 (constant_sharing.cc)

    def canon(self, scope, value: str):
        """What CSE compares an input by: a shared constant by its dtype, shape and bytes, anything else by name."""
        if not value:
            return ""
        value = self.out.resolve(value)
        if not self._shareable or value not in self._shareable:
            return value
        k = (id(scope), value)
        got = self._canon.get(k)
        if got is None:
            got = self._canon[k] = self._canon_of(scope, value)
        return got

    def _canon_of(self, scope, value: str):
        t = self.tensor(scope, value)
        if t is not None:
            arr = _small_array(t, SHARE_MAX_ELEMENTS)
            return value if arr is None else ("const", t.data_type, tuple(t.dims), arr.tobytes())
        arr = self.value(scope, value)  # an initializer the first rule pass made (UnsqueezeElimination)
        if arr is None or arr.size > SHARE_MAX_ELEMENTS:
            return value
        try:
            dtype = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
        except (KeyError, TypeError, ValueError):
            return value
        return value if dtype not in self.SHARE_TYPES else ("const", dtype, tuple(arr.shape), arr.tobytes())

    def _share_once(self) -> None:
        """ConstantSharing as ORT applies it: once (ShouldOnlyApplyOnce), in the first step right after the
        rule-based pass, on the main graph only (it does not recurse into subgraphs), over the initializers
        there at that moment (those the rules just made included). One a subgraph still reads then (an implicit
        input of an If/Loop, directly or through a body node a rule bypassed; PrepareInputPortsToReplace) is
        never shared, even when that reader is folded later; one whose only subgraph reader a rule of the first
        pass removed (UnsqueezeElimination in a branch) is."""
        main = next((s for s in self.index.scopes if s.parent is None and not s.is_function), None)
        self._shareable = set()
        if main is None:
            return
        body_reads = {self.out.resolve(v) for s in self.index.scopes if s is not main and not s.is_function
                      for n in s.nodes if not self.out.is_removed(n) for v in n.inputs if v}
        made = [v for v in self.out.constants if v in main.producer]  # folded by the first rule pass
        for value in (*main.initializers, *main.constants, *made):
            if value in main.outputs or value in body_reads:
                continue
            t = self.tensor(main, value)
            if t is not None and t.data_type not in self.SHARE_TYPES:
                continue
            self._shareable.add(value)
        self._canon.clear()

    def cse(self, scope) -> bool:
        seen: dict[tuple, NodeRef] = {}
        changed = False
        for n in self.nodes(scope):
            attrs = self._cse_attrs[n.index]
            if attrs is False:
                attrs = self._cse_attrs[n.index] = _cse_attributes(n, self.release)
            if attrs is None:
                continue
            key = (n.domain, n.op_type, n.opset, attrs, tuple(self.canon(scope, v) for v in n.inputs), len(n.outputs))
            first = seen.get(key)
            if first is None:
                seen[key] = n
                continue
            if any(o in scope.outputs for o in n.outputs if o):
                continue  # a graph output keeps its producer
            self.remove(n, "eliminated", "cse", f"duplicate of {first.name or first.op_type}: ORT's common-subexpression elimination "
                        f"removes it", dict(zip(n.outputs, first.outputs)))
            changed = True
        return changed

    # ------------------------------------------------------------------ rewrite rules
    def _can_remove(self, scope, node, replaced_by_initializer: bool = False) -> bool:
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
        edges = sum(1 for v in ins if self._is_edge(scope, v))
        return edges == 1 or (edges == 0 and len(ins) == 1)

    def _is_edge(self, scope, value: str) -> bool:
        """Whether value reaches its reader along a graph edge: produced by a node of this graph that is still
        there (a folded node's output is an initializer now)."""
        r = self.out.resolve(value)
        if r in self.out.constants or self.tensor(scope, r) is not None:
            return False  # folded, an initializer, or a Constant node's output (ORT makes those initializers)
        p = scope.producer.get(r)
        return p is not None and not self.out.is_removed(p)

    def _bypass_ok(self, scope, node) -> bool:
        """graph_utils::CanRemoveNode: a node whose output is a graph output can only go when its input can take
        over that name (produced by a node of this graph, used nowhere else)."""
        out = node.outputs[0] if node.outputs else ""
        if out not in scope.outputs:
            return True
        src = self.out.resolve(node.inputs[0]) if node.inputs else ""
        if not src or src not in scope.producer or src in scope.outputs:
            return False
        return len(self.live_readers(src)) == 1

    def rewrite_rules(self, scope) -> bool:
        changed = False
        for n in self.nodes(scope):
            if n.domain != "ai.onnx" or not n.inputs or not n.outputs:
                continue
            op = n.op_type
            why = None
            if op == "Identity" and self._bypass_ok(scope, n):
                why = ("identity", "Identity: ORT's EliminateIdentity removes it")
            elif op == "Dropout" and (len(n.outputs) < 2 or not n.outputs[1] or not self.live(n.outputs[1], scope)) \
                    and self._can_remove(scope, n) and not self._training(scope, n):
                why = ("dropout", "Dropout at inference: ORT's EliminateDropout removes it")
            elif op == "Cast" and self._can_remove(scope, n):
                src = scope.type_of(n.inputs[0]).dtype
                dst = scope.type_of(n.outputs[0]).dtype
                if src and dst and src == dst:
                    why = ("cast", f"Cast to its input's own type ({src}): ORT's CastElimination removes it")
            elif op in ("Add", "Sub", "Mul", "Div") and len(n.inputs) == 2 and self._can_remove(scope, n) \
                    and (why := self._noop(scope, n)) is not None:
                pass  # why is set; an Add or Mul that is no no-op goes on to the fusions below
            elif op == "Unsqueeze" and len(n.inputs) == 1 and n.attr("axes") is not None \
                    and self._can_remove(scope, n, replaced_by_initializer=True) \
                    and self.tensor(scope, self.out.resolve(n.inputs[0])) is not None:
                # UnsqueezeElimination (axes as an attribute, opset < 13): an Unsqueeze of an initializer, from this
                # graph or an outer one, becomes an initializer
                self.remove(n, "folded", "unsqueeze",
                            "Unsqueeze of an initializer: ORT's UnsqueezeElimination replaces it by an initializer")
                self._made_constant(n.outputs[0])
                changed = True
                continue
            elif op == "Slice" and self._can_remove(scope, n):
                why = self._noop_slice(scope, n)
            elif op == "Expand" and len(n.inputs) == 2 and self._can_remove(scope, n):
                why = self._noop_expand(scope, n)
            elif op in ("BatchNormalization", "Add", "Mul"):
                why = self._conv_fusion(scope, n)
                if why is None and op in ("Add", "Mul"):
                    why = self._bn_fusion(scope, n)
            if why is None:
                continue
            reason, detail = why
            if reason.startswith("fusion"):
                conv = scope.producer[self.out.resolve(n.inputs[0])]
                self.remove(n, "eliminated", "fusion", detail, {n.outputs[0]: conv.outputs[0]})
            else:
                keep = n.inputs[0]
                if reason == "noop" and self.is_constant(scope, n.inputs[0]):
                    keep = n.inputs[1]  # 0 + x: the consumers read x (RemoveNode follows the one input edge)
                self.remove(n, "eliminated", reason, detail, {n.outputs[0]: keep})
            changed = True
        return changed

    def _training(self, scope, n) -> bool:
        """A Dropout EliminateDropout keeps for its training_mode input. Up to 1.31 it never looks at that input
        (measured: a training-mode Dropout with a constant True is gone at default options on 1.20.2, 1.24.4 and
        1.31.1, so ORT's outputs there are deterministic while every other runtime's are random); later sources
        keep one whose training_mode is not a constant false."""
        if self.release <= DROPOUT_IGNORES_TRAINING_MODE_UNTIL:
            return False
        if len(n.inputs) >= 3 and n.inputs[2]:
            v = self.value(scope, n.inputs[2])
            return v is None or bool(np.asarray(v).reshape(-1)[0])
        return False

    def _noop(self, scope, n):
        """NoopElimination: x+0, 0+x, x-0, x*1, 1*x, x/1 where the other operand already has the output's shape."""
        op = n.op_type
        ident = 0 if op in ("Add", "Sub") else 1
        sides = (0, 1) if op in ("Add", "Mul") else (1,)
        out_shape: tuple | None = None
        for k in sides:
            c = self._one_element_value(scope, n.inputs[k])
            if c is None or c.reshape(-1)[0] != ident:
                continue  # noop_elimination.cc: a one-element initializer only
            if out_shape is None:  # asked only here: a shape may start data propagation (RefinedShapes)
                out_shape = self.shape(scope, n.outputs[0])
            other = n.inputs[1 - k]
            oshape = self.shape(scope, other)
            if self.is_constant(scope, other):
                continue
            if oshape is None or c.ndim > len(oshape) or (  # NodeArg::Shape() null: rank unknown, kept
                    out_shape is not None and oshape != out_shape):
                continue
            if scope.type_of(n.inputs[k]).dtype != scope.type_of(other).dtype:
                continue
            return ("noop", f"{op} by the constant {ident}: ORT's NoopElimination removes it")
        return None

    def _noop_expand(self, scope, n):
        """expand_elimination.cc: a constant int64 target shape no longer than the input's rank whose every
        trailing entry is 1 or the input's (known) dim."""
        ishape = self.shape(scope, n.inputs[0])
        v = self.value(scope, n.inputs[1])
        if ishape is None or v is None or v.dtype != np.int64 or v.ndim != 1 or v.size == 0 or v.size > len(ishape):
            return None
        for d, t in zip(reversed(ishape), reversed([int(x) for x in v])):
            if t > 1 and d != t:
                return None
        if all(int(x) == 1 for x in v):
            return ("expand", "Expand to a shape of ones: ORT's ExpandElimination removes it")
        return ("expand", "Expand to the shape its input already has: ORT's ExpandElimination removes it")

    def _noop_slice(self, scope, n):
        if len(n.inputs) < 3:
            return None
        starts, ends = self.value(scope, n.inputs[1]), self.value(scope, n.inputs[2])
        steps = self.value(scope, n.inputs[4]) if len(n.inputs) > 4 and n.inputs[4] else None
        if starts is None or ends is None or (len(n.inputs) > 4 and n.inputs[4] and steps is None):
            return None
        if np.all(starts == 0) and np.all(ends >= np.iinfo(np.int32).max) and (steps is None or np.all(steps == 1)):
            return ("slice", "Slice that keeps every element: ORT's EliminateSlice removes it")
        return None

    def _conv_fusion(self, scope, n):
        src = self.out.resolve(n.inputs[0])
        conv = scope.producer.get(src)
        if conv is None or conv.op_type != "Conv" or conv.domain != "ai.onnx" or self.out.is_removed(conv):
            return None
        if len(conv.inputs) < 2 or not self.is_constant(scope, conv.inputs[1]):
            return None
        if len(conv.inputs) > 2 and conv.inputs[2] and not self.is_constant(scope, conv.inputs[2]):
            return None
        if src in scope.outputs or len(self.live_readers(src)) != 1:
            return None
        if n.op_type == "BatchNormalization":
            if len(n.outputs) > 1 and any(o for o in n.outputs[1:]):
                return None
            if not all(v and self.is_constant(scope, v) for v in n.inputs[1:5]):
                return None
            return ("fusion-bn", "BatchNormalization after a Conv: ORT's ConvBNFusion folds it into the Conv")
        other = n.inputs[1] if len(n.inputs) > 1 else ""
        if not other or not self.is_constant(scope, other):
            return None
        shp = self.shape(scope, other)
        wshape = self.shape(scope, conv.inputs[1])
        if shp is None or wshape is None or not wshape or wshape[0] is None:
            return None
        dims = [d for d in shp]
        # per-channel [C,1,1] or [1,C,1,1] (or a scalar for Mul/Add of rank 1 shapes)
        ok = len(dims) >= 1 and dims.count(1) >= len(dims) - 1 and (wshape[0] in dims or all(d == 1 for d in dims))
        if not ok:
            return None
        name = "ConvAddFusion" if n.op_type == "Add" else "ConvMulFusion"
        return ("fusion-" + n.op_type.lower(), f"{n.op_type} of a per-channel constant after a Conv: ORT's {name} folds it into the Conv")

    def _bn_fusion(self, scope, n):
        """BatchNormalizationMulFusion / BatchNormalizationAddFusion (bn_mul_fusion.cc, bn_add_fusion.cc): a Mul /
        Add by a per-channel float constant right after a BatchNormalization with constant scale and B, whose
        only reader it is, is folded into the BatchNormalization's scale and B. BatchNormalization-7 and Mul-7 /
        Add-7 only (measured: a BatchNormalization-9 keeps its Mul and Add)."""
        src = self.out.resolve(n.inputs[0])
        bn = scope.producer.get(src)
        if bn is None or not self._is(bn, "BatchNormalization", (7,)) or self._since(n) != 7:
            return None
        if sum(len(self.live_readers(o)) for o in bn.outputs if o) != 1 \
                or any(o in scope.outputs for o in bn.outputs if o):
            return None
        if len(n.inputs) < 2 or not n.inputs[1] or not self.is_constant(scope, n.inputs[1]) \
                or any(o in scope.outputs for o in n.outputs if o):
            return None
        if len(bn.inputs) < 3 or not all(self.is_constant(scope, v) for v in bn.inputs[1:3]):
            return None
        floats = ("tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)")
        types = {scope.type_of(v).type_str for v in (n.inputs[1], bn.inputs[2])}
        if len(types) != 1 or not types <= set(floats) or (n.op_type == "Mul" and scope.type_of(bn.inputs[1]).type_str not in types):
            return None
        scale, bias, other = (self.shape(scope, v) for v in (bn.inputs[1], bn.inputs[2], n.inputs[1]))
        if scale is None or bias is None or other is None or len(scale) != 1 or len(bias) != 1:
            return None
        if n.op_type == "Mul" and len(other) == 0:
            ok = True  # a scalar scales every channel
        elif 3 <= len(other) <= 4:
            axis = len(other) - 3
            ok = other[axis] == scale[0] and all(d == 1 for i, d in enumerate(other) if i != axis)
        else:
            ok = False
        if not ok:
            return None
        rule = "BatchNormalizationMulFusion" if n.op_type == "Mul" else "BatchNormalizationAddFusion"
        return ("fusion-bn-" + n.op_type.lower(),
                f"{n.op_type} of a per-channel constant after a BatchNormalization: ORT's {rule} folds it into it")

    # ------------------------------------------------------------------ TransposeOptimizer (cancellation only)
    _PUSH_THROUGH = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Erf", "Softplus",
                     "Softsign", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign", "Not", "Identity", "Cast", "LeakyRelu",
                     "Elu", "Selu", "HardSigmoid", "IsNaN", "IsInf"}
    _AXIS_OPS = {"Softmax", "LogSoftmax", "Hardmax"}  # single-axis since opset 13: the axis is remapped

    def transpose_cancel(self, scope) -> bool:
        """The part of ORT's TransposeOptimizer (Level 1) that is certain: a Transpose whose output reaches, through
        one unary elementwise op or a Softmax/LogSoftmax/Hardmax (opset 13+), a Transpose with the inverse
        permutation is pushed through and cancels it; both go. (Pushing Transposes further, where ORT creates new
        Transpose nodes elsewhere, is not modelled.)"""
        changed = False
        for t1 in self.nodes(scope):
            if not self._is_transpose(t1) or self.out.is_removed(t1):
                continue
            mid, t2 = self._single_reader(scope, t1.outputs[0]), None
            if mid is None:
                continue
            if self._is_transpose(mid):
                mid, t2 = None, mid
            elif mid.domain == "ai.onnx" and (mid.op_type in self._PUSH_THROUGH or (
                    mid.op_type in self._AXIS_OPS and mid.opset >= 13)) and len(mid.outputs) == 1:
                t2 = self._single_reader(scope, mid.outputs[0])
            if t2 is None or not self._is_transpose(t2) or t2.outputs[0] in scope.outputs:
                continue
            p1, p2 = t1.attr("perm"), t2.attr("perm")
            if not p1 or not p2 or len(p1) != len(p2) or [p1[i] for i in p2] != list(range(len(p1))):
                continue
            detail = "Transpose cancelled by the inverse Transpose after it: ORT's TransposeOptimizer removes both"
            if mid is None:
                self.remove(t1, "eliminated", "fusion", detail)
                self.remove(t2, "eliminated", "fusion", detail, {t2.outputs[0]: t1.inputs[0]})
            else:
                self.remove(t1, "eliminated", "fusion", detail, {t1.outputs[0]: t1.inputs[0]})
                self.remove(t2, "eliminated", "fusion", detail, {t2.outputs[0]: mid.outputs[0]})
            changed = True
        return changed

    def _is_transpose(self, n) -> bool:
        return n is not None and n.op_type == "Transpose" and n.domain == "ai.onnx" and len(n.inputs) == 1 \
            and len(n.outputs) == 1 and bool(n.outputs[0])

    def _single_reader(self, scope, value: str):
        """The one live node reading value in this graph (None: several, none, or a graph output)."""
        if not value or value in scope.outputs:
            return None
        readers = self.live_readers(value)
        return readers[0] if len(readers) == 1 and readers[0].scope is scope else None

    # ------------------------------------------------------------------ ReshapeFusion: contiguous reshapes
    _RESHAPE_LIKE = ("Reshape", "Squeeze", "Unsqueeze")

    def contiguous_reshapes(self, scope) -> bool:
        """FuseContiguousReshapes: Reshape/Squeeze/Unsqueeze nodes in a row, each the only reader of the one before,
        whose last output has a static shape, become one Reshape (`<first>_new_reshape`). The first node stands for
        it here; the others go."""
        changed = False
        for first in self.nodes(scope):
            if not self._reshape_like(first) or first.op_type != "Reshape" or self.out.is_removed(first):
                continue  # measured: a run that starts with Squeeze/Unsqueeze (small shape tensors) stays
            before = scope.producer.get(self.out.resolve(first.inputs[0]))
            if self._reshape_like(before) and not self.out.is_removed(before) \
                    and self._single_reader(scope, before.outputs[0]) is first:
                continue  # not the head of its chain
            chain = [first]
            while True:
                nxt = self._single_reader(scope, chain[-1].outputs[0])
                if not self._reshape_like(nxt) or nxt.inputs[0] != chain[-1].outputs[0]:
                    break
                chain.append(nxt)
            if len(chain) < 2:
                continue
            last = chain[-1].outputs[0]
            dims = self.shape(scope, last)
            if dims is None or not all(isinstance(d, int) and d >= 0 for d in dims):
                continue
            for m in chain[1:]:
                self.remove(m, "eliminated", "fusion",
                            f"{m.op_type} after {chain[0].op_type}: ORT's ReshapeFusion makes the run one Reshape",
                            {m.outputs[0]: first.outputs[0]})
            changed = True
        return changed

    def _reshape_like(self, n) -> bool:
        return n is not None and n.op_type in self._RESHAPE_LIKE and n.domain == "ai.onnx" and bool(n.inputs) \
            and len(n.outputs) == 1 and bool(n.outputs[0])

    # ------------------------------------------------------------------ MatMulAddFusion
    def _dims(self, scope, value: str) -> tuple | None:
        """Dims as ORT's inference has them: numbers where known (data propagation included), else the symbol."""
        declared = scope.type_of(self.out.resolve(value)).shape
        refined = self.shape(scope, value)
        if declared is None:
            return refined
        if refined is None or len(refined) != len(declared):
            return declared
        return tuple(r if isinstance(r, int) else d for r, d in zip(refined, declared))

    def matmul_add_fusion(self, scope) -> bool:
        """matmul_add_fusion.cc: MatMul (1/9/13) whose only reader is an Add (7/13/14), float/float16/bfloat16,
        B of rank 2 with the bias (N), (1, N), (M, 1) or (M, N); an A of another rank needs a static shape (ORT
        reshapes around the Gemm), and the attention pattern (MatMuls after a LayerNormalization) is left for
        AttentionFusion. Both nodes become one Gemm; here the MatMul stands for it (placed as MatMul would be:
        Gemm has a CUDA kernel for each of these types) and the Add is removed."""
        changed = False
        for mm in self.nodes(scope):
            if not self._is(mm, "MatMul", (1, 9, 13)) or len(mm.inputs) < 2 or not mm.outputs or not mm.outputs[0]:
                continue
            out = mm.outputs[0]
            if out in scope.outputs:
                continue
            readers = self.live_readers(out)
            if len(readers) != 1 or sum(1 for v in readers[0].inputs if v and self.out.resolve(v) == out) != 1:
                continue
            add = readers[0]
            if not self._is(add, "Add", (7, 13, 14)) or add.scope is not scope or len(add.inputs) != 2:
                continue
            mtype = scope.type_of(mm.inputs[0]).type_str
            if mtype != scope.type_of(add.inputs[0]).type_str or mtype not in ("tensor(float)", "tensor(float16)",
                                                                                "tensor(bfloat16)"):
                continue
            a, b = self._dims(scope, mm.inputs[0]), self._dims(scope, mm.inputs[1])
            if a is None or b is None or len(b) != 2:
                continue
            need_reshape = len(a) != 2
            if need_reshape:
                if self._attention_input(scope, mm) or not all(isinstance(d, int) and d >= 0 for d in a) \
                        or not all(isinstance(d, int) for d in b):
                    continue
            bias_v = add.inputs[1] if self.out.resolve(add.inputs[0]) == out else add.inputs[0]
            bias = self._dims(scope, bias_v)
            n = b[1]

            def same(x, y) -> bool:
                return x is not None and x == y

            if bias is None:
                continue
            valid = (len(bias) == 1 and same(bias[0], n)) or (
                not need_reshape and len(bias) == 2 and bias[0] == 1 and same(bias[1], n)) or (
                not need_reshape and len(bias) == 2 and same(bias[0], a[0]) and (bias[1] == 1 or same(bias[1], n)))
            if not valid:
                continue
            # the MatMul stands for the Gemm (same inputs, placed where MatMul would be); the Add goes
            self.remove(add, "eliminated", "fusion",
                        "Add of a bias after a MatMul: ORT's MatMulAddFusion makes them one Gemm",
                        {add.outputs[0]: out})
            changed = True
        return changed

    def _attention_input(self, scope, mm) -> bool:
        """AttentionPatternCache: A comes from a LayerNormalization read by exactly one Add, three MatMuls and
        otherwise only Shape nodes."""
        ln = scope.producer.get(self.out.resolve(mm.inputs[0]))
        if ln is None or ln.op_type != "LayerNormalization" or not ln.outputs:
            return False
        readers = [r for o in ln.outputs if o for r in self.live_readers(o)]
        kinds = [r.op_type for r in readers]
        return kinds.count("Add") == 1 and kinds.count("MatMul") == 3 and kinds.count("Shape") == len(kinds) - 4

    # ------------------------------------------------------------------ ReshapeFusion
    def _since(self, n) -> int | None:
        from onnxlint import schemas

        return schemas.since_version(n.op_type, n.opset, n.domain)

    def _is(self, n, op, versions) -> bool:
        return n is not None and n.op_type == op and n.domain == "ai.onnx" and not self.out.is_removed(n) \
            and self._since(n) in versions

    def _prod(self, scope, v):
        return scope.producer.get(self.out.resolve(v)) if v else None

    def _one_element(self, scope, v) -> bool:
        shp = self.shape(scope, v)
        return shp is not None and all(isinstance(d, int) for d in shp) and int(np.prod(shp)) == 1

    def reshape_fusion(self, scope) -> bool:
        """reshape_fusion.cc (Reshape 5/13/14 only): Reshape(x, Concat(...)) where each Concat input is a constant,
        Unsqueeze(axes attribute [0])(Gather(Shape(x'), i)) for its position i with x' = x or of x's known shape
        (becomes 0, "copy the dim"), or one computed one-element value (becomes -1; at most one -1): the Concat
        becomes a constant and the nodes that only fed it go (RemoveNodesWithOneOutputBottomUp)."""
        changed = False
        for r in self.nodes(scope):
            if not self._is(r, "Reshape", (5, 13, 14)) or len(r.inputs) < 2:
                continue
            shp = self.out.resolve(r.inputs[1])
            c = scope.producer.get(shp)
            if not self._is(c, "Concat", (1, 4, 11, 13)) or (c.attr("axis") or 0) != 0:
                continue
            if shp in scope.outputs or len(self.live_readers(shp)) != 1:
                continue  # CheckOutputEdges(concat, 1), counted through eliminated Identities
            root = self.out.resolve(r.inputs[0])
            values: list = []
            ok = True
            for v in c.inputs:
                if self.is_constant(scope, v):
                    arr = self.value(scope, v)
                    values.extend([int(x) for x in np.asarray(arr).reshape(-1)] if arr is not None else [None])
                elif self._copies_dim(scope, v, root, len(values)):
                    values.append(0)
                elif self._one_element_subgraph(scope, v, root):
                    values.append(-1)
                else:
                    ok = False
                    break
            if not ok or values.count(-1) > 1:
                continue
            self.remove(c, "eliminated", "fusion", "Concat building a Reshape's shape: ORT's ReshapeFusion replaces it by a constant")
            self._drop_dead_producers(scope, c, "ReshapeFusion")
            changed = True
        return changed

    def _unsqueeze0(self, n) -> bool:
        if not self._is(n, "Unsqueeze", (1, 11, 13, 21, 23, 24, 25)):
            return False
        if n.has_attr("axes"):
            return list(n.attr("axes") or []) == [0]
        axes = self.value(n.scope, n.inputs[1]) if len(n.inputs) > 1 and n.inputs[1] else None  # Unsqueeze-13+: an input
        return axes is not None and [int(x) for x in np.asarray(axes).reshape(-1)] == [0]

    def _copies_dim(self, scope, v, root, k, check_only=False) -> bool:
        u = self._prod(scope, v)
        if not self._unsqueeze0(u):
            return False
        g = self._prod(scope, u.inputs[0])
        if not self._is(g, "Gather", (1, 11, 13)) or len(g.inputs) < 2:
            return False
        sh = self._prod(scope, g.inputs[0])
        if not self._is(sh, "Shape", SHAPE_VERSIONS):
            return False
        if check_only:
            return self._one_element(scope, g.inputs[1])
        idx = self.value(scope, g.inputs[1])
        if idx is None or idx.size != 1 or int(idx.reshape(-1)[0]) != k:
            return False
        src = self.out.resolve(sh.inputs[0])
        if src == root:
            return True
        # optimizer_utils::CompareShape: same rank, every dim the same value or the same symbolic name
        a, b = scope.type_of(src).shape, scope.type_of(root).shape
        if a is None or b is None:
            return False
        if self.release >= DIM_MATCH_SINCE:
            return k < len(a) and k < len(b) and _same_dim(a[k], b[k])
        return len(a) == len(b) and all(_same_dim(x, y) for x, y in zip(a, b))

    def _slice_of_shape(self, scope, v, root) -> bool:
        """Shape(root) -> Slice to one element -> Squeeze."""
        q = self._prod(scope, v)
        if not self._is(q, "Squeeze", (1, 11, 13)):
            return False
        sl = self._prod(scope, q.inputs[0])
        if not self._is(sl, "Slice", (1, 11, 13)):
            return False
        sh = self._prod(scope, sl.inputs[0])
        if not self._is(sh, "Shape", SHAPE_VERSIONS) or self.out.resolve(sh.inputs[0]) != root:
            return False
        if len(sl.inputs) >= 3:
            st, en = self.value(scope, sl.inputs[1]), self.value(scope, sl.inputs[2])
        else:
            st, en = np.array(sl.attr("starts") or []), np.array(sl.attr("ends") or [])
        if st is None or en is None or st.size != 1 or en.size != 1:
            return False
        a, b = int(st.reshape(-1)[0]), int(en.reshape(-1)[0])
        return (b >= 2**31 - 1 and a == -1) or abs(b - a) == 1

    def _one_element_subgraph(self, scope, v, root) -> bool:
        if self._one_element(scope, v) or self._copies_dim(scope, v, root, 0, check_only=True):
            return True
        u = self._prod(scope, v)
        if not self._unsqueeze0(u):
            return False
        b = self._prod(scope, u.inputs[0])
        if self._is(b, "Div", (7, 13, 14)) or self._is(b, "Mul", (7, 13, 14)):
            return all(self._one_element(scope, x) or self._slice_of_shape(scope, x, root) for x in b.inputs)
        return self._one_element(scope, u.inputs[0]) or self._slice_of_shape(scope, u.inputs[0], root)

    def _drop_dead_producers(self, scope, n, by: str) -> None:
        for v in n.inputs:
            v = self.out.resolve(v) if v else v
            p = scope.producer.get(v) if v else None
            if p is None or self.out.is_removed(p) or (p.op_type == "Constant" and p.domain == "ai.onnx"):
                continue
            if any(o and self.live(o, scope) for o in p.outputs):
                continue
            self.remove(p, "eliminated", "fusion", f"{p.op_type} only computed a Reshape's shape: removed by ORT's {by}")
            self._drop_dead_producers(scope, p, by)

    # ------------------------------------------------------------------ constant folding
    def constant_folding(self, scope) -> bool:
        changed = False
        since = None
        if self._tracking and INCREMENTAL_FOLDING:  # the main graph: after its first run, a node whose inputs did not change is skipped
            since, self._fold_started = (None if self._fold_all else self._fold_started), self._clock
        kinds, touched = self._fold_kind, self._touched
        for n in self.nodes(scope):
            kind = kinds[n.index]
            if kind is None:
                kind = kinds[n.index] = _fold_kind(n)
            if kind == _FOLD_NEVER or self.out.is_removed(n):
                continue
            if kind == _FOLD_SHAPE:
                changed |= self._fold_shape(scope, n)
                continue
            if kind == _FOLD_IF:
                changed |= self._fold_if(scope, n)
                continue
            if since is not None and touched[n.index] <= since:
                continue  # not foldable when last looked at, and no input changed since
            ins = [v for v in n.inputs if v]
            if not ins or not all(self.is_constant(scope, v) for v in ins):
                continue
            if any(scope.type_of(o).type_str and not scope.type_of(o).type_str.startswith("tensor(") for o in n.outputs if o):
                continue
            if not self.has_cpu_kernel(n):
                continue
            self._fold(scope, n, "constant-folding",
                       f"{n.op_type} of constant inputs: ORT's constant folding replaces it by an initializer")
            changed = True
        return changed

    def _fold_if(self, scope, n) -> bool:
        """ConstantFoldIfNode: an If whose condition is a constant is replaced by the nodes of the branch it takes
        (Graph::InlineIfSubgraph, under new names); the other branch is dropped. The taken branch's nodes keep
        their placement here: they run, in the enclosing graph."""
        cond = self.value(scope, n.inputs[0]) if n.inputs and n.inputs[0] else None
        if cond is None or cond.size != 1:
            return False
        taken = "then_branch" if bool(np.asarray(cond).reshape(-1)[0]) else "else_branch"
        branches = {s.path.rsplit(":", 1)[-1]: s for s in self._bodies_of(n)}
        if taken not in branches:
            return False
        self.remove(n, "folded", "if-constant",
                    f"If on a constant condition: ORT's constant folding inlines its {taken} and drops the other branch",
                    dict(zip(n.outputs, branches[taken].outputs)))
        kept = branches[taken]
        for m in kept.nodes:  # inlined, an Identity is an ordinary node again: EliminateIdentity removes it
            if m.op_type == "Identity" and m.domain == "ai.onnx" and m.inputs and m.outputs and not self.out.is_removed(m):
                pos = kept.outputs.index(m.outputs[0]) if m.outputs[0] in kept.outputs else -1
                if pos >= 0 and pos < len(n.outputs) and n.outputs[pos] in scope.outputs:
                    continue  # it would produce the enclosing graph's output
                self.remove(m, "eliminated", "identity", "Identity of an If branch ORT inlines: EliminateIdentity removes it",
                            {m.outputs[0]: m.inputs[0]})
        dropped = [s for k, s in branches.items() if k != taken]
        while dropped:
            s = dropped.pop()
            for m in s.nodes:
                if not self.out.is_removed(m):
                    self.remove(m, "eliminated", "if-constant", "in the If branch ORT's constant folding drops")
            dropped.extend(b for m in s.nodes for b in self._bodies_of(m))
        return True

    def _bodies_of(self, node) -> list:
        """The graph bodies a node holds (If branches, a Loop body), from a map built once."""
        if self._bodies is None:
            self._bodies = {}
            for s in self.index.scopes:
                if s.owner is not None:
                    self._bodies.setdefault(id(s.owner), []).append(s)
        return self._bodies.get(id(node), [])

    def _fold(self, scope, n, reason: str, detail: str) -> None:
        self.remove(n, "folded", reason, detail)
        for o in n.outputs:
            if o:
                self._made_constant(o)
        if reason != "shape-folding":
            # a Shape's input producer stays (measured: ORT keeps the Transpose/Reshape feeding a folded Shape)
            self._drop_dead_inputs(scope, n)

    def _drop_dead_inputs(self, scope, n) -> None:
        """graph_utils::RemoveNodesWithOneOutputBottomUp: producers that only fed the folded node go too."""
        for v in n.inputs:
            v = self.out.resolve(v) if v else v
            p = scope.producer.get(v) if v else None
            if p is None or self.out.is_removed(p) or len([o for o in p.outputs if o]) != 1 or self.live(v, scope):
                continue
            self.remove(p, "folded", "constant-folding", f"{p.op_type} only fed nodes ORT's constant folding replaced; removed with them")
            self._drop_dead_inputs(scope, p)

    def _fold_shape(self, scope, n) -> bool:
        shp = self.shape(scope, n.inputs[0]) if n.inputs else None
        if shp is None:
            return False
        rank = len(shp)
        start = n.attr("start") or 0
        end = n.attr("end")
        start = max(0, min(rank, start + rank if start < 0 else start))
        end = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
        picked = shp[start:end]
        # every dim has a dim_value (utils::HasDimValue; a stored -1 counts as one, as in ORT)
        if all(isinstance(d, int) for d in picked):
            self._fold(scope, n, "shape-folding",
                       "Shape of a tensor whose dims are known: ORT's constant folding replaces it by an initializer")
            return True
        if not ENHANCED_SHAPE_FOLDING:
            return False
        changed = False
        for c in list(self.readers.get(n.outputs[0], ())):
            if self.out.is_removed(c) or c.scope is not scope or c.inputs[0] != n.outputs[0]:
                continue
            dims = None
            if c.op_type == "Gather" and (c.attr("axis") or 0) == 0 and len(c.inputs) > 1:
                idx = self.value(scope, c.inputs[1])
                if idx is not None and idx.size == 1:
                    i = int(idx.reshape(-1)[0])
                    i = i + len(picked) if i < 0 else i
                    dims = picked[i:i + 1] if 0 <= i < len(picked) else None
            elif c.op_type == "Slice" and len(c.inputs) >= 3:
                st, en = self.value(scope, c.inputs[1]), self.value(scope, c.inputs[2])
                ax = self.value(scope, c.inputs[3]) if len(c.inputs) > 3 and c.inputs[3] else np.array([0])
                stp = self.value(scope, c.inputs[4]) if len(c.inputs) > 4 and c.inputs[4] else np.array([1])
                if all(x is not None and x.size == 1 for x in (st, en, ax,
                                                               stp)) and int(ax.reshape(-1)[0]) == 0 and int(stp.reshape(-1)[0]) == 1:
                    r = len(picked)
                    s, e = int(st.reshape(-1)[0]), int(en.reshape(-1)[0])
                    s = max(0, min(r, s + r if s < 0 else s))
                    e = max(0, min(r, e + r if e < 0 else e))
                    dims = picked[s:e]
            if dims and all(isinstance(d, int) and d >= 0 for d in dims):
                self._fold(scope, c, "shape-folding",
                           f"{c.op_type} of known dims of a Shape: ORT's constant folding replaces it by an initializer")
                changed = True
        if changed and not self.live(n.outputs[0], scope):
            self.remove(n, "folded", "shape-folding", "Shape whose used dims ORT's constant folding replaced by initializers")
        return changed


_FOLD_NEVER, _FOLD_NODE, _FOLD_SHAPE, _FOLD_IF = range(4)
INCREMENTAL_FOLDING = True  # False: every folding run looks at every node (the same answer, slower; for tests)
DURABLE_REINFERENCE = True  # False: reinferred's "nothing new" holds only until the graph changes (the same answer, slower; for tests)
SKIP_UNCHANGED_PASSES = True  # False: every pass runs in every round (_Optimizer._pass; the same answer, slower; for tests)


def _fold_kind(n) -> int:
    """What constant folding does with a node, from what never changes: never folds it (another domain,
    DequantizeLinear (skip_dequantize_linear: QDQ models keep theirs), a random op, a node holding a graph),
    folds it when its inputs are constants, or asks the Shape/If rules."""
    if n.domain != "ai.onnx" or n.op_type == "DequantizeLinear":
        return _FOLD_NEVER
    if n.op_type == "Shape":
        return _FOLD_SHAPE
    if n.op_type == "If":
        return _FOLD_IF
    if n.op_type in NON_DETERMINISTIC or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                                             for a in n.proto.attribute):
        return _FOLD_NEVER
    return _FOLD_NODE


def optimize(index, level: str = "all", has_cpu_kernel=None, ort_version: str | None = None) -> Optimized:
    """Which nodes of `index` ORT's Level-1 transformers remove at `level` (disabled | basic | all), for the
    ORT release `ort_version` (None: the newest behaviour modelled)."""
    if level not in LEVELS:
        raise ValueError(f"optimization level must be one of {', '.join(LEVELS)}, not {level!r}")
    from onnxlint.ort.releases import release

    return _Optimizer(index, level, has_cpu_kernel or (lambda node: True), release(ort_version) or (99, 0)).run()
