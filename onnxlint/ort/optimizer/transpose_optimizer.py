"""TransposeOptimizer (core/optimizer/transpose_optimization/onnx_transpose_optimization.cc), its certain parts:

- cancellation: a Transpose whose output reaches, through one unary elementwise op or a Softmax/LogSoftmax/Hardmax
  (opset 13+), a Transpose with the inverse permutation is pushed through and cancels it; both go;
- the Shape handler (HandleShape): OptimizeImpl visits each node and pushes a Transpose feeding it through when
  the cost check passes; for a Shape that is when every reader of the Transpose's output has a handler
  (CanLikelyRemoveTranspose) and the output is not all 1s (EstimateValueRank): Shape(Transpose(x, perm))
  becomes Gather(Shape(x), perm), a new Gather ORT's GetCpuPreferredNodes keeps on CPU, and the Transpose goes
  when the Shape was its only reader. Measured on 1.24.4 and 1.31.1 (every Shape(Transpose) of the producer
  set's diffusers, BERT and Keras attention blocks; not when a MatMul, which has no handler, reads the Transpose).

Pushing Transposes elsewhere (where ORT creates new Transpose nodes after the node it pushed through) is not
modelled."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard, cast

from onnxlint.ort.optimizer.graph_utils import single_reader
from onnxlint.ort.optimizer.optimized import Created

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState

PUSH_THROUGH = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Erf", "Softplus",
                "Softsign", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign", "Not", "Identity", "Cast", "LeakyRelu",
                "Elu", "Selu", "HardSigmoid", "IsNaN", "IsInf"}
_SHAPE = frozenset({"Shape"})  # the nodes HandleShape looks at (OptimizerState.nodes_of)
_TRANSPOSE = frozenset({"Transpose"})  # the nodes the cancellation starts from
AXIS_OPS = {"Softmax", "LogSoftmax", "Hardmax"}  # single-axis since opset 13: the axis is remapped


# handler_map: the ai.onnx ops OptimizeImpl can push a Transpose through (Resize only through an EP's own handler)
HANDLED = frozenset({
    "Cast", "Exp", "Identity", "LeakyRelu", "Log", "Reciprocal", "Relu", "Sigmoid", "Sqrt", "Tanh", "Abs", "Not", "Ceil",
    "Floor", "Neg", "Erf", "HardSigmoid", "Round", "IsInf", "IsNaN", "Selu", "Shrink", "Sign", "Softplus", "Softsign",
    "ThresholdedRelu", "Celu", "HardSwish", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh",
    "Acosh", "Atanh", "Add", "Max", "Min", "Mul", "Sub", "Div", "And", "Or", "Xor", "Mod", "PRelu", "BitShift", "Equal",
    "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Mean", "Sum", "Pow", "Where", "Clip", "CastLike", "Transpose",
    "Concat", "Split", "Shape", "Pad", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
    "ReduceProd", "ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ArgMin", "ArgMax", "Squeeze", "Unsqueeze",
    "Slice", "Tile", "Softmax", "Hardmax", "LogSoftmax", "QuantizeLinear", "DequantizeLinear", "Reshape"})
GATHER_DETAIL = ("ORT's TransposeOptimizer moves the Transpose feeding a Shape past it (Shape(Transpose(x)) becomes "
                 "Gather(Shape(x), perm)); GetCpuPreferredNodes keeps this shape-sized Gather on CPU")


class TransposeOptimizer:
    name = "TransposeOptimizer"

    def __init__(self) -> None:
        self._moved: set[int] = set()  # the Shapes whose Transpose was moved past them (read the Transpose's input)

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        changed = self._cancel(state, scope)
        return self._shapes(state, scope) or changed

    def _shapes(self, state: OptimizerState, scope: GraphScope) -> bool:
        """HandleShape, for each Shape in ORT's order whose input a Transpose makes."""
        changed = False
        for n in state.nodes_of(scope, _SHAPE):
            if n.op_type != "Shape" or n.domain != "ai.onnx" or n.index in self._moved or not n.inputs:
                continue
            t = scope.producer.get(state.resolve(n.inputs[0]))
            if not _is_transpose(t) or state.is_removed(t) or not _pushable(state, scope, t):
                continue
            self._moved.add(n.index)
            state.create(Created("Gather", "Gather", "ai.onnx", self.name, n, "shape-consumer", GATHER_DETAIL))
            if state.live_readers(t.outputs[0]) == [n] and t.outputs[0] not in scope.outputs:
                state.remove(t, "eliminated", "fusion", "Transpose moved past the Shape reading it (its only reader): "
                             "ORT's TransposeOptimizer reads the shape of its input instead", {t.outputs[0]: t.inputs[0]})
                changed = True
        return changed

    def _cancel(self, state: OptimizerState, scope: GraphScope) -> bool:
        """The part of ORT's TransposeOptimizer (Level 1) that is certain: a Transpose whose output reaches, through
        one unary elementwise op or a Softmax/LogSoftmax/Hardmax (opset 13+), a Transpose with the inverse
        permutation is pushed through and cancels it; both go. (Pushing Transposes further, where ORT creates new
        Transpose nodes elsewhere, is not modelled.)"""
        changed = False
        for t1 in state.nodes_of(scope, _TRANSPOSE):
            if not _is_transpose(t1) or state.is_removed(t1):
                continue
            mid, t2 = single_reader(state, scope, t1.outputs[0]), None
            if mid is None:
                continue
            if _is_transpose(mid):
                mid, t2 = None, mid
            elif mid.domain == "ai.onnx" and (mid.op_type in PUSH_THROUGH or (
                    mid.op_type in AXIS_OPS and cast(int, mid.opset) >= 13)) and len(mid.outputs) == 1:
                t2 = single_reader(state, scope, mid.outputs[0])
            if t2 is None or not _is_transpose(t2) or t2.outputs[0] in scope.outputs:
                continue
            p1, p2 = t1.attr("perm"), t2.attr("perm")
            if not p1 or not p2 or len(p1) != len(p2) or [p1[i] for i in p2] != list(range(len(p1))):
                continue
            detail = "Transpose cancelled by the inverse Transpose after it: ORT's TransposeOptimizer removes both"
            if mid is None:
                state.remove(t1, "eliminated", "fusion", detail)
                state.remove(t2, "eliminated", "fusion", detail, {t2.outputs[0]: t1.inputs[0]})
            else:
                state.remove(t1, "eliminated", "fusion", detail, {t1.outputs[0]: t1.inputs[0]})
                state.remove(t2, "eliminated", "fusion", detail, {t2.outputs[0]: mid.outputs[0]})
            changed = True
        return changed


def _pushable(state: OptimizerState, scope: GraphScope, t: NodeRef) -> bool:
    """The cost check of pushing Transpose t through a Shape reading it: every reader of its output has a handler
    and the output is no graph output (CanLikelyRemoveTranspose), its estimated rank (dims other than 1; 5 when
    unknown) is not 0, its perm is valid; and no other Transpose up its input may reach it first (ORT pushes that
    one down through the ops with handlers and composes the two, maybe to nothing: not modelled, no Gather
    predicted; measured on a Keras export where a 4-D Transpose four handled ops up made the Shape's go)."""
    perm, out = t.attr("perm"), t.outputs[0]
    if not perm or sorted(perm) != list(range(len(perm))) or out in scope.outputs:
        return False
    if _transpose_upstream(state, scope, t):
        return False
    readers = state.live_readers(out)
    if not readers or any(r.scope is not scope or r.domain != "ai.onnx" or r.op_type not in HANDLED for r in readers):
        return False
    dims = state.shape(scope, out)
    return dims is None or any(d != 1 for d in dims)


def _transpose_upstream(state: OptimizerState, scope: GraphScope, t: NodeRef, budget: int = 64) -> bool:
    """Whether a live Transpose feeds t's input through nodes with handlers (at most `budget` nodes looked at)."""
    todo, seen = [t], {t.index}
    while todo and budget > 0:
        n = todo.pop()
        for v in n.inputs:
            p = scope.producer.get(state.resolve(v)) if v else None
            if p is None or p.index in seen or state.is_removed(p):
                continue
            seen.add(p.index)
            budget -= 1
            if _is_transpose(p):
                return True
            if p.domain == "ai.onnx" and p.op_type in HANDLED:
                todo.append(p)
    return False


def _is_transpose(n: NodeRef | None) -> TypeGuard[NodeRef]:
    return n is not None and n.op_type == "Transpose" and n.domain == "ai.onnx" and len(n.inputs) == 1 \
        and len(n.outputs) == 1 and bool(n.outputs[0])
