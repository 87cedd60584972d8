"""Where a model's own content says it is meant to run (issue 41): what the producers that write these models
make them for, read from the graph alone.

* A classic-ML model: ai.onnx.ml ops (TreeEnsembleClassifier, LinearClassifier, ZipMap, ...), or one that
  skl2onnx or onnxmltools made (scikit-learn pipelines, LightGBM, XGBoost). ORT runs these on its CPU EP; a
  default run checks them as CPU models (linting.linter), the GPU targets only when one is named.
* ORT's CPU quantization formats, which its quantization tool writes for the CPU EP (QOperator, dynamic) and for
  NPU EPs (16-bit QDQ): on the CUDA EP their quantized ops run on CPU, one decision said once (OLX207), and
  TensorRT's verdicts on them are shown only where TensorRT is named.
"""

from __future__ import annotations

from onnxlint.model.graph import GraphIndex, NodeRef

ML_DOMAIN = "ai.onnx.ml"
CLASSIC_ML_PRODUCERS = {"skl2onnx": "skl2onnx", "onnxmltools": "onnxmltools"}  # producer_name, lower case

# ORT's quantization tool (onnxruntime/python/tools/quantization/registry.py): the QOperator ops it writes, in
# the ONNX domain (QLinearConv, QLinearMatMul) and com.microsoft (QLinearAdd, QGemm, ...); the dynamic ones
QOPERATOR_OPS = frozenset({"QLinearConv", "QLinearMatMul", "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu",
                           "QLinearSoftmax", "QLinearConcat", "QLinearGlobalAveragePool", "QLinearAveragePool",
                           "QLinearReduceMean", "QLinearWhere", "QLinearConvTranspose", "QGemm", "QAttention",
                           "QEmbedLayerNormalization", "QOrderedMatMul"})
DYNAMIC_OPS = frozenset({"DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "DynamicQuantizeLSTM",
                         "DynamicQuantizeMatMul", "MatMulIntegerToFloat"})
QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
SIXTEEN_BIT = frozenset({"int16", "uint16"})

QOPERATOR, DYNAMIC, QDQ16 = "QOperator", "dynamic", "16-bit QDQ"
FORMATS = (QOPERATOR, DYNAMIC, QDQ16)


def cpu_model(index: GraphIndex) -> str | None:
    """What the model is, when it is one meant for ORT's CPU EP ('a classic-ML model (ai.onnx.ml ops
    TreeEnsembleClassifier, ZipMap)', 'a classic-ML model (made by skl2onnx)'), or None."""
    if ML_DOMAIN in index.opsets:  # imported by many exports that use none (ORT's quantization tool)
        ml = index.by_domain().get(ML_DOMAIN, ())
        if ml:
            ops = list(dict.fromkeys(n.op_type for n in ml))
            shown = ", ".join(ops[:3]) + (f" and {len(ops) - 3} more" if len(ops) > 3 else "")
            return f"a classic-ML model (ai.onnx.ml ops {shown})"
    producer = CLASSIC_ML_PRODUCERS.get((index.model.producer_name or "").strip().lower())
    if producer:
        return f"a classic-ML model (made by {producer})"
    return None


def cpu_quantization(index: GraphIndex) -> dict[str, list[NodeRef]]:
    """The model's nodes of each ORT CPU quantization format it uses (format -> nodes; {} when none):
    QOperator ops, dynamic-quantization ops, and every Q/DQ of a model with a 16-bit one (its int32 bias and
    8-bit weight DQs belong to the same QDQ format)."""
    out: dict[str, list[NodeRef]] = {}
    by_op = index.by_op
    for fmt, ops in ((QOPERATOR, QOPERATOR_OPS), (DYNAMIC, DYNAMIC_OPS)):
        nodes = [n for op in ops for n in by_op.get(op, ()) if n.domain in ("ai.onnx", "com.microsoft")]
        if nodes:
            out[fmt] = sorted(nodes, key=lambda n: n.index)
    qdq = [n for op in QDQ_OPS for n in by_op.get(op, ()) if n.domain in ("ai.onnx", "com.microsoft")]
    if any(quantized_type(n) in SIXTEEN_BIT for n in qdq):
        out[QDQ16] = sorted(qdq, key=lambda n: n.index)
    return out


def quantized_type(node: NodeRef) -> str | None:
    """The integer type a QuantizeLinear makes or a DequantizeLinear reads."""
    if node.op_type == "DequantizeLinear":
        return node.input_type(0).dtype
    if len(node.inputs) > 2 and node.inputs[2]:
        return node.input_type(2).dtype
    return node.output_type(0).dtype
