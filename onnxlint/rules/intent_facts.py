"""What rules read of a model's quantization once the targets' verdicts are known: the nodes of ORT's CPU
quantization formats (model.intent) that run on CPU under the CUDA EP, and the one line that says so with its cost
(OLX207); the causes for which TensorRT's parser rejects the model's Q/DQ nodes, in one line (OLX318)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from onnxlint.model import intent
from onnxlint.model.graph import NodeRef

if TYPE_CHECKING:
    from onnxlint.rules.context import LintContext

# for CUDA and TensorRT: QDQ format, int8 with zero points of 0 (TensorRT's parsers reject other zero points:
# tools/gen_trt_behaviour.py's Q/DQ probes)
_ADVICE = {
    intent.QOPERATOR: "quantize in QDQ format (ORT's quantize_static, quant_format=QuantFormat.QDQ)",
    intent.DYNAMIC: "quantize statically in QDQ format (ORT's quantize_static, quant_format=QuantFormat.QDQ) or keep the "
                    "float model",
    intent.QDQ16: "quantize to 8-bit QDQ (ORT's quantize_static, activation_type=QuantType.QInt8)",
}
_TRT_ADVICE = "for TensorRT too, with symmetric int8 (QInt8, ActivationSymmetric, WeightSymmetric)"


def cpu_quantization_nodes(ctx: LintContext) -> dict[str, list[NodeRef]]:
    """Format -> its nodes that fall back to CPU under the CUDA EP; {} when ort-cuda is not a target or none
    does. Computed once per model."""
    got = ctx.facts.get("cpu_quantization")
    if got is None:
        got = {}
        if "ort-cuda" in ctx.options.targets:
            formats = intent.cpu_quantization(ctx.index)
            if formats:
                placement = ctx.prediction("ort-cuda")
                for fmt, nodes in formats.items():
                    falls = [n for n in nodes if (p := placement.get(n)) is not None and p.status == "fallback"]
                    if falls:
                        got[fmt] = falls
        ctx.facts["cpu_quantization"] = got
    return got


def in_cpu_quantization(ctx: LintContext, node: NodeRef) -> bool:
    """Whether the node is one of those (said by OLX207, not once per op type by OLX200)."""
    indices = ctx.facts.get("cpu_quantization_indices")
    if indices is None:
        indices = ctx.facts["cpu_quantization_indices"] = {n.index for nodes in cpu_quantization_nodes(ctx).values() for n in nodes}
    return node.index in indices


def cpu_quantization_text(ctx: LintContext) -> str | None:
    """'QOperator quantization runs on CPU under the CUDA EP: 65 of the model's 69 nodes (QLinearConv ×52, ...); for
    CUDA, quantize in QDQ format (...); for TensorRT too, ...'."""
    groups = cpu_quantization_nodes(ctx)
    if not groups:
        return None
    total = sum(1 for p in ctx.prediction("ort-cuda").nodes.values() if p.status not in ("folded", "eliminated"))
    parts = []
    for fmt, nodes in groups.items():
        ops = Counter(n.op_type if n.domain == "ai.onnx" else f"{n.domain}::{n.op_type}" for n in nodes)
        shown = ", ".join(f"{op} ×{k}" if k > 1 else op for op, k in ops.most_common(5))
        if len(ops) > 5:
            shown += f" and {len(ops) - 5} more op types"
        parts.append(f"{fmt} quantization runs on CPU under the CUDA EP: {len(nodes)} of the model's {total} nodes "
                     f"({shown}); for CUDA, {_ADVICE[fmt]}")
    return "; ".join(parts) + f"; {_TRT_ADVICE}"


def tensorrt_quantization_text(ctx: LintContext) -> str | None:
    """'TensorRT-RTX 1.4's parser rejects the model's Q/DQ quantization: DequantizeLinear-13 of int32 weights (an
    initializer) ×52: "input has type Int32 ..."; ...; it takes int8 Q/DQ with zero points of 0 and float bias
    (...)'."""
    if "tensorrt" not in ctx.options.targets:
        return None
    pred = ctx.prediction("tensorrt")
    causes = pred.qdq_causes()
    if not causes:
        return None
    from onnxlint.tensorrt import quantization, tables

    shown = "; ".join(f"{text} ×{n}" if n > 1 else text for text, n in causes[:4])
    if len(causes) > 4:
        shown += f"; and {len(causes) - 4} more causes"
    total = sum(n for _, n in causes)
    line = f"{pred.product}'s parser rejects the model's Q/DQ quantization ({total} node{'s' if total != 1 else ''}): {shown}"
    if quantization.symmetric_int8_taken((tables.load(pred.version).get("behaviour") or {}).get("quantization")):
        line += ("; it takes int8 Q/DQ with zero points of 0 and float bias (ORT: QuantType.QInt8, ActivationSymmetric, "
                 "WeightSymmetric, QuantizeBias=False)")
    return line


def tensorrt_quantization(ctx: LintContext) -> bool:
    """Whether TensorRT's parser rejects one of the model's Q/DQ nodes (for an op ONNX defines)."""
    return "tensorrt" in ctx.options.targets and bool(ctx.prediction("tensorrt").qdq_causes())


def tensorrt_network_import_causes(ctx: LintContext) -> list[tuple[str, int]]:
    """OLX319's causes. A network input or initializer no node reads counts only where the parser is given the
    whole model (the tensorrt target on its own): ORT's TensorRT EP hands it subgraphs of nodes, with the inputs
    and initializers those nodes read."""
    if "tensorrt" not in ctx.options.targets:
        return []
    whole_model = "ort-trt" not in ctx.options.targets or "tensorrt" in ctx.options.explicit_targets
    return ctx.prediction("tensorrt").network_import_causes(unread=whole_model)


def tensorrt_network_import_text(ctx: LintContext) -> str | None:
    """'TensorRT-RTX 1.4's parser (10.x line) fails before any node: cannot take a network input of type string:
    "Failed to convert ONNX date type to TensorRT data type." (2 nodes read it); ...'."""
    causes = tensorrt_network_import_causes(ctx)
    if not causes:
        return None
    pred = ctx.prediction("tensorrt")
    from onnxlint.tensorrt import versions

    shown = "; ".join(f"{text} (read by {n} node{'s' if n != 1 else ''})" if n else text for text, n in causes[:4])
    if len(causes) > 4:
        shown += f"; and {len(causes) - 4} more"
    return f"{versions.describe(pred.version)} fails before any node: {shown}"
