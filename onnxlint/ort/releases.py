"""The ORT release table: what each onnxruntime minor line does that its kernel tables do not say.

Every release-dependent gate of the model reads this table, nowhere else: the newest opset and IR version a
release loads (model_load_utils.h ValidateOpsetForDomain, model.cc's IR check, docs/Versioning.md), and the
graph transformers and partitioner behaviours that changed between releases. The kernel tables themselves are
generated data (tools/gen_kernel_tables.py, `kernel_registry`). Supporting a new release: run the generator,
add its row here (its limits, and each behaviour as measured on it), run the truth benchmark
(benchmarks/cuda_placement_accuracy.py); CONTRIBUTING.md says it step by step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Release:
    """One minor line's row. A behaviour flag is True where that release behaves the newer way."""

    max_opset: int | None  # newest ai.onnx opset it loads (None: not known, nothing refused)
    max_ir: int | None  # newest IR version it loads
    # ReshapeFusion fuses a Reshape/Squeeze/Unsqueeze chain ending in a static shape into one Reshape
    # (FuseContiguousReshapes) when its first Reshape's since-version is at most this (0: never): measured 0 on
    # 1.20.2, 14 on 1.24.4 (Reshape-14 chains fused, Reshape-19/21/23 ones not: a GroupNormalization-21 body keeps
    # its two Reshapes), every version on 1.31.1 (releases in between not measured: the older one's)
    contiguous_reshapes: int
    # ReshapeFusion's "copy this dim" (0) for Gather(Shape(x'), k) with x' not the Reshape's input: 1.24.4 wants
    # x' of the very same shape (CompareShape); 1.31.1 fuses when dim k alone is the same (measured: a qkv
    # Reshape [B, T, 3, 4, C/4] of x [B, T, 64] becomes [0, 0, 3, 4, -1]); releases in between not measured
    reshape_dim_match: bool
    # EliminateDropout looks at training_mode: up to 1.31 it does not (measured: a training-mode Dropout with a
    # constant True is gone at default options on 1.20.2, 1.24.4 and 1.31.1 where CanRemoveNode lets it go, i.e.
    # between two nodes: optimizer.graph_utils.can_remove; one reading a graph input stays, random); later sources keep one whose
    # training_mode is not a constant false
    dropout_reads_training_mode: bool
    # CommonSubexpressionElimination compares a tensor attribute stored in typed fields (not raw bytes): two
    # ConstantOfShape nodes whose `value` is in float_data stay apart on 1.20.2 and 1.24.4 and are merged on
    # 1.31.1 (ORT's optimized-model output on one-node-pair models; with raw_data all three merge them)
    cse_typed_tensor_attributes: bool
    # GetCpuPreferredNodes treats a node no EP has a kernel for as a CPU node when the partitioner sees it before
    # inlining its function body: measured so on 1.24.4 in main graphs, not on 1.31.1
    function_node_cpu_in_first_pass: bool
    # RemoveDuplicateCastTransformer (after partitioning, every level) keeps a Cast that loses information when a
    # Cast it feeds and keeps casts to bool, or runs on another EP (insert_cast_transformer.cc, ORT issues 28089,
    # 27291): measured so on 1.31.1 (a float->bool Cast before a bool->bool Cast stays), not on 1.24.4 (the EP
    # condition comes with it in the source; the truth set has no case of it)
    cast_removal_keeps_lossy_to_bool: bool = False
    measured: str | None = None  # the patch release checked against ORT's own partitioner (the truth benchmark)


ANY_VERSION = 1 << 16  # a since-version bound that takes every version


def _row(opset: int, ir: int, since_1_31: bool, measured: str | None = None, reshapes_upto: int = 0) -> Release:
    """A row of a release whose behaviours are those of 1.31 and later (since_1_31) or of the releases before;
    the releases between two measured ones take the older one's behaviour (not measured)."""
    return Release(opset, ir, contiguous_reshapes=ANY_VERSION if since_1_31 else reshapes_upto, reshape_dim_match=since_1_31,
                   dropout_reads_training_mode=False, cse_typed_tensor_attributes=since_1_31,
                   function_node_cpu_in_first_pass=not since_1_31, cast_removal_keeps_lossy_to_bool=since_1_31,
                   measured=measured)


# (major, minor) -> row, oldest first. Limits measured: 1.20 -> 21/10, 1.24 -> 25/13, 1.31 -> 26/13.
RELEASES: dict[tuple[int, int], Release] = {
    (1, 14): _row(18, 8, False), (1, 15): _row(19, 9, False), (1, 16): _row(19, 9, False),
    (1, 17): _row(20, 9, False), (1, 18): _row(21, 10, False), (1, 19): _row(21, 10, False),
    (1, 20): _row(21, 10, False, "1.20.2"), (1, 21): _row(22, 10, False), (1, 22): _row(22, 11, False),
    (1, 23): _row(23, 11, False), (1, 24): _row(25, 13, False, "1.24.4", 14), (1, 25): _row(25, 13, False, None, 14),
    (1, 26): _row(26, 13, False, None, 14), (1, 27): _row(26, 13, False, None, 14), (1, 28): _row(26, 13, False, None, 14),
    (1, 29): _row(26, 13, False, None, 14), (1, 30): _row(26, 13, False, None, 14), (1, 31): _row(26, 13, True, "1.31.1"),
}
# a release newer than the table, or none named: the newest behaviour ORT's sources show, no limits known
NEWEST = Release(None, None, contiguous_reshapes=ANY_VERSION, reshape_dim_match=True, dropout_reads_training_mode=True,
                 cse_typed_tensor_attributes=True, function_node_cpu_in_first_pass=False,
                 cast_removal_keeps_lossy_to_bool=True)
# a release older than the table: the oldest behaviour, no limits known
OLDEST = Release(None, None, contiguous_reshapes=0, reshape_dim_match=False, dropout_reads_training_mode=False,
                 cse_typed_tensor_attributes=False, function_node_cpu_in_first_pass=True)


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def release(version: str | None) -> tuple[int, int] | None:
    """An ORT version's (major, minor), e.g. "1.24.4" -> (1, 24); None when it has no two numbers."""
    nums = version_key(version or "")[:2]
    return (nums[0], nums[1]) if len(nums) == 2 else None


def row(version: str | None) -> Release:
    """The row of an ORT version: its own, NEWEST for one newer than the table or with no two numbers,
    OLDEST for one older than the table."""
    rel = release(version)
    if rel is None:
        return NEWEST
    got = RELEASES.get(rel)
    if got is not None:
        return got
    return NEWEST if rel > max(RELEASES) else OLDEST


def measured() -> list[str]:
    """The releases the truth benchmark checks (oldest first)."""
    return [r.measured for r in RELEASES.values() if r.measured]
