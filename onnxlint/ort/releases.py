"""The ORT release table: what each onnxruntime minor line does that its kernel tables do not say.

Every release-dependent gate of the model reads this table, nowhere else: the newest opset and IR version a
release loads (model_load_utils.h ValidateOpsetForDomain, model.cc's IR check), and the graph transformers and
partitioner behaviours that changed between releases. The limits are generated data, probed on each line's own
wheel (onnxlint/data/kernels/ort-releases.json, by tools/follow_releases.py, which also regenerates the kernel
tables: tools/gen_kernel_tables.py, `kernel_registry`); the behaviours are what the truth benchmark
(benchmarks/cuda_placement_accuracy.py) measured, set here. Supporting a new release: `python
tools/follow_releases.py`, then the truth benchmark; CONTRIBUTING.md says it step by step.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from onnxlint.support import resources


@dataclass(frozen=True)
class ElemTypes:
    """What session creation of a release does with a tensor of each element type, probed with an unused initializer
    and an unused main-graph input of each type on its own wheel (tools/follow_releases.py, ort-releases.json's
    `elem_types`). A number not probed is in no set: nothing is claimed of it."""

    initializer: frozenset[int] = frozenset()  # an initializer of the type is refused (a Constant's value too)
    # ... by the Graph constructor, whose words name the tensor ("Tensor 'w' does not have valid data type.", 1.24
    # on); the others' are "Invalid tensor data type N." (UNDEFINED: "Tensor does not have type information.")
    initializer_checked: frozenset[int] = frozenset()
    # a graph input of the type is refused as "Invalid tensor data type N.": ORT does not know the type, so any tensor
    # declared of it is refused while the graph is built (a node output's declared type, a body's input)
    invalid: frozenset[int] = frozenset()
    # a main-graph input of the type is refused as "MLDataType for: tensor(t) is not currently registered or
    # supported" (InferenceSession's model metadata: complex64 and complex128 on every release, FLOAT8E8M0 on
    # 1.24-1.26, FLOAT6 on 1.32); an initializer of it loads
    unregistered: frozenset[int] = frozenset()
    # a main-graph sparse initializer whose values are of the type is refused (the Graph constructor makes it dense
    # before anything else), as "tensor type N is not supported" (up to 1.24), as an empty NOT_IMPLEMENTED status
    # (from 1.31), or as "Sparse tensor: v FLOAT8E8M0 values are unsupported because the type has no zero
    # representation." (FLOAT8E8M0, from 1.31)
    sparse_unsupported: frozenset[int] = frozenset()
    sparse_not_implemented: frozenset[int] = frozenset()
    sparse_no_zero: frozenset[int] = frozenset()


# the Reshape since-versions the oldest ReshapeFusion fuses (reshape_fusion.cc before 1.25; every line up to 1.24
# probed so): a line with no probed row takes them
OLDEST_RESHAPE_FUSION = (5, 13, 14)


@dataclass(frozen=True)
class Release:
    """One minor line's row. A behaviour flag is True where that release behaves the newer way."""

    max_opset: int | None  # newest ai.onnx opset it loads (None: not known, nothing refused)
    max_ir: int | None  # newest IR version it loads
    # ReshapeFusion fuses a Reshape/Squeeze/Unsqueeze chain ending in a static shape into one Reshape
    # (FuseContiguousReshapes) when its first Reshape's since-version is at most this (0: never): measured 0 on
    # 1.20.2, 14 on 1.23.2 and 1.24.4 (Reshape-14 chains fused, Reshape-19/21/23 ones not: a GroupNormalization-21
    # body keeps its two Reshapes), every version on 1.31.1 (releases in between not measured: the older one's)
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
    # DQMatMulToMatMulNBits (Level 2) fuses a block-wise 4-bit DequantizeLinear placed on CPU into the MatMul on
    # CUDA it feeds, one MatMulNBits on CUDA: measured so on 1.23.2 and 1.24.4 (a uint4 DequantizeLinear-23, no
    # CUDA kernel there), and 1.31.1 fuses the same pairs; older releases not measured (left on CPU)
    dq_matmul_nbits_across_eps: bool = False
    # a Squeeze GatherSliceToSplitFusion (Level 2) puts on CUDA whose version (the graph's opset) the CUDA table lacks
    # fails session creation (optimizer.gather_slice_fusion.no_kernel): measured so on 1.20.2, 1.22.0, 1.23.0, 1.23.2,
    # 1.24.4, 1.25.1 and 1.31.1; older releases not measured (no claim)
    fusion_kernel_refusal: bool = False
    # an initializer over 127 bytes read on both sides (a CPU node, a CUDA node) is copied for the CUDA nodes by the
    # MemcpyTransformer and session creation refuses the copy (memcpy.duplicated_initializer): measured so on 1.23.0
    # and 1.23.2 at disabled/basic, not on 1.20.2, 1.22.0, 1.24.4, 1.31.1 (no claim there)
    initializer_copy_refusal: bool = False
    # Graph::Resolve refuses a model where a node's inference reads a value stored in an external data file (a
    # Reshape's shape: "Cannot parse data from external tensors"), probed on its wheel (ort-releases.json's
    # `external_inference`: every line 1.15-1.32 refuses; onnxruntime PR 31169 would read it); False: not probed
    # or loads, nothing claimed
    external_inference_refusal: bool = False
    # PreShapeNodeElimination (Level 1) removes a Cast read only by Shapes when the Cast's and the Shapes'
    # since-versions are in this set (empty: never, or not probed): probed on each line's wheel (ort-releases.json's
    # `pre_shape`, tools/follow_releases.py): {13, 15, 19} from 1.16 to 1.24 (a Cast-21 -> Shape stays), every
    # version from 13 on from 1.25
    pre_shape_versions: frozenset[int] = frozenset()
    # the Model constructor refuses a model whose local functions call each other in a cycle (or one itself), called
    # or not: "Model local function definitions must not be recursive" (load_refusal.recursive_function): probed on
    # each line's wheel (ort-releases.json's `recursive_functions`, tools/follow_releases.py), from 1.27 on. Not
    # claimed before: 1.20.2, 1.23.2, 1.24.4 and 1.26.0 crash (SIGSEGV) creating the session when the main graph
    # calls such a function and load the model when none does
    recursive_function_refusal: bool = False
    # the Model constructor refuses a model holding two local functions of one id (domain, name, overload), called or
    # not, before the recursion check: "Duplicate model-local function identifier: loc:F"
    # (load_refusal.duplicate_function): probed on each line's wheel (ort-releases.json's `duplicate_functions`), from
    # 1.31 on; 1.30.0 and older load it
    duplicate_function_refusal: bool = False
    # ReshapeFusion (Level 1) fuses the shape subgraph of a Reshape of these since-versions, probed on each line's
    # wheel (ort-releases.json's `reshape_fusion`, tools/follow_releases.py): 5/13/14 up to 1.24, Reshape-19 too from
    # 1.25, every version from 1.28 (the CUDA sessions of 1.24.4, 1.26.0 and 1.31.1 agree); a line not probed: 5/13/14
    reshape_fusion_versions: tuple[int, ...] = OLDEST_RESHAPE_FUSION
    measured: str | None = None  # the patch release checked against ORT's own partitioner (the truth benchmark)
    # The tensor element types (TensorProto.DataType numbers) its session creation refuses, probed on its wheel
    # (ElemTypes; empty: not probed, nothing claimed)
    elem: ElemTypes = field(default_factory=lambda: ElemTypes())


ANY_VERSION = 1 << 16  # a since-version bound that takes every version


def _row(opset: int, ir: int, since_1_31: bool, measured: str | None = None, reshapes_upto: int = 0,
         dq_matmul_nbits: bool = False, fusion_kernel: bool = False, elem: ElemTypes | None = None,
         initializer_copy: bool = False, external_inference: bool = False,
         pre_shape: frozenset[int] = frozenset(), recursive_function: bool = False,
         duplicate_function: bool = False, reshape_versions: tuple[int, ...] = OLDEST_RESHAPE_FUSION) -> Release:
    """A row of a release whose behaviours are those of 1.31 and later (since_1_31) or of the releases before;
    the releases between two measured ones take the older one's behaviour (not measured)."""
    return Release(opset, ir, contiguous_reshapes=ANY_VERSION if since_1_31 else reshapes_upto, reshape_dim_match=since_1_31,
                   dropout_reads_training_mode=False, cse_typed_tensor_attributes=since_1_31,
                   function_node_cpu_in_first_pass=not since_1_31, cast_removal_keeps_lossy_to_bool=since_1_31,
                   dq_matmul_nbits_across_eps=dq_matmul_nbits, fusion_kernel_refusal=fusion_kernel, measured=measured,
                   elem=elem or ElemTypes(), initializer_copy_refusal=initializer_copy,
                   external_inference_refusal=external_inference,
                   pre_shape_versions=pre_shape, recursive_function_refusal=recursive_function,
                   duplicate_function_refusal=duplicate_function, reshape_fusion_versions=reshape_versions)


LIMITS_FILE = resources.data_dir() / "kernels" / "ort-releases.json"


@lru_cache(maxsize=1)
def _rows() -> dict[str, dict[str, Any]]:
    if not LIMITS_FILE.exists():
        return {}
    rows: dict[str, dict[str, Any]] = json.loads(LIMITS_FILE.read_text())["releases"]
    return rows


def _line(key: str) -> tuple[int, int]:
    major, minor = (int(x) for x in key.split("."))
    return major, minor


def limits() -> dict[tuple[int, int], tuple[int, int]]:
    """(major, minor) -> (newest ai.onnx opset, newest IR version) that line's newest patch loads: session creation
    of one-Identity models on its own wheel (tools/follow_releases.py); {} without the file."""
    out = {_line(line): (int(row["max_opset"]), int(row["max_ir"])) for line, row in _rows().items()}
    return dict(sorted(out.items()))


def numbers(spans: str) -> frozenset[int]:
    """"0,27-29,99" -> {0, 27, 28, 29, 99} (how the data file keeps a set of element types)."""
    out: set[int] = set()
    for part in filter(None, spans.split(",")):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return frozenset(out)


@lru_cache(maxsize=1)
def elem_types() -> dict[tuple[int, int], ElemTypes]:
    """(major, minor) -> the element types its newest patch refuses (ort-releases.json's `elem_types`, probed by
    tools/follow_releases.py); a line whose probe failed or was never run is not there."""
    out = {}
    for line, row in _rows().items():
        got = row.get("elem_types") or {}
        if "probed" in got:
            out[_line(line)] = ElemTypes(*(numbers(got.get(k, "")) for k in (
                "refused_initializer", "initializer_checked", "invalid", "unregistered", "sparse_unsupported",
                "sparse_not_implemented", "sparse_no_zero")))
    return out


def probed_versions(field: str) -> dict[tuple[int, int], frozenset[int]]:
    """(major, minor) -> the since-versions its newest patch's basic optimizations acted on in the probe of `field`
    (ort-releases.json, tools/follow_releases.py): `pre_shape`, the Cast and Shape versions at which a Cast only a
    Shape read was removed; `reshape_fusion`, the Reshape versions whose shape subgraph was fused. A line not probed
    is not there."""
    return {_line(line): numbers(row[field]["since_versions"]) for line, row in _rows().items() if field in row}


def refused_lines(field: str) -> frozenset[tuple[int, int]]:
    """The (major, minor) lines whose probe of `field` saw its model refused in ORT's words (ort-releases.json's
    `external_inference`: the external-data Reshape, `recursive_functions`: an unused local function calling itself,
    `duplicate_functions`: two unused local functions of one id; tools/follow_releases.py)."""
    return frozenset(_line(line) for line, row in _rows().items() if row.get(field) == "refused")


# The behaviours, as the truth benchmark measured them: lines from 1.31 on behave the 1.31.1 way, earlier ones the
# 1.24.4 way (the lines in between were not measured: they take the older one's behaviour); the measured patches
_NEWER_SINCE = (1, 31)
_MEASURED = {(1, 20): "1.20.2", (1, 24): "1.24.4", (1, 31): "1.31.1"}
# contiguous_reshapes: Reshape-14 chains fused from 1.23 on (measured on 1.23.2 and 1.24.4; 0 on 1.20.2; 1.21 and 1.22
# not measured), every version from 1.31
_RESHAPES_14_SINCE = (1, 23)
# dq_matmul_nbits_across_eps: measured from 1.23.2 on (the oldest release checked)
_DQ_MATMUL_NBITS_SINCE = (1, 23)
# fusion_kernel_refusal: measured from 1.20.2 on (the oldest release checked)
_FUSION_KERNEL_SINCE = (1, 20)
# initializer_copy_refusal: the 1.23 line only (measured on 1.23.0 and 1.23.2; not on 1.20.2, 1.22.0, 1.24.4, 1.31.1)
_INITIALIZER_COPY_LINES = {(1, 23)}
# external_inference_refusal, recursive_function_refusal, duplicate_function_refusal: the lines whose wheel refused the probe (generated:
# ort-releases.json)
_EXTERNAL_INFERENCE_LINES = refused_lines("external_inference")
_RECURSIVE_FUNCTION_LINES = refused_lines("recursive_functions")
_DUPLICATE_FUNCTION_LINES = refused_lines("duplicate_functions")
_PRE_SHAPE = probed_versions("pre_shape")
_RESHAPE_FUSION = {line: tuple(sorted(versions)) for line, versions in probed_versions("reshape_fusion").items()}

# (major, minor) -> row, oldest first
RELEASES: dict[tuple[int, int], Release] = {
    line: _row(opset, ir, line >= _NEWER_SINCE, _MEASURED.get(line), 14 if line >= _RESHAPES_14_SINCE else 0,
               line >= _DQ_MATMUL_NBITS_SINCE, line >= _FUSION_KERNEL_SINCE, elem_types().get(line),
               line in _INITIALIZER_COPY_LINES, line in _EXTERNAL_INFERENCE_LINES, _PRE_SHAPE.get(line, frozenset()),
               line in _RECURSIVE_FUNCTION_LINES, line in _DUPLICATE_FUNCTION_LINES,
               _RESHAPE_FUSION.get(line, OLDEST_RESHAPE_FUSION))
    for line, (opset, ir) in limits().items()}
# a release newer than the table, or none named: the newest behaviour ORT's sources show, no limits known, no element
# type claimed refused (a newer release may load one: 1.32 loads FLOAT6 initializers 1.31 refuses)
NEWEST = Release(None, None, contiguous_reshapes=ANY_VERSION, reshape_dim_match=True, dropout_reads_training_mode=True,
                 cse_typed_tensor_attributes=True, function_node_cpu_in_first_pass=False,
                 cast_removal_keeps_lossy_to_bool=True, dq_matmul_nbits_across_eps=True, fusion_kernel_refusal=True,
                 recursive_function_refusal=True, duplicate_function_refusal=True,
                 reshape_fusion_versions=_RESHAPE_FUSION[max(_RESHAPE_FUSION)] if _RESHAPE_FUSION else OLDEST_RESHAPE_FUSION,
                 pre_shape_versions=_PRE_SHAPE[max(_PRE_SHAPE)] if _PRE_SHAPE else frozenset())
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
    return NEWEST if not RELEASES or rel > max(RELEASES) else OLDEST


def measured() -> list[str]:
    """The releases the truth benchmark checks (oldest first)."""
    return [r.measured for r in RELEASES.values() if r.measured]
