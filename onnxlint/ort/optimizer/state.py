"""The optimizer's state: what the Level-1 transformers know about the graph while they rewrite it, and the one
way they change it.

Transformers receive an OptimizerState and use its methods only (value facts: constants, values, shapes as ORT
infers them again after folding; graph facts: the live readers of a value, ORT's node order; changes: remove a
node, make a value constant), never its fields, so that its storage can change (ids and arrays instead of
per-node Python objects) without touching them.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import onnx
from onnx import numpy_helper

from onnxlint.model.graph import HOLDS_GRAPH
from onnxlint.model.locations import node_path
from onnxlint.ort import graph_viewer
from onnxlint.ort.optimizer import fold_eval
from onnxlint.ort.optimizer.ensure_unique_dq_for_node_unit import UniqueDQ
from onnxlint.ort.optimizer.initializers import VALUE_MAX_ELEMENTS, constant_node_tensor, small_array
from onnxlint.ort.optimizer.optimized import Array, Created, Optimized, Removed
from onnxlint.ort.optimizer.refined_shapes import Dims, refined_shapes

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef

_VALUE_SHAPED = frozenset({"ConstantOfShape", "Expand", "Reshape"})  # ops whose output shape is a value's (see _base)
FOLD_EVAL_MAX_ELEMENTS = 4096  # folded values computed on demand (shape-sized tensors only)
REINFER_MAX_DEPTH = 200  # producers walked back to find a folded value (Python's recursion limit is 1000)
REINFER_BUDGET = 10_000  # re-inference steps per model (a detector of a few thousand nodes needs ~3k)
MERGE_SCAN = 32  # readers a merge looks through one by one; more: a set of their ids (a few values have many)
FORGET_BUDGET = 100_000  # names looked at when dropping reinferred's kept answers after changes, per model
INCREMENTAL_ORDERS = True  # False: every order after a change is computed (the same answer, slower; for tests)
DURABLE_REINFERENCE = True  # False: reinferred's "nothing new" holds only until the graph changes (the same answer, slower; for tests)
_ELEM_TYPES = {f"tensor({name.lower()})": int(num) for name, num in onnx.TensorProto.DataType.items() if num}
# what CSE compares a shared constant by (constant_sharing.shared_key): (state, scope, value) -> key
SharedKey = Callable[["OptimizerState", "GraphScope", str], object]


class OptimizerState:
    def __init__(self, index: GraphIndex, level: str, has_cpu_kernel: Callable[[NodeRef], bool],
                 unique_dq: UniqueDQ | None = None):
        self._index = index
        # the DequantizeLinear copies EnsureUniqueDQForNodeUnit made before the Level-1 transformers
        self._unique_dq = unique_dq if unique_dq is not None else UniqueDQ()
        self._copy_edges = {(r.index, i) for edges in self._unique_dq.copies.values() for r, i in edges}
        self._has_cpu_kernel = has_cpu_kernel
        self._out = Optimized(level)
        self._out.shapes = refined_shapes(index, self._out.notes)
        # value -> its readers in every scope: the main graph's consumers lists (_main_readers), under an overlay
        # (_readers) of the values read in a body too or merged by `remove` (a copy of the main graph's dict was
        # 30 MB at 1M nodes, of every list 140 MB); _own_readers: the overlay's lists made here (the others are a
        # scope's consumers list, shared until `remove` adds to it)
        self._main_readers = index.scopes[0].consumers
        self._readers: dict[str, Sequence[NodeRef]] = {}
        self._own_readers: set[str] = set()
        for scope in index.scopes[1:]:
            for name, nodes in scope.consumers.items():
                got = self._readers.get(name)
                if got is None:
                    got = self._main_readers.get(name)
                    if got is None:
                        self._readers[name] = nodes
                        continue
                if name not in self._own_readers:
                    got = self._readers[name] = list(got)
                    self._own_readers.add(name)
                cast("list[NodeRef]", got).extend(nodes)
        self._ir = index.model.ir_version
        # per (scope, value): canon()'s answer; it reads only the index, never what the passes change (a weight
        # shared by every block was otherwise checked against all its readers per reader: quadratic)
        self._canon: dict[tuple[int, str], object] = {}
        self._by_name: dict[int, set[str]] = {}  # id(scope) -> shareable values whose canon is their name
        self._shares = 0  # share_constants calls (canon_version)
        self._shareable: set[str] | None = None  # main-graph initializers ConstantSharing merges (share_constants)
        self._shared_key: SharedKey | None = None
        # the passes' node order is recomputed only after a removal or an alias (all it depends on): a pass that
        # changed nothing hands the next one the same order
        self._changes = 0
        self._orders: dict[int, tuple[int, list[NodeRef]]] = {}
        self._order_cache = graph_viewer.OrderCache()
        self._rewirings = 0  # values rewired so far (writes into self._out.alias): what the order cache reads
        self._orders_of: dict[tuple[int, frozenset[str]], tuple[list[NodeRef], list[NodeRef]]] = {}  # nodes_of's
        # the changes since the one counted first, all CSE's removals of twins in one scope: (that count, the
        # scope, the removed nodes' indexes, the indexes of the earlier nodes alike)
        self._twins: tuple[int, GraphScope, array[int], array[int]] | None = None
        self._folded_values: dict[tuple[int, str], Array | None] = {}  # folded_value's answers
        self._arrays: dict[tuple[int, str], Array | None] = {}  # value()'s arrays of initializers and Constants
        # reinferred's answers: (graph change count, dims or None, whether None holds only until the graph changes)
        self._reinfer: dict[tuple[int, str], tuple[int, Dims | None, bool]] = {}
        self._reinfer_steps = 0
        self._bases: dict[tuple[int, str], tuple[Dims | None, bool]] = {}  # _base's answers
        # v -> the names rewired to v (alias k -> v): resolve's chains backwards; one name as itself, not a list
        self._rewired_to: dict[str, str | list[str]] = {}
        self._durable = DURABLE_REINFERENCE  # reinferred's "nothing new" kept until something up its inputs changes
        self._forget_steps = 0  # names _forget_reinferred looked at, against FORGET_BUDGET
        self._kept = 0  # kept "nothing new" answers in _reinfer
        self._bodies: dict[int, list[GraphScope]] | None = None  # node -> the bodies it holds (bodies_of)
        # value -> ids of the nodes in readers[value], for a merge into a value of many readers (a few have many)
        self._reader_ids: dict[str, set[int]] = {}
        # when each node's inputs last changed (a value made constant or rewired: `_touch`), counted while the main
        # graph converges: constant folding looks again only at the nodes changed since its last run
        self._touched: list[int] = [0] * len(index.nodes)  # node index -> when an input last changed
        self._clock = 0
        self._tracking = False  # while the main graph converges (bodies are folded whole every run)
        # a body node rewired while the main graph converges (an If inlined, its branch's Identity removed): a
        # main-graph reader of the If's output now reads through a body value, whose readers `readers` does not
        # follow (bodies reuse names); folding then looks at every main-graph node again, as ORT does
        self._fold_all = False
        # ReshapeFusion's constant shapes (value -> its ints, 0 = copy the dim): main-graph dims ORT infers again
        # with them (fused_shape), computed once per count of fusions
        self._fused: dict[str, list[int]] = {}
        self._fused_resolved = 0  # how many of them ORT's inference has seen (those of the passes before)
        self._fused_dims: tuple[int, dict[str, Dims]] | None = None

    # ------------------------------------------------------------------ the model
    def scopes(self) -> list[GraphScope]:
        return list(self._index.scopes)

    def node_count(self) -> int:
        return len(self._index.nodes)

    def nodes_of_op(self, op: str) -> Sequence[NodeRef]:
        """The model's nodes of op type op (any domain, every scope, removed ones included; not a copy)."""
        return self._index.by_op.get(op, ())

    def has_cpu_kernel(self, node: NodeRef) -> bool:
        """Whether ConstantFolding can run the node: a CPU kernel for its exact types."""
        return self._has_cpu_kernel(node)

    def dq_copied(self) -> bool:
        """Whether EnsureUniqueDQForNodeUnit copied any DequantizeLinear of the model."""
        return bool(self._copy_edges)

    def read_per_edge(self, value: str) -> bool:
        """Whether each input reading value reads a copy of its producer of its own: a DequantizeLinear
        EnsureUniqueDQForNodeUnit copied before the Level-1 transformers (two readers never read the same value)."""
        return bool(self._copy_edges) and self._out.resolve(value) in self._unique_dq.outputs

    def original_readers(self, value: str) -> list[NodeRef]:
        """The live nodes reading value from its producer itself, not from a DequantizeLinear copy
        EnsureUniqueDQForNodeUnit made for them (rewired readers included)."""
        readers = self.live_readers(value)
        if not self._copy_edges or self._out.resolve(value) not in self._unique_dq.outputs:
            return readers
        return [r for r in readers if not all((r.index, i) in self._copy_edges for i, v in enumerate(r.inputs)
                                               if v and self._out.resolve(v) == self._out.resolve(value))]

    def bodies_of(self, node: NodeRef) -> list[GraphScope]:
        """The graph bodies a node holds (If branches, a Loop body), from a map built once."""
        if self._bodies is None:
            self._bodies = {}
            for s in self._index.scopes:
                if s.owner is not None:
                    self._bodies.setdefault(id(s.owner), []).append(s)
        return self._bodies.get(id(node), [])

    def resolve(self, value: str) -> str:
        """The value the consumers of value read now (after the rewirings of removed nodes)."""
        return self._out.resolve(value) if value in self._out.alias else value

    def is_removed(self, node: NodeRef) -> bool:
        return node.index in self._out.removed

    def is_folded(self, value: str) -> bool:
        """Whether value is an initializer the transformers made (a folded output)."""
        return value in self._out.constants

    def folded(self) -> list[str]:
        """The values the transformers made initializers so far."""
        return list(self._out.constants)

    # ------------------------------------------------------------------ value facts
    def tensor(self, scope: GraphScope, value: str) -> onnx.TensorProto | None:
        """The constant initializer (or Constant node value) behind a value, or None."""
        s: GraphScope | None = scope
        while s is not None:
            t = s.initializers.get(value)
            if t is not None:
                if self._ir >= 4 and s.graph is not None and value in s.inputs:
                    return None  # an initializer that is also a graph input can be overridden: not constant
                return t
            t = s.constants.get(value)
            if t is not None:
                return t
            p = s.producer.get(value)
            if p is not None:
                return constant_node_tensor(p.proto) if p.op_type == "Constant" and p.domain == "ai.onnx" else None
            s = s.parent
        return None

    def is_constant(self, scope: GraphScope, value: str) -> bool:
        if value in self._out.alias:  # most values are not rewired: no call
            value = self._out.resolve(value)
        if value not in self._out.constants and value not in scope.initializers and value not in scope.constants:
            p = scope.producer.get(value)  # computed here (most operands): tensor()'s None, without its call
            if p is not None and (p.op_type != "Constant" or p.domain != "ai.onnx"):
                return False
        return value in self._out.constants or self.tensor(scope, value) is not None

    def inputs_constant(self, scope: GraphScope, values: tuple[str, ...]) -> bool:
        """Some input, and every one is_constant: what constant folding asks of every node. A value a node of
        scope computes (not an initializer nor a Constant there) is answered here without tensor()'s walk, as
        tensor() would answer it: most nodes' first input is one, and the question ends there."""
        alias, folded = self._out.alias, self._out.constants
        initializers, constants, producer = scope.initializers, scope.constants, scope.producer
        constant = False
        for v in values:
            if not v:
                continue
            if v in alias:
                v = self._out.resolve(v)
            if v in folded:
                constant = True
                continue
            if v not in initializers and v not in constants:
                p = producer.get(v)
                if p is not None and (p.op_type != "Constant" or p.domain != "ai.onnx"):
                    return False
            constant = self.tensor(scope, v) is not None
            if not constant:
                return False
        return constant

    def own_constant(self, scope: GraphScope, value: str) -> bool:
        """Whether value is a constant initializer of scope itself (Graph::GetInitializedTensor, which does not
        look in the enclosing graphs): its own initializer, Constant node or folded value. Transformers that read
        constants this way (ReshapeFusion) do not see an outer graph's constants from a body."""
        if value in self._out.alias:  # most values are not rewired: no call
            value = self._out.resolve(value)
        if value in scope.initializers or value in scope.constants:
            return self.tensor(scope, value) is not None
        return value in self._out.constants and value in scope.producer

    def fused_reshape(self, value: str, shape: list[int]) -> None:
        """ReshapeFusion replaced the main-graph value (a Concat's output) by the constant shape."""
        self._fused[value] = shape

    def resolve_fused_reshapes(self) -> None:
        """A new ReshapeFusion pass starts: ORT resolved the graph after the last one, its fusions included."""
        self._fused_resolved = len(self._fused)

    def fused_shape(self, scope: GraphScope, value: str) -> Dims | None:
        """The dims of a main-graph value as ORT infers them again after ReshapeFusion's constants replaced the
        Concats they stand for (Graph::Resolve after the pass): onnx's inference without data propagation on the
        model with those constants of the passes before this one (once per pass that fused something, when asked).
        None where nothing is known."""
        if scope.parent is not None or not self._fused_resolved:
            return None
        if self._fused_dims is None or self._fused_dims[0] != self._fused_resolved:
            self._fused_dims = (self._fused_resolved, self._infer_with_fused(dict(list(self._fused.items())[:self._fused_resolved])))
        return self._fused_dims[1].get(self._out.resolve(value))

    def _infer_with_fused(self, fused: dict[str, list[int]]) -> dict[str, Dims]:
        model = onnx.ModelProto()
        model.CopyFrom(self._index.model)
        g = model.graph
        del g.value_info[:]
        keep = [n for n in g.node if not (len(n.output) == 1 and n.output[0] in fused)]
        del g.node[:]
        g.node.extend(keep)
        g.initializer.extend(numpy_helper.from_array(np.array(v, np.int64), k) for k, v in fused.items())
        from onnxlint.model.loading import native

        try:  # in the native worker: a crash of onnx's C++ costs this answer, not the run
            inferred = native.infer_shapes(model)
        except native.NativeCrash as exc:
            self._out.notes.append(f"{exc} (with folded shapes): nothing learnt from it")
            return {}
        except Exception:  # noqa: BLE001 - onnx cannot infer it: nothing learnt
            return {}
        out: dict[str, Dims] = {}
        for vi in (*inferred.graph.value_info, *inferred.graph.output):
            t = vi.type.tensor_type
            if t.HasField("shape"):
                out[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        return out

    def shape(self, scope: GraphScope, value: str) -> Dims | None:
        """Dims (None where unknown): data propagation's (RefinedShapes, inferred on first use), else the index's;
        where some are unknown, what ORT's shape inference learns again after folding (`reinferred`)."""
        if value in self._out.alias:  # most values are not rewired: no call
            value = self._out.resolve(value)
        base, static = self._base(scope, value)
        if static:
            return base
        again = self.reinferred(scope, value)
        return again if again is not None else base

    def _base(self, scope: GraphScope, value: str) -> tuple[Dims | None, bool]:
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

    def _index_or_propagated_shape(self, scope: GraphScope, value: str) -> Dims | None:
        shp = scope.type_of(value).shape
        if shp is not None and all(isinstance(d, int) for d in shp):
            return tuple(shp)  # static already: data propagation (a second inference) cannot add to it
        p = scope.producer.get(value)
        # ORT's inference of ConstantOfShape and Expand reads their shape input only when it is a constant
        # initializer (getInputData): a shape computed from Shape -> Gather -> Concat gives their output no dims
        # (measured on 1.24.4 and 1.31.1: a CLIP mask's ConstantOfShape of [77, 77] keeps the Shape after it)
        s = None if p is not None and p.op_type in _VALUE_SHAPED and p.domain == "ai.onnx" else self._out.shapes.get(value)
        if s is not None:
            return s
        return None if shp is None else tuple(d if isinstance(d, int) else None for d in shp)

    def reinferred(self, scope: GraphScope, value: str, depth: int = 0) -> Dims | None:
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

    def _reinfer_node(self, scope: GraphScope, value: str, depth: int) -> tuple[Dims | None, bool]:
        """reinferred's answer for value, and whether a None answer holds only until the graph next changes (it
        met the depth limit, the budget or a cycle, itself or up its inputs) rather than until something up its
        inputs changes (`_forget_reinferred`)."""
        p = scope.producer.get(value)
        if p is None:
            return None, False
        if depth > REINFER_MAX_DEPTH:
            return None, True
        gone = self._out.removed.get(p.index)
        # a folded producer's output is an initializer now, its shape what inference gives on the folded inputs
        if (gone is not None and gone.status != "folded") or p.op_type == "Constant" or p.attribute_flags() & HOLDS_GRAPH:
            return None, False
        # first, cheaply: does any input know more than the first inference did (a folded value, a shape learnt)?
        known: dict[str, tuple[str, Dims | None]] = {}
        new = for_now = False
        for v in p.inputs:
            if not v or v in known:
                continue
            r = self._out.resolve(v)
            dims, static = self._base(scope, r)
            if not static:
                better = self.reinferred(scope, r, depth + 1)
                if better is not None:
                    dims, new = better, True
                elif self._reinfer[(id(scope), r)][2]:
                    for_now = True
            if r in self._out.constants and self.tensor(scope, r) is None:
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
        if p.opset is None:
            return None, for_now  # get_schema cannot be asked: nothing learnt
        from onnxlint.model.loading import native

        try:  # in the native worker: an op's inference given folded data takes paths the model's did not
            out = native.infer_node_outputs(p.proto, "" if p.domain == "ai.onnx" else p.domain, p.opset, types, data)
        except native.NativeCrash as exc:
            self._out.notes.append(f"{exc} (a node with folded inputs): nothing learnt from it")
            return None, for_now
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

    def _forget_reinferred(self, changed: list[str], produced_in: GraphScope | None = None) -> None:
        """reinferred's "nothing new" answers that may no longer hold after a change, dropped: those of the
        readers of the changed values (made constant or rewired; produced_in: the scope whose node producing
        them was removed, whose own answers go first), then, down the graph, of the readers of every value whose
        answer went. An answer reads its producer's state, its inputs' states (through rewiring: a name whose
        rewiring chain passes through a changed one reads the change too) and the answers of the inputs it asked
        about; an input whose answer is not kept was not asked about, so the walk stops there."""
        if not self._kept:
            return  # no kept "nothing new" answer to drop (none is kept unless _durable)
        reinfer, readers, rewired_to = self._reinfer, self._readers_of, self._rewired_to
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
                to = rewired_to.get(name)
                if to is not None:
                    pending.extend((to,) if to.__class__ is str else to)
                drop.extend((n.scope, x) for n in readers(name) for x in n.outputs if x)
            if steps > FORGET_BUDGET:
                # a long rewiring chain changed at its head again and again (a 20k chain of inlined Ifs): from
                # here on "nothing new" holds only until the next change, as without keeping it (bounded by
                # REINFER_BUDGET); the answers so far are dropped, the shapes learnt kept
                self._durable = False
                self._reinfer = {k: got for k, got in reinfer.items() if got[1] is not None}
                self._kept = 0
                break
        self._forget_steps = steps

    def value(self, scope: GraphScope, value: str) -> Array | None:
        value = self._out.resolve(value)
        key = (id(scope), value)
        # an initializer's or a Constant's array, converted once: tensor() reads only the index (ReshapeFusion asks
        # for the same shape constant once per Reshape), and folded values are shared so already
        arrays = self._arrays
        got = arrays[key] if key in arrays else arrays.setdefault(key, small_array(self.tensor(scope, value)))
        if got is None and value in self._out.constants:
            got = self.folded_value(scope, value)
        return got

    def one_element_value(self, scope: GraphScope, value: str) -> Array | None:
        """value(scope, value) when it has one element, else None: a constant of 2 to 64 elements, which value()
        would convert only to be turned down, is not converted (NoopElimination asks of every Add/Sub/Mul/Div)."""
        r = self._out.resolve(value)
        t = self.tensor(scope, r)
        if t is None and r not in self._out.constants:
            return None  # computed, not folded (most operands): value() has nothing either
        if t is not None and t.data_location != onnx.TensorProto.EXTERNAL:
            elements = math.prod(t.dims)
            if elements != 1 and elements <= VALUE_MAX_ELEMENTS:
                return None
        got = self.value(scope, value)
        return got if got is not None and got.size == 1 else None

    def folded_value(self, scope: GraphScope, value: str, depth: int = 0) -> Array | None:
        """The value of an output constant folding replaced, computed on demand from its inputs' values (small
        tensors only: what ORT's re-run shape inference and later rules read, e.g. an Expand's or a Reshape's
        shape, an If's condition). None when it cannot be had cheaply."""
        key = (id(scope), value)
        if key in self._folded_values:
            return self._folded_values[key]
        self._folded_values[key] = None  # a cycle or a failure answers None
        s: GraphScope | None = scope
        p = None
        while s is not None and p is None:
            p = s.producer.get(value)
            s = s.parent
        got = None
        if p is not None and depth < 64:
            got = self._evaluate(p, value, depth)
        self._folded_values[key] = got
        return got

    def _evaluate(self, node: NodeRef, value: str, depth: int) -> Array | None:
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
            r = self._out.resolve(v)
            arr = small_array(self.tensor(scope, r), FOLD_EVAL_MAX_ELEMENTS)
            if arr is None and r in self._out.constants:
                arr = self.folded_value(scope, r, depth + 1)
            if arr is None:
                return None
            feeds[v] = arr
        ins = [feeds.get(v) if v else None for v in node.inputs]
        # the work is known before anything runs: an op without a bound (a regular expression) or past the budget
        # (a RoiAlign sampling a million points per bin) is not evaluated, and the placement's note says so
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.proto.attribute}
        if not self._out.evaluations.allow(node.op_type, node.domain, cast(int, node.opset), attrs, ins,
                                           name=node.name or node_path(node.location) or "",
                                           max_elements=FOLD_EVAL_MAX_ELEMENTS * max(len(node.outputs), 1)):
            return None
        got = fold_eval.evaluate(node.proto, cast(int, node.opset), ins)
        if got is fold_eval.TOO_LARGE:
            return None  # a value_info that lies about the size: onnx.reference would try to allocate it
        outs = got if got is not None else fold_eval.by_reference(node.proto, node.domain, cast(int, node.opset), feeds)
        if outs is None:
            return None
        names = [o for o in node.outputs if o]
        for name, arr in zip(names, outs):
            if name == value:
                arr = np.asarray(arr)
                return arr if arr.size <= FOLD_EVAL_MAX_ELEMENTS else None
        return None

    def _readers_of(self, value: str) -> Sequence[NodeRef]:
        """The nodes reading value in every scope, removed ones included (not a copy)."""
        got = self._readers.get(value)
        return got if got is not None else self._main_readers.get(value, ())

    def live(self, value: str, scope: GraphScope) -> bool:
        if value in scope.outputs:
            return True
        removed = self._out.removed  # live_readers, short-circuited: a loop, not a generator and a call a reader
        for r in self._readers_of(value):
            if r.index not in removed:
                return True
        return False

    def readers_of(self, value: str) -> list[NodeRef]:
        """The nodes reading value, removed ones included (a copy)."""
        return list(self._readers_of(value))

    def live_readers(self, value: str) -> list[NodeRef]:
        """The nodes still reading value (rewired ones included, removed ones not)."""
        removed = self._out.removed
        return [r for r in self._readers_of(value) if r.index not in removed]

    def _touch(self, value: str) -> None:
        """The readers of value see an input change: made constant, or rewired. Constant folding looks at them
        again (main-graph readers rewired to value included: `remove` merges them), and reinferred's answers
        that read value go."""
        if self._tracking:
            self._clock += 1
            for r in self._readers_of(value):
                self._touched[r.index] = self._clock
        if self._kept:  # else there is nothing to forget
            self._forget_reinferred([value])

    def made_constant(self, value: str) -> None:
        """value is an initializer now (a folded output)."""
        self._out.constants.add(value)
        self._touch(value)

    def remove(self, node: NodeRef, status: str, reason: str, detail: str, alias: dict[str, str] | None = None,
               twin: NodeRef | None = None) -> None:
        """The one way a transformer changes the graph: node goes (status folded | eliminated, why), and each
        value k of alias is read as alias[k] from now on (ORT rewires k's consumers). twin: CSE's earlier node
        alike, whose outputs alias names (the next order may then be the last less node: nodes)."""
        if twin is not None:
            run = self._twins
            if run is None or run[0] + len(run[2]) != self._changes or run[1] is not node.scope:
                run = self._twins = (self._changes, node.scope, array("i"), array("i"))
            run[2].append(node.index)
            run[3].append(twin.index)
        self._changes += 1
        self._out.removed[node.index] = Removed(status, reason, detail)
        if self._kept:  # else there is nothing to forget
            self._forget_reinferred([o for o in node.outputs if o], node.scope)
        if not alias:  # below, per value rewired: _touch and the merge of readers inlined (133k by CSE at 1M nodes)
            return
        out, rewired_to, overlay, main_readers = self._out.alias, self._rewired_to, self._readers, self._main_readers
        main = node.scope.parent is None
        for k, v in alias.items():
            if not k or not v or k == v:
                continue
            out[k] = v
            self._rewirings += 1
            to = rewired_to.get(v)  # before _touch(k): k's rewired names read the change
            if to is None or isinstance(to, str):
                rewired_to[v] = k if to is None else [to, k]
            else:
                to.append(k)
            readers = overlay[k] if k in overlay else main_readers.get(k, ())  # _readers_of(k)
            if self._tracking:  # _touch(k)
                self._fold_all = self._fold_all or not main
                self._clock = clock = self._clock + 1
                for r in readers:
                    self._touched[r.index] = clock
            if self._kept:
                self._forget_reinferred([k])
            # ORT rewires k's consumers to v (later rules count v's consumers). Main graph only: bodies reuse names
            # (5,000 If branches each with a `t`): a merge by name there would copy every body's readers (quadratic)
            if not main or not readers:
                continue
            if v in out:
                v = self._out.resolve(v)  # the value the consumers end up reading (an Identity chain's head)
            if v in self._own_readers:
                have = cast("list[NodeRef]", overlay[v])
            else:  # a scope's consumers list: the state's own copy
                have = overlay[v] = list(overlay[v] if v in overlay else main_readers.get(v, ()))
                self._own_readers.add(v)
            ids = self._reader_ids.get(v)
            if ids is None and len(have) + len(readers) > MERGE_SCAN:
                ids = self._reader_ids[v] = {id(r) for r in have}
            for r in readers:
                if ids is None:
                    if r not in have:  # NodeRefs compare by identity
                        have.append(r)
                elif id(r) not in ids:
                    ids.add(id(r))
                    have.append(r)

    def create(self, node: Created) -> None:
        """A transformer adds a node to the graph (a Gather the TransposeOptimizer puts after a Shape): placed by
        the partitioner after the model's own nodes. It is no change the other passes can read (they look at the
        model's nodes only), so it does not count as one."""
        self._out.created.append(node)

    def created(self) -> list[Created]:
        """The nodes the transformers added so far (a copy)."""
        return list(self._out.created)

    def nodes(self, scope: GraphScope) -> list[NodeRef]:
        """The scope's live nodes in ORT's order (shared by passes between changes: never mutate it). After
        changes that were all CSE's removals of twins in scope, the last order less them where the order cache
        shows that is the order (OrderCache.after_twins)."""
        got = self._orders.get(id(scope))
        if got is not None and got[0] == self._changes:
            return got[1]
        order = None
        run, self._twins = self._twins, None
        if INCREMENTAL_ORDERS and got is not None and run is not None and run[0] == got[0] \
                and run[0] + len(run[2]) == self._changes and run[1] is scope:
            order = self._order_cache.after_twins(scope, got[1], run[2], run[3])
        if order is None:
            order = self._order_cache.order(scope, self._out, self._rewirings)  # the removed nodes left out
        self._orders[id(scope)] = (self._changes, order)
        return order

    def nodes_of(self, scope: GraphScope, ops: frozenset[str]) -> list[NodeRef]:
        """nodes(scope) less the nodes whose op type is not in ops (any domain): for a pass that looks only at
        those (ReshapeFusion at Reshapes), which then need not step over every node of the graph."""
        order = self.nodes(scope)
        key = (id(scope), ops)
        got = self._orders_of.get(key)
        if got is None or got[0] is not order:
            got = self._orders_of[key] = (order, [n for n in order if n.op_type in ops])
        return got[1]

    def twin_candidates(self, scope: GraphScope) -> list[NodeRef]:
        """nodes(scope) less the nodes a CSE run over it cannot find alike (OrderCache.twin_candidates), in order."""
        got = self._order_cache.twin_candidates(scope, self._out, self._rewirings, self.nodes(scope), self._shareable or set())
        return self.nodes(scope) if got is None else got

    def reads_computed(self, scope: GraphScope) -> bytearray | None:
        """node index -> 1 for the nodes of scope for which inputs_constant is False as the graph is now, for a
        reason only a change to one of their inputs undoes (a value made constant or rewired: `_touch`): they
        read, by name, a value a live node of scope computes, neither rewired nor folded; 0 for any other node.
        None where that is not known from the order's arrays (a name written twice, or both computed by a node
        and an initializer or a Constant's)."""
        producer = scope.producer
        for name in (*scope.initializers, *scope.constants):
            p = producer.get(name)
            if p is not None and (p.op_type != "Constant" or p.domain != "ai.onnx"):
                return None
        got = self._order_cache.reads_computed(scope, self._out, len(self._index.nodes))
        if got is not None:
            removed = self._out.removed
            for names in (self._out.alias, self._out.constants):
                for name in names:  # read as another value, or as a constant: its producer was removed (no edge
                    p = producer.get(name)  # counted), unless a body's node of that name was (bodies reuse names)
                    if p is not None and p.index not in removed:
                        for r in self._readers_of(name):
                            got[r.index] = 0
        return got

    # ------------------------------------------------------------------ constants CSE sees as one (ConstantSharing)

    def canon(self, scope: GraphScope, value: str) -> object:
        """What CSE compares an input by: a shared constant by its dtype, shape and bytes, anything else by name."""
        if not value:
            return ""
        if value in self._out.alias:  # most values are not rewired: no call
            value = self._out.resolve(value)
        if not self._shareable or value not in self._shareable:
            return value
        k = (id(scope), value)
        got = self._canon.get(k)
        if got is None:
            got = self._canon[k] = self._shared_key(self, scope, value) if self._shared_key is not None else value
            if got == value:  # shareable, but compared by name after all (too large): input_canon skips it
                self._by_name.setdefault(id(scope), set()).add(value)
        return got

    def input_canon(self, scope: GraphScope) -> Callable[[tuple[str, ...]], tuple[Any, ...]]:
        """For one CSE run over scope (until share_constants): values -> tuple(canon(scope, v) for v in values), canon
        called only for values rewired or shared (v for any other, "" stays ""), once a run for each shared value."""
        alias, resolve, canon = self._out.alias, self._out.resolve, self.canon
        shareable: set[str] | frozenset[str] = self._shareable or frozenset()
        by_name: set[str] | frozenset[str] = self._by_name.setdefault(id(scope), set()) if shareable else frozenset()
        shared: dict[str, object] = {}  # a shared value not rewired -> canon(scope, value) (it stays)

        def canon_of(values: tuple[str, ...]) -> tuple[Any, ...]:
            for v in values:
                if v in alias or (v in shareable and v not in by_name):
                    break
            else:
                return values if type(values) is tuple else tuple(values)
            out: list[Any] = []
            for v in values:
                r = resolve(v) if v in alias else v
                if r in shareable and r not in by_name:  # canon's answer: r's key, which only share_constants changes
                    got = shared.get(r)
                    out.append(got if got is not None else shared.setdefault(r, canon(scope, v)))
                else:
                    out.append(r)
            return tuple(out)

        return canon_of

    def share_constants(self, values: set[str], key: SharedKey) -> None:
        """ConstantSharing's answer: CSE compares each of values by key(state, scope, value) (its dtype, shape
        and bytes), any other value by name."""
        self._shares += 1
        self._shareable = values
        self._shared_key = key
        self._canon.clear()
        self._by_name.clear()

    def canon_version(self) -> tuple[int, int]:
        """Moves whenever canon's answers may change (a value rewired, ConstantSharing's answer): while it stands
        still, what CSE compares a live node by stays what it was (removals only drop nodes)."""
        return self._rewirings, self._shares

    # ------------------------------------------------------------------ the driver's
    def changes(self) -> int:
        """How many changes (removals) so far: a transformer that found nothing finds nothing again until this
        moves."""
        return self._changes

    def set_tracking(self, on: bool) -> None:
        """Count input changes per node (while the main graph converges)."""
        self._tracking = on

    def tracking(self) -> bool:
        return self._tracking

    def clock(self) -> int:
        """The input-change clock: input_changes()[node.index] > a reading of it means changed since."""
        return self._clock

    def input_changes(self) -> Sequence[int]:
        """node index -> the clock when one of its inputs last changed (read-only)."""
        return self._touched

    def body_rewired(self) -> bool:
        """Whether a body node was rewired while the main graph converged (input_changes() misses its readers)."""
        return self._fold_all

    def finish(self) -> Optimized:
        """The result, the passes' indexes dropped; placement may still ask for shapes (out.sizer)."""
        self._order_cache = graph_viewer.OrderCache()  # its tables per scope (~200 MB at 1M nodes): no pass asks again
        self._out.orders = {sid: order for sid, (changes, order) in self._orders.items() if changes == self._changes}
        self._readers, self._reader_ids, self._orders, self._canon, self._by_name = {}, {}, {}, {}, {}
        self._twins, self._main_readers, self._orders_of, self._own_readers = None, {}, {}, set()
        self._shareable, self._bodies = set(), None
        self._out.sizer = self.shape
        return self._out

    def result(self) -> Optimized:
        return self._out
