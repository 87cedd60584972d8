"""TransposeOptimizer (core/optimizer/transpose_optimization/), its certain part: a Transpose whose output
reaches, through one unary elementwise op or a Softmax/LogSoftmax/Hardmax (opset 13+), a Transpose with the
inverse permutation is pushed through and cancels it; both go. Pushing Transposes elsewhere (where ORT creates
new Transpose nodes) is not modelled."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard, cast

from onnxlint.ort.optimizer.graph_utils import single_reader

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState

PUSH_THROUGH = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Erf", "Softplus",
                "Softsign", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign", "Not", "Identity", "Cast", "LeakyRelu",
                "Elu", "Selu", "HardSigmoid", "IsNaN", "IsInf"}
AXIS_OPS = {"Softmax", "LogSoftmax", "Hardmax"}  # single-axis since opset 13: the axis is remapped


class TransposeOptimizer:
    name = "TransposeOptimizer"

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        """The part of ORT's TransposeOptimizer (Level 1) that is certain: a Transpose whose output reaches, through
        one unary elementwise op or a Softmax/LogSoftmax/Hardmax (opset 13+), a Transpose with the inverse
        permutation is pushed through and cancels it; both go. (Pushing Transposes further, where ORT creates new
        Transpose nodes elsewhere, is not modelled.)"""
        changed = False
        for t1 in state.nodes(scope):
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


def _is_transpose(n: NodeRef | None) -> TypeGuard[NodeRef]:
    return n is not None and n.op_type == "Transpose" and n.domain == "ai.onnx" and len(n.inputs) == 1 \
        and len(n.outputs) == 1 and bool(n.outputs[0])
