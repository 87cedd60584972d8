"""TensorRT's ONNX parser as a target: the rule vocabulary `tensorrt: {...}` and `{trt.*}` over the verdicts of
`onnxlint.tensorrt` (its support tables and per-node model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from onnxlint.rules.comparison import cmp_schema, compare, derived, enum_cmp
from onnxlint.targets.base import Target, Vocabulary, status_nodes, verdict_matches

if TYPE_CHECKING:
    from onnxlint.model.graph import NodeRef
    from onnxlint.rules.context import LintContext
    from onnxlint.rules.rule import Rule


def _statuses() -> tuple[str, ...]:
    from onnxlint.tensorrt import verdicts

    return tuple(verdicts.STATUSES)


def _reasons() -> tuple[str, ...]:
    from onnxlint.tensorrt import verdicts

    return tuple(verdicts.REASONS)


def _versions() -> list[str]:
    from onnxlint.tensorrt import tables

    return list(tables.available())


def _predict(ctx: "LintContext") -> Any:
    from onnxlint.tensorrt import model_importer

    return model_importer.predict(ctx.index, ctx.options.trt_version)


def _summary(prediction: Any) -> str:
    counts = prediction.nodes.count("status")
    parts = [f"{n} {status}" for status, n in sorted(counts.items())]
    return f"TensorRT {prediction.version}: " + (", ".join(parts) if parts else "no nodes")


def _schema(trt: list[Target]) -> dict[str, Any]:
    return {"type": "object", "x-what": "tensorrt predicate", "additionalProperties": False,
            "properties": {"status": enum_cmp(trt[0].statuses(), "TensorRT status"),
                           "reason": enum_cmp(trt[0].reasons(), "TensorRT reason"),
                           "version": cmp_schema({"type": "string", "x-version": True, "pattern": r"^\d+(\.\d+)*$"},
                                                 "TensorRT version")}}


def _as_versions(spec: Any) -> Any:
    """A version comparison with each operand a Version: `compare` tests equality with ==, and a Version is never
    equal to the text "8.6" (`version: "8.6"`, `{eq: ...}`, `{in: [...]}` never matched)."""
    from packaging.version import Version

    if isinstance(spec, dict):
        return {op: want if op == "exists" else _as_versions(want) for op, want in spec.items()}
    if isinstance(spec, list):
        return [_as_versions(w) for w in spec]
    return Version(str(spec))


def _version_ok(ctx: LintContext, spec: dict[str, Any]) -> bool:
    if "version" not in spec:
        return True
    from packaging.version import Version

    # the operands as Versions once a rule (derived): made at every node, each list made was held by compare's sets
    return compare(Version(ctx.prediction("tensorrt").version), derived(spec["version"], _as_versions))


def _candidates(ctx: LintContext, spec: dict[str, Any]) -> list[NodeRef] | None:
    if "tensorrt" not in ctx.options.targets or not _version_ok(ctx, spec):
        return []
    return status_nodes(ctx.prediction("tensorrt"), spec)


def _evaluate(ctx: LintContext, node: NodeRef, spec: dict[str, Any]) -> bool:
    if not _version_ok(ctx, spec):
        return False
    if set(spec) <= {"version"}:
        return True
    return verdict_matches(ctx.prediction("tensorrt").get(node), spec)


def _message_value(ctx: LintContext, rule: Rule, node: NodeRef, field: str | None) -> Any:
    pred = ctx.prediction("tensorrt")
    if field == "version":
        return str(pred.version)
    if field == "product":  # 'TensorRT 8.6', 'TensorRT-RTX 1.4': what the table was measured on
        return str(pred.product)
    p = pred.get(node)
    return getattr(p, field or "", None) if p else None


# `tensorrt: {status: unsupported, reason: dtype, version: {ge: "10.0"}}`, `{trt.reason}`, `{trt.version}`, `{trt.product}`
VOCABULARY = Vocabulary(
    predicate="tensorrt", doc="the node's TensorRT verdict: status, reason, and the TensorRT version (a quoted version string)",
    evaluate=_evaluate, candidates=_candidates, schema=_schema, message_root="trt",
    message_fields=("status", "reason", "detail", "version", "product"), message_value=_message_value)

TENSORRT = Target(
    name="tensorrt", description="TensorRT's ONNX parser (trtexec, OnnxParser)", runtime="TensorRT",
    vocabulary=VOCABULARY, statuses=_statuses, reasons=_reasons, versions=_versions, predict_fn=_predict,
    summary_fn=_summary, common_status="supported", reports_summary=False,
)
