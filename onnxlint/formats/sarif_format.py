"""SARIF 2.1.0 for GitHub code scanning: one run, every rule that ran, results with stable fingerprints."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import quote

from onnxlint import __version__
from onnxlint.formats.escape import unicode_tree

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/onnxlint/onnxlint"


def _uri(filename: str, root: Path) -> str:
    """A relative URI reference (RFC 3986) for the file: every byte outside the unreserved set and `/` is
    percent-encoded (`my model#1%zz.onnx` -> `my%20model%231%25zz.onnx`), a file-name byte that is not UTF-8
    included (the name's bytes are what is encoded), and `:` too, so a first segment never reads as a scheme."""
    p = Path(filename).resolve()
    try:
        rel = p.relative_to(root)
    except ValueError:
        rel = Path(os.path.relpath(p, root))
    return quote(os.fsencode(rel.as_posix()), safe="/")


def _fingerprint(f) -> str:
    try:
        return f.fingerprint()
    except UnicodeEncodeError:  # a file name with a byte that is not UTF-8: hash the name's own bytes
        key = f"{f.code}\0{f.filename}\0{f.node or ''}"
        return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _rule_entry(rule) -> dict:
    fix = f"\n\n**Automatic fix:** `{rule.fix}` (`onnxlint --fix`)" if rule.fix else "\n\n**Automatic fix:** none"
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.explanation.split("\n\n")[0].replace("\n", " ")},
        "help": {"text": rule.explanation + ("" if rule.fix else "\n\nno automatic fix"), "markdown": rule.explanation + fix},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "helpUri": f"{INFO_URI}/blob/main/docs/rules.md#{rule.id.lower()}",
        "properties": {"tags": sorted({*rule.targets, *rule.tags}), "problem.severity": rule.severity},
    }


def render(report, root: str | None = None, config_file: str | os.PathLike | None = None, **_) -> str:
    """config_file: the configuration file in force (Config.path), recorded as the invocation property
    `configFile` (its absolute path; `null` when none applied)."""
    base = Path(root or os.getcwd()).resolve()
    rules = list(report.rules)
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f in report.findings:
        if f.fixed:
            continue
        res = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, -1),
            "level": LEVEL[f.severity],
            "message": {"text": f.message + (f" ({f.hint})" if f.hint else "")},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.filename, base), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": 1},
                },
                "logicalLocations": [{"name": (f.node or "model").rsplit("/", 1)[-1],
                                      "fullyQualifiedName": f.node or "model", "kind": "element"}],
            }],
            "partialFingerprints": {"onnxlintFingerprint/v1": _fingerprint(f)},
            "properties": {"target": f.target, "opType": f.op_type,
                           **({"verifiedProvider": f.verified} if f.verified else {})},
        }
        if res["ruleIndex"] < 0:
            del res["ruleIndex"]
        if f.suppressed:
            res["suppressions"] = [{"kind": "external" if f.suppressed in ("config", "per-file-ignores", "baseline") else "inSource",
                                    "justification": f"suppressed by {f.suppressed}"}]
        results.append(res)
    notifications = [{"level": "error", "message": {"text": f"{r.filename}: {r.error}"},
                      "descriptor": {"id": "OLX000"}} for r in report.errors]
    run = {
        "tool": {"driver": {"name": "onnxlint", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFO_URI, "rules": [_rule_entry(r) for r in rules]}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
        "results": results,
        "invocations": [{"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications,
                         "properties": {"configFile": os.fsdecode(os.path.abspath(config_file)) if config_file else None}}],
    }
    # every string valid Unicode (a file name's undecodable byte as the text `\xNN`), the document ASCII
    return json.dumps(unicode_tree({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}), indent=2) + "\n"
