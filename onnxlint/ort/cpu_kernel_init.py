"""CPU kernels whose constructor throws at session creation, so the session fails although a kernel is registered
(the partitioner's `kernel-init` on CPU, as cuda_capability.cuda_kernel_init_failure is on CUDA).

ai.onnx.ml's TreeEnsembleRegressor and TreeEnsembleClassifier: TreeEnsembleCommon::Init (core/providers/cpu/ml/
tree_ensemble_common.h) reads the nodes in attribute order, first keying each by (tree id, node id) ("Node 1 in
tree 0 is already there." for a repeated pair), then, for each node that is not a LEAF, finds its true then false
child in its tree ("A node cannot point to itself: 0-0 (truenode)." where the child is the node itself). Measured on
1.20.2, 1.23.2, 1.24.4, 1.26.0, 1.30.0, 1.31.1, 1.32.0, CPU and (the nodes fall back to CPU) the CUDA EP: the session
fails with "Exception during initialization: ... tree_ensemble_common.h:N ... <these words>". Only those two
defects are claimed, and only where the attributes pass the checks Init makes before them (arrays of one length,
node ids in int32, no child id out of range or missing before the defect) and those of the kernel's constructor
(_earlier_check_fails): a model they stop earlier is not claimed, ORT's words there being others. TreeEnsemble
(ai.onnx.ml 5), whose layout differs, is not looked at."""

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


_POST_TRANSFORMS = frozenset({"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"})
_AGGREGATES = frozenset({"AVERAGE", "SUM", "MIN", "MAX"})


def _text(node: Any, name: str, default: str) -> str:
    """A string attribute's text (NodeRef.attr decodes its bytes), default where absent; another kind as its str,
    which names no value ORT knows."""
    got = node.attr(name)
    return default if got is None else str(got)


def _length(value: Any) -> int | None:
    """How many values a list attribute or a `*_as_tensor` TensorProto attribute holds (None: neither): ai.onnx.ml
    3's thresholds and weights as tensors (skl2onnx's double trees) have no len()."""
    if isinstance(value, (list, tuple)):
        return len(value)
    dims = getattr(value, "dims", None)
    return None if dims is None else math.prod(dims)


def _count(node: Any, name: str) -> int:
    """How many values the attribute holds (0: none, or absent)."""
    return _length(node.attr(name)) or 0


def _earlier_check_fails(node: Any, prefix: str) -> bool:
    """Whether a check the kernel's constructor or Init makes before the ids fails, in other words than the ids'
    (measured on 1.20.2, 1.23.2, 1.31.1, 1.32.0): an unknown post_transform ("Unexpected value for
    post_eval_transform", 1.23 on) or aggregate_function ("Unexpected value for aggregate_function"); no target or
    class ("n_targets_or_classes must be positive": n_targets absent or under 1, no class label); weights of
    another count than the target or class ids ("target_class_weights must be empty or match target_class_ids
    size"); a target or class id out of [0, n) ("At least one value ...", 1.31 on); base values of a count other
    than none or n ("base_values should have 0 or 1 values", 1.31 on). Where 1.20.2 or 1.23.2 reach the ids first,
    the claim is still not made: the words depend on the release."""
    if _text(node, "post_transform", "NONE") not in _POST_TRANSFORMS:
        return True
    if prefix == "target":
        if _text(node, "aggregate_function", "SUM") not in _AGGREGATES:
            return True
        got = node.attr("n_targets")
        n = got if isinstance(got, int) else 0
    else:
        n = max(_count(node, "classlabels_int64s"), _count(node, "classlabels_strings"))
    ids = _ints(node, f"{prefix}_ids")
    weights = node.attr(f"{prefix}_weights")
    weights = node.attr(f"{prefix}_weights_as_tensor") if weights is None else weights
    if n <= 0 or _length(weights) != len(ids) or any(not 0 <= i < n for i in ids):
        return True
    base = node.attr("base_values")
    base = node.attr("base_values_as_tensor") if base is None else base
    return _length(base) not in (None, 0, n)


def _tree_defect(node: Any) -> str | None:
    """ORT's words for the first repeated (tree, node) id or self-pointing child, in Init's order, or None (none, or
    an earlier check of Init's would fail first, or the attributes are not what it checks)."""
    ids, trees = _ints(node, "nodes_nodeids"), _ints(node, "nodes_treeids")
    trues, falses = _ints(node, "nodes_truenodeids"), _ints(node, "nodes_falsenodeids")
    modes = node.attr("nodes_modes")
    modes = list(modes) if isinstance(modes, (list, tuple)) else []  # text: NodeRef.attr decodes a string list
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
    if len({len(t) for t in targets}) != 1 or not weights or _earlier_check_fails(node, prefix):
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
