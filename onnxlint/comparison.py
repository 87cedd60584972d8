"""The JSON Schema of a rule comparison (`{gt: 3}`, `[a, b]`, `{status: {in: [...]}}`): plain data, so the
predicates and the targets that declare their verdict vocabulary (`targets.base.Vocabulary`) share it without
importing each other."""

from __future__ import annotations

from typing import Any

SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean"]}
ANY_VALUE: dict[str, Any] = {"type": ["string", "number", "boolean", "array"]}  # list-valued attributes too


def cmp_schema(scalar: dict[str, Any] | None = None, what: str = "value") -> dict[str, Any]:
    """A comparison: a scalar (equals), a list (one of), or a mapping of eq/ne/in/not_in/exists/lt/le/gt/ge."""
    s = scalar or SCALAR
    listed = {"type": "array", "items": s, "minItems": 1}
    number = {"type": ["number", "string"]} if s.get("x-version") else {"type": "number"}
    return {
        "x-what": what,
        "anyOf": [
            s,
            listed,
            {"type": "object", "x-what": f"comparison of {what}", "minProperties": 1, "additionalProperties": False,
             "properties": {"eq": s, "ne": s, "in": listed, "not_in": listed, "exists": {"type": "boolean"},
                            "lt": number, "le": number, "gt": number, "ge": number}},
        ],
    }


def enum_cmp(values: tuple[str, ...] | list[str], what: str) -> dict[str, Any]:
    return cmp_schema({"type": "string", "enum": list(values), "x-what": what}, what)
