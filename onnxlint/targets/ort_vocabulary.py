"""The rule vocabulary of ONNX Runtime's placement targets (ort-cpu, ort-cuda): the `placement` predicate
(`placement: {target: ort-cuda, status: fallback, reason: dtype}`) and the `{placement.*}` message placeholder."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from onnxlint.rules.comparison import enum_cmp
from onnxlint.targets.base import Target, Vocabulary, status_nodes, verdict_matches

if TYPE_CHECKING:
    from onnxlint.model.graph import NodeRef
    from onnxlint.rules.context import LintContext
    from onnxlint.rules.rule import Rule


def _schema(placed: list[Target]) -> dict[str, Any]:
    some = placed[0]
    return {"type": "object", "x-what": "placement predicate", "additionalProperties": False, "required": ["target"],
            "properties": {"target": {"type": "string", "enum": [t.name for t in placed], "x-what": "placement target"},
                           "status": enum_cmp(some.statuses(), "placement status"),
                           "reason": enum_cmp(some.reasons(), "placement reason")}}


def _candidates(ctx: LintContext, spec: dict[str, Any]) -> list[NodeRef] | None:
    if spec["target"] not in ctx.options.targets:
        return []
    return status_nodes(ctx.prediction(spec["target"]), spec)


def _evaluate(ctx: LintContext, node: NodeRef, spec: dict[str, Any]) -> bool:
    if spec["target"] not in ctx.options.targets:
        return False
    return verdict_matches(ctx.prediction(spec["target"]).get(node), spec)


def _message_value(ctx: LintContext, rule: Rule, node: NodeRef, field: str | None) -> Any:
    """The field of the node's verdict under the target the rule's first placement predicate names; two fields
    are worked out from it: `removed` (that ORT's graph optimizations at the run's level remove the node, None
    when they do not) and `cuda_release` (the first onnxruntime-gpu release whose CUDA kernel takes a node that
    falls back for want of one, None when no shipped release has it)."""
    target = rule.placement_target or next((t for t in ("ort-cuda", "ort-cpu") if t in ctx.options.targets), None)
    if target is None or target not in ctx.options.targets or (rule.placement_target is None and field not in DERIVED):
        return None
    placement = ctx.prediction(target)
    p = placement.get(node)
    if p is None:
        return None
    if field == "removed":
        return (f"ORT's graph optimizations (level {ctx.options.ort_optimization}) remove it here"
                if p.status in ("eliminated", "folded") else None)
    if field == "cuda_release":
        if target != "ort-cuda" or p.status != "fallback" or p.reason not in ("not-registered", "opset", "dtype"):
            return None
        from onnxlint.ort.kernel_history import first_cuda_release

        return first_cuda_release(node, placement.table_versions.get("CUDAExecutionProvider"))
    return getattr(p, field or "", None)


# fields worked out from the verdict, readable by a rule with no placement predicate (its ORT target's verdict)
DERIVED = ("removed", "cuda_release")


PLACEMENT = Vocabulary(
    predicate="placement", doc="the node's predicted ORT placement: target (ort-cuda, ort-cpu), status, reason",
    evaluate=_evaluate, candidates=_candidates, exact_candidates=True, schema=_schema, message_root="placement",
    message_fields=("status", "reason", "detail", "ep", *DERIVED), message_value=_message_value, fallback=True)
