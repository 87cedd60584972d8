"""MatMulAddFusion (core/optimizer/matmul_add_fusion.cc): a MatMul and the Add of a bias after it become one
Gemm."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxlint.ort.optimizer.graph_utils import is_supported

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.refined_shapes import Dims
    from onnxlint.ort.optimizer.state import OptimizerState

_MATMUL = frozenset({"MatMul"})  # the nodes the pass looks at (OptimizerState.nodes_of)
ADD_READ_ONLY = True  # False: every MatMul is looked at (the same answer, slower; for tests)


class MatMulAddFusion:
    name = "MatMulAddFusion"

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        """matmul_add_fusion.cc: MatMul (1/9/13) whose only reader is an Add (7/13/14), float/float16/bfloat16,
        B of rank 2 with the bias (N), (1, N), (M, 1) or (M, N); an A of another rank needs a static shape (ORT
        reshapes around the Gemm), and the attention pattern (MatMuls after a LayerNormalization) is left for
        AttentionFusion. Both nodes become one Gemm; here the MatMul stands for it (placed as MatMul would be:
        Gemm has a CUDA kernel for each of these types) and the Add is removed."""
        changed = False
        # what some Add reads (any graph, removed ones included, through rewirings): a MatMul whose output is not
        # among it has no Add to fuse with, nor gets one in this run (its removals rewire Add outputs to MatMuls
        # already looked at); read for the main graph (the whole model's Adds, not once per body)
        added = {state.resolve(v) for a in state.nodes_of_op("Add") for v in a.inputs if v} \
            if ADD_READ_ONLY and scope.parent is None else None
        for mm in state.nodes_of(scope, _MATMUL):
            if added is not None and (not mm.outputs or mm.outputs[0] not in added):
                continue
            if not is_supported(mm, state, "MatMul", (1, 9, 13)) or len(mm.inputs) < 2 or not mm.outputs or not mm.outputs[0]:
                continue
            out = mm.outputs[0]
            if out in scope.outputs:
                continue
            readers = state.live_readers(out)
            if len(readers) != 1 or sum(1 for v in readers[0].inputs if v and state.resolve(v) == out) != 1:
                continue
            add = readers[0]
            if not is_supported(add, state, "Add", (7, 13, 14)) or add.scope is not scope or len(add.inputs) != 2:
                continue
            mtype = scope.type_of(mm.inputs[0]).type_str
            if mtype != scope.type_of(add.inputs[0]).type_str or mtype not in ("tensor(float)", "tensor(float16)",
                                                                                "tensor(bfloat16)"):
                continue
            a, b = _dims(state, scope, mm.inputs[0]), _dims(state, scope, mm.inputs[1])
            if a is None or b is None or len(b) != 2:
                continue
            need_reshape = len(a) != 2
            if need_reshape:
                if _attention_input(state, scope, mm) or not all(isinstance(d, int) and d >= 0 for d in a) \
                        or not all(isinstance(d, int) for d in b):
                    continue
            bias_v = add.inputs[1] if state.resolve(add.inputs[0]) == out else add.inputs[0]
            bias = _dims(state, scope, bias_v)
            n = b[1]

            def same(x: object, y: object) -> bool:
                return x is not None and x == y

            if bias is None:
                continue
            valid = (len(bias) == 1 and same(bias[0], n)) or (
                not need_reshape and len(bias) == 2 and bias[0] == 1 and same(bias[1], n)) or (
                not need_reshape and len(bias) == 2 and same(bias[0], a[0]) and (bias[1] == 1 or same(bias[1], n)))
            if not valid:
                continue
            # the MatMul stands for the Gemm (same inputs, placed where MatMul would be); the Add goes
            state.remove(add, "eliminated", "fusion",
                        "Add of a bias after a MatMul: ORT's MatMulAddFusion makes them one Gemm",
                        {add.outputs[0]: out})
            changed = True
        return changed


def _dims(state: OptimizerState, scope: GraphScope, value: str) -> Dims | None:
    """Dims as ORT's inference has them: numbers where known (data propagation included), else the symbol."""
    declared = scope.type_of(state.resolve(value)).shape
    refined = state.shape(scope, value)
    if declared is None:
        return refined
    if refined is None or len(refined) != len(declared):
        return declared
    return tuple(r if isinstance(r, int) else d for r, d in zip(refined, declared))


def _attention_input(state: OptimizerState, scope: GraphScope, mm: NodeRef) -> bool:
    """AttentionPatternCache: A comes from a LayerNormalization read by exactly one Add, three MatMuls and
    otherwise only Shape nodes."""
    ln = scope.producer.get(state.resolve(mm.inputs[0]))
    if ln is None or ln.op_type != "LayerNormalization" or not ln.outputs:
        return False
    readers = [r for o in ln.outputs if o for r in state.live_readers(o)]
    kinds = [r.op_type for r in readers]
    return kinds.count("Add") == 1 and kinds.count("MatMul") == 3 and kinds.count("Shape") == len(kinds) - 4
