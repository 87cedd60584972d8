"""DQMatMulToMatMulNBits (core/optimizer/qdq_transformer/selectors_actions: DQMatMulNodeGroupSelector,
DQMatMulToMatMulNBitsAction), a Level-2 QDQ selector/action (`all` only, after partitioning): a block-wise 4-bit
DequantizeLinear of constant weights that feeds only a MatMul's B input becomes, with the MatMul, one
com.microsoft MatMulNBits on the MatMul's provider. Only the case that changes a finding is modelled: the
DequantizeLinear placed on CPU for want of a CUDA kernel (DequantizeLinear-23 before 1.26), its MatMul on CUDA;
after the fusion no node of the pair runs on CPU and nothing is copied. Measured on 1.23.2 and 1.24.4 (int4 and
uint4 at opsets 21 and 23, float and float16 scales, a zero point; not fused: int8/uint8, block_size 8 or 48,
axis 1, weights that are a graph input, a Gemm) and on 1.31.1 (the DequantizeLinear has a CUDA kernel there, and
the selector takes more: 8-bit, Gemm). A DequantizeLinear read by several such MatMuls is copied for each by
EnsureUniqueDQForNodeUnit first, and each copy fuses with its reader: the copies go too. One whose output is also a
graph output gives each MatMul a copy too; the copies fuse, the original stays on CPU for the graph output, and no
Memcpy is made (measured on 1.23.2 and 1.24.4: uint4 and int4 with a zero point, one and two MatMuls; not fused:
uint8, block_size 8, as without the graph output).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx import TensorProto

from onnxlint.ort.optimizer import ensure_unique_dq_for_node_unit
from onnxlint.ort.verdicts import CPU, CUDA, NodePlacement

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
    from onnxlint.ort.verdicts import Placement

NAME = "DQMatMulToMatMulNBits"
_FOUR_BIT = (TensorProto.INT4, TensorProto.UINT4)
_SCALES = (TensorProto.FLOAT, TensorProto.FLOAT16)
_QUANTIZE = ("QuantizeLinear", "DequantizeLinear")


def apply(pl: Placement, index: GraphIndex, copied: dict[str, str]) -> None:
    """Mark each CPU DequantizeLinear ORT fuses into its CUDA MatMul (or MatMuls, one copy each) as gone,
    eliminated by fusion, with its copies. copied: the values EnsureUniqueDQForNodeUnit gives readers copies of
    (the fused ones taken out: nothing is copied to them)."""
    for dq in index.by_op.get("DequantizeLinear", ()):
        if dq.domain != "ai.onnx" or dq.scope.is_function or not dq.outputs:
            continue
        p = pl.nodes.get(dq.index)
        if p is None or p.ep != CPU or p.status != "fallback":
            continue
        matmuls = _fused_matmuls(pl, index, dq, copied)
        if not matmuls:
            continue
        pl.created[:] = [c for c in pl.created if not (c.source is dq and c.by == ensure_unique_dq_for_node_unit.NAME)]
        if dq.outputs[0] in dq.scope.outputs:
            # the MatMuls read copies, each fused into its MatMulNBits on CUDA: their edges no longer cross
            copied[dq.outputs[0]] = CUDA
            continue
        names = ", ".join(m.name or m.op_type for m in matmuls)
        pl.record(dq.index, NodePlacement(
            dq, None, "eliminated", "fusion",
            f"ORT's {NAME} fusion (after partitioning, level all) makes it and {names} "
            f"{'one com.microsoft MatMulNBits' if len(matmuls) == 1 else 'com.microsoft MatMulNBits nodes'} on CUDA"))
        copied.pop(dq.outputs[0], None)


def _fused_matmuls(pl: Placement, index: GraphIndex, dq: NodeRef, copied: dict[str, str]) -> list[NodeRef]:
    """The MatMuls dq (or its copies, one a reader) fuses into (DQMatMulNodeGroupSelector::Check), or none."""
    scope, out = dq.scope, dq.outputs[0]
    readers = list(scope.consumers.get(out, ()))
    if not readers or (out in scope.outputs and out not in copied) or any(out in s.consumers for s in index.scopes if s is not scope):
        return []  # each copy one output edge, none a graph output (a graph output's readers read copies), not read by a body
    if not all(_fusable(pl, scope, mm, out) for mm in readers) or not _weights_fit(scope, dq):
        return []
    return readers


def _fusable(pl: Placement, scope: GraphScope, mm: NodeRef, out: str) -> bool:
    """mm is a CUDA MatMul reading out as B only, with no other DequantizeLinear input and no Q after it."""
    if mm.op_type != "MatMul" or mm.domain != "ai.onnx" or len(mm.inputs) != 2 or mm.inputs[1] != out \
            or mm.inputs[0] == out:
        return False
    p = pl.nodes.get(mm.index)
    if p is None or p.ep != CUDA:
        return False
    a = scope.producer.get(mm.inputs[0])
    if a is not None and a.op_type in _QUANTIZE:
        return False  # a second DQ (QLinearMatMul's pattern), not this one
    # a Q after the MatMul: no DQ-only node group
    return not any(r.op_type in _QUANTIZE for o in mm.outputs for r in scope.consumers.get(o, ()))


def _weights_fit(scope: GraphScope, dq: NodeRef) -> bool:
    """4-bit constant weights blocked along axis 0, block_size a power of 2 from 16, float or float16 scales,
    rank-2 weight / scale / zero point of matching shapes."""
    axis, block = dq.attr("axis"), dq.attr("block_size")
    if axis != 0 or not isinstance(block, int) or block < 16 or block & (block - 1):
        return False
    names = [v for v in dq.inputs if v]
    if len(names) not in (2, 3) or len(names) != len(dq.inputs) or any(v in scope.inputs for v in names):
        return False  # weights ORT may be fed (an initializer that is a graph input) are no constant
    tensors = []
    for v in names:
        t = scope.constant(v)
        if t is None:
            return False
        tensors.append(t)
    w, s, *zp = tensors
    if w.data_type not in _FOUR_BIT or s.data_type not in _SCALES or any(len(t.dims) != 2 for t in tensors):
        return False
    if (w.dims[0] + block - 1) // block != s.dims[0] or w.dims[1] != s.dims[1]:
        return False
    return not zp or list(zp[0].dims) == list(s.dims)
