"""The JSON Schema of rule files, generated from the predicate, target and fixer registries, and the
validator that checks every rule file against it with `file:line` errors.

`tools/gen_rule_schema.py` publishes it as `docs/rule-schema.json` (editors validate rule files with it); the
loader validates with the same schema object, so the two cannot disagree. The validator implements the subset
of JSON Schema the generated schema uses (type, enum, pattern, maxLength, properties, patternProperties,
additionalProperties, required, items, minItems, minProperties, anyOf, $ref) and picks the anyOf branch by
the instance's type so errors are about what the author wrote.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from onnxlint import targets
from onnxlint.rules import comparison, messages
from onnxlint.rules.predicates import REGISTRY
from onnxlint.rules.severity import SEVERITIES
from onnxlint.support.errors import clip, did_you_mean

ID_PATTERN = r"^[A-Z]{2,6}[0-9]{3,4}$"
NAME_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
# verification: reported by the verify pass; file: reported from the file's bytes before any model is parsed
# (a Git LFS pointer)
RULE_SCOPES = ("node", "model", "graph_input", "verification", "file")
REPORTED_ELSEWHERE = ("verification", "file")  # scopes whose rules have no match: their pass reports them


def _match_def(scope: str) -> dict[str, Any]:
    props: dict[str, Any] = {name: p.schema for name, p in REGISTRY[scope].items()}
    if scope == "node":  # the targets' verdict predicates, each with its schema in $defs
        props.update((v.predicate, {"$ref": f"#/$defs/{v.predicate}"}) for v, _ in targets.vocabularies())
    ref = {"$ref": f"#/$defs/{scope}_match"}
    if scope != "value":
        props["any"] = {"type": "array", "items": ref, "minItems": 1}
        props["all"] = {"type": "array", "items": ref, "minItems": 1}
        props["not"] = ref
    return {"type": "object", "x-what": "predicate" if scope == "node" else f"{scope.replace('_', ' ')} predicate",
            "additionalProperties": False, "properties": props}


@lru_cache(maxsize=1)
def rule_schema() -> dict[str, Any]:
    """The JSON Schema of one rule file (a list of rules, or a mapping with key `rules`)."""
    from onnxlint import fixers

    text = {"type": "string", "minLength": 1, "pattern": r"\S"}
    # a message or hint is rendered into every finding the rule makes: a 1 MB one in a committed rule file cost
    # gigabytes on a model of a few thousand nodes (messages.MAX_TEMPLATE)
    template = {**text, "maxLength": messages.MAX_TEMPLATE}
    strings = {"type": "array", "items": {"type": "string", "minLength": 1}}
    target_names = [targets.ANY, *targets.names()]
    rule = {
        "type": "object",
        "x-what": "key",
        "additionalProperties": False,
        "required": ["id", "name", "severity", "targets", "summary", "explanation", "match", "message"],
        "properties": {
            "id": {"type": "string", "pattern": ID_PATTERN, "description": "capitals then 3-4 digits, e.g. OLX001"},
            "name": {"type": "string", "pattern": NAME_PATTERN, "description": "kebab-case slug"},
            "severity": {"type": "string", "enum": list(SEVERITIES), "x-what": "severity"},
            "targets": {"x-what": "target", "anyOf": [
                {"type": "string", "enum": target_names, "x-what": "target"},
                {"type": "array", "minItems": 1, "items": {"type": "string", "enum": target_names, "x-what": "target"}}]},
            "scope": {"type": "string", "enum": list(RULE_SCOPES), "x-what": "scope"},
            "summary": text,
            "explanation": text,
            "message": template,
            "hint": template,
            # by name: a plug-in's module is not imported to validate a rule file (a broken one costs only --fix)
            "fix": {"type": "string", "enum": sorted(fixers.REGISTRY.names()), "x-what": "fixer"},
            "references": {"type": "array", "items": {"type": "string", "pattern": r"^(https?://|see |[A-Za-z])"}},
            "tags": strings,
            "default": {"type": "boolean", "description": "in the default rule set (default true); false: runs only when "
                        "selected by code or prefix"},
            "fallback": {"type": "string", "enum": [t.name for v, shared in targets.vocabularies() if v.fallback for t in shared],
                         "x-what": "fallback target",
                         "description": "the target whose EP rejects a matching node in GetCapability"},
            "match": {"type": "object", "description": "predicates of the rule's scope"},
        },
        # match holds the predicates of the rule's scope (node when scope is absent)
        "allOf": [
            {"if": {"required": ["scope"], "properties": {"scope": {"const": scope}}},
             "then": {"properties": {"match": {"$ref": f"#/$defs/{scope}_match"}}}}
            for scope in ("model", "graph_input")
        ] + [
            *({"if": {"required": ["scope"], "properties": {"scope": {"const": scope}}},
               "then": {"properties": {"match": {"maxProperties": 0}}}} for scope in REPORTED_ELSEWHERE),
            {"if": {"not": {"required": ["scope"]}}, "then": {"properties": {"match": {"$ref": "#/$defs/node_match"}}}},
            {"if": {"required": ["scope"], "properties": {"scope": {"const": "node"}}},
             "then": {"properties": {"match": {"$ref": "#/$defs/node_match"}}}},
        ],
    }
    defs = {f"{scope}_match": _match_def(scope) for scope in REGISTRY}
    for vocabulary, shared in targets.vocabularies():  # `$defs/placement`, `$defs/tensorrt`: the targets' own
        defs[vocabulary.predicate] = vocabulary.schema(shared)
    defs["rule"] = rule
    defs[comparison.CONSTANT_VALUE_DEF] = comparison.CONSTANT_VALUE_SCHEMA
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://onnxlint.dev/rule-schema.json",
        "title": "onnxlint rule file",
        "description": "A list of rules (or a mapping with key `rules`). Generated by tools/gen_rule_schema.py from "
                       "onnxlint's predicate, target and fixer registries; do not edit.",
        "anyOf": [{"type": "array", "items": {"$ref": "#/$defs/rule"}},
                  {"type": "object", "required": ["rules"], "properties": {"rules": {"type": "array",
                   "items": {"$ref": "#/$defs/rule"}}}, "additionalProperties": False}],
        "$defs": defs,
    }


def match_schema(scope: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{scope}_match"}


# ----------------------------------------------------------------------------- validation

Fail = Callable[[int, str], None]

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _type_name(v: Any) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _JSON_TYPES[name](v):
            return {"array": "a list", "object": "a mapping", "null": "nothing"}.get(name, f"a {name}")
    return type(v).__name__


def _line(container: Any, key: Any, default: int) -> int:
    line_of = getattr(container, "line_of", None)
    return int(line_of(key)) if line_of else default


def _types_ok(schema: dict[str, Any], value: Any) -> bool:
    t = schema.get("type")
    if t is None:
        return True
    return any(_JSON_TYPES[x](value) for x in ([t] if isinstance(t, str) else t))


def validate(value: Any, schema: dict[str, Any], where: str, line: int, fail: Fail, root: dict[str, Any] | None = None) -> None:
    """Check value against schema; the first problem calls fail(line, text) (which raises)."""
    root = root or rule_schema()
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = {**root["$defs"][name], **{k: v for k, v in schema.items() if k != "$ref"}}
    what = schema.get("x-what", where)
    if "anyOf" in schema:
        branches = [b for b in schema["anyOf"] if _types_ok(_deref(b, root), value)]
        if not branches:
            wanted = " or ".join(sorted({_describe(_deref(b, root)) for b in schema["anyOf"]}))
            fail(line, f"{where} needs {wanted}, got {_type_name(value)}")
            return
        validate(value, branches[0], where, line, fail, root)
        return
    if not _types_ok(schema, value):
        fail(line, f"{where} needs {_describe(schema)}, got {_type_name(value)} {_short(value)}")
        return
    if "enum" in schema and value not in schema["enum"]:
        fail(line, f"'{clip(value)}' is not a known {what} (one of: {', '.join(map(str, schema['enum']))})"
                   f"{did_you_mean(str(value), schema['enum'])} in {where}")
    if "pattern" in schema and isinstance(value, str) and not _pattern(schema["pattern"]).search(value):
        fail(line, f"{where} {clip(repr(value))} does not have the expected form"
                   + (f" ({schema['description']})" if "description" in schema else ""))
    if schema.get("x-version") and not _is_version(value):
        fail(line, f"{where} {clip(repr(value))} is not a version (quote it: \"10.2\")")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        fail(line, f"{where} must not be empty")
    if "maxLength" in schema and isinstance(value, str) and len(value) > schema["maxLength"]:
        fail(line, f"{where} is {len(value):,} characters long; at most {schema['maxLength']:,}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            fail(line, f"{where} needs at least {schema['minItems']} item(s)")
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{where}[{i}]", getattr(item, "line", line), fail, root)
    if isinstance(value, dict):
        _validate_object(value, schema, where, what, line, fail, root)


@lru_cache(maxsize=None)
def _pattern(pattern: str) -> re.Pattern[str]:
    """A schema pattern as JSON Schema reads it (ECMA-262): its `$` is the end of the text. Python's `$` also matches
    before a final newline, so `id: "OLX001\\n"` passed the id pattern (a rule beside the built-in OLX001, its
    newline printed raw in the text output) where the published schema refuses it."""
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))


def _is_version(value: Any) -> bool:
    """Whether a version comparison's operand reads as the version it is compared as (`comparison._ordered`)."""
    from packaging.version import InvalidVersion, Version

    try:
        Version(str(value))
    except InvalidVersion:
        return False
    return True


def _validate_object(value: dict[Any, Any], schema: dict[str, Any], where: str, what: str, line: int, fail: Fail,
                     root: dict[str, Any]) -> None:
    if len(value) < schema.get("minProperties", 0):
        fail(line, f"{where} must not be empty")
    for key in schema.get("required", ()):
        if key not in value:
            fail(line, f"missing required {'key' if what == 'key' else what + ' key'} '{key}' in {where}")
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        kline = _line(value, key, line)
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            fail(kline, f"{where} has a key of type {type(key).__name__}; keys are names")
        sub = props.get(key) if isinstance(key, str) else None
        if sub is None:
            sub = next((s for pat, s in patterns.items() if _pattern(pat).search(str(key))), None)
        if sub is None:
            if extra is False:
                options = list(props) or [p.strip("^$") for p in patterns]
                fail(kline, f"unknown {what} '{clip(key)}'{did_you_mean(str(key), props)}"
                            + ("" if props else f" (expected {', '.join(options)})"))
                continue
            if extra is True:
                continue
            sub = extra
        validate(item, sub, clip(key) if where in ("rule", "match") else f"{where}.{clip(key)}",
                 _line(item, None, kline) if isinstance(item, dict) else kline, fail, root)


def _deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _describe(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    names = [t] if isinstance(t, str) else list(t or ["a value"])
    words = {"string": "text", "integer": "an integer", "number": "a number", "boolean": "true or false",
             "array": "a list", "object": "a mapping", "null": "nothing"}
    return " or ".join(words.get(n, n) for n in names)


def _short(value: Any) -> str:
    return f"({clip(repr(value), 40)})"


def match_items(m: Any) -> list[tuple[Any, Any]]:
    """Every (key, value) pair anywhere in a match, nested any/all/not and lists included."""
    items: list[tuple[Any, Any]] = []
    stack = [m]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for k, v in cur.items():
                items.append((k, v))
                stack.append(v)
        elif isinstance(cur, list):
            stack.extend(cur)
    return items


def prediction_keys(m: Any) -> list[str]:
    """Predicates anywhere in a match that ask a target for its prediction (the targets' verdict predicates,
    and those that read one: reported_by, cpu_shape_path)."""
    verdicts = {v.predicate for v, _ in targets.vocabularies()}
    found: list[str] = []
    for k, _ in match_items(m):
        p = REGISTRY["node"].get(k) if isinstance(k, str) else None
        if k in verdicts or (p is not None and p.needs_prediction):
            found.append(k)
    return found
