"""GraphTransformerManager (core/optimizer/graph_transformer_mgr.cc): the Level-1 transformers applied until
nothing changes, at session creation, before partitioning (inference_session.cc TransformGraph; at
ORT_ENABLE_BASIC and above, the default being ORT_ENABLE_ALL). Nodes they remove never reach an EP's
GetCapability, so they can neither fall back to CPU nor need a Memcpy: `optimize` says which."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from onnxlint.ort import releases
from onnxlint.ort.optimizer.graph_transformer_utils import generate_transformers
from onnxlint.ort.optimizer.optimized import LEVELS, Optimized
from onnxlint.ort.optimizer.state import OptimizerState

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
    from onnxlint.ort.optimizer.ensure_unique_dq_for_node_unit import UniqueDQ
    from onnxlint.ort.optimizer.graph_transformer import GraphTransformer

MAX_ITERATIONS = 10  # GraphTransformerManager's steps per level
SKIP_UNCHANGED_PASSES = True  # False: every pass runs in every round (the same answer, slower; for tests)


class _Manager:
    """Runs the passes, skipping one that found nothing in a graph last time when nothing changed since: a pass
    reads only the graph and what OptimizerState.remove changes (the one way a pass changes anything, counted
    in state.changes()), so it would find nothing again."""

    def __init__(self, state: OptimizerState):
        self.state = state
        self._found_nothing: dict[tuple[object, int], int] = {}  # (pass, id(scope)) -> changes() when it found nothing

    def run_pass(self, transformer: GraphTransformer, scope: GraphScope) -> bool:
        key = (transformer, id(scope))
        changes = self.state.changes()
        if SKIP_UNCHANGED_PASSES and self._found_nothing.get(key) == changes:
            return False
        changed = transformer.apply(self.state, scope)
        if not changed and self.state.changes() == changes:
            self._found_nothing[key] = changes
        return changed

    def forget(self) -> None:
        """What a pass found no longer says what it would find (after ConstantSharing)."""
        self._found_nothing.clear()


def optimize(index: GraphIndex, level: str = "all", has_cpu_kernel: Callable[[NodeRef], bool] | None = None,
             ort_version: str | None = None, unique_dq: UniqueDQ | None = None) -> Optimized:
    """Which nodes of `index` ORT's Level-1 transformers remove at `level` (disabled | basic | all), for the
    ORT release `ort_version` (None: the newest behaviour modelled). unique_dq: the DequantizeLinear copies
    EnsureUniqueDQForNodeUnit made (it runs before)."""
    if level not in LEVELS:
        raise ValueError(f"optimization level must be one of {', '.join(LEVELS)}, not {level!r}")
    state = OptimizerState(index, level, has_cpu_kernel or (lambda node: True), unique_dq)
    if level == "disabled":
        return state.result()
    level1 = generate_transformers(releases.row(ort_version), state.node_count())
    manager = _Manager(state)
    # model-local functions are inlined at load; their copies are not indexed here
    graphs = [scope for scope in state.scopes() if not scope.is_function]
    for scope in graphs:  # step 1 opens with the rule-based transformer, recursing into every subgraph
        manager.run_pass(level1.first, scope)
    level1.once.apply_once(state)
    manager.forget()
    for scope in graphs:  # a graph before its bodies: what a body sees of the graph around it is settled
        state.set_tracking(scope.parent is None)
        try:
            for _ in range(MAX_ITERATIONS):
                changed = False
                for transformer in level1.repeated:
                    changed |= manager.run_pass(transformer, scope)
                if not changed:
                    break
        finally:
            state.set_tracking(False)
    return state.finish()
