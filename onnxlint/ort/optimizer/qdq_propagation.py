"""QDQPropagationTransformer (core/optimizer/qdq_transformer/qdq_propagation.cc), the part that removes nodes:
QDQ::CancelOutRedundantDQQPairs (qdq_util.cc). A DequantizeLinear whose one reader is a QuantizeLinear with the same
scalar constant scale and zero point (IsQDQPairSupported) is a no-op pair: both go, and the QuantizeLinear's readers
read the DequantizeLinear's input. The reader counted is the one of the original DequantizeLinear, after
EnsureUniqueDQForNodeUnit gave its other readers copies. Measured on 1.24.4 and 1.31.1 (ai.onnx and com.microsoft,
with an Identity in between that EliminateIdentity removes first, with a constant and with a graph input: ORT's
quantizer writes such a pair for a tied bias in its 16-bit QDQ BERT).

Not modelled: the propagation itself (PropagateDQForward, PropagateQBackward), which puts new Q/DQ pairs after a
DequantizeLinear's Reshape/Transpose/... reader or before a QuantizeLinear's producer where the model has none
(measured on both releases; ORT's quantizer writes those pairs itself, and no model of the measured sets lacks one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from onnxlint.ort import schema_registry
from onnxlint.ort.optimizer.ensure_unique_dq_for_node_unit import match_dq_node
from onnxlint.ort.optimizer.initializers import small_array

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.state import OptimizerState

Q_VERSIONS = {"ai.onnx": (10, 13, 19, 21, 23), "com.microsoft": (1,)}  # QDQ::MatchQNode, as match_dq_node


def match_q_node(n: NodeRef) -> bool:
    """QDQ::MatchQNode: a QuantizeLinear of a version the QDQ transformers take."""
    versions = Q_VERSIONS.get(n.domain)
    return n.op_type == "QuantizeLinear" and versions is not None \
        and schema_registry.since_version(n.op_type, n.opset, n.domain) in versions

_DQ = frozenset({"DequantizeLinear"})  # the nodes the pass looks at (OptimizerState.nodes_of)


class QDQPropagationTransformer:
    name = "QDQPropagationTransformer"

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        changed = False
        for dq in state.nodes_of(scope, _DQ):
            if dq.op_type != "DequantizeLinear" or state.is_removed(dq) or not match_dq_node(dq) or not dq.outputs \
                    or dq.outputs[0] in scope.outputs:
                continue
            readers = state.original_readers(dq.outputs[0])
            if len(readers) != 1:
                continue
            q = readers[0]
            if q.scope is not scope or not match_q_node(q) or any(o in scope.outputs for o in q.outputs if o) \
                    or sum(1 for v in q.inputs if v and state.resolve(v) == dq.outputs[0]) != 1 \
                    or state.resolve(q.inputs[0]) != dq.outputs[0] or not _same_parameters(state, scope, q, dq):
                continue
            detail = ("DequantizeLinear -> QuantizeLinear with the same scale and zero point, a no-op pair: ORT's "
                      "QDQPropagationTransformer removes both (CancelOutRedundantDQQPairs)")
            state.remove(dq, "eliminated", "noop", detail)
            state.remove(q, "eliminated", "noop", detail, {q.outputs[0]: dq.inputs[0]})
            changed = True
        return changed


def _same_parameters(state: OptimizerState, scope: GraphScope, q: NodeRef, dq: NodeRef) -> bool:
    """QDQ::IsQDQPairSupported: both have their three inputs, scale and zero point are scalar constants, the zero
    points of one type and value, the scales of one value."""
    if len(q.inputs) != 3 or len(dq.inputs) != 3 or not all(q.inputs) or not all(dq.inputs):
        return False
    got = []
    for v in (q.inputs[1], q.inputs[2], dq.inputs[1], dq.inputs[2]):
        t = state.tensor(scope, state.resolve(v))
        if t is None or len(t.dims) > 1 or (len(t.dims) == 1 and t.dims[0] != 1):
            return False
        arr = small_array(t)
        if arr is None or arr.size != 1:
            return False
        got.append((t.data_type, arr.reshape(-1)[0]))
    (_, q_scale), (q_zt, q_zp), (_, dq_scale), (dq_zt, dq_zp) = got
    return q_zt == dq_zt and bool(q_zp == dq_zp) and bool(np.float32(q_scale) == np.float32(dq_scale))
