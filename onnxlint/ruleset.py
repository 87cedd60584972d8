"""Rule schema: YAML rule files, validated on load with file:line errors. Rule text is data, never code."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from onnxlint import resources
from onnxlint.errors import RuleError

SEVERITIES = ("info", "warning", "error")
SCOPES = ("node", "model", "graph_input", "verification")  # verification: reported by the verify pass
KNOWN_TARGETS = ("any", "ort-cpu", "ort-cuda", "ort-trt", "tensorrt")
ID_RE = re.compile(r"^[A-Z]{2,6}[0-9]{3,4}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.\[\]-]*)\}")

RULE_KEYS = {"id", "name", "severity", "targets", "summary", "explanation", "fix", "scope", "match", "message",
             "hint", "references", "tags", "fallback"}
REQUIRED = ("id", "name", "severity", "targets", "summary", "explanation", "match", "message")
CMP_KEYS = {"eq", "ne", "in", "not_in", "exists", "lt", "le", "gt", "ge"}
LOGIC = {"any", "all", "not"}
NODE_KEYS = {"op", "domain", "opset", "attrs", "inputs", "outputs", "inputs_same_dtype", "num_inputs", "num_outputs",
             "placement", "tensorrt", "local_function", "in_subgraph", "standard_domain"} | LOGIC
VALUE_KEYS = {"dtype", "constant", "rank", "static", "exists", "value", "graph_input", "shape_from_shape_op"}
MODEL_KEYS = {"checker", "shape_inference", "external_data", "size_bytes", "protobuf_bytes", "uses_external_data",
              "ir_version", "opset", "inputs_all_static", "metadata", "producer_name", "num_nodes"} | LOGIC
GRAPH_INPUT_KEYS = {"dtype", "static", "rank", "name", "dynamic_batch"} | LOGIC
PLACEMENT_KEYS = {"target", "status", "reason"}
TENSORRT_KEYS = {"status", "reason", "version"}
TEMPLATE_ROOTS = {"verify", "node", "name", "op_type", "domain", "opset", "attr", "input", "output", "placement", "trt",
                  "model", "file", "value", "rule"}


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml parses when present
    """SafeLoader whose mappings remember the line of each key (1-based)."""


class LineDict(dict):
    line: int = 0
    key_lines: dict

    def line_of(self, key) -> int:
        return self.key_lines.get(key, self.line)


def _construct_mapping(loader, node, deep=False):
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            raise RuleError(f"{loader.name}:{key_node.start_mark.line + 1}: duplicate key {key!r}")
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"{path}: cannot read: {exc}") from None
    loader = _LineLoader(text)
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except RuleError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise RuleError(f"{path}:{line}: YAML syntax error: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise RuleError(f"{path}: YAML error: {exc}") from None
    finally:
        loader.dispose()


@dataclass
class Rule:
    id: str
    name: str
    severity: str
    targets: tuple[str, ...]
    summary: str
    explanation: str
    match: dict
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

    @property
    def placement_target(self) -> str | None:
        """The target of the rule's first `placement` predicate: whose placement {placement.*} renders."""
        if "_placement_target" not in self.__dict__:
            self.__dict__["_placement_target"] = _first_placement_target(self.match)
        return self.__dict__["_placement_target"]

    @property
    def origin(self) -> str:
        return f"{self.source}:{self.line}"

    def applies_to(self, targets: set[str]) -> bool:
        return "any" in self.targets or bool(targets.intersection(self.targets))

    @property
    def fix_hint(self) -> str:
        if self.hint:
            return self.hint
        return "no automatic fix" if not self.fix else f"fixable with --fix ({self.fix})"


def _first_placement_target(m) -> str | None:
    if isinstance(m, dict):
        if isinstance(m.get("placement"), dict):
            return m["placement"].get("target")
        values = m.values()
    elif isinstance(m, list):
        values = m
    else:
        return None
    for v in values:
        found = _first_placement_target(v)
        if found:
            return found
    return None


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)

    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}


def _suggest(word: str, options) -> str:
    close = difflib.get_close_matches(word, sorted(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class _Validator:
    def __init__(self, path: Path, rule_id: str):
        self.path = path
        self.rule_id = rule_id

    def fail(self, line: int, msg: str):
        raise RuleError(f"{self.path}:{line}: {msg} in rule {self.rule_id}")

    def keys(self, d, allowed, line, what):
        if not isinstance(d, dict):
            self.fail(line, f"{what} must be a mapping, got {type(d).__name__}")
        for k in d:
            if k not in allowed:
                self.fail(_line(d, k, line), f"unknown {what} '{k}'{_suggest(str(k), allowed)}")

    def cmp(self, v, line, what):
        if isinstance(v, dict):
            self.keys(v, CMP_KEYS, line, f"comparison in {what}")
            for k in ("lt", "le", "gt", "ge"):
                if k in v and not isinstance(v[k], (int, float)):
                    self.fail(_line(v, k, line), f"'{k}' in {what} needs a number")
            for k in ("in", "not_in"):
                if k in v and not isinstance(v[k], list):
                    self.fail(_line(v, k, line), f"'{k}' in {what} needs a list")
            if "exists" in v and not isinstance(v["exists"], bool):
                self.fail(_line(v, "exists", line), f"'exists' in {what} needs true or false")

    def logic(self, m, key, line, fn):
        v = m[key]
        ln = _line(m, key, line)
        if key == "not":
            fn(v, ln)
        else:
            if not isinstance(v, list) or not v:
                self.fail(ln, f"'{key}' needs a non-empty list of matches")
            for item in v:
                fn(item, getattr(item, "line", ln))

    def node(self, m, line):
        self.keys(m, NODE_KEYS, line, "predicate")
        for k, v in m.items():
            ln = _line(m, k, line)
            if k in LOGIC:
                self.logic(m, k, line, self.node)
            elif k == "op":
                if isinstance(v, dict):
                    self.cmp(v, ln, "op")
                elif not (isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))):
                    self.fail(ln, "'op' needs an op type, a list of them or a comparison")
            elif k in ("opset", "num_inputs", "num_outputs", "domain"):
                self.cmp(v, ln, k)
            elif k == "attrs":
                if not isinstance(v, dict):
                    self.fail(ln, "'attrs' must map attribute names to comparisons")
                for an, av in v.items():
                    self.cmp(av, _line(v, an, ln), f"attrs.{an}")
            elif k in ("inputs", "outputs"):
                if not isinstance(v, dict):
                    self.fail(ln, f"'{k}' must map indices to value predicates")
                for idx, spec in v.items():
                    if not (isinstance(idx, int) or idx in ("any", "all")):
                        self.fail(_line(v, idx, ln), f"'{k}' keys are input indices, 'any' or 'all', got {idx!r}")
                    self.keys(spec, VALUE_KEYS, _line(v, idx, ln), f"{k} predicate")
                    for sk, sv in spec.items():
                        self.cmp(sv, _line(spec, sk, ln), f"{k}.{sk}")
            elif k == "placement":
                self.keys(v, PLACEMENT_KEYS, ln, "placement predicate")
                if v.get("target") not in ("ort-cuda", "ort-cpu"):
                    self.fail(ln, "placement needs target: ort-cuda or ort-cpu")
            elif k == "tensorrt":
                self.keys(v, TENSORRT_KEYS, ln, "tensorrt predicate")
            elif k in ("inputs_same_dtype", "local_function", "in_subgraph", "standard_domain"):
                if not isinstance(v, bool):
                    self.fail(ln, f"'{k}' needs true or false")

    def model(self, m, line):
        self.keys(m, MODEL_KEYS, line, "model predicate")
        for k, v in m.items():
            ln = _line(m, k, line)
            if k in LOGIC:
                self.logic(m, k, line, self.model)
            elif k == "opset":
                if not isinstance(v, dict):
                    self.fail(ln, "'opset' must map domains to comparisons")
                for d, c in v.items():
                    self.cmp(c, _line(v, d, ln), f"opset.{d}")
            elif k == "metadata":
                if not isinstance(v, dict):
                    self.fail(ln, "'metadata' must map keys to comparisons")
            else:
                self.cmp(v, ln, k)

    def graph_input(self, m, line):
        self.keys(m, GRAPH_INPUT_KEYS, line, "graph input predicate")
        for k, v in m.items():
            if k in LOGIC:
                self.logic(m, k, line, self.graph_input)
            else:
                self.cmp(v, _line(m, k, line), k)


def _line(d, key, default):
    return d.line_of(key) if isinstance(d, LineDict) else default


def parse_rules(data, path: Path) -> list[Rule]:
    if data is None:
        return []
    if isinstance(data, dict) and "rules" in data:
        data = data["rules"]
    if not isinstance(data, list):
        raise RuleError(f"{path}:1: a rule file holds a list of rules (or a mapping with key 'rules')")
    out = []
    for raw in data:
        line = getattr(raw, "line", 1)
        if not isinstance(raw, dict):
            raise RuleError(f"{path}:{line}: each rule must be a mapping, got {type(raw).__name__}")
        rid = str(raw.get("id", "?"))
        v = _Validator(path, rid)
        for k in raw:
            if k not in RULE_KEYS:
                v.fail(_line(raw, k, line), f"unknown key '{k}'{_suggest(str(k), RULE_KEYS)}")
        for k in REQUIRED:
            if k not in raw:
                v.fail(line, f"missing required key '{k}'")
        if not isinstance(raw["id"], str) or not ID_RE.match(raw["id"]):
            v.fail(_line(raw, "id", line), f"id {raw['id']!r} must look like OLX001 (capitals then digits)")
        if not isinstance(raw["name"], str) or not NAME_RE.match(raw["name"]):
            v.fail(_line(raw, "name", line), f"name {raw['name']!r} must be a kebab-case slug")
        if raw["severity"] not in SEVERITIES:
            v.fail(_line(raw, "severity", line), f"severity must be one of {', '.join(SEVERITIES)}")
        targets = raw["targets"]
        if isinstance(targets, str):
            targets = [targets]
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            v.fail(_line(raw, "targets", line), "targets must be a list of target names")
        for t in targets:
            if t not in KNOWN_TARGETS:
                v.fail(_line(raw, "targets", line), f"unknown target '{t}'{_suggest(t, KNOWN_TARGETS)}")
        scope = raw.get("scope", "node")
        if scope not in SCOPES:
            v.fail(_line(raw, "scope", line), f"scope must be one of {', '.join(SCOPES)}")
        for k in ("summary", "explanation", "message"):
            if not isinstance(raw[k], str) or not raw[k].strip():
                v.fail(_line(raw, k, line), f"'{k}' must be non-empty text")
        for ph in PLACEHOLDER.findall(raw["message"]):
            root = re.split(r"[.\[]", ph, maxsplit=1)[0]
            if root not in TEMPLATE_ROOTS:
                v.fail(_line(raw, "message", line), f"unknown placeholder '{{{ph}}}' in message{_suggest(root, TEMPLATE_ROOTS)}")
        match = raw["match"]
        mline = _line(raw, "match", line)
        if not isinstance(match, dict):
            v.fail(mline, "'match' must be a mapping of predicates")
        if scope == "verification":
            if match:
                v.fail(mline, "a verification rule has an empty match ({}): the verify pass reports it")
        else:
            {"node": v.node, "model": v.model, "graph_input": v.graph_input}[scope](match, mline)
        fallback = raw.get("fallback")
        if fallback is not None and fallback not in ("ort-cuda",):
            v.fail(_line(raw, "fallback", line), "fallback names the target whose EP rejects the node: ort-cuda")
        ops = match.get("op") if scope == "node" else None
        if isinstance(ops, dict):
            ops = None  # a comparison: evaluated on every node
        out.append(Rule(
            id=raw["id"], name=raw["name"], severity=raw["severity"], targets=tuple(targets),
            summary=raw["summary"].strip(), explanation=raw["explanation"].strip(), match=match,
            message=raw["message"].strip(), scope=scope, fix=raw.get("fix"), hint=raw.get("hint"),
            references=tuple(raw.get("references") or ()), tags=tuple(raw.get("tags") or ()), fallback=fallback,
            source=str(path), line=line, ops=(tuple([ops]) if isinstance(ops, str) else tuple(ops) if ops else None),
        ))
    return out


def rule_files(directory: Path, recursive: bool = True) -> list[Path]:
    found = directory.rglob("*") if recursive else directory.glob("*")
    return sorted(p for p in found if p.suffix in (".yaml", ".yml") and p.is_file())


def load_ruleset(extra_dirs: list[Path] | None = None, include_builtin: bool = True) -> RuleSet:
    files: list[Path] = []
    if include_builtin:
        files += rule_files(resources.rules_dir(), recursive=False)
    for d in extra_dirs or []:
        d = Path(d)
        if d.is_file():
            files.append(d)
        elif d.is_dir():
            files += rule_files(d)
        else:
            raise RuleError(f"{d}: rules directory does not exist")
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    for f in files:
        for rule in parse_rules(load_yaml(f), f):
            if rule.id in seen:
                raise RuleError(f"{f}:{rule.line}: duplicate rule id {rule.id} (first defined at {seen[rule.id].origin})")
            seen[rule.id] = rule
            rules.append(rule)
    from onnxlint import fixes  # fixers register by name; a rule may only name one that exists

    for rule in rules:
        if rule.fix and rule.fix not in fixes.REGISTRY:
            raise RuleError(f"{rule.origin}: unknown fixer '{rule.fix}'{_suggest(rule.fix, fixes.REGISTRY)} in rule {rule.id}")
    rules.sort(key=lambda r: r.id)
    return RuleSet(rules)
