"""CPU kernels whose constructor throws at session creation, so the session fails although a kernel is registered
(the partitioner's `kernel-init` on CPU, as cuda_capability.cuda_kernel_init_failure is on CUDA).

ai.onnx.ml's TreeEnsembleRegressor and TreeEnsembleClassifier: TreeEnsembleCommon::Init (core/providers/cpu/ml/
tree_ensemble_common.h) reads the nodes in attribute order, first keying each by (tree id, node id) ("Node 1 in
tree 0 is already there." for a repeated pair), then, for each node that is not a LEAF, finds its true then false
child in its tree ("A node cannot point to itself: 0-0 (truenode)." where the child is the node itself). Measured on
1.20.2, 1.23.2, 1.24.4, 1.26.0, 1.30.0, 1.31.1, 1.32.0, CPU and (the nodes fall back to CPU) the CUDA EP: the session
fails with "Exception during initialization: ... tree_ensemble_common.h:N ... <these words>". Only those two
defects are claimed, and only where the attributes pass the checks Init makes before them (arrays of one length,
node ids in int32, no child id out of range or missing before the defect): a model they stop earlier is not
claimed. TreeEnsemble (ai.onnx.ml 5), whose layout differs, is not looked at."""

from __future__ import annotations

import math
from typing import Any

TREE_OPS = frozenset({"TreeEnsembleRegressor", "TreeEnsembleClassifier"})
_MODES = frozenset({"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF"})
_INT32 = 1 << 31


def cpu_kernel_init_failure(node: Any) -> str | None:
    """Why the node's CPU kernel throws at session creation (ORT's words in the detail), or None."""
    if node.domain != "ai.onnx.ml" or node.op_type not in TREE_OPS:
        return None
    words = _tree_defect(node)
    if words is None:
        return None
    return f"the CPU {node.op_type} kernel throws at session creation: '{words}'"


def _ints(node: Any, name: str) -> list[int]:
    got = node.attr(name)
    return list(got) if isinstance(got, (list, tuple)) else []


def _count(node: Any, name: str) -> int:
    """How many values the attribute holds: a list's length, or a `*_as_tensor` TensorProto's element count (ai.onnx.ml
    3's thresholds and weights, skl2onnx's double trees: its len() was taken, and the lint failed on the model)."""
    got = node.attr(name)
    if isinstance(got, (list, tuple)):
        return len(got)
    return math.prod(got.dims) if got is not None and hasattr(got, "dims") else 0


def _tree_defect(node: Any) -> str | None:
    """ORT's words for the first repeated (tree, node) id or self-pointing child, in Init's order, or None (none, or
    an earlier check of Init's would fail first, or the attributes are not what it checks)."""
    ids, trees = _ints(node, "nodes_nodeids"), _ints(node, "nodes_treeids")
    trues, falses = _ints(node, "nodes_truenodeids"), _ints(node, "nodes_falsenodeids")
    modes = node.attr("nodes_modes")
    modes = [m.decode() if isinstance(m, bytes) else m for m in modes] if isinstance(modes, (list, tuple)) else []
    features = _ints(node, "nodes_featureids")
    values = _count(node, "nodes_values") or _count(node, "nodes_values_as_tensor")
    n = len(ids)
    if not n or any(len(x) != n for x in (trees, trues, falses, modes, features)) or values != n:
        return None
    if any(m not in _MODES for m in modes) or any(not -_INT32 <= v < _INT32 for x in (ids, trees) for v in x):
        return None
    prefix = "target" if node.op_type == "TreeEnsembleRegressor" else "class"
    targets = [_ints(node, f"{prefix}_{k}") for k in ("ids", "nodeids", "treeids")]
    weights = _count(node, f"{prefix}_weights") or _count(node, f"{prefix}_weights_as_tensor")
    if len({len(t) for t in targets}) != 1 or not weights:
        return None
    index: dict[tuple[int, int], int] = {}
    for i, key in enumerate(zip(trees, ids)):
        if key in index:
            return f"Node {key[1]} in tree {key[0]} is already there."
        index[key] = i
    for i in range(n):
        if modes[i] == "LEAF":
            continue
        for child, side in ((trues[i], "truenode"), (falses[i], "falsenode")):
            found = index.get((trees[i], child)) if 0 <= child < n else None
            if found is None:
                return None  # Init's range check or "Unable to find node" comes first: not claimed
            if found == i:
                return f"A node cannot point to itself: {trees[i]}-{ids[i]} ({side})."
    return None
