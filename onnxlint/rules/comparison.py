"""A rule comparison (`{gt: 3}`, `[a, b]`, `{status: {in: [...]}}`): its JSON Schema and its evaluation, in a
module of its own so the predicates and the targets that declare their verdict predicates
(`targets.base.Vocabulary`) share them without importing each other."""

from __future__ import annotations

from typing import Any

SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean"]}
ANY_VALUE: dict[str, Any] = {"type": ["string", "number", "boolean", "array"]}  # list-valued attributes too


def cmp_schema(scalar: dict[str, Any] | None = None, what: str = "value") -> dict[str, Any]:
    """A comparison: a scalar (equals), a list (one of), or a mapping of eq/ne/in/not_in/exists/lt/le/gt/ge."""
    s = scalar or SCALAR
    listed = {"type": "array", "items": s, "minItems": 1}
    # a version's lt/le/gt/ge: a number or a version string, each checked on load to parse as a version (`_ordered`
    # compares Version(str(want)); "abc", -1 or .inf passed the schema and failed every model at lint time)
    number = ({"type": ["number", "string"], "x-version": True, **({"pattern": s["pattern"]} if "pattern" in s else {})}
              if s.get("x-version") else {"type": "number"})
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


def compare(value: Any, spec: Any) -> bool:
    """Rule comparison: scalar = eq, list = in, mapping of eq/ne/in/not_in/exists/lt/le/gt/ge (all must hold)."""
    if isinstance(spec, dict):
        for op, want in spec.items():
            if op == "exists":
                if (value is not None) != want:
                    return False
                continue
            if value is None:
                return False
            if op == "eq" and not _eq(value, want):
                return False
            if op == "ne" and _eq(value, want):
                return False
            if op == "in" and not any(_eq(value, w) for w in want):
                return False
            if op == "not_in" and any(_eq(value, w) for w in want):
                return False
            if op in ("lt", "le", "gt", "ge"):
                if not _ordered(value, op, want):
                    return False
        return True
    if value is None:
        return False
    if isinstance(spec, list):
        return any(_eq(value, w) for w in spec)
    return _eq(value, spec)


def _ordered(value: Any, op: str, want: Any) -> bool:
    from packaging.version import Version

    if isinstance(value, Version):
        want = Version(str(want))
    elif not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    if op == "lt":
        return bool(value < want)
    if op == "le":
        return bool(value <= want)
    if op == "gt":
        return bool(value > want)
    return bool(value >= want)


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return bool(a == b)
