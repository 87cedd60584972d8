"""GatherSliceToSplitFusion (core/optimizer/gather_fusion.cc), a Level-2 transformer (`all` only, after
partitioning, for the CPU and CUDA EPs): the Gather-13 (scalar constant index) and Slice-13 (scalar constant
start/end/axis, step 1) readers of one value that together cover a static dim exactly, without overlap, become one
Split on that dim, plus a Squeeze for each Gather of a rank-0 index; the Split and the Squeezes run where the first
of the fused nodes runs. The value is a graph input or initializer read more than once, or the one output of a node
other than Shape with more than one reader. Measured on 1.24.4 and 1.31.1: Hugging Face TF models' shape
computations (one Split on CPU), the transformer set's qkv splits (a Split and its Squeezes).

The Split and the Squeezes take the graph's ai.onnx opset (Squeeze-21 at opsets 21 and 22, Squeeze-23 at 23, ...):
a Squeeze made on CUDA where the release's CUDA provider has no kernel for that version fails session creation
(`no_kernel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from onnxlint.ort import schema_registry
from onnxlint.ort.optimizer.initializers import small_array
from onnxlint.ort.verdicts import CPU, CUDA, CreatedNode

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
    from onnxlint.ort.kernel_registry import KernelTable
    from onnxlint.ort.optimizer.optimized import Optimized
    from onnxlint.ort.verdicts import Placement

NAME = "GatherSliceToSplitFusion"
_STARTS_ENDS = [1, 2]  # Slice's starts and ends inputs
_GONE = ("folded", "eliminated", "expanded")


def apply(pl: Placement, index: GraphIndex, opt: Optimized | None) -> None:
    if not index.by_op.get("Gather") and not index.by_op.get("Slice"):
        return
    for scope in index.scopes:
        if scope.is_function or (scope.opsets.get("ai.onnx") or 0) < 13:
            continue  # opset 13 and later only (Squeeze, Gather, Slice and Split change schema there)
        _Fusion(pl, scope, opt).run()


def no_kernel(pl: Placement, cuda: KernelTable) -> str | None:
    """Why ORT refuses the session when a node this fusion put on CUDA has no CUDA kernel for the version the
    graph's opset gives it, else None. ORT assigns the new nodes to the first fused node's provider without asking
    for a kernel; TransformerMemcpy's lookup for the Squeeze's `axes` initializer then fails: "Failed to find kernel
    for Squeeze(21)". Measured with onnxruntime-gpu 1.20.2, 1.22.0, 1.23.0, 1.23.2, 1.24.4, 1.25.1 and 1.31.1 (probes
    of three scalar Gathers, a Slice and a scalar Gather, on a CUDA node's output or a graph input; opsets 13-26):
    refused exactly where the CUDA table lacks the Squeeze version (1.20-1.23 at opsets 21-23, 1.24 at 24-25), at
    `all` only; a Split with no Squeeze (Slices, Gathers of a [1] index) and a fusion on CPU load."""
    for c in pl.created:
        if c.by != NAME or c.ep != CUDA:
            continue
        since = schema_registry.since_version(c.op_type, c.source.opset, c.domain)
        if since is None:
            continue
        match = cuda.lookup(c.domain, c.op_type, since, lambda _params: {})  # the version alone (any type)
        if match.ok:
            continue
        value = c.source.inputs[0] if c.source.inputs else "?"
        return (f"ORT's {NAME} (a Level-2 graph optimization, on at the default level `all`) turns the Gather/Slice "
                f"nodes reading {value} (the first: {c.source.name or c.source.op_type}) into a Split and {c.op_type} "
                f"nodes on CUDA, each {c.op_type} of the model's opset {c.source.opset} ({c.op_type}-{since}); "
                f"onnxruntime {cuda.ort_version}: {match.detail}. Session creation fails with 'Failed to find kernel "
                f"for {c.op_type}({since}) (node:'{c.op_type}' ep:'CUDAExecutionProvider')'; a session at "
                f"ORT_ENABLE_BASIC, or with disabled_optimizers=['{NAME}'], loads it")
    return None


class _Fusion:
    def __init__(self, pl: Placement, scope: GraphScope, opt: Optimized | None):
        self.pl, self.scope, self.opt = pl, scope, opt
        self.resolve = opt.resolve if opt is not None else (lambda v: v)
        self.fused: set[int] = set()
        # the live Gather/Slice nodes of the graph by the value they read first: only a value two of them read
        # can be split (linear in those nodes, not in the graph)
        self.readers: dict[str, list[NodeRef]] = {}
        for n in scope.nodes:
            if n.op_type in ("Gather", "Slice") and n.domain == "ai.onnx" and n.inputs and n.inputs[0] and self._live(n):
                self.readers.setdefault(self.resolve(n.inputs[0]), []).append(n)

    def _live(self, n: NodeRef) -> bool:
        p = self.pl.nodes.get(n.index)
        return p is not None and p.status not in _GONE and p.ep is not None

    def _constant(self, v: str) -> np.ndarray | None:
        v = self.resolve(v)
        t = self.scope.constant(v)
        return small_array(t) if t is not None else None

    def run(self) -> None:
        """The candidates in ORT's order: graph inputs and initializers read more than once, then the one output
        of each node (not a Shape: its Gathers are cheap) read more than once; two Gather/Slice readers are both."""
        scope = self.scope
        values = [v for v, rs in self.readers.items() if len(rs) > 1]
        if not values:
            return
        # a Shape the TransposeOptimizer put a Gather after: its readers read that Gather, which is no Shape
        gathered = {c.source.index for c in self.pl.created if c.by == "TransposeOptimizer" and c.op_type == "Gather"}
        outer = [v for v in values if v in scope.inputs or v in scope.initializers]
        produced = []
        for v in values:
            n = scope.producer.get(v)
            if n is None or not self._live(n) or len(n.outputs) != 1 \
                    or (n.op_type == "Shape" and n.domain == "ai.onnx" and n.index not in gathered):
                continue
            produced.append((n.index, v))
        for value in [*outer, *(v for _, v in sorted(produced))]:
            self._fuse(value)

    def _fuse(self, value: str) -> None:
        shape = self.scope.type_of(value).shape
        if shape is None:
            return
        rank = len(shape)
        consumers = [r for r in self.readers.get(value, ()) if r.index not in self.fused and r.domain == "ai.onnx"
                     and r.op_type in ("Gather", "Slice") and r.inputs and self.resolve(r.inputs[0]) == value]
        if len(consumers) < 2:
            return
        axis = self._axis(consumers[0], rank)
        if axis is None or not 0 <= axis < rank or not isinstance(shape[axis], int) or shape[axis] <= 0:
            return
        size = shape[axis]
        consumed = [False] * size
        squeezes = 0
        for c in consumers:
            got = self._span(c, rank, axis, size)
            if got is None:
                return
            start, end, squeeze = got
            if any(consumed[start:end]):
                return
            consumed[start:end] = [True] * (end - start)
            squeezes += squeeze
        if not all(consumed):
            return
        first = self.pl.nodes[consumers[0].index]
        if first.ep not in (CPU, CUDA):
            return
        self.fused.update(c.index for c in consumers)
        detail = f"the Split of {value} ORT's GatherSliceToSplitFusion makes of {len(consumers)} Gather/Slice nodes"
        self.pl.created.append(CreatedNode(f"{consumers[0].name or 'Split'}/{NAME}", "Split", "ai.onnx", first.ep, NAME,
                                           consumers[0], detail))
        for _ in range(squeezes):
            self.pl.created.append(CreatedNode("Squeeze", "Squeeze", "ai.onnx", first.ep, NAME, consumers[0],
                                               "a Squeeze after the Split, for a Gather of a scalar index"))

    def _axis(self, n: NodeRef, rank: int) -> int | None:
        if n.op_type == "Gather":
            a = n.attr("axis") or 0
            return a + rank if a < 0 else a
        if len(n.inputs) < 4 or not n.inputs[3]:
            return None
        arr = self._scalar(n.inputs[3])
        if arr is None:
            return None
        return arr + rank if arr < 0 else arr

    def _scalar(self, v: str) -> int | None:
        """GetScalarInt64Initializer: a constant int64 of rank 0 or shape [1]."""
        arr = self._constant(v)
        if arr is None or arr.dtype != np.int64 or arr.size != 1 or arr.ndim > 1:
            return None
        return int(arr.reshape(-1)[0])

    def _span(self, n: NodeRef, rank: int, axis: int, size: int) -> tuple[int, int, bool] | None:
        """IsSupportedGather / IsSupportedSlice: the [start, end) of the dim n takes, and whether a Squeeze follows."""
        p = self.pl.nodes.get(n.index)
        if p is None or p.ep not in (CPU, CUDA) or schema_registry.since_version(n.op_type, n.opset, n.domain) != 13:
            return None
        if self._axis(n, rank) != axis:
            return None
        if n.op_type == "Gather":
            if len(n.inputs) < 2 or not n.inputs[1]:
                return None
            arr = self._constant(n.inputs[1])
            start = self._scalar(n.inputs[1])
            if start is None or arr is None:
                return None
            start = start + size if start < 0 else start
            return (start, start + 1, arr.ndim == 0) if 0 <= start < size else None
        start, end = (self._scalar(n.inputs[i]) if len(n.inputs) > i and n.inputs[i] else None for i in _STARTS_ENDS)
        if start is None or end is None:
            return None
        if len(n.inputs) >= 5 and n.inputs[4] and self._scalar(n.inputs[4]) != 1:
            return None
        start = min(max(start + size if start < 0 else start, 0), size)
        end = min(max(end + size if end < 0 else end, 0), size)
        return (start, end, False) if start < end else None
