"""What a graph transformer is to the driver (core/optimizer/graph_transformer.h): a name and one pass over a
graph that says whether it changed anything."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope
    from onnxlint.ort.optimizer.state import OptimizerState


class GraphTransformer(Protocol):
    name: str

    def apply(self, state: OptimizerState, scope: GraphScope) -> bool:
        """One pass over scope's live nodes; True when it removed or rewired something. It reads the graph and
        the state only, and changes them only through state.remove / state.made_constant."""
        ...
