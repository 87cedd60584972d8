"""The rule-based transformer (core/optimizer/rule_based_graph_transformer.cc) and its Level-1 rewrite rules
(graph_transformer_utils.cc GenerateRewriteRules), as a table keyed by op: EliminateIdentity, EliminateDropout,
CastElimination, NoopElimination (Add/Sub 0, Mul/Div 1, one-element constants), UnsqueezeElimination (an
Unsqueeze, axes as an attribute, of an initializer), EliminateSlice (a Slice that keeps everything),
ExpandElimination (a target shape the input already has), PreShapeNodeElimination (a Cast only Shapes read),
ConvBNFusion / ConvAddFusion / ConvMulFusion (a
BatchNormalization / Add / Mul with constant per-channel operands after a Conv with constant weights),
BatchNormalizationMulFusion / BatchNormalizationAddFusion (BatchNormalization-7)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from onnxlint.ort.optimizer.graph_utils import bypass_ok, can_remove, is_supported, since

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.refined_shapes import Dims
    from onnxlint.ort.optimizer.state import OptimizerState
    from onnxlint.ort.releases import Release


@dataclass(frozen=True)
class Rewrite:
    """What a rule does to its node: it goes (status, reason, detail), its consumers read alias instead, and
    `constant` is an initializer now."""

    status: str
    reason: str
    detail: str
    alias: dict[str, str] | None = None
    constant: str | None = None


Rule = Callable[["OptimizerState", "GraphScope", "NodeRef", "Release"], "Rewrite | None"]


def _eliminated(state: OptimizerState, scope: GraphScope, n: NodeRef, why: tuple[str, str] | None) -> Rewrite | None:
    """The node goes; RemoveNode rewires its consumers along its one input edge (a fusion: to the node it is
    folded into)."""
    if why is None:
        return None
    reason, detail = why
    if reason.startswith("fusion"):
        into = scope.producer[state.resolve(n.inputs[0])]
        return Rewrite("eliminated", "fusion", detail, {n.outputs[0]: into.outputs[0]})
    keep = n.inputs[0]
    if reason == "noop" and state.is_constant(scope, n.inputs[0]):
        keep = n.inputs[1]  # 0 + x: the consumers read x (RemoveNode follows the one input edge)
    return Rewrite("eliminated", reason, detail, {n.outputs[0]: keep})


def eliminate_identity(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    if not bypass_ok(state, scope, n):
        return None
    return _eliminated(state, scope, n, ("identity", "Identity: ORT's EliminateIdentity removes it"))


def eliminate_dropout(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    if (len(n.outputs) < 2 or not n.outputs[1] or not state.live(n.outputs[1], scope)) \
            and can_remove(state, scope, n) and not _training(state, scope, n, release):
        return _eliminated(state, scope, n, ("dropout", "Dropout at inference: ORT's EliminateDropout removes it"))
    return None


def _training(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> bool:
    """A Dropout EliminateDropout keeps for its training_mode input (Release.dropout_reads_training_mode: up to
    1.31 it never looks at it, so ORT's outputs there are deterministic while every other runtime's are random;
    later sources keep one whose training_mode is not a constant false)."""
    if not release.dropout_reads_training_mode:
        return False
    if len(n.inputs) >= 3 and n.inputs[2]:
        v = state.value(scope, n.inputs[2])
        return v is None or bool(np.asarray(v).reshape(-1)[0])
    return False


def cast_elimination(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    if not can_remove(state, scope, n):
        return None
    src = scope.type_of(n.inputs[0]).dtype
    dst = scope.type_of(n.outputs[0]).dtype
    if src and dst and src == dst:
        return _eliminated(state, scope, n, ("cast", f"Cast to its input's own type ({src}): ORT's CastElimination removes it"))
    return None


def pre_shape_node_elimination(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    """PreShapeNodeElimination (pre_shape_node_elimination.cc, after CastElimination): a Cast whose every consumer
    is a Shape goes and the Shapes read its input, whatever the dims (CanRemoveNode: not a graph output; a graph
    input or an initializer as its input will do). The sources check the since-versions {13, 15, 19} (of the Cast
    in some, of the Shapes in others: one opset, the same answer); Release.pre_shape_versions says which a release
    takes (measured: a Cast read by a Shape and a Size, or by a Shape in an If branch, stays)."""
    versions = release.pre_shape_versions
    if not versions or since(n) not in versions:
        return None
    readers = state.live_readers(n.outputs[0])
    if not readers or any(r.scope is not scope or r.op_type != "Shape" or r.domain != "ai.onnx" or since(r) not in versions
                          for r in readers):
        return None
    if not can_remove(state, scope, n):
        return None
    return _eliminated(state, scope, n, ("cast", "Cast read only by Shapes: ORT's PreShapeNodeElimination removes it"))


def noop_elimination(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    # _noop needs a constant operand: without one it finds nothing, and can_remove (two input edges read, asked of
    # every Add/Sub/Mul/Div) need not be asked (both only read the graph)
    if len(n.inputs) == 2 and any(state.is_constant(scope, n.inputs[k]) for k in _noop_sides(n.op_type)) \
            and can_remove(state, scope, n):
        return _eliminated(state, scope, n, _noop(state, scope, n))
    return None


def unsqueeze_elimination(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    """UnsqueezeElimination (axes as an attribute, opset < 13): an Unsqueeze of an initializer, from this graph
    or an outer one, becomes an initializer."""
    if len(n.inputs) == 1 and n.attr("axes") is not None and can_remove(state, scope, n, replaced_by_initializer=True) \
            and state.tensor(scope, state.resolve(n.inputs[0])) is not None:
        return Rewrite("folded", "unsqueeze", "Unsqueeze of an initializer: ORT's UnsqueezeElimination replaces it by an initializer",
                       constant=n.outputs[0])
    return None


def eliminate_slice(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    if not can_remove(state, scope, n):
        return None
    return _eliminated(state, scope, n, _noop_slice(state, scope, n))


def expand_elimination(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    if len(n.inputs) != 2 or not can_remove(state, scope, n):
        return None
    return _eliminated(state, scope, n, _noop_expand(state, scope, n))


def conv_fusion(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    return _eliminated(state, scope, n, _conv_fusion(state, scope, n))


def bn_fusion(state: OptimizerState, scope: GraphScope, n: NodeRef, release: Release) -> Rewrite | None:
    return _eliminated(state, scope, n, _bn_fusion(state, scope, n))


# op -> its rules, tried in this order; the first that applies rewrites the node
RULES: dict[str, tuple[Rule, ...]] = {
    "Identity": (eliminate_identity,),
    "Dropout": (eliminate_dropout,),
    "Cast": (cast_elimination, pre_shape_node_elimination),
    "Add": (noop_elimination, conv_fusion, bn_fusion),  # an Add that is no no-op goes on to the fusions
    "Sub": (noop_elimination,),
    "Mul": (noop_elimination, conv_fusion, bn_fusion),
    "Div": (noop_elimination,),
    "Unsqueeze": (unsqueeze_elimination,),
    "Slice": (eliminate_slice,),
    "Expand": (expand_elimination,),
    "BatchNormalization": (conv_fusion,),
}
_RULED = frozenset(RULES)  # the nodes the pass looks at (OptimizerState.nodes_of)


class RuleBasedGraphTransformer:
    """Each live ai.onnx node, in ORT's order, through the rules registered for its op."""

    name = "RuleBasedTransformer"

    def __init__(self, release: Release):
        self._release = release

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        changed = False
        release = self._release
        for n in state.nodes_of(scope, _RULED):
            if n.domain != "ai.onnx" or not n.inputs or not n.outputs:
                continue
            rules = RULES.get(n.op_type)
            if rules is None:
                continue
            for rule in rules:
                done = rule(state, scope, n, release)
                if done is not None:
                    state.remove(n, done.status, done.reason, done.detail, done.alias)
                    if done.constant is not None:
                        state.made_constant(done.constant)
                    changed = True
                    break
        return changed


def _noop(state: OptimizerState, scope: GraphScope, n: NodeRef) -> tuple[str, str] | None:
    """NoopElimination: x+0, 0+x, x-0, x*1, 1*x, x/1 where the other operand already has the output's shape."""
    op = n.op_type
    ident = 0 if op in ("Add", "Sub") else 1
    out_shape: Dims | None = None
    for k in _noop_sides(op):
        c = state.one_element_value(scope, n.inputs[k])
        if c is None or c.reshape(-1)[0] != ident:
            continue  # noop_elimination.cc: a one-element initializer only
        if out_shape is None:  # asked only here: a shape may start data propagation (RefinedShapes)
            out_shape = state.shape(scope, n.outputs[0])
        other = n.inputs[1 - k]
        oshape = state.shape(scope, other)
        if state.is_constant(scope, other):
            continue
        if oshape is None or c.ndim > len(oshape) or (  # NodeArg::Shape() null: rank unknown, kept
                out_shape is not None and oshape != out_shape):
            continue
        if scope.type_of(n.inputs[k]).dtype != scope.type_of(other).dtype:
            continue
        return ("noop", f"{op} by the constant {ident}: ORT's NoopElimination removes it")
    return None


def _noop_sides(op: str) -> tuple[int, ...]:
    """The inputs NoopElimination takes the identity constant from: either of an Add/Mul, the second of a Sub/Div."""
    return (0, 1) if op in ("Add", "Mul") else (1,)


def _noop_expand(state: OptimizerState, scope: GraphScope, n: NodeRef) -> tuple[str, str] | None:
    """expand_elimination.cc: a constant int64 target shape no longer than the input's rank whose every
    trailing entry is 1 or the input's (known) dim."""
    ishape = state.shape(scope, n.inputs[0])
    v = state.value(scope, n.inputs[1])
    if ishape is None or v is None or v.dtype != np.int64 or v.ndim != 1 or v.size == 0 or v.size > len(ishape):
        return None
    for d, t in zip(reversed(ishape), reversed([int(x) for x in v])):
        if t > 1 and d != t:
            return None
    if all(int(x) == 1 for x in v):
        return ("expand", "Expand to a shape of ones: ORT's ExpandElimination removes it")
    return ("expand", "Expand to the shape its input already has: ORT's ExpandElimination removes it")


def _noop_slice(state: OptimizerState, scope: GraphScope, n: NodeRef) -> tuple[str, str] | None:
    if len(n.inputs) < 3:
        return None
    starts, ends = state.value(scope, n.inputs[1]), state.value(scope, n.inputs[2])
    steps = state.value(scope, n.inputs[4]) if len(n.inputs) > 4 and n.inputs[4] else None
    if starts is None or ends is None or (len(n.inputs) > 4 and n.inputs[4] and steps is None):
        return None
    if np.all(starts == 0) and np.all(ends >= np.iinfo(np.int32).max) and (steps is None or np.all(steps == 1)):
        return ("slice", "Slice that keeps every element: ORT's EliminateSlice removes it")
    return None


def _conv_fusion(state: OptimizerState, scope: GraphScope, n: NodeRef) -> tuple[str, str] | None:
    """ConvBNFusion / ConvAddFusion / ConvMulFusion (conv_bn_fusion.cc, conv_add_fusion.cc, conv_mul_fusion.cc): a
    BatchNormalization / Add / Mul with constant per-channel operands after a Conv with constant weights."""
    src = state.resolve(n.inputs[0])
    conv = scope.producer.get(src)
    if conv is None or conv.op_type != "Conv" or conv.domain != "ai.onnx" or state.is_removed(conv):
        return None
    if len(conv.inputs) < 2 or not state.is_constant(scope, conv.inputs[1]):
        return None
    if len(conv.inputs) > 2 and conv.inputs[2] and not state.is_constant(scope, conv.inputs[2]):
        return None
    if src in scope.outputs or len(state.live_readers(src)) != 1:
        return None
    if n.op_type == "BatchNormalization":
        if len(n.outputs) > 1 and any(o for o in n.outputs[1:]):
            return None
        if not all(v and state.is_constant(scope, v) for v in n.inputs[1:5]):
            return None
        return ("fusion-bn", "BatchNormalization after a Conv: ORT's ConvBNFusion folds it into the Conv")
    other = n.inputs[1] if len(n.inputs) > 1 else ""
    if not other or not state.is_constant(scope, other):
        return None
    shp = state.shape(scope, other)
    wshape = state.shape(scope, conv.inputs[1])
    if shp is None or wshape is None or not wshape or wshape[0] is None:
        return None
    dims = [d for d in shp]
    # per-channel [C,1,1] or [1,C,1,1] (or a scalar for Mul/Add of rank 1 shapes)
    ok = len(dims) >= 1 and dims.count(1) >= len(dims) - 1 and (wshape[0] in dims or all(d == 1 for d in dims))
    if not ok:
        return None
    name = "ConvAddFusion" if n.op_type == "Add" else "ConvMulFusion"
    return ("fusion-" + n.op_type.lower(), f"{n.op_type} of a per-channel constant after a Conv: ORT's {name} folds it into the Conv")


def _bn_fusion(state: OptimizerState, scope: GraphScope, n: NodeRef) -> tuple[str, str] | None:
    """BatchNormalizationMulFusion / BatchNormalizationAddFusion (bn_mul_fusion.cc, bn_add_fusion.cc): a Mul /
    Add by a per-channel float constant right after a BatchNormalization with constant scale and B, whose
    only reader it is, is folded into the BatchNormalization's scale and B. BatchNormalization-7 and Mul-7 /
    Add-7 only (measured: a BatchNormalization-9 keeps its Mul and Add)."""
    src = state.resolve(n.inputs[0])
    bn = scope.producer.get(src)
    if bn is None or not is_supported(bn, state, "BatchNormalization", (7,)) or since(n) != 7:
        return None
    if sum(len(state.live_readers(o)) for o in bn.outputs if o) != 1 \
            or any(o in scope.outputs for o in bn.outputs if o):
        return None
    if len(n.inputs) < 2 or not n.inputs[1] or not state.is_constant(scope, n.inputs[1]) \
            or any(o in scope.outputs for o in n.outputs if o):
        return None
    if len(bn.inputs) < 3 or not all(state.is_constant(scope, v) for v in bn.inputs[1:3]):
        return None
    floats = ("tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)")
    types = {scope.type_of(v).type_str for v in (n.inputs[1], bn.inputs[2])}
    if len(types) != 1 or not types <= set(floats) or (n.op_type == "Mul" and scope.type_of(bn.inputs[1]).type_str not in types):
        return None
    scale, bias, other = (state.shape(scope, v) for v in (bn.inputs[1], bn.inputs[2], n.inputs[1]))
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
