"""A validated rule and a set of them: plain data, apart from the loader (`ruleset`) that validates rule files,
so the modules that evaluate rules (`context`, `predicates`, `messages`) can name the type without importing the
loader and, through it, the schema and the message checker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from onnxlint.rules.comparison import SHORT_LIST

# the flag an unsafe fixer needs; a finding whose hint names it is fixable only so (the text's --statistics
# counts those apart without importing the fixers)
UNSAFE_FIXES = "--unsafe-fixes"


# the prefix of onnxlint's own rule codes: a rule file of the user's may not use it (its rules are budgeted per
# model, the built-in ones not; and a code scanning link names onnxlint's docs for an OLX code)
BUILTIN_PREFIX = "OLX"


def own_code(code: str) -> bool:
    """Whether a rule code is a user's (a rules folder, a plug-in), not onnxlint's."""
    return not code.startswith(BUILTIN_PREFIX)


@dataclass
class Rule:
    id: str
    name: str
    severity: str
    targets: tuple[str, ...]
    summary: str
    explanation: str
    match: dict[str, Any]
    message: str
    scope: str = "node"
    fix: str | None = None
    hint: str | None = None
    references: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    fallback: str | None = None  # target whose EP rejects a matching node (ORT GetCapability checks)
    source: str = ""
    line: int = 0
    ops: tuple[str, ...] | None = None  # op types for dispatch; None = every node
    placement_target: str | None = None  # whose placement {placement.*} renders: the first placement predicate's
    default: bool = True  # in the default rule set (run without --select); false: only when selected by code

    @property
    def own(self) -> bool:
        """A rule of the user's (a rules folder, a plug-in), not one of onnxlint's."""
        return own_code(self.id)

    def cost(self) -> int:
        """What evaluating the rule at one node costs, in predicates: the entries of its match, nested ones
        included (an `any` of 10,000 alternatives costs 10,000 a node)."""
        count, stack = 0, [self.match]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                count += len(x)
                stack.extend(x.values())
            elif isinstance(x, list):
                count += len(x) if len(x) <= SHORT_LIST else 1  # a long list is looked up, not scanned
                stack.extend(v for v in x if isinstance(v, (dict, list)))
        return max(count, 1)

    @property
    def origin(self) -> str:
        return f"{self.source}:{self.line}"

    def applies_to(self, targets: set[str]) -> bool:
        return "any" in self.targets or bool(targets.intersection(self.targets))

    @property
    def fix_hint(self) -> str:
        """The hint as the rule gives it (a template when it has placeholders), else how to fix; the linter words
        an unsafe fixer's (`fixers.base.hint_for`): the rule knows its fixer's name, not its applicability."""
        if self.hint:
            return self.hint
        return "no automatic fix" if not self.fix else f"fixable with --fix ({self.fix})"


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)

    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    def knows(self, code: str) -> bool:
        """Whether a code or prefix names at least one rule (for --select/--ignore checking)."""
        return any(r.id.startswith(code) for r in self.rules)
