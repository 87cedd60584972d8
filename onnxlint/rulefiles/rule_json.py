"""A validated rule as JSON data: the form the result cache stores a rule set in (cache) and the built-in rules
ship in (ruleset, onnxlint/data/bundled-rules.json). Light: the cache's hit path reads rules through it without
importing the rule schema (and so onnx)."""

from __future__ import annotations

from typing import Any

TUPLE_FIELDS = ("targets", "references", "tags", "ops")
_KEYED = "__onnxlint_items__"  # a dict with a key JSON cannot keep (an input index: int)


def to_json(v: Any) -> Any:
    """A match (nested dicts and lists) as JSON data; a dict with a non-string key becomes a list of pairs."""
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and _KEYED not in v:
            return {k: to_json(x) for k, x in v.items()}
        return {_KEYED: [[k, to_json(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


def from_json(v: Any) -> Any:
    """to_json's inverse."""
    if isinstance(v, dict):
        items = v.get(_KEYED)
        if items is not None and len(v) == 1:
            return {k: from_json(x) for k, x in items}
        return {k: from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_json(x) for x in v]
    return v


def rule_fields(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored rule's fields with its lists made tuples again, as Rule and the cache's RuleInfo hold them
    (changes stored in place and returns it)."""
    for name in TUPLE_FIELDS:
        if isinstance(stored.get(name), list):
            stored[name] = tuple(stored[name])
    return stored
