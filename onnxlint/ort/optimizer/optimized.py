"""What the Level-1 transformers did to a model, as the partitioner reads it: the nodes removed and why, the
values rewired, the values that are initializers now, and the shapes known after optimization."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy.typing as npt

from onnxlint.model.evaluation import Budget
from onnxlint.ort.optimizer.refined_shapes import Dims, RefinedShapes

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef

LEVELS = ("disabled", "basic", "all")
Array = npt.NDArray[Any]
NON_DETERMINISTIC = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}


@dataclass(slots=True)
class Removed:
    """Why a node is gone (one per node a transformer removed: slots, not a dict each)."""

    status: str  # folded | eliminated
    reason: str
    detail: str


@dataclass
class Created:
    """A node a transformer adds to the graph: its op, the model's node it comes from, and where it runs relative
    to that node (runs_with: the placement rule the partitioner applies: `shape-consumer` for a node reading only
    host-side shape values, which GetCpuPreferredNodes keeps on CPU)."""

    name: str
    op_type: str
    domain: str
    by: str  # ORT's name of the transformer
    source: NodeRef
    runs_with: str
    detail: str = ""


@dataclass
class Optimized:
    level: str
    removed: dict[int, Removed] = field(default_factory=dict)  # node index -> why it is gone
    alias: dict[str, str] = field(default_factory=dict)  # value -> value its consumers read instead
    created: list[Created] = field(default_factory=list)  # nodes the transformers added, in the order made
    constants: set[str] = field(default_factory=set)  # values that are initializers after optimization
    shapes: dict[str, Dims] | RefinedShapes = field(default_factory=dict)  # shapes known after data propagation
    # the work the folded values computed on demand may spend, and what it refused (said in one placement note)
    evaluations: Budget = field(default_factory=Budget, repr=False, compare=False)
    # what onnx's C++ could not do for the model (a crash in the native worker), said in the placement's notes
    notes: list[str] = field(default_factory=list, repr=False, compare=False)
    # (scope, value) -> dims as ORT knows them after folding, asked on demand (GetCpuPreferredNodes needs the size
    # of a folded input); it holds the optimizer: release() it when done (the pair is a reference cycle)
    sizer: Callable[[GraphScope, str], Dims | None] | None = field(default=None, repr=False, compare=False)
    # id(scope) -> ort_topological_order(scope, self) as the passes last computed it, for the graph as they left
    # it (the partitioner's queue orders by it: not computed again)
    orders: dict[int, list[NodeRef]] = field(default_factory=dict, repr=False, compare=False)

    def release(self) -> None:
        self.sizer = None
        self.orders = {}  # read by the partitioner's queue only, before this

    def resolve(self, value: str) -> str:
        alias = self.alias
        seen = 0
        while value in alias and seen < 100:
            value = alias[value]
            seen += 1
        return value

    def is_removed(self, node: NodeRef) -> bool:
        return node.index in self.removed

