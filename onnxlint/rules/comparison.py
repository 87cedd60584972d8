"""A rule comparison (`{gt: 3}`, `[a, b]`, `{status: {in: [...]}}`): its JSON Schema and its evaluation, in a
module of its own so the predicates and the targets that declare their verdict predicates
(`targets.base.Vocabulary`) share them without importing each other."""

from __future__ import annotations

from typing import Any, Callable

SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean"]}


_ITEM_TYPES = ["string", "number", "boolean", "array"]
# what an attribute can equal: a scalar or a list of them; a list of lists is one of those lists
# (`perm: [[0, 2, 1], [0, 1, 2]]`). Any other item (a date, a set, a mapping: YAML reads them all) loaded and never
# matched
ATTRIBUTE_VALUE: dict[str, Any] = {"type": _ITEM_TYPES, "items": {"type": _ITEM_TYPES, "items": SCALAR}}
# what a small constant can equal: its tolist(), lists nested as deep as its rank, or a list of such ($defs entry,
# in rule_schema's $defs under this name: it refers to itself)
CONSTANT_VALUE_DEF = "constant_value"
CONSTANT_VALUE: dict[str, Any] = {"$ref": f"#/$defs/{CONSTANT_VALUE_DEF}"}
CONSTANT_VALUE_SCHEMA: dict[str, Any] = {"type": _ITEM_TYPES, "items": CONSTANT_VALUE}


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
            if op == "in" and not _one_of(value, want):
                return False
            if op == "not_in" and _one_of(value, want):
                return False
            if op in ("lt", "le", "gt", "ge"):
                if not _ordered(value, op, want):
                    return False
        return True
    if value is None:
        return False
    if isinstance(spec, list):
        return _one_of(value, spec)
    return _eq(value, spec)


SHORT_LIST = 8  # a list up to this long is compared item by item; a longer one through its sets (_sets_of)
# id(value) -> (the value, what was derived from it): the value is held, so its id is not another's while the
# entry lives. For a rule's own values, which live as long as its rule set: derived once, not at every node
_DERIVED: dict[tuple[int, Callable[[Any], Any]], tuple[Any, Any]] = {}


def derived(value: Any, make: Callable[[Any], Any]) -> Any:
    """make(value), computed once for that object (a rule's list, a rule's version operands)."""
    held = _DERIVED.get((id(value), make))
    if held is None or held[0] is not value:
        held = _DERIVED[(id(value), make)] = (value, make(value))
    return held[1]


def _one_of(value: Any, want: list[Any]) -> bool:
    """any(_eq(value, w) for w in want), in constant time for a long list of scalars: a rule's list is compared
    at every node it may match (a committed rule of 40,000 names cost 29 s on a 2,000-node model)."""
    if len(want) <= SHORT_LIST or isinstance(value, (list, tuple)):
        return any(_eq(value, w) for w in want)
    scalars, bools, others = derived(want, _sets_of)
    try:
        if isinstance(value, bool):  # True == 1: a bool equals only a bool (_eq)
            return value in bools or any(_eq(value, w) for w in others)
        return value in scalars or any(_eq(value, w) for w in others)
    except TypeError:  # an unhashable value: compared item by item
        return any(_eq(value, w) for w in want)


def _sets_of(want: list[Any]) -> tuple[frozenset[Any], frozenset[bool], list[Any]]:
    """A list's strings and numbers (1 == 1.0, as _eq has them), its bools, and the rest (lists) apart."""
    scalars = frozenset(w for w in want if isinstance(w, (str, int, float)) and not isinstance(w, bool))
    bools = frozenset(w for w in want if isinstance(w, bool))
    others = [w for w in want if not isinstance(w, (str, int, float, bool))]
    return scalars, bools, others


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
