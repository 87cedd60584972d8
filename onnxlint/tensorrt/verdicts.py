"""What the parser says about each node: the vocabulary rule files use (`tensorrt: {status: ..., reason: ...}`)
and the per-model prediction that holds one verdict per node."""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxlint.model.graph import NodeRef, StatusIndex
from onnxlint.tensorrt import versions

STATUSES = ("supported", "restricted", "unsupported")
REASONS = (
    "plugin",              # non-ONNX domain: needs a plugin registered under the op name
    "not-listed",          # op not in the table at all
    "not-supported",       # the parser has no importer for the op
    "op-version",          # the importer rejects this op version (opset)
    "dtype",               # a type parameter bound to a dtype the importer rejects
    "cast-type",           # Cast/CastLike to or from a type the parser rejects
    "constant-input",      # an input the importer needs as an initializer / Constant is computed at run time
    "attribute",           # an attribute value the importer rejects
    "outputs",             # more outputs than the importer produces (e.g. LayerNormalization Mean/InvStdDev)
    "control-flow",        # If branches of different output ranks, Loop scan outputs with a run-time trip count
    "parser-crash",        # an op at input ranks that crashed the parser when probed (status restricted: a warning)
    "matrix-restriction",  # supported, with a restriction text in onnx-tensorrt's matrix (status restricted)
    "ignored-input",       # the parser accepts the node but ignores an input (ReduceX-18 axes on 8.6): other values
                           # (status restricted: OLX316)
    "other-shapes",        # the parser accepts the node but builds it with other output shapes than the model's
                           # (Shape-15 start/end on 8.6, ReduceX-18 axes with keepdims=0): a later node is rejected
                           # or the network computes other shapes (status restricted: OLX317)
    "ort-op",              # an op only ONNX Runtime defines, which the parser does not import: the model was
                           # prepared for ORT (reported once per model, OLX314/OLX315)
)

Verdict = tuple[str, "str | None", str]  # (status, reason or None when supported, detail)
SUPPORTED: Verdict = ("supported", None, "")


@dataclass(slots=True)
class TrtNode:
    """One node's verdict (one per node of the model: slots, not a dict each)."""
    node: NodeRef
    status: str  # one of STATUSES
    reason: str | None = None  # one of REASONS (None when supported)
    detail: str = ""


@dataclass
class TrtPrediction(StatusIndex):
    COMMON = "supported"

    version: str
    note: str | None
    nodes: dict[int, TrtNode] = field(default_factory=dict)
    verified: bool = False
    ort_ops: dict[str, int] = field(default_factory=dict)  # ORT-only op -> nodes the parser does not import

    @property
    def product(self) -> str:
        return versions.product(self.version)

    def ort_ops_text(self) -> str:
        """'com.microsoft::SkipLayerNormalization ×24, com.microsoft::Attention ×12' (most nodes first)."""
        return ", ".join(f"{op} ×{n}" for op, n in sorted(self.ort_ops.items(), key=lambda kv: (-kv[1], kv[0])))

    def get(self, node: NodeRef) -> TrtNode | None:
        return self.nodes.get(node.index)
