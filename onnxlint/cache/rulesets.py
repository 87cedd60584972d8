"""The rule set cache: the parsed rules as JSON, keyed by the rule files' bytes and the package."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from onnxlint.cache.folder import FORMAT, default_dir, load_entry, write_entry
from onnxlint.cache.keys import enc, file_digest, package_stamp, rule_files
from onnxlint.cache.report_json import ID, NAME
from onnxlint.support import digest as digests


def _ruleset_entry(rule_dirs: Sequence[str | os.PathLike], cache_dir: str | os.PathLike | None) -> tuple[str, Path]:
    """(key, entry path) of the rule set of rule_dirs: the rule files' bytes, the package and the cwd."""
    dirs = tuple(Path(d) for d in rule_dirs)
    h = digests.new()
    h.update(enc(f"ruleset\0{package_stamp()}\0cwd {os.getcwd()}"))

    class _Dirs:  # rule_files only reads .rule_dirs
        rule_dirs = dirs

    for f in rule_files(_Dirs):  # type: ignore[arg-type]
        h.update(enc(f"\0rule {f} {file_digest(f) if not f.startswith('<') else None}"))
    k = h.hexdigest()
    d = Path(cache_dir) if cache_dir is not None else default_dir()
    return k, d / f"v{FORMAT}" / "rulesets" / f"{k}.json"


def _read_ruleset(k: str, path: Path) -> list[dict[str, Any]] | None:
    try:
        data = load_entry(path.parent.parent.parent, path, k)
        if data is not None and isinstance(data["rules"], list):
            from onnxlint.rulefiles.rule_json import rule_fields

            return [_checked(rule_fields(r)) for r in data["rules"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        pass
    return None


_STR = (str,)
_OPT = (str, type(None))
_INFO_TYPES = {"id": _STR, "name": _STR, "severity": _STR, "summary": _STR, "explanation": _STR, "message": _STR,
               "scope": _STR, "fix": _OPT, "hint": _OPT, "fallback": _OPT, "source": _STR, "placement_target": _OPT,
               "default": (bool,), "line": (int,), "targets": (tuple,), "references": (tuple,), "tags": (tuple,),
               "ops": (tuple, type(None)), "match": (dict,)}


def _checked(rule: Any) -> dict[str, Any]:
    """A stored rule's fields as data of the types and severities a Rule has (ValueError otherwise): what a
    run of hits reads of its rules (selection checks, SARIF's rule list) without parsing them again."""
    from onnxlint.rules.severity import SEVERITIES

    if type(rule) is not dict or rule.keys() != _INFO_TYPES.keys():
        raise ValueError("rule fields")
    for k, v in rule.items():
        if type(v) not in _INFO_TYPES[k]:
            raise ValueError(f"rule field {k}")
    for k in ("targets", "references", "tags", "ops"):
        if rule[k] is not None and not all(type(x) is str for x in rule[k]):
            raise ValueError(f"rule field {k}")
    if rule["severity"] not in SEVERITIES:
        raise ValueError("severity")
    if not ID.match(rule["id"]) or not NAME.match(rule["name"]):
        raise ValueError("rule id or name")
    return rule


def cached_ruleset(rule_dirs: Sequence[str | os.PathLike], load: Callable[[tuple[Path, ...]], Any],
                   cache_dir: str | os.PathLike | None = None) -> Any:
    """The RuleSet of rule_dirs (built-in rules included) from a JSON copy in the cache folder, keyed by the
    rule files' bytes and the package; on a miss load(rule_dirs) parses and validates the YAML and the result
    is stored. A hit does not parse YAML (onnxlint.rulefiles.ruleset, which it imports, still imports yaml and, through
    the rule schema, onnx: a caller that must stay light uses rule_index). JSON, not pickle: an entry is data,
    never code. A rule's match loses its per-key line numbers (only validation reports them, and a stored
    rule set was valid).

    The built-in rules alone come from the package's bundled parsed copy whenever it matches the rule files
    (ruleset.bundled_ruleset): the cache's copy, which anyone who can write the folder could have forged, would
    be validated again rule by rule (the plug-in fixers' entry points looked up, in every run), the bundled one is
    the package's own. The entry is still written: a run of hits reads the rules from it (rule_index)."""
    dirs = tuple(Path(d) for d in rule_dirs)
    k, path = _ruleset_entry(dirs, cache_dir)
    trusted = None
    if not dirs:
        from onnxlint.rulefiles.ruleset import bundled_ruleset

        trusted = bundled_ruleset()
    stored = _read_ruleset(k, path)
    if stored is not None:
        if trusted is not None:
            return trusted
        try:
            from onnxlint.rulefiles.ruleset import RuleSet, rule_from_stored
            from onnxlint.support.errors import RuleError

            try:
                return RuleSet([rule_from_stored(r) for r in stored])
            except (KeyError, TypeError, ValueError, RuleError, RecursionError):
                pass  # a field renamed since, or a forged entry: parse the files again
        except ImportError:  # pragma: no cover
            pass
    ruleset = trusted if trusted is not None else load(dirs)
    from onnxlint.rulefiles.ruleset import rule_to_json

    try:
        body = json.dumps({"key": k, "rules": [rule_to_json(r) for r in ruleset.rules]}, separators=(",", ":"))
    except (TypeError, ValueError):
        return ruleset  # something in a rule is not JSON: not cached
    write_entry(path.parent.parent.parent, path, body.encode())
    return ruleset


class RuleInfo:
    """A stored rule's fields as attributes (id, name, severity, targets, summary, explanation, fix, tags, ...):
    what check_selection and the output formats read of a Rule, without importing onnxlint.rulefiles.ruleset."""

    def __init__(self, fields: dict[str, Any]):
        self.__dict__.update(fields)
        self.default = bool(fields.get("default", True))
        self.id = str(fields["id"])

    @property
    def own(self) -> bool:
        """As Rule.own: a rule of the user's, not onnxlint's."""
        from onnxlint.rules.rule import own_code

        return own_code(self.id)

    def __repr__(self) -> str:
        return f"RuleInfo({self.id})"


class RuleIndex:
    """The rules of a stored rule set, read without parsing YAML or importing the rule schema (and so onnx):
    what a run whose models are all cache hits needs of its rules (selection checks, report.rules)."""

    def __init__(self, rules: list[RuleInfo]):
        self.rules = rules

    def by_id(self) -> dict[str, RuleInfo]:
        return {r.id: r for r in self.rules}

    def knows(self, code: str) -> bool:
        return any(r.id.startswith(code) for r in self.rules)


def rule_index(rule_dirs: Sequence[str | os.PathLike], cache_dir: str | os.PathLike | None = None) -> RuleIndex | None:
    """The stored rule set of rule_dirs (see cached_ruleset) as a RuleIndex, or None when none is stored for
    the rule files as they are now (then the caller loads them, through cached_ruleset, which stores it)."""
    k, path = _ruleset_entry(rule_dirs, cache_dir)
    stored = _read_ruleset(k, path)
    if stored is None:
        return None
    try:
        return RuleIndex([RuleInfo(r) for r in stored])
    except (KeyError, TypeError):
        return None
