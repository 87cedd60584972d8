"""The partitioner's verdicts: where each node runs (NodePlacement), the Memcpy nodes ORT inserts (Boundary),
and a model's whole placement, with every status and reason a rule file may name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from onnxlint.model.graph import NodeRef, StatusIndex, shape_sized
from onnxlint.model.node_verdicts import NodeVerdicts

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
TARGET_EPS = {"ort-cuda": [CUDA, CPU], "ort-cpu": [CPU], "ort-trt": ["TensorrtExecutionProvider", CUDA, CPU]}
# Every status and reason a NodePlacement can carry (the target registry validates rule files against these).
#   device: on the target's preferred EP | fallback: the preferred EP has no kernel or refuses it, another EP runs it
#   deliberate: GetCpuPreferredNodes put a small shape computation on CPU on purpose
#   unsupported: no EP can run it, ORT refuses the session | expanded: no kernel, ORT inlines its ONNX function body
#   folded / eliminated: a Level-1 graph transformer removes the node before partitioning, or (duplicate-cast)
#   InsertCastTransformer's duplicate-Cast removal after it, at every level, or (fusion) a Level-2 fusion after it
#   at `all` (DQMatMulToMatMulNBits) (not a finding)
#   refused: ORT refuses the whole model (opset / IR version too new, a fused node without a kernel), reported once,
#   on the first node
#   skipped: not placed because ORT refuses the model
STATUSES = ("device", "fallback", "deliberate", "unsupported", "expanded", "folded", "eliminated", "refused", "skipped")
GONE_STATUSES = ("expanded", "folded", "eliminated")  # the node does not exist in ORT's partitioned graph
# for Memcpy boundaries an expanded node stands for its function body, on the provider that body runs on
_REMOVED = ("folded", "eliminated")
REASONS = (
    # kernel lookup
    "not-registered", "opset", "dtype", "contrib-op", "custom-domain", "fp16-cast",
    # the preferred EP has a kernel but refuses the node: GetCapability (capability) or a rule file (attribute)
    "capability", "attribute", "kernel-init",
    # GetCpuPreferredNodes
    "cpu-preferred",
    # function expansion
    "function", "function-cpu", "function-body",
    # Level-1 graph transformers (ort.optimizer)
    "constant-folding", "shape-folding", "cse", "identity", "dropout", "cast", "noop", "slice", "expand", "fusion",
    "if-constant",
    # after partitioning, at every level (InsertCastTransformer's RemoveDuplicateCastTransformer)
    "duplicate-cast",
    # the whole model: newer than the release loads (opset, IR version), or refused by every measured release
    # before it is resolved (load_refusal.load_refusal: no opset import, a tensor of an element type none loads) or by
    # its Graph::Resolve (model_load.resolve_failure: OLX007's words)
    "model-opset", "model-ir", "model-invalid",
    # ... or, at `all`, a node a Level-2 fusion puts on CUDA has no CUDA kernel (GatherSliceToSplitFusion's Squeeze)
    "fusion-kernel",
    # ... or, on 1.23 below `all`, an initializer ORT keeps in memory is read on both providers (its copy is refused)
    "initializer-copy",
)
# the whole-model refusals of ORT's loader (the Model constructor, reading the graph), made whatever the providers;
# fusion-kernel and initializer-copy are the CUDA EP's partition's, not made where another EP takes those nodes
LOADER_REASONS = ("model-opset", "model-ir", "model-invalid")


@dataclass(slots=True)
class NodePlacement:
    """One node's placement (one per node of the model: slots, not a dict each)."""
    node: NodeRef
    ep: str | None
    status: str  # one of STATUSES
    reason: str | None = None
    detail: str = ""

    @property
    def deliberate(self) -> bool:
        return self.status == "deliberate"


@dataclass
class CreatedNode:
    """A node ORT's graph transformers add to the model (it is in no model file): its name as ORT makes it
    (GenerateNodeName: `<name>/duplicated`, `Gather_token_3`, ...; the counters are ORT's, so a predicted name
    may differ in its number), its op, where it runs, the transformer that makes it (ORT's name) and the model's
    node it comes from."""

    name: str
    op_type: str
    domain: str
    ep: str | None
    by: str
    source: NodeRef
    detail: str = ""
    replaces: bool = False  # it takes its source's place (a rewrite: the channels-last QLinearConv), not added next to it


@dataclass
class Boundary:
    value: str
    direction: str  # to-host | to-device
    producer: NodeRef | None
    consumer: NodeRef
    bytes: int | None


@dataclass
class Placement(StatusIndex):
    COMMON = "device"
    VERDICT = NodePlacement

    target: str
    ort_version: str
    table_versions: dict[str, str]
    notes: list[str]
    nodes: NodeVerdicts[NodePlacement] = field(default_factory=NodeVerdicts)  # a code a node, not an object
    boundaries: list[Boundary] = field(default_factory=list)
    optimization: str = "all"
    created: list[CreatedNode] = field(default_factory=list)  # the nodes ORT's transformers add, in the order made
    refused: str | None = None  # why ORT refuses the whole model at this version, if it does
    refused_reason: str | None = None  # that refusal's reason (REASONS: model-ir, ..., fusion-kernel)

    def loader_refused(self) -> bool:
        """Whether ORT refuses the model while loading it, before any EP is asked (LOADER_REASONS): under every
        provider alike, the TensorRT EP's included."""
        return self.refused_reason in LOADER_REASONS

    def get(self, node: NodeRef) -> NodePlacement | None:
        return self.nodes.get(node.index)

    def summary(self) -> dict[str, Any]:
        counts = dict.fromkeys(STATUSES, 0)
        counts.update(self.nodes.count("status"))
        # deliberate, but no small shape computation by its size (an image-sized GridSample): a fallback
        large = sum(not shape_sized(n) for n in self.by_status(with_common=False).get("deliberate", ()))
        known = [b.bytes for b in self.boundaries if b.bytes is not None]
        preferred = TARGET_EPS[self.target][0]
        return {
            "preferred_ep": preferred,
            "nodes": len(self.nodes),
            "on_preferred_ep": counts["device"] + counts["expanded"],
            "fallback": counts["fallback"] + counts["deliberate"],
            "real_fallback": counts["fallback"] + large,
            "shape_only": counts["deliberate"] - large,
            "unsupported": counts["unsupported"],
            "folded": counts["folded"],
            "eliminated": counts["eliminated"],
            "optimization": self.optimization,
            "refused": self.refused,
            "boundaries": len(self.boundaries),
            "bytes_copied": sum(known) if known else 0,
            "bytes_unknown": len(self.boundaries) - len(known),
        }

    def summary_line(self) -> str:
        s = self.summary()
        ep = {CUDA: "CUDA", CPU: "CPU"}.get(s["preferred_ep"], s["preferred_ep"])
        copied = f"~{_size(s['bytes_copied'])} copied per run" + (f" (+{s['bytes_unknown']} of unknown size)" if s["bytes_unknown"] else "")
        # a deliberate placement (a small shape computation ORT keeps on CPU on purpose) is not a fallback
        on_purpose = f", {s['shape_only']} shape computations on CPU on purpose" if s["shape_only"] else ""
        line = (f"{_count(s['on_preferred_ep'], 'node')} on {ep}, {s['real_fallback']} fall back{on_purpose}, "
                f"{_count(s['boundaries'], 'boundary', 'boundaries')}, {copied}")
        if s["unsupported"]:
            line += f", {s['unsupported']} with no provider"
        if self.optimization == "disabled" and s["eliminated"]:
            # only InsertCastTransformer's duplicate-Cast removal runs with optimizations disabled
            line += f"; {_count(s['eliminated'], 'duplicate Cast')} removed by ORT (with optimizations disabled too)"
        elif s["folded"] or s["eliminated"]:
            line += f"; {s['folded']} folded and {s['eliminated']} eliminated by ORT's graph optimizations ({self.optimization})"
        if self.refused:
            line = f"ORT refuses this model: {self.refused}"
        return line


def _size(n: int) -> str:
    """Bytes as the HTML page shows them (fmtBytes): "~0.00 MB copied" read as nothing for a copy of 8 bytes. The
    unit is the largest the rounded figure reaches (999,950 bytes are "1.00 MB", not "1000.0 kB")."""
    if n < 1000:
        return f"{n} B"
    for unit, scale, digits in (("GB", 1e9, 2), ("MB", 1e6, 2)):
        if round(n / scale, digits) >= 1:
            return f"{n / scale:.{digits}f} {unit}"
    return f"{n / 1e3:.1f} kB"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"
