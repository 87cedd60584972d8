"""Evaluates every rule in one walk over the graph index, dispatching node rules by op type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from onnxlint import messages, predicates, targets
from onnxlint.graph import GraphIndex, NodeRef
from onnxlint.loading import ModelFile
from onnxlint.report import Finding
from onnxlint.ruleset import Rule, RuleSet


@dataclass
class Options:
    targets: set[str] = field(default_factory=lambda: set(targets.DEFAULT_TARGETS))
    ort_version: str | None = None
    trt_version: str | None = None
    ort_optimization: str = "all"


Rejects = Callable[[NodeRef, str], "str | None"]


class LintContext:
    """Per-model facts, each computed once and only when a rule asks for it."""

    mf: ModelFile
    index: GraphIndex
    options: Options
    ruleset: RuleSet

    def __init__(self, mf: ModelFile, index: GraphIndex, options: Options, ruleset: RuleSet):
        self.mf = mf
        self.index = index
        self.options = options
        self.ruleset = ruleset
        self._predictions: dict[str, Any] = {}
        self._checker: str | None | bool = False
        self.active_rules: dict[str, Rule] = {}  # the rules this run evaluates (the `reported_by` predicate asks)
        self.suppressed_codes: list[str] = []  # codes suppressed for the whole file (per-file-ignores, metadata)

    # model-level facts
    def checker_error(self) -> str | None:
        """onnx.checker's first complaint, less one ONNX Runtime and TensorRT load anyway: an IR < 4 model whose
        initializers are not listed as graph inputs (onnxruntime's own sample mul_1.onnx). Such a model is
        checked again with them listed, so a real complaint behind that one is still reported."""
        if self._checker is False:
            from onnxlint.loading import checker_result

            self._checker = checker_result(self.mf)
            if self._checker and self.mf.model.ir_version < 4 and self._checker.endswith(IR3_INITIALIZER_COMPLAINT):
                self._checker = _check_with_initializers_as_inputs(self.mf.model)
        return self._checker  # type: ignore[return-value]

    def prediction(self, target: str) -> Any:
        """The target's per-node verdicts (computed once per model)."""
        if target not in self._predictions:
            self._predictions[target] = targets.get(target).predict(self)
        return self._predictions[target]

    # the names prediction modules use
    def placement(self, target: str) -> Any:
        return self.prediction(target)

    def tensorrt(self) -> Any:
        return self.prediction("tensorrt")

    def fallback_rejects(self, target: str) -> tuple[Rejects, set[str] | None]:
        """The target's GetCapability refusals written as rules (`fallback: TARGET`): a callback telling why the
        EP rejects a node (None: it does not), and the op types the callback can refuse (None: any)."""
        rules = [r for r in self.ruleset.rules if r.fallback == target]

        def rejects(node: NodeRef, _target: str) -> str | None:
            for r in rules:
                if (r.ops is None or node.op_type in r.ops) and predicates.match_node(self, r.match, node):
                    return f"{r.id}: {messages.render(r.message, self, r, node)}"
            return None

        ops = None if any(r.ops is None for r in rules) else {op for r in rules for op in (r.ops or ())}
        return rejects, ops


IR3_INITIALIZER_COMPLAINT = "in initializer but not in graph input"


def _check_with_initializers_as_inputs(model: Any) -> str | None:
    import onnx

    from onnxlint.loading import checker_message

    m = onnx.ModelProto()
    m.CopyFrom(model)
    listed = {i.name for i in m.graph.input}
    for t in m.graph.initializer:
        if t.name not in listed:
            m.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return checker_message(m)


def _finding(ctx: LintContext, rule: Rule, node: NodeRef | None, message: str) -> Finding:
    from onnxlint.fixers.base import fix_for

    fix = fix_for(rule, node, ctx.index.model) if rule.fix else None
    target = "any" if "any" in rule.targets else next((t for t in rule.targets if t in ctx.options.targets), rule.targets[0])
    return Finding(
        code=rule.id, name=rule.name, severity=rule.severity, target=target, filename=ctx.mf.display,
        node=node.location if node else None, op_type=node.op_type if node else None, message=message,
        hint=rule.fix_hint if fix or not rule.fix else "no automatic fix for this node", fix=fix,
        node_name=(node.name if node else None),
        doc_string=_text(node.proto.doc_string) if node else "",
    )


def _text(value: str | bytes) -> str:
    """A string field as text: protobuf hands one that is not UTF-8 over as bytes (kept as surrogates, which the
    output formats escape)."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def lint(ctx: LintContext, rules: list[Rule]) -> list[Finding]:
    """All findings of the active rules for one model: model and input findings first, then graph order."""
    active = [r for r in rules if r.applies_to(ctx.options.targets) and r.fallback is None]
    ctx.active_rules = {r.id: r for r in active}
    out: list[Finding] = []
    for rule in (r for r in active if r.scope == "model"):
        if predicates.match(ctx, "model", rule.match, None):
            out.append(_finding(ctx, rule, None, messages.render(rule.message, ctx, rule)))
    inputs = [r for r in active if r.scope == "graph_input"]
    if inputs:
        for vi in ctx.index.graph_inputs():
            for rule in inputs:
                if predicates.match(ctx, "graph_input", rule.match, vi):
                    f = _finding(ctx, rule, None, messages.render(rule.message, ctx, rule, vi=vi))
                    f.node = f"graph/input:{vi.name}"
                    out.append(f)
    node_rules = [r for r in active if r.scope == "node"]
    # fallback rules report themselves too: they are the reason a node leaves the CUDA EP
    node_rules += [r for r in rules if r.fallback and r.applies_to(ctx.options.targets) and r.fallback in ctx.options.targets]
    hits: list[tuple[int, int, Finding]] = []
    for pos, rule in enumerate(node_rules):
        for node in predicates.candidates(ctx, rule.match, rule.ops):
            if predicates.match_node(ctx, rule.match, node):
                hits.append((node.index, pos, _finding(ctx, rule, node, messages.render(rule.message, ctx, rule, node))))
    hits.sort(key=lambda h: (h[0], h[1]))
    out += [f for _, _, f in hits]
    return out
