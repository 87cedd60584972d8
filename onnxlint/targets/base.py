"""The protocol every deployment target implements.

A target predicts, per node, a verdict with a status and a reason from its declared vocabulary; rules refer
to those (`placement: {status: fallback}`, `tensorrt: {reason: dtype}`) and rule files are validated
against the declared sets, so a typo is an error at load time instead of a rule that never matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from onnxlint.rules.comparison import compare

if TYPE_CHECKING:
    from packaging.version import Version

    from onnxlint.model.graph import NodeRef
    from onnxlint.rules.context import LintContext
    from onnxlint.rules.rule import Rule


class VersionError(ValueError):
    """A runtime version string that is not a version."""


# a version of the runtime named, shown where a version is wanted (a TensorRT user told "e.g. 1.20.1" was shown an
# ORT release): the command line's and the config's (parse_version), the API's (settings.check_runtime)
VERSION_EXAMPLE = {"ORT": "1.20.1", "TensorRT": "8.6"}


def parse_version(text: str | None, what: str) -> Version | None:
    if text is None:
        return None
    from packaging.version import InvalidVersion, Version  # not on the cache-hit path

    try:
        return Version(str(text))
    except InvalidVersion:
        example = VERSION_EXAMPLE.get(what, VERSION_EXAMPLE["ORT"])
        raise VersionError(f"{what} version {text!r} is not a version number (e.g. {example})") from None


@dataclass(frozen=True)
class Vocabulary:
    """The words rules use for a family of targets' per-node verdicts, declared next to the targets so the rule
    schema (`rule_schema`) and the message renderer (`messages`) ask the registry instead of naming targets.

    predicate: the node predicate whose argument names a verdict (`placement: {status: fallback}`), with its
    doc, evaluate(ctx, node, spec) and candidates(ctx, spec) (the nodes it can accept, None: no index;
    exact_candidates: that list holds every node it accepts, whatever the settings); schema: the JSON Schema
    of its argument, built from the targets sharing the vocabulary (their names, statuses and reasons);
    message_root/message_fields: the placeholder that renders a node's verdict (`{placement.reason}`);
    message_value(ctx, rule, node, field): that value, None when unknown; fallback: whether its targets'
    GetCapability refusals may be written as rules (`fallback: TARGET`)."""

    predicate: str
    doc: str
    evaluate: Callable[["LintContext", "NodeRef", Any], bool]
    candidates: Callable[["LintContext", Any], "list[NodeRef] | None"]
    schema: Callable[[list["Target"]], dict[str, Any]]
    message_root: str
    message_fields: tuple[str, ...]
    message_value: Callable[["LintContext", "Rule", "NodeRef", "str | None"], Any]
    exact_candidates: bool = False
    fallback: bool = False


def verdict_matches(verdict: Any, spec: dict[str, Any]) -> bool:
    """Whether a node's verdict (None: it has none) has the status and reason a predicate's spec asks for."""
    if verdict is None:
        return False
    if "status" in spec and not compare(verdict.status, spec["status"]):
        return False
    return not ("reason" in spec and not compare(verdict.reason, spec["reason"]))


def status_nodes(prediction: Any, spec: dict[str, Any]) -> list[NodeRef] | None:
    """The nodes whose verdict has a status the spec accepts, from the prediction's status index (None: the
    spec names no status, so the index does not narrow)."""
    if "status" not in spec:
        return None
    out: list[NodeRef] = []
    for status, nodes in prediction.by_status(with_common=compare(prediction.COMMON, spec["status"])).items():
        if compare(status, spec["status"]):
            out += nodes
    return out


@dataclass(frozen=True)
class Target:
    """One deployment target.

    name: the target's name on the command line and in rule files; vocabulary: the rule predicate and message
    placeholder its verdicts are read with (None: the target has no per-node predicate of its own);
    statuses/reasons: callables returning the declared vocabularies (read from the prediction modules, so
    the enums live next to the code that produces them); requires: targets this one is built on;
    reports_summary: its summary line goes in the report's placement summary."""

    name: str
    description: str
    runtime: str  # what --X-version names: "ORT" or "TensorRT"
    vocabulary: Vocabulary | None
    statuses: Callable[[], tuple[str, ...]]
    reasons: Callable[[], tuple[str, ...]]
    versions: Callable[[], list[str]]
    predict_fn: Callable[["LintContext"], Any]
    summary_fn: Callable[[Any], str]
    requires: tuple[str, ...] = ()
    common_status: str = ""
    reports_summary: bool = True

    @property
    def predicate(self) -> str | None:
        """The rule predicate that reads this target's verdicts (None: none of its own)."""
        return self.vocabulary.predicate if self.vocabulary is not None else None

    def available_versions(self) -> list[str]:
        from packaging.version import Version

        return sorted(self.versions(), key=Version)

    def parse_version(self, text: str | None) -> Version | None:
        return parse_version(text, self.runtime)

    def predict(self, ctx: "LintContext") -> Any:
        return self.predict_fn(ctx)

    def summary_line(self, prediction: Any) -> str:
        return self.summary_fn(prediction)

    def notes(self, prediction: Any) -> list[str]:
        out = list(getattr(prediction, "notes", None) or [])
        note = getattr(prediction, "note", None)
        if note:
            out.append(note)
        return out
