"""The protocol every deployment target implements.

A target predicts, per node, a verdict with a status and a reason from its declared vocabulary; rules refer
to those (`placement: {status: fallback}`, `tensorrt: {reason: dtype}`) and rule files are validated
against the declared sets, so a typo is an error at load time instead of a rule that never matches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from packaging.version import Version

    from onnxlint.engine import LintContext


class VersionError(ValueError):
    """A runtime version string that is not a version."""


def parse_version(text: str | None, what: str) -> Version | None:
    if text is None:
        return None
    from packaging.version import InvalidVersion, Version  # not on the cache-hit path (~2 ms)

    try:
        return Version(str(text))
    except InvalidVersion:
        raise VersionError(f"{what} version {text!r} is not a version number (e.g. 1.20.1)") from None


@dataclass(frozen=True)
class Target:
    """One deployment target.

    name: the target's name on the command line and in rule files; predicate: the rule predicate whose
    status/reason refer to this target's verdicts (None: the target has no per-node predicate of its own);
    statuses/reasons: callables returning the declared vocabularies (read from the prediction modules, so
    the enums live next to the code that produces them); requires: targets this one is built on."""

    name: str
    description: str
    runtime: str  # what --X-version names: "ORT" or "TensorRT"
    predicate: str | None
    statuses: Callable[[], tuple[str, ...]]
    reasons: Callable[[], tuple[str, ...]]
    versions: Callable[[], list[str]]
    predict_fn: Callable[["LintContext"], Any]
    summary_fn: Callable[[Any], str]
    requires: tuple[str, ...] = ()
    common_status: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

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
