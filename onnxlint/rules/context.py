"""The per-model facts rules read (`LintContext`), each computed once and only when a rule asks for it.

Every rule-evaluating module names this type, so it imports none of them: the targets whose predictions it
holds come in as a registry (`onnxlint.targets.REGISTRY` from the lint plan, or any mapping of name to an
object with `predict(ctx)`), and the refusals written as `fallback:` rules come in as a callable the engine
builds. That keeps the import graph, type-only imports included, free of cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, NodeRef
    from onnxlint.model.loading import ModelFile
    from onnxlint.rules.rule import Rule


@dataclass
class Options:
    """What a prediction depends on: the targets (with those they are built on) and the runtime versions."""

    targets: set[str] = field(default_factory=set)
    explicit_targets: frozenset[str] = frozenset()  # named by the user (a default target reports ORT-prepared models gently)
    ort_version: str | None = None
    trt_version: str | None = None
    ort_optimization: str = "all"


class Predictor(Protocol):
    """What the context's users ask of a registered target (`onnxlint.targets.base.Target` is one): its
    prediction, and the vocabulary rules read it with (`targets.base.Vocabulary`, None: none)."""

    def predict(self, ctx: LintContext) -> Any: ...

    @property
    def vocabulary(self) -> Any: ...


# why the EP rejects a node (None: it does not)
Rejects = Callable[["NodeRef", str], "str | None"]
# a target's refusals written as rules: (rejects, the op types rejects can refuse, None: any)
FallbackRejects = Callable[["LintContext", str], "tuple[Rejects, set[str] | None]"]


def _no_rejects(node: NodeRef, target: str) -> str | None:
    return None


class LintContext:
    """Per-model facts, each computed once and only when a rule asks for it.

    registry: the targets by name (predictions are computed by them); fallback: the engine's reader of the
    `fallback:` rules (None: there are none)."""

    mf: ModelFile
    index: GraphIndex
    options: Options

    def __init__(self, mf: ModelFile, index: GraphIndex, options: Options, registry: Mapping[str, Predictor],
                 fallback: FallbackRejects | None = None):
        self.mf = mf
        self.index = index
        self.options = options
        self.registry = registry
        self._fallback = fallback
        self._predictions: dict[str, Any] = {}
        self.facts: dict[str, Any] = {}  # model facts rules derive from the predictions (rules.intent_facts), once
        self._checker: str | None | bool = False
        self.active_rules: dict[str, Rule] = {}  # the rules this run evaluates (the `reported_by` predicate asks)
        # codes suppressed for the whole file (per-file-ignores, metadata): codes.prefix_set's
        self.suppressed_codes: frozenset[str] = frozenset()
        self.rules_over_budget: list[str] = []  # rules of the user's not evaluated: past their budget (engine.lint)
        # findings whose details (message, hint, fixability) wait until the run knows which it shows:
        # (finding, rule, node, graph input) each (engine.complete)
        self.pending_details: list[tuple[Any, Rule, NodeRef | None, Any]] = []

    # model-level facts
    def checker_error(self) -> str | None:
        """onnx.checker's first complaint, less one ONNX Runtime and TensorRT load anyway: an IR < 4 model whose
        initializers are not listed as graph inputs (onnxruntime's own sample mul_1.onnx). Such a model is
        checked again with them listed, so a real complaint behind that one is still reported."""
        if self._checker is False:
            from onnxlint.model.loading import checker_result

            self._checker = checker_result(self.mf)
            if self._checker and self.mf.model.ir_version < 4 and self._checker.endswith(IR3_INITIALIZER_COMPLAINT):
                self._checker = _check_with_initializers_as_inputs(self.mf.model)
        return self._checker  # type: ignore[return-value]

    def prediction(self, target: str) -> Any:
        """The target's per-node verdicts (computed once per model)."""
        if target not in self._predictions:
            self._predictions[target] = self.registry[target].predict(self)
        return self._predictions[target]

    def share_predictions(self, other: "LintContext") -> None:
        """Take other's predictions of this context's targets, where both read the same index at the same
        runtime versions (the HTML page placing what the lint placed; a prediction reads only those and the
        rules' fallbacks, which the caller gives both)."""
        mine, theirs = self.options, other.options
        if other.index is not self.index or (mine.ort_version, mine.trt_version, mine.ort_optimization) != (
                theirs.ort_version, theirs.trt_version, theirs.ort_optimization):
            return
        for target in mine.targets:
            if target in other._predictions:
                self._predictions.setdefault(target, other._predictions[target])

    def predicted(self, target: str) -> bool:
        """Whether the target's prediction was computed (a rule asked for it)."""
        return target in self._predictions

    def fallback_rejects(self, target: str) -> tuple[Rejects, set[str] | None]:
        """The target's GetCapability refusals written as rules (`fallback: TARGET`): a callback telling why the
        EP rejects a node (None: it does not), and the op types the callback can refuse (None: any)."""
        if self._fallback is None:
            return _no_rejects, set()
        return self._fallback(self, target)


IR3_INITIALIZER_COMPLAINT = "in initializer but not in graph input"


def _check_with_initializers_as_inputs(model: Any) -> str | None:
    import onnx

    from onnxlint.model.loading import checker_message

    m = onnx.ModelProto()
    m.CopyFrom(model)
    listed = {i.name for i in m.graph.input}
    for t in m.graph.initializer:
        if t.name not in listed:
            m.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return checker_message(m)
