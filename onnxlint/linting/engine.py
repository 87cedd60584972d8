"""Evaluates every rule in one walk over the graph index, dispatching node rules by op type."""

from __future__ import annotations

from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Mapping

from onnxlint.linting.report import Finding
from onnxlint.rules import messages, predicates
from onnxlint.rules.context import LintContext, Options, Predictor, Rejects

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, NodeRef
    from onnxlint.model.loading import ModelFile
    from onnxlint.rules.rule import Rule, RuleSet


# which fixer a finding of a rule on a node names, None when that fixer cannot clear it there (fixers.base.fix_for,
# handed in by the linter: the engine evaluates rules and asks the fixers nothing itself); given the rule, the node,
# the model the lint indexes and the lint's context (what a model-level finding's fixer asks: the lint's facts)
Fixable = Callable[["Rule", "NodeRef | None", Any, LintContext], "str | None"]


def new_context(mf: ModelFile, index: GraphIndex, options: Options, ruleset: RuleSet,
                registry: Mapping[str, Predictor]) -> LintContext:
    """A context whose targets read the ruleset's `fallback:` rules (GetCapability refusals written as rules)."""
    fallback = [r for r in ruleset.rules if r.fallback is not None]
    return LintContext(mf, index, options, registry, partial(fallback_rejects, fallback) if fallback else None)


def fallback_rejects(fallback: list[Rule], ctx: LintContext, target: str) -> tuple[Rejects, set[str] | None]:
    """The target's `fallback: TARGET` rules as a callback telling why its EP rejects a node (None: it does not),
    and the op types the callback can refuse (None: any)."""
    rules = [r for r in fallback if r.fallback == target]

    def rejects(node: NodeRef, _target: str) -> str | None:
        for r in rules:
            if (r.ops is None or node.op_type in r.ops) and predicates.match_node(ctx, r.match, node):
                return f"{r.id}: {messages.render(r.message, ctx, r, node)}"
        return None

    ops = None if any(r.ops is None for r in rules) else {op for r in rules for op in (r.ops or ())}
    return rejects, ops


def _finding(ctx: LintContext, rule: Rule, node: NodeRef | None, fixable: Fixable, vi: Any = None,
             target: str | None = None, deferrable: bool | None = None) -> Finding:
    """A finding without its details (message, hint, fixability): `complete` adds them, for the findings a run
    shows. Only its identity and what suppression reads (code, node, doc_string) are set here. target, deferrable:
    the rule's _target and _deferrable, when the caller has them."""
    if target is None:
        target = _target(ctx, rule)
    name = path = op_type = None
    doc = ""
    if node:  # name and doc_string from one read of the proto: a big model's index reads it from the model
        name, path, raw_doc = node.named()
        op_type, doc = node.op_type, _text(raw_doc)
    f = Finding(code=rule.id, name=rule.name, severity=rule.severity, target=target, filename=ctx.mf.display,
                node=path, op_type=op_type, message="", node_name=name, doc_string=doc)
    if _deferrable(rule) if deferrable is None else deferrable:
        ctx.pending_details.append((f, rule, node, vi))
    else:  # its message may read a prediction or the checker (what a run computes): rendered as before
        _detail(ctx, f, rule, node, vi, fixable)
    return f


# the hint of a finding whose rule names a fixer that declines it there (a fixer may word it otherwise: Fixer.declined)
DECLINED = "no automatic fix for this node"


def _refusals_without_node(ctx: LintContext, rules: list[Rule], fixable: Fixable) -> list[Finding]:
    """A whole-model refusal no node carries, said of the model by the rule that says it on the first placed node
    (`placement: {target: T, status: refused}`: OLX203, OLX251): a model of no node, or of Constants only (ORT makes
    them initializers, so the placement records no node), whose opset or IR version is past the release. Its
    message is the refusal's words (`{placement.detail}` on a node), as `onnxlint placement` says them."""
    out: list[Finding] = []
    for rule in rules:
        spec = rule.match.get("placement")
        if rule.own or len(rule.match) != 1 or not isinstance(spec, dict) or spec.get("status") != "refused":
            continue
        target, reasons = spec.get("target"), spec.get("reason")
        if target not in ctx.options.targets or rule.message != "{placement.detail}":
            continue
        pl = ctx.prediction(target)
        if not pl.refused or pl.by_status(False).get("refused"):
            continue
        if isinstance(reasons, dict) and pl.refused_reason in reasons.get("not_in", ()):
            continue  # said by another rule (model-invalid: OLX007)
        f = _finding(ctx, rule, None, fixable, target=target, deferrable=False)
        f.message = pl.refused
        out.append(f)
    return out


def _target(ctx: LintContext, rule: Rule) -> str:
    """The target a finding of the rule names: `any`, else the first of the rule's that the run checks."""
    return "any" if "any" in rule.targets else next((t for t in rule.targets if t in ctx.options.targets), rule.targets[0])


def _deferrable(rule: Rule) -> bool:
    """Whether a finding's details can wait: its message (and its hint, a template too) reads only the node (and
    its file and rule), never a target's prediction or a model fact another rule could otherwise not have computed."""
    key = (rule.message, rule.hint)
    got = _DEFERRABLE.get(key)
    if got is None:
        got = _DEFERRABLE[key] = messages.reads_only_node(rule.message) and messages.reads_only_node(rule.hint or "")
    return got


_DEFERRABLE: dict[tuple[str, str | None], bool] = {}


def _detail(ctx: LintContext, f: Finding, rule: Rule, node: NodeRef | None, vi: Any, fixable: Fixable) -> None:
    f.message = messages.render(rule.message, ctx, rule, node, vi=vi)
    if node is not None and messages.names_location(rule.message):  # the text line's message, from the template
        f.short_message = messages.render(rule.message, ctx, rule, node, vi=vi, omit=messages.LOCATION_ROOTS)
    fix = fixable(rule, node, ctx.index.model, ctx) if rule.fix else None
    f.fix = fix
    hint = rule.fix_hint if fix or not rule.fix else DECLINED
    if "{" in hint or "[[" in hint:  # a rule's hint is a template, as its message
        hint = messages.render(hint, ctx, rule, node, vi=vi)
    f.hint = hint


def complete(ctx: LintContext, fixable: Fixable, wanted: Callable[[Finding], bool] | None = None) -> None:
    """Add the details (message, hint, fixability) of the findings `wanted` accepts (None: all of them), while the
    model's index is alive: a run that shows no infos computes none of theirs (13k OLX309 infos at 100k nodes:
    fold-shapes' question and a message each). The others keep an empty message and no fix."""
    pending, ctx.pending_details = ctx.pending_details, []
    for f, rule, node, vi in pending:
        if wanted is None or wanted(f):
            _detail(ctx, f, rule, node, vi, fixable)


# what the rules of the user's own (not OLX) may cost one model, in predicates evaluated: OWN_RULE_FLOOR plus
# OWN_RULE_WORK a node (32 rules that look at every node). A rule file comes from the repository under review:
# 1,000 rules matching every node of a 2,000-node model made 2 million findings (25 s, 900 MB), and a rule's
# cost grows with the model. Past it a rule is not evaluated, and a note names it.
OWN_RULE_FLOOR = 100_000
OWN_RULE_WORK = 32


def _within(ctx: LintContext, rule: Rule, places: int, left: list[int]) -> bool:
    """Whether a rule may be evaluated at places (nodes, graph inputs): always for onnxlint's own, for a rule of
    the user's while the model's budget for them lasts (left[0], spent here); one it leaves out is listed in
    ctx.rules_over_budget."""
    if not rule.own:
        return True
    work = places * rule.cost()
    if work > left[0]:
        ctx.rules_over_budget.append(rule.id)
        return False
    left[0] -= work
    return True


def _text(value: str | bytes) -> str:
    """A string field as text: protobuf hands one that is not UTF-8 over as bytes (kept as surrogates, which the
    output formats escape)."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def lint(ctx: LintContext, rules: list[Rule], *, fixable: Fixable, deferred: bool = False) -> list[Finding]:
    """All findings of the active rules for one model: model and input findings first, then graph order.
    fixable: which fixer a finding names (fixers.base.fix_for: None where the rule's fixer cannot clear it).
    deferred: the caller adds their details (`complete`) once it knows which it shows."""
    active = [r for r in rules if r.applies_to(ctx.options.targets) and r.fallback is None]
    ctx.active_rules = {r.id: r for r in active}
    out: list[Finding] = []
    left = [OWN_RULE_FLOOR + OWN_RULE_WORK * len(ctx.index.nodes)]  # the user's rules' budget (_within)
    for rule in (r for r in active if r.scope == "model"):
        if predicates.match(ctx, "model", rule.match, None):
            out.append(_finding(ctx, rule, None, fixable))
    inputs = [r for r in active if r.scope == "graph_input"]
    if inputs:
        graph_inputs = ctx.index.graph_inputs()  # a list made from the graph's inputs and initializers
        inputs = [r for r in inputs if _within(ctx, r, len(graph_inputs), left)]
        for vi in graph_inputs:
            for rule in inputs:
                if predicates.match(ctx, "graph_input", rule.match, vi):
                    f = _finding(ctx, rule, None, fixable, vi)
                    f.node = f"input:{vi.name}"
                    out.append(f)
    node_rules = [r for r in active if r.scope == "node"]
    # fallback rules report themselves too: they are the reason a node leaves the CUDA EP
    node_rules += [r for r in rules if r.fallback and r.applies_to(ctx.options.targets) and r.fallback in ctx.options.targets]
    # (node index, rule position) as one int, the order findings are listed in: sorted by it, no key tuple made
    # per finding (266k findings at 1M nodes, at the lint's peak)
    hits: list[tuple[int, Finding]] = []
    per_node = len(node_rules)
    for pos, rule in enumerate(node_rules):
        target, deferrable = _target(ctx, rule), _deferrable(rule)
        matches = predicates.compiled("node", rule.match, ctx.registry)
        nodes = predicates.candidates(ctx, rule.match, rule.ops)
        if not _within(ctx, rule, len(nodes), left):
            continue
        for node in nodes:
            if matches(ctx, node):
                hits.append((node.index * per_node + pos, _finding(ctx, rule, node, fixable, target=target,
                                                                   deferrable=deferrable)))
    hits.sort(key=itemgetter(0))
    out += [f for _, f in hits]
    out += _refusals_without_node(ctx, node_rules, fixable)
    if not deferred:
        complete(ctx, fixable)
    return out
