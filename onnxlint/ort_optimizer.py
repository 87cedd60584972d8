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
    removed with it. Shapes are the ones onnx infers with data propagation (ORT re-runs shape inference
    after each fold).
  * ConstantSharing (constant_sharing.cc): initializers of <= 8 elements with the same dtype, shape and bytes
    become one, so CommonSubexpressionElimination sees them as one value.
  * CommonSubexpressionElimination (common_subexpression_elimination.cc): a deterministic node with the same
    op, domain, attributes and inputs as an earlier one is removed; its consumers read the earlier outputs.
  * Rewrite rules: EliminateIdentity, EliminateDropout, CastElimination (Cast to its input's type),
    NoopElimination (Add/Sub 0, Mul/Div 1), EliminateSlice (a Slice that keeps everything), ExpandElimination
    (Expand to a shape of ones), ConvBNFusion / ConvAddFusion / ConvMulFusion (a BatchNormalization / Add /
    Mul with constant per-channel operands after a Conv with constant weights).
  * ReshapeFusion (reshape_fusion.cc): the Shape->Gather->Unsqueeze->Concat subgraph that builds a Reshape's
    shape from its own input's dims (plus constants and at most one other value) becomes a constant.
Not modelled: Level-2/3 fusions (they run after partitioning, on nodes already placed), MatMulAddFusion, QDQ
propagation, the If/Loop rewrites of the Level-1 rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import numpy_helper

if TYPE_CHECKING:
    from onnxlint.graph import NodeRef

LEVELS = ("disabled", "basic", "all")
NON_DETERMINISTIC = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}
SHARE_MAX_ELEMENTS = 8  # constant_sharing.cc: only small initializers are shared
MAX_ITERATIONS = 10  # GraphTransformerManager's steps per level
# Folding a Gather/Slice of the known dims of a partly symbolic Shape ("enhanced shape constant folding") exists in
# ORT's source behind a session option; the releases measured (1.20.2, 1.24.4, 1.31.1) do not do it by default.
ENHANCED_SHAPE_FOLDING = False
# ReshapeFusion also turns one computed one-element input of the Concat into -1; when that applies is not modelled
# precisely enough (measured: fusing those over-predicts removals in torchvision detectors), so only fully matched
# shape subgraphs are fused (0); 1 allows one computed input.
RESHAPE_FUSION_DYNAMIC = 0
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
    shapes: dict[str, tuple] = field(default_factory=dict)  # shapes known after data propagation

    def resolve(self, value: str) -> str:
        seen = 0
        while value in self.alias and seen < 100:
            value = self.alias[value]
            seen += 1
        return value

    def is_removed(self, node) -> bool:
        return node.index in self.removed


def _refined_shapes(index) -> dict[str, tuple]:
    """Value shapes from onnx's shape inference with data propagation (Shape -> Gather -> Concat -> Reshape).

    Not run past the shape-inference budget (loading.over_inference_budget), nor when an initializer whose
    bytes were stripped is large: data propagation would materialise its values (gigabytes for a 2 GiB
    external tensor)."""
    from onnxlint import loading

    if loading.over_inference_budget(index.model) or _large_stripped_initializer(index.model):
        return {}
    try:
        inferred = onnx.shape_inference.infer_shapes(index.model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - fall back to the index's shapes
        return {}
    out = {}

    def read(graph):
        for part in (graph.input, graph.value_info, graph.output):
            for vi in part:
                t = vi.type
                if t.WhichOneof("value") == "tensor_type" and t.tensor_type.HasField("shape"):
                    out[vi.name] = tuple(d.dim_value if d.WhichOneof("value") == "dim_value" else None for d in t.tensor_type.shape.dim)
        for n in graph.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    read(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        read(g)

    read(inferred.graph)
    return out


DATA_PROP_MAX_ELEMENTS = 1 << 20


def _large_stripped_initializer(model: onnx.ModelProto) -> bool:
    from onnxlint.graph import iter_graphs

    for g in iter_graphs(model):
        for t in g.initializer:
            n = 1
            for d in t.dims:
                n *= d
            if n > DATA_PROP_MAX_ELEMENTS:
                return True
    return False


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


def _small_array(t: onnx.TensorProto | None, limit: int = 64):
    if t is None:
        return None
    n = 1
    for d in t.dims:
        n *= d
    if n > limit or t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    try:
        return numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - weight-less copy of a large tensor, odd dtype
        return None


def ort_topological_order(scope, opt: Optimized | None = None) -> list:
    """GraphViewer's topological order: a reverse DFS from the leaf nodes (no consumer in the graph), started
    from the last leaf, visiting each node's producers sorted by node index (pushed ascending, so the highest
    index is visited first), nodes emitted on leaving. CSE keeps the first node of this order."""
    resolve = opt.resolve if opt is not None else (lambda v: v)
    nodes = [n for n in scope.nodes if not (n.op_type == "Constant" and n.domain == "ai.onnx")
             and not (opt is not None and opt.is_removed(n))]
    live = {n.index for n in nodes}
    producer = {}
    for n in nodes:
        for o in n.outputs:
            if o:
                producer[o] = n
    inputs_of: dict[int, list] = {}
    has_consumer: set[int] = set()
    for n in nodes:
        ins = {}
        for v in n.inputs:
            p = producer.get(resolve(v)) if v else None
            if p is not None and p.index in live:
                ins[p.index] = p
                has_consumer.add(p.index)
        inputs_of[n.index] = sorted(ins.values(), key=lambda x: x.index)
    leaves = [n for n in nodes if n.index not in has_consumer]
    order, visited = [], set()
    stack = [(n, False) for n in leaves]
    while stack:
        n, leave = stack.pop()
        if leave:
            order.append(n)
            continue
        if n.index in visited:
            continue
        visited.add(n.index)
        stack.append((n, True))
        for p in inputs_of[n.index]:
            if p.index not in visited:
                stack.append((p, False))
    return order


class _Optimizer:
    def __init__(self, index, level: str, has_cpu_kernel):
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
        value = self.out.resolve(value)
        s = self.out.shapes.get(value)
        if s is not None:
            return s
        vt = scope.type_of(value)
        shp = vt.shape
        return None if shp is None else tuple(d if isinstance(d, int) else None for d in shp)

    def value(self, scope, value: str):
        return _small_array(self.tensor(scope, self.out.resolve(value)))

    def live(self, value: str, scope) -> bool:
        if value in scope.outputs:
            return True
        return any(not self.out.is_removed(r) for r in self.readers.get(value, ()))

    # ------------------------------------------------------------------ driver
    def run(self) -> Optimized:
        if self.level == "disabled":
            return self.out
        for scope in self.index.scopes:
            if scope.is_function:
                continue  # model-local functions are inlined at load; their copies are not indexed here
            for _ in range(MAX_ITERATIONS):
                changed = self.cse(scope)
                changed |= self.rewrite_rules(scope)
                changed |= self.constant_folding(scope)
                changed |= self.reshape_fusion(scope)
                if not changed:
                    break
        return self.out

    def remove(self, node, status: str, reason: str, detail: str, alias: dict | None = None) -> None:
        self.out.removed[node.index] = Removed(status, reason, detail)
        for k, v in (alias or {}).items():
            if k and v and k != v:
                self.out.alias[k] = v

    def nodes(self, scope):
        return [n for n in ort_topological_order(scope, self.out) if not self.out.is_removed(n)]

    # ------------------------------------------------------------------ CSE (+ constant sharing)
    SHARE_TYPES = (1, 10, 11, 6, 7)  # float, float16, double, int32, int64 (constant_sharing.cc)

    def canon(self, scope, value: str):
        if not value:
            return ""
        value = self.out.resolve(value)
        t = self.tensor(scope, value)
        if t is not None and t.data_type in self.SHARE_TYPES and value not in scope.outputs \
                and (value in scope.initializers or value in scope.constants or value in scope.producer) \
                and all(r.scope is scope for r in self.readers.get(value, ())):
            n = 1
            for d in t.dims:
                n *= d
            if n <= SHARE_MAX_ELEMENTS:
                arr = _small_array(t, SHARE_MAX_ELEMENTS)
                if arr is not None:
                    return ("const", t.data_type, tuple(t.dims), arr.tobytes())
        return value

    def cse(self, scope) -> bool:
        seen: dict[tuple, NodeRef] = {}
        changed = False
        for n in self.nodes(scope):
            if n.op_type in NON_DETERMINISTIC or any(a.type in (onnx.AttributeProto.GRAPH,
                                                                onnx.AttributeProto.GRAPHS) for a in n.proto.attribute):
                continue
            key = (n.domain, n.op_type, n.opset, tuple(sorted((a.name, a.SerializeToString()) for a in n.proto.attribute)),
                   tuple(self.canon(scope, v) for v in n.inputs), len(n.outputs))
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
    def _bypass_ok(self, scope, node) -> bool:
        """graph_utils::CanRemoveNode: a node whose output is a graph output can only go when its input can take
        over that name (produced by a node of this graph, used nowhere else)."""
        out = node.outputs[0] if node.outputs else ""
        if out not in scope.outputs:
            return True
        src = self.out.resolve(node.inputs[0]) if node.inputs else ""
        if not src or src not in scope.producer or src in scope.outputs:
            return False
        return len(self.readers.get(src, ())) == 1

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
                    and self._bypass_ok(scope, n) and not self._training(scope, n):
                why = ("dropout", "Dropout at inference: ORT's EliminateDropout removes it")
            elif op == "Cast" and self._bypass_ok(scope, n):
                src = scope.type_of(n.inputs[0]).dtype
                dst = scope.type_of(n.outputs[0]).dtype
                if src and dst and src == dst:
                    why = ("cast", f"Cast to its input's own type ({src}): ORT's CastElimination removes it")
            elif op in ("Add", "Sub", "Mul", "Div") and len(n.inputs) == 2 and self._bypass_ok(scope, n):
                why = self._noop(scope, n)
            elif op == "Slice" and self._bypass_ok(scope, n):
                why = self._noop_slice(scope, n)
            elif op == "Expand" and len(n.inputs) == 2 and self._bypass_ok(scope, n):
                v = self.value(scope, n.inputs[1])
                ishape = self.shape(scope, n.inputs[0])
                oshape = self.shape(scope, n.outputs[0])
                if v is not None and ishape is not None and v.ndim == 1 and len(v) <= len(ishape) and all(int(x) == 1 for x in v):
                    why = ("expand", "Expand to a shape of ones: ORT's ExpandElimination removes it")
                elif self.is_constant(scope, n.inputs[1]) and ishape is not None and oshape == ishape \
                        and all(isinstance(d, int) and d >= 0 for d in ishape):
                    why = ("expand", "Expand to the shape its input already has: ORT's ExpandElimination removes it")
            elif op in ("BatchNormalization", "Add", "Mul"):
                why = self._conv_fusion(scope, n)
            if why is None:
                continue
            reason, detail = why
            if reason.startswith("fusion"):
                conv = scope.producer[self.out.resolve(n.inputs[0])]
                self.remove(n, "eliminated", "fusion", detail, {n.outputs[0]: conv.outputs[0]})
            else:
                self.remove(n, "eliminated", reason, detail, {n.outputs[0]: n.inputs[0]})
            changed = True
        return changed

    def _training(self, scope, n) -> bool:
        if len(n.inputs) >= 3 and n.inputs[2]:
            v = self.value(scope, n.inputs[2])
            return v is None or bool(np.asarray(v).reshape(-1)[0])
        return False

    def _noop(self, scope, n):
        """NoopElimination: x+0, 0+x, x-0, x*1, 1*x, x/1 where the other operand already has the output's shape."""
        op = n.op_type
        ident = 0 if op in ("Add", "Sub") else 1
        sides = (0, 1) if op in ("Add", "Mul") else (1,)
        out_shape = self.shape(scope, n.outputs[0])
        for k in sides:
            c = self.value(scope, n.inputs[k])
            if c is None or c.size == 0 or not np.all(c == ident):
                continue
            other = n.inputs[1 - k]
            oshape = self.shape(scope, other)
            if self.is_constant(scope, other):
                continue
            if c.ndim > (len(oshape) if oshape is not None else 0) or (
                    out_shape is not None and oshape is not None and oshape != out_shape):
                continue
            if scope.type_of(n.inputs[k]).dtype != scope.type_of(other).dtype:
                continue
            if k == 0:
                continue  # the rule rewires input 0 only in ORT's NoopElimination for the first operand
            return ("noop", f"{op} by the constant {ident}: ORT's NoopElimination removes it")
        return None

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
        if src in scope.outputs or sum(1 for r in self.readers.get(src, ()) if not self.out.is_removed(r)) != 1:
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
            if shp in scope.outputs or len(self.readers.get(shp, ())) != 1:
                continue
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
        return a is not None and b is not None and len(a) == len(b) and all(x == y and x not in (None, "") for x, y in zip(a, b))

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
        for n in self.nodes(scope):
            if self.out.is_removed(n) or n.domain != "ai.onnx":
                continue
            if n.op_type == "DequantizeLinear":
                continue  # skip_dequantize_linear: QDQ models keep their DequantizeLinear
            if n.op_type == "Shape":
                changed |= self._fold_shape(scope, n)
                continue
            if n.op_type in NON_DETERMINISTIC or any(a.type in (onnx.AttributeProto.GRAPH,
                                                                onnx.AttributeProto.GRAPHS) for a in n.proto.attribute):
                continue
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

    def _fold(self, scope, n, reason: str, detail: str) -> None:
        self.remove(n, "folded", reason, detail)
        for o in n.outputs:
            if o:
                self.out.constants.add(o)
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


def optimize(index, level: str = "all", has_cpu_kernel=None) -> Optimized:
    """Which nodes of `index` ORT's Level-1 transformers remove at `level` (disabled | basic | all)."""
    if level not in LEVELS:
        raise ValueError(f"optimization level must be one of {', '.join(LEVELS)}, not {level!r}")
    return _Optimizer(index, level, has_cpu_kernel or (lambda node: True)).run()
