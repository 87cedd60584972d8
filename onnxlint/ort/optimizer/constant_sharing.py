"""ConstantSharing (core/optimizer/constant_sharing.cc): initializers of 1 to 8 elements with the same dtype, shape
and bytes become one, so CommonSubexpressionElimination sees them as one value (IsAllowedToShare: an empty
tensor, the shape of a Reshape to a scalar, is never shared; paddle2onnx's duplicated LSTM-state chains stay two).

It runs once (ShouldOnlyApplyOnce), in the first step right after the rule-based pass, on the main graph only
(verbose transformer log of 1.24.4: ConstantSharing appears in step 1 only). Modelled as the key CSE compares
those values by (OptimizerState.canon).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx

from onnxlint.ort.optimizer.initializers import small_array

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope
    from onnxlint.ort.optimizer.state import OptimizerState

SHARE_MAX_ELEMENTS = 8  # constant_sharing.cc: only small initializers are shared
SHARE_TYPES = (1, 10, 11, 6, 7)  # float, float16, double, int32, int64 (constant_sharing.cc)


def shared_key(state: OptimizerState, scope: GraphScope, value: str) -> object:
    """What CSE compares a shared constant by: its dtype, shape and bytes (the value's name when it is not one
    ConstantSharing merges after all: too large, an odd dtype)."""
    t = state.tensor(scope, value)
    if t is not None:
        arr = small_array(t, SHARE_MAX_ELEMENTS)
        return value if arr is None or arr.size == 0 else ("const", t.data_type, tuple(t.dims), arr.tobytes())
    arr = state.value(scope, value)  # an initializer the first rule pass made (UnsqueezeElimination)
    if arr is None or arr.size > SHARE_MAX_ELEMENTS or arr.size == 0:
        return value
    try:
        dtype = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
    except (KeyError, TypeError, ValueError):
        return value
    return value if dtype not in SHARE_TYPES else ("const", dtype, tuple(arr.shape), arr.tobytes())


class ConstantSharing:
    """Applied once, on the main graph, over the initializers there at that moment (those the first rule pass
    made included). One a subgraph still reads then (an implicit input of an If/Loop, directly or through a body
    node a rule bypassed; PrepareInputPortsToReplace) is never shared, even when that reader is folded later;
    one whose only subgraph reader a rule of the first pass removed (UnsqueezeElimination in a branch) is."""

    name = "ConstantSharing"

    def apply_once(self, state: OptimizerState) -> None:
        scopes = state.scopes()
        main = next((s for s in scopes if s.parent is None and not s.is_function), None)
        shareable: set[str] = set()
        if main is None:
            state.share_constants(shareable, shared_key)
            return
        body_reads = {state.resolve(v) for s in scopes if s is not main and not s.is_function
                      for n in s.nodes if not state.is_removed(n) for v in n.inputs if v}
        made = [v for v in state.folded() if v in main.producer]  # folded by the first rule pass
        for value in (*main.initializers, *main.constants, *made):
            if value in main.outputs or value in body_reads:
                continue
            t = state.tensor(main, value)
            if t is not None and t.data_type not in SHARE_TYPES:
                continue
            shareable.add(value)
        state.share_constants(shareable, shared_key)
