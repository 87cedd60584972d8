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
    """The field of the node's verdict under the target the rule's first placement predicate names."""
    target = rule.placement_target
    if target is None or target not in ctx.options.targets:
        return None
    p = ctx.prediction(target).get(node)
    return getattr(p, field or "", None) if p else None


PLACEMENT = Vocabulary(
    predicate="placement", doc="the node's predicted ORT placement: target (ort-cuda, ort-cpu), status, reason",
    evaluate=_evaluate, candidates=_candidates, exact_candidates=True, schema=_schema, message_root="placement",
    message_fields=("status", "reason", "detail", "ep"), message_value=_message_value, fallback=True)
