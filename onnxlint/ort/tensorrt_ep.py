"""ORT's TensorRT EP (TensorrtExecutionProvider::GetCapability): TensorRT takes what its parser supports, the
rest falls through to CUDA, then CPU."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from onnxlint.model.graph import GraphIndex, NodeRef


class Verdicts(Protocol):
    """A prediction read per node (a Placement, TensorRT's verdicts)."""

    def get(self, node: NodeRef) -> Any: ...


@dataclass
class TrtPartition:
    subgraphs: int
    trt_nodes: int
    cuda_nodes: list[str] = field(default_factory=list)  # node locations
    cpu_nodes: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)

    def summary_line(self) -> str:
        return (f"{self.trt_nodes} node{'s' if self.trt_nodes != 1 else ''} in {self.subgraphs} TensorRT "
                f"subgraph{'s' if self.subgraphs != 1 else ''}, {len(self.cuda_nodes)} fall through to CUDA, "
                f"{len(self.cpu_nodes)} to CPU" + (f", {len(self.unsupported)} with no provider" if self.unsupported else ""))


def partition(trt: Verdicts, cuda: Verdicts, index: GraphIndex) -> TrtPartition:
    """Chain the TensorRT prediction with the CUDA/CPU placement and count TensorRT-claimed subgraphs.

    trt: onnxlint.tensorrt.predict()'s verdicts, the same the tensorrt target reports: ORT's TensorRT EP asks the
    parser which nodes it supports (supports_model), and a node whose verdict is `unsupported` (no importer, a
    rejected dtype, op version, attribute or output count, an input that must be constant) is left to CUDA,
    then CPU (cuda: the ort-cuda placement)."""
    claimed = {n.index for n in index.nodes if (p := trt.get(n)) is not None and p.status != "unsupported"}
    part = TrtPartition(0, len(claimed))
    for n in index.nodes:
        if n.index in claimed or (n.op_type == "Constant"):
            continue
        p = cuda.get(n)
        if p is None:
            continue
        (part.cuda_nodes if p.ep == "CUDAExecutionProvider" else part.cpu_nodes if p.ep else part.unsupported).append(n.location)
    # connected components of claimed nodes (edges through values inside a scope)
    parent = {i: i for i in claimed}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for n in index.nodes:
        if n.index not in claimed:
            continue
        for inp in n.inputs:
            prod = n.scope.producer.get(inp)
            if prod is not None and prod.index in claimed:
                parent[find(n.index)] = find(prod.index)
    part.subgraphs = len({find(i) for i in claimed})
    return part
