"""ReshapeFusion (core/optimizer/reshape_fusion.cc).

The Shape->Gather->Unsqueeze->Concat subgraph that builds a Reshape's shape from its own input's dims (plus
constants and at most one other value) becomes a constant; a dim of another tensor counts when it is known to be
the same (Release.reshape_dim_match: that one dim, else the whole shape). From 1.24 (Release.contiguous_reshapes:
Reshape-14 and older there, every version from 1.31) it also fuses contiguous Reshapes (FuseContiguousReshapes),
run as its own pass. The constants it reads (a
Concat input, a Gather index) must be initializers of the Reshape's own graph (AppendTensorFromInitializer and
IsInitializerWithExpectedValue read Graph::GetInitializedTensor): in an If branch, an outer graph's constant does
not count (measured on 1.24.4 and 1.31.1: an optimum merged decoder's branches keep their shape subgraphs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

import numpy as np

from onnxlint.ort.optimizer.graph_utils import is_supported, one_element, producer, since, single_reader
from onnxlint.ort.optimizer.initializers import same_dim

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState
    from onnxlint.ort.releases import Release

SHAPE_VERSIONS = (1, 13, 15, 19, 21, 23, 24, 25)  # measured: 1.24.4 fuses Shape-15 subgraphs
RESHAPE_LIKE = ("Reshape", "Squeeze", "Unsqueeze")
_RESHAPE = frozenset({"Reshape"})  # the nodes both passes look at (OptimizerState.nodes_of)
RESHAPE_READ_ONLY = True  # False: FuseContiguousReshapes looks at every Reshape (the same answer, slower; for tests)


class ReshapeFusion:
    name = "ReshapeFusion"

    def __init__(self, release: Release):
        self._dim_match = release.reshape_dim_match
        self._versions = release.reshape_fusion_versions

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        """reshape_fusion.cc (the release's Reshape versions, Release.reshape_fusion_versions): Reshape(x, Concat(...))
        where each Concat input is a constant, Unsqueeze(axes attribute [0])(Gather(Shape(x'), i)) for its position i
        with x' = x or of x's known shape (becomes 0, "copy the dim"), or one computed one-element value (becomes -1;
        at most one -1): the Concat becomes a constant and the nodes that only fed it go
        (RemoveNodesWithOneOutputBottomUp)."""
        changed = False
        if scope.parent is None:
            state.resolve_fused_reshapes()
        for r in state.nodes_of(scope, _RESHAPE):
            if not is_supported(r, state, "Reshape", self._versions) or len(r.inputs) < 2:
                continue
            shp = state.resolve(r.inputs[1])
            c = scope.producer.get(shp)
            if not is_supported(c, state, "Concat", (1, 4, 11, 13)) or (c.attr("axis") or 0) != 0:
                continue
            if shp in scope.outputs or len(state.live_readers(shp)) != 1:
                continue  # CheckOutputEdges(concat, 1), counted through eliminated Identities
            root = state.resolve(r.inputs[0])
            values: list[int | None] = []
            ok = True
            for v in c.inputs:
                if state.is_constant(scope, v) and state.own_constant(scope, v):  # AppendTensorFromInitializer
                    arr = state.value(scope, v)
                    values.extend([int(x) for x in np.asarray(arr).reshape(-1)] if arr is not None else [None])
                elif _copies_dim(state, scope, v, root, len(values), self._dim_match):
                    values.append(0)
                elif _one_element_subgraph(state, scope, v, root, self._dim_match):
                    values.append(-1)
                else:
                    ok = False
                    break
            if not ok or values.count(-1) > 1:
                continue
            state.remove(c, "eliminated", "fusion", "Concat building a Reshape's shape: ORT's ReshapeFusion replaces it by a constant")
            if scope.parent is None and self._dim_match:
                state.fused_reshape(shp, [v if v is not None else -1 for v in values])
            _drop_dead_producers(state, scope, c, "ReshapeFusion")
            changed = True
        return changed


def _unsqueeze0(n: NodeRef | None, state: OptimizerState) -> TypeGuard[NodeRef]:
    if not is_supported(n, state, "Unsqueeze", (1, 11, 13, 21, 23, 24, 25)):
        return False
    if n.has_attr("axes"):
        return list(n.attr("axes") or []) == [0]
    axes = state.value(n.scope, n.inputs[1]) if len(n.inputs) > 1 and n.inputs[1] else None  # Unsqueeze-13+: an input
    return axes is not None and [int(x) for x in np.asarray(axes).reshape(-1)] == [0]


def _copies_dim(state: OptimizerState, scope: GraphScope, v: str, root: str, k: int, dim_match: bool,
                check_only: bool = False) -> bool:
    u = producer(state, scope, v)
    if not _unsqueeze0(u, state):
        return False
    g = producer(state, scope, u.inputs[0])
    if not is_supported(g, state, "Gather", (1, 11, 13)) or len(g.inputs) < 2:
        return False
    sh = producer(state, scope, g.inputs[0])
    if not is_supported(sh, state, "Shape", SHAPE_VERSIONS):
        return False
    if check_only:
        return one_element(state, scope, g.inputs[1])
    # IsInitializerWithExpectedValue(..., is_constant=false): an initializer of this graph
    idx = state.value(scope, g.inputs[1]) if state.own_constant(scope, g.inputs[1]) else None
    if idx is None or idx.size != 1 or int(idx.reshape(-1)[0]) != k:
        return False
    src = state.resolve(sh.inputs[0])
    if src == root:
        return True
    # optimizer_utils::CompareShape: same rank, every dim the same value or the same symbolic name
    a, b = scope.type_of(src).shape, scope.type_of(root).shape
    if a is None or b is None:
        return False
    if dim_match:
        if k < len(a) and k < len(b) and same_dim(a[k], b[k]):
            return True
        # a dim the Shape's input has as a number, which the Reshape's input has too once the Reshapes before
        # it were fused (ORT infers shapes again after each pass, Graph::Resolve: a fused Reshape copies its input's
        # dims, and they flow on): state.fused_shape
        if k >= len(a) or not isinstance(a[k], int):
            return False
        known = state.shape(scope, root)  # data propagation: a cheap bound (what it cannot see, ORT cannot either)
        if known is None or k >= len(known) or known[k] != a[k]:
            return False
        b2 = state.fused_shape(scope, root)
        return b2 is not None and k < len(b2) and b2[k] == a[k]
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b))


def _slice_of_shape(state: OptimizerState, scope: GraphScope, v: str, root: str) -> bool:
    """Shape(root) -> Slice to one element -> Squeeze."""
    q = producer(state, scope, v)
    if not is_supported(q, state, "Squeeze", (1, 11, 13)):
        return False
    sl = producer(state, scope, q.inputs[0])
    if not is_supported(sl, state, "Slice", (1, 11, 13)):
        return False
    sh = producer(state, scope, sl.inputs[0])
    if not is_supported(sh, state, "Shape", SHAPE_VERSIONS) or state.resolve(sh.inputs[0]) != root:
        return False
    if len(sl.inputs) >= 3:
        st, en = state.value(scope, sl.inputs[1]), state.value(scope, sl.inputs[2])
    else:
        st, en = np.array(sl.attr("starts") or []), np.array(sl.attr("ends") or [])
    if st is None or en is None or st.size != 1 or en.size != 1:
        return False
    a, b = int(st.reshape(-1)[0]), int(en.reshape(-1)[0])
    return (b >= 2**31 - 1 and a == -1) or abs(b - a) == 1


def _one_element_subgraph(state: OptimizerState, scope: GraphScope, v: str, root: str, dim_match: bool) -> bool:
    if one_element(state, scope, v) or _copies_dim(state, scope, v, root, 0, dim_match, check_only=True):
        return True
    u = producer(state, scope, v)
    if not _unsqueeze0(u, state):
        return False
    b = producer(state, scope, u.inputs[0])
    if is_supported(b, state, "Div", (7, 13, 14)) or is_supported(b, state, "Mul", (7, 13, 14)):
        return all(one_element(state, scope, x) or _slice_of_shape(state, scope, x, root) for x in b.inputs)
    return one_element(state, scope, u.inputs[0]) or _slice_of_shape(state, scope, u.inputs[0], root)


def _drop_dead_producers(state: OptimizerState, scope: GraphScope, n: NodeRef, by: str) -> None:
    for v in n.inputs:
        v = state.resolve(v) if v else v
        p = scope.producer.get(v) if v else None
        if p is None or state.is_removed(p) or (p.op_type == "Constant" and p.domain == "ai.onnx"):
            continue
        if any(o and state.live(o, scope) for o in p.outputs):
            continue
        state.remove(p, "eliminated", "fusion", f"{p.op_type} only computed a Reshape's shape: removed by ORT's {by}")
        _drop_dead_producers(state, scope, p, by)


class ContiguousReshapeFusion:
    """ReshapeFusion::FuseContiguousReshapes, for a first Reshape whose since-version is at most `upto`."""

    name = "ReshapeFusion.FuseContiguousReshapes"

    def __init__(self, upto: int):
        self._upto = upto

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        """FuseContiguousReshapes: Reshape/Squeeze/Unsqueeze nodes in a row, each the only reader of the one before,
        whose last output has a static shape, become one Reshape (`<first>_new_reshape`). The first node stands for
        it here; the others go."""
        changed = False
        # the names a Reshape/Squeeze/Unsqueeze reads first (any graph, removed ones included): a Reshape whose
        # output is not among them starts no run (the chain follows names as written, not rewirings); read for
        # the main graph (the whole model's nodes, not once per body)
        read = {n.inputs[0] for op in RESHAPE_LIKE for n in state.nodes_of_op(op) if n.inputs} \
            if RESHAPE_READ_ONLY and scope.parent is None else None
        for first in state.nodes_of(scope, _RESHAPE):
            if read is not None and (not first.outputs or first.outputs[0] not in read):
                continue
            if not _reshape_like(first) or first.op_type != "Reshape" or state.is_removed(first) \
                    or (since(first) or 0) > self._upto:
                continue  # measured: a run that starts with Squeeze/Unsqueeze (small shape tensors) stays
            before = scope.producer.get(state.resolve(first.inputs[0]))
            if _reshape_like(before) and before.op_type == "Reshape" and not state.is_removed(before) \
                    and single_reader(state, scope, before.outputs[0]) is first:
                continue  # not the head of its chain (a Squeeze/Unsqueeze before it starts none: measured)
            chain = [first]
            while True:
                nxt = single_reader(state, scope, chain[-1].outputs[0])
                if not _reshape_like(nxt) or nxt.inputs[0] != chain[-1].outputs[0]:
                    break
                chain.append(nxt)
            if len(chain) < 2:
                continue
            last = chain[-1].outputs[0]
            dims = state.shape(scope, last)
            if dims is None or not all(isinstance(d, int) and d >= 0 for d in dims):
                continue
            for m in chain[1:]:
                state.remove(m, "eliminated", "fusion",
                            f"{m.op_type} after {chain[0].op_type}: ORT's ReshapeFusion makes the run one Reshape",
                            {m.outputs[0]: first.outputs[0]})
            changed = True
        return changed


def _reshape_like(n: NodeRef | None) -> TypeGuard[NodeRef]:
    return n is not None and n.op_type in RESHAPE_LIKE and n.domain == "ai.onnx" and bool(n.inputs) \
        and len(n.outputs) == 1 and bool(n.outputs[0])
