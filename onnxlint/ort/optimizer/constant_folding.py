"""ConstantFolding (core/optimizer/constant_folding.cc).

A deterministic node (optimizer_utils::IsOperationDeterministic: ai.onnx but the random ops, and
com.microsoft's QuantizeLinear, e.g. a 16-bit QDQ model's quantized constants), without subgraphs, whose inputs
are all constant initializers becomes an initializer, provided a CPU kernel exists for its exact types;
DequantizeLinear (any domain) is folded only with its QDQ node unit (skip_dequantize_linear: a DequantizeLinear
of constants whose one reader X has one input and one output and feeds one QuantizeLinear goes, then X and the
QuantizeLinear with it; measured on 1.24.4 and 1.31.1 with a Relu, com.microsoft's and ai.onnx's); Shape is
folded when the requested dims of its input are all known, and a Gather/Slice of a Shape output is folded when
the dims it picks are known (behind a session option: ENHANCED_SHAPE_FOLDING); the node chain that only fed a
folded node (a folded Shape's too: measured on 1.23.2, 1.24.4, 1.31.1) is removed with it, and the graphs such a
node holds; an If on a constant condition is inlined (its other branch dropped). Shapes are
the ones onnx infers with data propagation, and, where those leave dims unknown, onnx's inference of the
producer again with the folded values as input data (ORT re-runs shape inference on each node after a fold:
OptimizerState.shape); folded values are computed on demand (fold_eval, onnx.reference; shape-sized tensors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from onnxlint.model.graph import HOLDS_GRAPH
from onnxlint.ort.optimizer.graph_utils import is_operation_deterministic

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState

# Folding a Gather/Slice of the known dims of a partly symbolic Shape ("enhanced shape constant folding") exists in
# ORT's source behind a session option; the releases measured (1.20.2, 1.24.4, 1.31.1) do not do it by default.
ENHANCED_SHAPE_FOLDING = False
INCREMENTAL_FOLDING = True  # False: every folding run looks at every node (the same answer, slower; for tests)
SKIP_COMPUTED_INPUTS = True  # False: a full run asks inputs_constant of every node (the same answer, slower; for tests)
_FOLD_NEVER, _FOLD_NODE, _FOLD_SHAPE, _FOLD_IF, _FOLD_DQ_UNIT = range(5)
# the ops fold_kind sends to rules of their own (an ai.onnx Shape or If, a DequantizeLinear of any domain), whose
# folding reads more than whether their inputs are constant
_OWN_RULES = {"Shape": _FOLD_SHAPE, "If": _FOLD_IF, "DequantizeLinear": _FOLD_DQ_UNIT}
_ASKS_MORE = tuple(_OWN_RULES)


def fold_kind(n: NodeRef) -> int:
    """What constant folding does with a node, from what never changes: never folds it (a domain or op
    IsOperationDeterministic refuses, DequantizeLinear (skip_dequantize_linear: QDQ models keep theirs), a node
    holding a graph), folds it when its inputs are constants, or asks the Shape/If rules."""
    if not is_operation_deterministic(n.domain, n.op_type):
        return _FOLD_NEVER
    own = _OWN_RULES.get(n.op_type)
    if own is not None and (own == _FOLD_DQ_UNIT or n.domain == "ai.onnx"):
        return own
    if n.domain != "ai.onnx":
        return _FOLD_NODE  # com.microsoft::QuantizeLinear
    if n.attribute_flags() & HOLDS_GRAPH:
        return _FOLD_NEVER
    return _FOLD_NODE


class ConstantFolding:
    """After its first run over the main graph, a run looks again only at the nodes whose inputs changed since
    (OptimizerState.input_changes: a value made constant or rewired), and at every Shape and If (their verdicts
    read shapes and values further up). A run over every node of the main graph (the first) steps over the
    nodes reading a value a live node computes (OptimizerState.reads_computed, from the order's arrays: most
    nodes), unless an input of theirs changes during the run: inputs_constant is False for them."""

    name = "ConstantFolding"

    def __init__(self, node_count: int):
        self._kinds: list[int | None] = [None] * node_count  # node index -> fold_kind (None: not read yet)
        self._started: int | None = None  # the input-change clock when the main graph's last folding run began

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        changed = False
        since = None
        if state.tracking() and INCREMENTAL_FOLDING:  # the main graph: after its first run, a node whose inputs did not change is skipped
            since, self._started = (None if state.body_rewired() else self._started), state.clock()
        kinds, touched = self._kinds, state.input_changes()
        inputs_constant = state.inputs_constant
        order = state.nodes(scope)
        computed, started = None, state.clock()
        if since is None and state.tracking() and SKIP_COMPUTED_INPUTS:
            computed = state.reads_computed(scope)
            if computed is not None:
                for op in _ASKS_MORE:
                    for n in state.nodes_of_op(op):
                        computed[n.index] = 0
        for n in order:
            if computed is not None and computed[n.index] and touched[n.index] <= started:
                continue  # reads a computed value, and none of its inputs changed in this run: not foldable
            kind = kinds[n.index]
            if kind is None:
                kind = kinds[n.index] = fold_kind(n)
            if kind == _FOLD_NEVER or state.is_removed(n):
                continue
            if kind == _FOLD_SHAPE:
                changed |= _fold_shape(state, scope, n)
                continue
            if kind == _FOLD_IF:
                changed |= _fold_if(state, scope, n)
                continue
            if kind == _FOLD_DQ_UNIT and not _foldable_qdq_unit(state, scope, n):
                continue
            if since is not None and touched[n.index] <= since:
                continue  # not foldable when last looked at, and no input changed since
            if not inputs_constant(scope, n.inputs):
                continue
            if any((t := scope.type_of(o).type_str) and not t.startswith("tensor(") for o in n.outputs if o):
                continue
            if not state.has_cpu_kernel(n):
                continue
            _fold(state, scope, n, "constant-folding",
                  f"{n.op_type} of constant inputs: ORT's constant folding replaces it by an initializer")
            changed = True
        return changed


def _foldable_qdq_unit(state: OptimizerState, scope: GraphScope, dq: NodeRef) -> bool:
    """Whether the DequantizeLinear's whole QDQ node unit DQ -> X -> QuantizeLinear can be folded: one edge from
    the DQ (after EnsureUniqueDQForNodeUnit's copies) to an X with one input and one output, deterministic,
    whose output has one edge, to a QuantizeLinear; neither output a graph output."""
    out = dq.outputs[0] if dq.outputs else ""
    if not out or out in scope.outputs:
        return False
    readers = state.original_readers(out)
    if len(readers) != 1:
        return False
    x = readers[0]
    if x.scope is not scope or len(x.inputs) != 1 or not x.inputs[0] or len(x.outputs) != 1 \
            or not x.outputs[0] or x.outputs[0] in scope.outputs or fold_kind(x) == _FOLD_NEVER \
            or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in x.proto.attribute):
        return False
    qs = state.live_readers(x.outputs[0])
    if len(qs) != 1 or qs[0].op_type != "QuantizeLinear" or qs[0].scope is not scope:
        return False
    q = qs[0]
    return sum(1 for v in q.inputs if v and state.resolve(v) == x.outputs[0]) == 1 and fold_kind(q) != _FOLD_NEVER


def _fold_if(state: OptimizerState, scope: GraphScope, n: NodeRef) -> bool:
    """ConstantFoldIfNode: an If whose condition is a constant is replaced by the nodes of the branch it takes
    (Graph::InlineIfSubgraph, under new names); the other branch is dropped. The taken branch's nodes keep
    their placement here: they run, in the enclosing graph."""
    cond = state.value(scope, n.inputs[0]) if n.inputs and n.inputs[0] else None
    if cond is None or cond.size != 1:
        return False
    taken = "then_branch" if bool(np.asarray(cond).reshape(-1)[0]) else "else_branch"
    branches = {s.path.rsplit(":", 1)[-1]: s for s in state.bodies_of(n)}
    if taken not in branches:
        return False
    state.remove(n, "folded", "if-constant",
                f"If on a constant condition: ORT's constant folding inlines its {taken} and drops the other branch",
                dict(zip(n.outputs, branches[taken].outputs)))
    kept = branches[taken]
    for m in kept.nodes:  # inlined, an Identity is an ordinary node again: EliminateIdentity removes it
        if m.op_type == "Identity" and m.domain == "ai.onnx" and m.inputs and m.outputs and not state.is_removed(m):
            pos = kept.outputs.index(m.outputs[0]) if m.outputs[0] in kept.outputs else -1
            if pos >= 0 and pos < len(n.outputs) and n.outputs[pos] in scope.outputs:
                continue  # it would produce the enclosing graph's output
            state.remove(m, "eliminated", "identity", "Identity of an If branch ORT inlines: EliminateIdentity removes it",
                        {m.outputs[0]: m.inputs[0]})
    dropped = [s for k, s in branches.items() if k != taken]
    while dropped:
        s = dropped.pop()
        for m in s.nodes:
            if not state.is_removed(m):
                state.remove(m, "eliminated", "if-constant", "in the If branch ORT's constant folding drops")
        dropped.extend(b for m in s.nodes for b in state.bodies_of(m))
    return True


def _fold(state: OptimizerState, scope: GraphScope, n: NodeRef, reason: str, detail: str) -> None:
    state.remove(n, "folded", reason, detail)
    for o in n.outputs:
        if o:
            state.made_constant(o)
    _drop_dead_inputs(state, scope, n)


def _drop_dead_inputs(state: OptimizerState, scope: GraphScope, n: NodeRef) -> None:
    """graph_utils::RemoveNodesWithOneOutputBottomUp: producers that only fed the folded node go too, each one's
    own producers before the next input's (depth first). A stack of the inputs still to look at, not a recursion: a
    chain of 3,000 Relus that only fed a folded Shape was "graph nesting too deep to analyse" (exit 2)."""
    stack = [iter(n.inputs)]
    while stack:
        for v in stack[-1]:
            v = state.resolve(v) if v else v
            p = scope.producer.get(v) if v else None
            if p is None or state.is_removed(p) or len([o for o in p.outputs if o]) != 1 or state.live(v, scope):
                continue
            state.remove(p, "folded", "constant-folding", f"{p.op_type} only fed nodes ORT's constant folding replaced; removed with them")
            _drop_bodies(state, p, f"in the body of a {p.op_type} ORT's constant folding removed")
            stack.append(iter(p.inputs))  # p's producers next, then the rest of this node's inputs
            break
        else:
            stack.pop()


def _drop_bodies(state: OptimizerState, n: NodeRef, detail: str) -> None:
    """The nodes of the graphs a removed node holds go with it (Graph::RemoveNode drops its subgraphs)."""
    bodies = list(state.bodies_of(n))
    while bodies:
        s = bodies.pop()
        for m in s.nodes:
            if not state.is_removed(m):
                state.remove(m, "folded", "constant-folding", detail)
        bodies.extend(b for m in s.nodes for b in state.bodies_of(m))


def _fold_shape(state: OptimizerState, scope: GraphScope, n: NodeRef) -> bool:
    shp = state.shape(scope, n.inputs[0]) if n.inputs else None
    if shp is None:
        return False
    # every dim of the input has a dim_value, the ones start/end leave out too (ConstantFoldShapeNode checks the
    # whole shape; measured on 1.24.4 and 1.31.1: Shape(start=-1) of [N, 77] stays); utils::HasDimValue: a stored
    # -1 counts as one, as in ORT
    if all(isinstance(d, int) for d in shp):
        _fold(state, scope, n, "shape-folding",
                   "Shape of a tensor whose dims are known: ORT's constant folding replaces it by an initializer")
        return True
    if not ENHANCED_SHAPE_FOLDING:
        return False
    rank = len(shp)  # the dims start/end pick: read only here, where a Gather/Slice of them may fold
    start = n.attr("start") or 0
    end = n.attr("end")
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
    picked = shp[start:end]
    changed = False
    for c in state.readers_of(n.outputs[0]):
        if state.is_removed(c) or c.scope is not scope or c.inputs[0] != n.outputs[0]:
            continue
        dims = None
        if c.op_type == "Gather" and (c.attr("axis") or 0) == 0 and len(c.inputs) > 1:
            idx = state.value(scope, c.inputs[1])
            if idx is not None and idx.size == 1:
                i = int(idx.reshape(-1)[0])
                i = i + len(picked) if i < 0 else i
                dims = picked[i:i + 1] if 0 <= i < len(picked) else None
        elif c.op_type == "Slice" and len(c.inputs) >= 3:
            st, en = state.value(scope, c.inputs[1]), state.value(scope, c.inputs[2])
            ax = state.value(scope, c.inputs[3]) if len(c.inputs) > 3 and c.inputs[3] else np.array([0])
            stp = state.value(scope, c.inputs[4]) if len(c.inputs) > 4 and c.inputs[4] else np.array([1])
            if st is not None and st.size == 1 and en is not None and en.size == 1 and ax is not None and ax.size == 1 \
                    and stp is not None and stp.size == 1 and int(ax.reshape(-1)[0]) == 0 and int(stp.reshape(-1)[0]) == 1:
                r = len(picked)
                s, e = int(st.reshape(-1)[0]), int(en.reshape(-1)[0])
                s = max(0, min(r, s + r if s < 0 else s))
                e = max(0, min(r, e + r if e < 0 else e))
                dims = picked[s:e]
        if dims and all(isinstance(d, int) and d >= 0 for d in dims):
            _fold(state, scope, c, "shape-folding",
                       f"{c.op_type} of known dims of a Shape: ORT's constant folding replaces it by an initializer")
            changed = True
    if changed and not state.live(n.outputs[0], scope):
        state.remove(n, "folded", "shape-folding", "Shape whose used dims ORT's constant folding replaced by initializers")
    return changed
