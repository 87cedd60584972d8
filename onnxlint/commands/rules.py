"""`onnxlint --list-rules` and `--explain ID`: the rules in force, as a table, as JSON, or one explained.

Every piece comes from a rule file (from the repository under review): escaped like a model's text."""

from __future__ import annotations

import sys
from typing import Any

from onnxlint.support.errors import UsageError
from onnxlint.support.escape import dumps
from onnxlint.support.escape import lines as esc_lines
from onnxlint.support.escape import text as esc

# how each fix applicability reads in --explain (fixers.base.Applicability's values)
_APPLIES = {"safe": "safe", "unsafe": "unsafe: needs --unsafe-fixes", "display-only": "display-only: never applied"}


def explain(rule: Any) -> str:
    from onnxlint import fixers

    try:
        fx = fixers.REGISTRY.get(rule.fix) if rule.fix else None
    except fixers.FixError as exc:  # a plug-in that cannot be loaded: said on the fix line
        fix_line = f"Fix: {esc(rule.fix)} (not available: {esc(str(exc))})"
    else:  # a plug-in's name and summary: untrusted text too
        fix_line = (f"Fix: {esc(fx.name)} ({_APPLIES[fx.applicability.value]}): {esc(fx.summary)}" if fx
                    else "Fix: no automatic fix")
    refs = "\n".join(f"  - {esc(r)}" for r in rule.references)
    return (f"{esc(rule.id)} ({esc(rule.name)}) [{esc(rule.severity)}] targets: {esc(', '.join(rule.targets))}\n\n"
            f"{esc_lines(rule.summary)}\n\n{esc_lines(rule.explanation)}\n\n{fix_line}\n"
            + (f"\nReferences:\n{refs}\n" if refs else "") + f"\nDefined in {esc(rule.origin)}\n")


def run(listed: Any, explain_id: str | None, format: str) -> int:
    """Explain one rule of the rule set (explain_id), or list them all (format json: as JSON)."""
    if explain_id:
        rule = listed.by_id().get(explain_id.upper())
        if rule is None:
            raise UsageError(f"no rule {explain_id!r}; see --list-rules")
        sys.stdout.write(explain(rule))
        return 0
    if format == "json":
        print(dumps([{"code": r.id, "name": r.name, "severity": r.severity, "targets": list(r.targets),
                      "summary": r.summary, "fix": r.fix, "default": r.default} for r in listed.rules], indent=2))
    else:
        for r in listed.rules:  # a rule out of the default set (`default: false`) says so: it runs only when selected
            marks = (" [fix]" if r.fix else "") + ("" if r.default else " [not default: --select or --extend-select it]")
            print(f"{esc(r.id)}  {esc(r.name):<34} {esc(r.severity):<8} {esc(','.join(r.targets)):<20} "
                  f"{esc(r.summary)}{marks}")
    return 0
