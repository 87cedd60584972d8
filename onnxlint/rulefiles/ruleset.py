"""Rule files: YAML, validated on load against the rule schema (`rule_schema`) with `file:line` errors.

Rule text is data, never code: predicates come from the predicate registry, message placeholders are
checked field by field, fixers and targets must exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NoReturn

from onnxlint import targets as targets_mod
from onnxlint.model.paths import rule_files
from onnxlint.rulefiles import rule_json, rule_schema
from onnxlint.rules import messages
from onnxlint.rules.rule import BUILTIN_PREFIX, Rule
from onnxlint.rules.rule import RuleSet as RuleSet  # what load_ruleset returns, importable from here too
from onnxlint.support import resources
from onnxlint.support.errors import RuleError, clip, did_you_mean
from onnxlint.support.reading import TEXT_LIMIT


class LineDict(dict[Any, Any]):
    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return int(self.key_lines.get(key, self.line))


def _construct_mapping(loader: Any, node: Any, deep: bool = False) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            raise RuleError(f"{loader.name}:{key_node.start_mark.line + 1}: a key must be a name, got {type(key).__name__}")
        if key in out:
            raise RuleError(f"{loader.name}:{key_node.start_mark.line + 1}: duplicate key {key!r}")
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


_LINE_LOADER: Any = None


def _line_loader() -> Any:
    """SafeLoader whose mappings remember the line of each key (1-based). Built on first use: a run whose rules
    come from the cache never imports yaml (nor compiles its regexes)."""
    global _LINE_LOADER
    if _LINE_LOADER is None:
        import yaml

        base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parses when present
        loader: Any = type("_LineLoader", (base,), {"__doc__": _line_loader.__doc__})
        loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
        _LINE_LOADER = loader
    return _LINE_LOADER


# the bytes of rule files a run reads besides the built-in ones (about 70 KB), all folders together: a rule file
# comes from the repository under review, and parsing YAML costs ~235x its size in memory and ~4 s a MiB (a
# committed 16 MiB file, the limit for a config, would take gigabytes and a minute before any model is read)
RULE_FILES_LIMIT = 1 << 20


def load_yaml(path: Path, limit: int = TEXT_LIMIT) -> Any:
    """A rule file's YAML with line numbers per key, within limit bytes; aliases bounded (an anchor bomb is an
    error, not a hang)."""
    from onnxlint.support import yaml_safe

    return yaml_safe.load_path(path, _line_loader(), what="rule file", limit=limit)


def _first_placement_target(m: Any) -> str | None:
    stack = [m]
    while stack:
        cur = stack.pop(0)
        if isinstance(cur, dict):
            if isinstance(cur.get("placement"), dict):
                return str(cur["placement"].get("target"))
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return None


def parse_rules(data: Any, path: Path) -> list[Rule]:
    if data is None:
        return []
    if isinstance(data, dict) and "rules" in data:
        data = data["rules"]
    if not isinstance(data, list):
        raise RuleError(f"{path}:1: a rule file holds a list of rules (or a mapping with key 'rules')")
    return [_parse_rule(raw, path) for raw in data]


def _parse_rule(raw: Any, path: Path) -> Rule:
    line = getattr(raw, "line", 1)
    rid = clip(raw.get("id", "?")) if isinstance(raw, dict) else "?"

    def fail(ln: int, msg: str) -> NoReturn:
        msg = msg[: -len(" in rule")] if msg.endswith(" in rule") else msg  # the schema names the object "rule"
        raise RuleError(f"{path}:{ln}: {msg} in rule {rid}")

    if not isinstance(raw, dict):
        raise RuleError(f"{path}:{line}: each rule must be a mapping, got {type(raw).__name__}")
    schema = rule_schema.rule_schema()
    rule_schema.validate(raw, schema["$defs"]["rule"], "rule", line, fail)
    scope = raw.get("scope", "node")
    match = raw["match"]
    mline = _line(raw, "match", line)
    if scope in rule_schema.REPORTED_ELSEWHERE:
        if match:
            fail(mline, f"a {scope} rule has an empty match ({{}}): "
                        f"{'the verify pass' if scope == 'verification' else 'reading the file'} reports it")
    else:
        rule_schema.validate(match, rule_schema.match_schema(scope), "match", mline, fail)
    fallback = raw.get("fallback")
    if fallback is not None:
        if scope != "node":
            fail(_line(raw, "fallback", line), "only node rules can name a fallback target")
        nested = rule_schema.prediction_keys(match)
        if nested:
            fail(mline, f"a fallback rule is part of computing the placement, so it cannot use '{nested[0]}'")
    problem = messages.check(raw["message"], scope, targets_mod.verdict_fields())
    if problem:
        fail(_line(raw, "message", line), f"{problem} in message")
    if raw.get("hint"):  # a hint is a template too (`[[CUDA kernel from onnxruntime-gpu {placement.cuda_release}; ]]...`)
        problem = messages.check(raw["hint"], scope, targets_mod.verdict_fields())
        if problem:
            fail(_line(raw, "hint", line), f"{problem} in hint")
    targets = raw["targets"]
    ops = match.get("op") if scope == "node" else None
    if isinstance(ops, dict):
        ops = None  # a comparison: evaluated on every node
    return Rule(
        id=raw["id"], name=raw["name"], severity=raw["severity"],
        targets=tuple([targets] if isinstance(targets, str) else targets),
        summary=raw["summary"].strip(), explanation=raw["explanation"].strip(), match=match,
        message=raw["message"].strip(), scope=scope, fix=raw.get("fix"), hint=raw.get("hint"),
        references=tuple(raw.get("references") or ()), tags=tuple(raw.get("tags") or ()), fallback=fallback,
        source=str(path), line=line, ops=(tuple([ops]) if isinstance(ops, str) else tuple(ops) if ops else None),
        placement_target=_first_placement_target(match), default=bool(raw.get("default", True)),
    )


# ---------------------------------------------------------------------------- JSON form (cache, bundled rules)
def rule_to_json(rule: Rule) -> dict[str, Any]:
    """A validated rule as JSON data. Its match loses the per-key line numbers (only validation reports them)."""
    return {**vars(rule), "match": rule_json.to_json(rule.match)}


def rule_from_json(data: dict[str, Any]) -> Rule:
    """rule_to_json's inverse (raises KeyError or TypeError for another layout)."""
    return Rule(**{**rule_json.rule_fields(dict(data)), "match": rule_json.from_json(data["match"])})


_AUTHORED = ("id", "name", "severity", "targets", "summary", "explanation", "match", "message", "scope", "fix", "hint",
             "references", "tags", "fallback", "default")


def rule_from_stored(data: dict[str, Any]) -> Rule:
    """A rule from a result cache entry, which anyone who can write the cache folder could have forged: its
    authored fields are validated again as a rule file's are (_parse_rule) and what parsing derives from them
    must be what the entry says; RuleError, KeyError or TypeError otherwise (the caller parses the files)."""
    stored = rule_from_json(data)
    raw = {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(stored).items() if k in _AUTHORED and v is not None}
    again = _parse_rule(raw, Path(stored.source) if isinstance(stored.source, str) else Path("?"))
    again.line = stored.line if type(stored.line) is int else -1
    if again != stored:
        raise RuleError(f"stored rule {stored.id!r} is not what its fields parse to")
    return again


BUNDLED_RULES = "bundled-rules.json"  # in data_dir(): tools/gen_bundled_rules.py writes it


def bundled_rules_json(rules: list[Rule], folder: Path) -> str:
    """The built-in rules as parsed and validated from the files in folder, with each file's digest."""
    # keys in the order parsed (no sort_keys): a match's keys are evaluated in order, the first failing one ends it
    return json.dumps({"format": 1, "files": {f.name: _digest(f) for f in rule_files(folder, recursive=False)},
                       "rules": [{**rule_to_json(r), "source": Path(r.source).name} for r in rules]}, indent=1) + "\n"


def _digest(path: Path) -> str:
    """blake2b of a rule file (the digest cache.keys.scan takes; the cache module cannot be imported here: it
    imports this one)."""
    from onnxlint.support import digest

    return digest.hexdigest(path.read_bytes())


def _bundled_rules() -> list[Rule] | None:
    """The built-in rules as parsed and validated when the package was built, while every bundled rule file
    still has the bytes it had then (reading them costs a fraction of YAML parsing and validation, in every process
    that has no cached rule set: --no-cache, a fresh CI checkout, a pool worker, the API). None: parse the YAML
    (a rule file edited in a checkout, added or removed, or no bundled copy)."""
    try:
        folder = resources.rules_dir()
        data = json.loads((resources.data_dir() / BUNDLED_RULES).read_bytes())
        files = rule_files(folder, recursive=False)
        if data.get("format") != 1 or sorted(data["files"]) != sorted(f.name for f in files):
            return None
        if any(_digest(f) != data["files"][f.name] for f in files):
            return None
        return [rule_from_json({**r, "source": str(folder / r["source"])}) for r in data["rules"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _line(d: Any, key: Any, default: int) -> int:
    return int(d.line_of(key)) if isinstance(d, LineDict) else default


def load_ruleset(extra_dirs: list[Path] | tuple[Path, ...] | None = None, include_builtin: bool = True,
                 bundled: bool = True) -> RuleSet:
    """The built-in rules (their bundled parsed copy when it matches the files and bundled is True) and the
    rules under extra_dirs, validated; a duplicate id or a dangling reported_by is a RuleError."""
    files: list[Path] = []
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    if include_builtin:
        builtin = _bundled_rules() if bundled else None
        if builtin is None:
            for f in rule_files(resources.rules_dir(), recursive=False):
                _add_rules(f, load_yaml(f), rules, seen)
        else:
            rules += builtin
            seen.update((r.id, r) for r in builtin)
    for d in extra_dirs or []:
        d = Path(d)
        if d.is_dir():
            files += rule_files(d)
        elif os.path.lexists(d):
            files.append(d)  # a file: read through the read guard (a FIFO or a device is refused there, unread)
        else:
            raise RuleError(f"{d}: rules directory does not exist")
    left = RULE_FILES_LIMIT
    for f in files:
        try:
            size = os.stat(f).st_size
        except OSError:
            size = 0  # the read below says why it cannot be read
        if size > left:
            shipped = sum(os.stat(p).st_size for p in rule_files(resources.rules_dir()))  # read, not a stale figure
            raise RuleError(f"{f}: the rule files read hold more than {RULE_FILES_LIMIT >> 20} MiB (the built-in "
                            f"rules are about {round(shipped, -3) // 1000} KB); not read")
        data = load_yaml(f, limit=left)
        left -= size
        for rule in _add_rules(f, data, rules, seen):
            if not rule.own:
                raise RuleError(f"{f}:{rule.line}: rule id {rule.id}: {BUILTIN_PREFIX} is onnxlint's own prefix; give "
                                f"your rules a prefix of your own (ACME001)")
    _check_reported_by(seen)
    rules.sort(key=lambda r: r.id)
    return RuleSet(rules)


def _add_rules(f: Path, data: Any, rules: list[Rule], seen: dict[str, Rule]) -> list[Rule]:
    """The rules of one file, added to rules and seen (their ids)."""
    added = parse_rules(data, f)
    for rule in added:
        if rule.id in seen:
            raise RuleError(f"{f}:{rule.line}: duplicate rule id {rule.id} (first defined at {seen[rule.id].origin})")
        seen[rule.id] = rule
        rules.append(rule)
    return added


def _reported_by_codes(match: Any) -> list[str]:
    """Every code a match names in `reported_by`, nested any/all/not included."""
    return [str(c) for k, v in rule_schema.match_items(match) if k == "reported_by" and isinstance(v, list) for c in v]


MAX_REPORTED_BY_DEPTH = 16  # rules in a chain of `reported_by` (the built-in rules' longest: 2)


def _check_reported_by(rules: dict[str, Rule]) -> None:
    """`reported_by` names rules that exist, never leads back to the rule itself (a typo would silently never
    match; a cycle would recurse forever) and chains at most MAX_REPORTED_BY_DEPTH rules (each link is a nested
    match when a node is linted: 400 of them were "graph nesting too deep to analyse" of every model). One walk,
    linear in the rules and their links (a walk per rule was quadratic: 19 s for a chain of 8,000)."""
    names = {rid: _reported_by_codes(r.match) for rid, r in rules.items()}
    for rid, codes in names.items():
        for code in codes:
            if code not in rules:
                r = rules[rid]
                raise RuleError(f"{r.origin}: reported_by names {code!r}, which no rule has{did_you_mean(code, rules)} "
                                f"in rule {rid}")
    depth: dict[str, int] = {}  # rules in the longest chain from a rule, itself included
    on_path: set[str] = set()
    for start in names:
        stack = [(start, False)]
        while stack:
            rid, done = stack.pop()
            if done:
                on_path.discard(rid)
                depth[rid] = 1 + max((depth[code] for code in names[rid]), default=0)
                if depth[rid] > MAX_REPORTED_BY_DEPTH:
                    raise RuleError(f"{rules[rid].origin}: reported_by chains more than {MAX_REPORTED_BY_DEPTH} rules "
                                    f"in rule {rid}")
                continue
            if rid in depth:
                continue
            on_path.add(rid)
            stack.append((rid, True))
            for code in names[rid]:
                if code in on_path:
                    raise RuleError(f"{rules[code].origin}: reported_by leads back to {code} itself in rule {code}")
                if code not in depth:
                    stack.append((code, False))


_CACHE: dict[tuple[str, ...], RuleSet] = {}


def bundled_ruleset() -> RuleSet | None:
    """The built-in rules from their bundled parsed copy when it matches the rule files (checked at every call:
    a run reads its rules again), None when it does not (a rule file edited in a checkout: then they are parsed)."""
    builtin = _bundled_rules()
    if builtin is None:
        return None
    _check_reported_by({r.id: r for r in builtin})
    builtin.sort(key=lambda r: r.id)
    return RuleSet(builtin)


def get_ruleset(dirs: tuple[Path, ...] | list[Path] = ()) -> RuleSet:
    """The built-in rules plus the rules under dirs, parsed once per process. Keyed by the folders' absolute paths:
    an API caller's process that lints `rules` from two working folders gets each folder's rules."""
    key = tuple(os.path.abspath(d) for d in dirs)
    if key not in _CACHE:
        _CACHE[key] = load_ruleset(list(dirs))
    return _CACHE[key]
