"""What the parser says about each node: the vocabulary rule files use (`tensorrt: {status: ..., reason: ...}`)
and the per-model prediction that holds one verdict per node."""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxlint.model.graph import NodeRef, StatusIndex
from onnxlint.model.node_verdicts import NodeVerdicts
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
    "quantization",        # a QuantizeLinear/DequantizeLinear pattern the parser rejects when probed (zero point,
                           # quantized type, where x comes from): tools/gen_trt_behaviour.py, in the parser's words
    "network-import",      # a network input or a stored tensor (initializer, Constant) of a type the parser cannot
                           # take: it fails before any node (importInputs, parseGraph), said once per model (OLX319)
)

Verdict = tuple[str, "str | None", str]  # (status, reason or None when supported, detail)
QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
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
    VERDICT = TrtNode

    version: str
    note: str | None
    nodes: NodeVerdicts[TrtNode] = field(default_factory=NodeVerdicts)  # a code a node, not an object
    verified: bool = False
    ort_ops: dict[str, int] = field(default_factory=dict)  # ORT-only op -> nodes the parser does not import
    # ORT-only op -> what its importer said when probed with such a node (MatMulNBits on the 10.x line)
    ort_op_words: dict[str, str] = field(default_factory=dict)
    # network inputs / initializers no node reads that the parser cannot take (quantization.unread_tensors)
    unread_imports: list[str] = field(default_factory=list)

    @property
    def product(self) -> str:
        return versions.product(self.version)

    def ort_ops_text(self) -> str:
        """'com.microsoft::SkipLayerNormalization ×24, com.microsoft::Attention ×12' (most nodes first), with the
        importer's own words where it has one that was probed ('com.microsoft::MatMulNBits ×72 (its importer:
        "input tensor A must be FP16.")')."""
        return ", ".join(f"{op} ×{n}" + (f" (its importer: \"{self.ort_op_words[op]}\")" if op in self.ort_op_words else "")
                         for op, n in sorted(self.ort_ops.items(), key=lambda kv: (-kv[1], kv[0])))

    def get(self, node: NodeRef) -> TrtNode | None:
        return self.nodes.get(node.index)

    def network_import_causes(self, unread: bool = True) -> list[tuple[str, int]]:
        """Each network input or stored tensor the parser cannot take, read by nodes other than Q/DQ (whose causes
        OLX318 says), worded without the product, with its node count: what OLX319 says in one line. unread: also
        those no node reads (count 0)."""
        who = versions.describe(self.version)
        causes: dict[str, int] = {}
        # network-import verdicts are unsupported ones (quantization.imported_tensors), which by_status keeps aside
        # as they are recorded, in node order: read without a walk over every node's verdict
        for n in self.by_status(with_common=False).get("unsupported", ()):
            v = self.nodes[n.index]
            if v.reason == "network-import" and v.node.op_type not in QDQ_OPS:
                text = _before_any_node(v.detail.replace(f"{who} ", ""))
                causes[text] = causes.get(text, 0) + 1
        for text in self.unread_imports if unread else ():
            text = _before_any_node(text.replace(f"{who} ", ""))
            causes.setdefault(text, 0)
        return list(causes.items())

    def qdq_causes(self) -> list[tuple[str, int]]:
        """Each cause for which the parser rejects the model's QuantizeLinear/DequantizeLinear nodes, worded
        without the product ('DequantizeLinear-13 of int32 weights (an initializer): "input has type Int32 ..."'),
        with its node count, in the order the parser meets them: what OLX318 says in one line."""
        who = versions.describe(self.version)
        causes: dict[str, list[int]] = {}  # text -> [nodes, first node's index, whether the parser fails on it first]
        for n in self.by_status(with_common=False).get("unsupported", ()):  # no verdict made for the others
            v = self.nodes[n.index]
            if v.node.op_type not in QDQ_OPS or v.reason == "ort-op":
                continue
            text = _before_any_node(v.detail.replace(f" is rejected by {who}", "").replace(f"{who} rejects ", "").replace(f"{who} ", ""))
            got = causes.setdefault(text, [0, v.node.index, int(v.reason != "network-import" and "before importing" not in text)])
            got[0] += 1
        # in the order the parser meets them: what it fails on before any node (an initializer it cannot import),
        # then by the first node of each cause
        return [(text, n) for text, (n, _, _) in sorted(causes.items(), key=lambda kv: (kv[1][2], kv[1][1]))]


def _before_any_node(text: str) -> str:
    """A cause without the note that the parser fails on it before any node (the one line says that once)."""
    return text.replace(" (it makes the network's inputs before any node)", "").replace(
        " (it imports every initializer before any node)", "")
