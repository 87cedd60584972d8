"""SARIF 2.1.0 for GitHub code scanning: one run, every rule that ran, results with stable fingerprints.

The results are what the text shows (an alert per line, not per node: 400 DequantizeLinear nodes of one cause
are one alert, not 400 in a repository's Security tab); infos only with --show-info, one result per node with
--expand. JSON is the complete per-node record."""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path
from urllib.parse import quote

from onnxlint import __version__
from onnxlint.formats.repository_paths import real_folder, repository_root
from onnxlint.formats.text_format import also, cause, group, shown_findings, summary_line
from onnxlint.model.locations import node_location
from onnxlint.support.escape import dumps
from onnxlint.support.escape import lines as esc_lines
from onnxlint.support.escape import text as esc

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/onnxlint/onnxlint"
# code scanning's hard limits (docs.github.com, "SARIF results exceed one or more limits"): a file past one is
# rejected whole, every alert of the run lost ("rejecting SARIF, as there are more results per run than allowed
# (42118 > 25000)"). Which location arrays of a result count against its 1,000 is not documented (code scanning
# shows 100), so neither the related nor the logical locations of a group pass it.
MAX_LOCATIONS = 1000  # related locations a result, and logical locations its location names
MAX_RESULTS = 25_000  # results a run
MAX_TAGS = 20  # tags a rule ("... more tags per rule than allowed"): a rule file's rule may list any number
# a file, gzip-compressed as upload-sarif sends it ("SARIF file is too large"; 10 MB), less a margin for the
# uploader's compressor: ~240 groups of 1,000 nodes each would be needed to reach it
MAX_GZIP_BYTES = 9_500_000


def _uri(filename: str, root: Path) -> str:
    """A relative URI reference (RFC 3986) for the file: every byte outside the unreserved set and `/` is
    percent-encoded (`my model#1%zz.onnx` -> `my%20model%231%25zz.onnx`), a file-name byte that is not UTF-8
    included (the name's bytes are what is encoded), and `:` too, so a first segment never reads as a scheme."""
    p = real_folder(filename)
    try:
        rel = p.relative_to(root)
    except ValueError:
        rel = Path(os.path.relpath(p, root))
    return quote(os.fsencode(rel.as_posix()), safe="/")


def _rule_entry(rule, severity: str) -> dict:
    """A rule's descriptor, at the severity the run's config gives it (its results carry their own level)."""
    fix = f"\n\n**Automatic fix:** `{rule.fix}` (`onnxlint --fix`)" if rule.fix else "\n\n**Automatic fix:** none"
    entry = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": esc(rule.summary)},
        "fullDescription": {"text": esc(rule.explanation.split("\n\n")[0].replace("\n", " "))},
        "help": {"text": esc_lines(rule.explanation + ("" if rule.fix else "\n\nno automatic fix")),
                 "markdown": esc_lines(rule.explanation + fix)},
        "defaultConfiguration": {"level": LEVEL[severity]},
        "helpUri": f"{INFO_URI}/blob/main/docs/rules.md#{rule.id.lower()}",
        # code scanning's severities: error, warning, recommendation
        "properties": {"tags": sorted({*rule.targets, *rule.tags})[:MAX_TAGS],
                       "problem.severity": "recommendation" if severity == "info" else severity},
    }
    if rule.own:
        # a rule of the repository's: onnxlint's docs have no page for it, and its explanation is text, never
        # markdown code scanning renders (links and images a pull request chose)
        del entry["helpUri"], entry["help"]["markdown"]
    return entry


def _location(uri: dict, node: str | None) -> dict:
    return {"physicalLocation": {"artifactLocation": uri, "region": {"startLine": 1}},
            "logicalLocations": [_logical(node)]}


def _logical(node: str | None) -> dict:
    return {"name": (node or "model").rsplit("/", 1)[-1], "fullyQualifiedName": node or "model", "kind": "element"}


def _artifact(filename: str, base: Path) -> dict:
    """Relative to %SRCROOT% when the file is under it; a file elsewhere gets its absolute file: URI (never a
    `../` path code scanning cannot place)."""
    p = real_folder(filename)
    try:
        p.relative_to(base)
    except ValueError:
        return {"uri": "file://" + quote(os.fsencode(p.as_posix()), safe="/")}
    return {"uri": _uri(filename, base), "uriBaseId": "%SRCROOT%"}


def _group_fingerprint(members: list, expand: bool, uri: str) -> str:
    """One node's fingerprint when the result is that node (--expand): its rule, model and node location; a
    group's is its rule, model and cause, so it stays one alert while nodes of the same cause come and go. The
    model is its URI (from the repository root): the path as typed (`models/`, `$PWD/models`, `.` in models/)
    made three alerts of one finding. Weight values never enter it."""
    f = members[0]
    parts = (f.code, uri, node_location(f.node) or "") if expand else (f.code, uri, *(x or "" for x in cause(f)))
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _suppression(reason: str) -> dict:
    external = reason in ("config", "per-file-ignores", "baseline")
    return {"kind": "external" if external else "inSource", "justification": f"suppressed by {reason}"}


def _result(members: list, index: dict, base: Path, expand: bool) -> dict:
    f = members[0]
    # the node, as GitHub annotations and the text name it: code scanning shows the message and the file only
    text = f.message + (f" ({f.node})" if f.node else "") + also(members)
    uri = _artifact(f.filename, base)
    res: dict = {
        "ruleId": f.code,
        "ruleIndex": index.get(f.code, -1),
        "level": LEVEL[f.severity],
        "message": {"text": esc(text + (f" ({f.hint})" if f.hint else ""))},  # as the GitHub format escapes it
        "locations": [{**_location(uri, f.node),
                       "logicalLocations": [_logical(m.node) for m in members[:MAX_LOCATIONS]]}],
        "partialFingerprints": {"onnxlintFingerprint/v1": _group_fingerprint(members, expand, uri["uri"])},
        "properties": {"target": f.target, "opType": f.op_type, "count": len(members),
                       **({"verifiedProvider": f.verified} if f.verified else {})},
    }
    if len(members) > 1:
        res["relatedLocations"] = [{"id": i, **_location(uri, m.node), "message": {"text": esc(m.node or "model")}}
                                   for i, m in enumerate(members[:MAX_LOCATIONS])]
    if len(members) > MAX_LOCATIONS:  # the message and `count` say how many; the text and JSON name every node
        res["properties"]["locationsOmitted"] = len(members) - MAX_LOCATIONS
    if res["ruleIndex"] < 0:
        del res["ruleIndex"]
    if f.suppressed:
        res["suppressions"] = [_suppression(f.suppressed)]
    return res


def results(report, base: Path, show_info: bool = False, expand: bool = False) -> list[dict]:
    """What the text shows, one result per line (`text_format.group`): per model one result per rule and cause,
    every node of it a logical and a related location, the count in the message; then the suppressed findings,
    grouped the same way per reason, with `suppressions` (code scanning lists them as closed)."""
    index = {r.id: i for i, r in enumerate(report.rules)}
    out = []
    for res in report.files:
        out += [_result(g, index, base, expand) for g in group(shown_findings(res.findings, show_info), expand)]
        hidden: dict[str, list] = {}
        for f in res.findings:
            if f.suppressed and not f.fixed and (show_info or f.severity != "info"):
                hidden.setdefault(f.suppressed, []).append(f)
        for members in hidden.values():
            out += [_result(g, index, base, expand) for g in group(members, expand)]
    return out


def within_limits(found: list[dict], limit: int | None = None) -> tuple[list[dict], int]:
    """(found less what is past limit (MAX_RESULTS), how many were left out): the open results before the
    suppressed ones, errors before warnings before notes (what code scanning keeps itself when it truncates),
    each kept in its place."""
    limit = MAX_RESULTS if limit is None else limit
    if len(found) <= limit:
        return found, 0
    rank = {"error": 0, "warning": 1, "note": 2}
    order = sorted(range(len(found)), key=lambda i: ("suppressions" in found[i], rank[found[i]["level"]], i))
    kept = sorted(order[:limit])
    return [found[i] for i in kept], len(found) - limit


def render(report, root: str | None = None, config_file: str | os.PathLike | None = None, show_info: bool = False,
           expand: bool = False, **_) -> str:
    """config_file: the configuration file in force (Config.path), recorded as the invocation property
    `configFile` (its absolute path; `null` when none applied)."""
    base = repository_root(root)
    every = results(report, base, show_info, expand)
    found, left_out = within_limits(every)
    doc = _document(report, base, every, found, left_out, config_file, show_info, expand, f"{MAX_RESULTS:,} a run")
    while len(doc) > MAX_GZIP_BYTES and found:  # the document is ASCII: its length bounds its compressed size
        size = len(gzip.compress(doc.encode("ascii"), 6))
        if size <= MAX_GZIP_BYTES:
            break
        # results are alike in size: one step lands near the limit, a further one where it did not
        found, left_out = within_limits(every, min(len(found) - 1, int(len(found) * MAX_GZIP_BYTES * 0.95 / size)))
        doc = _document(report, base, every, found, left_out, config_file, show_info, expand,
                        f"{MAX_GZIP_BYTES / 1e6:g} MB a file, gzip-compressed")
    return doc


def _document(report, base: Path, every: list[dict], found: list[dict], left_out: int,
              config_file: str | os.PathLike | None, show_info: bool, expand: bool, limit: str) -> str:
    """The SARIF document of the results found (of every), left_out of them past the limit named."""
    notifications = [{"level": "error", "message": {"text": esc(f"{r.filename}: {r.error}")},
                      "descriptor": {"id": "OLX000"}} for r in report.errors]
    if left_out:
        notifications.append({"level": "warning", "message": {"text": (
            f"{left_out:,} of {len(every):,} results left out of this file, past code scanning's limit of "
            f"{limit} (errors and open results kept first); the text and JSON formats list them all")}})
    rules = list(report.rules)
    run = {
        "tool": {"driver": {"name": "onnxlint", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFO_URI, "rules": [_rule_entry(r, report.severity.get(r.id, r.severity)) for r in rules]}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
        "results": found,
        "invocations": [{"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications,
                         "properties": {"configFile": os.fsdecode(os.path.abspath(config_file)) if config_file else None}}],
        "properties": {"checkedReleases": report.releases, "summary": summary_line(report, show_info, None if expand else
                                               sum(1 for r in every if "suppressions" not in r))},
    }
    # message texts escaped as the GitHub format escapes them (escape.text: control, bidi and invisible characters
    # made visible); every string valid Unicode (a file name's undecodable byte as the text `\xNN`), the document ASCII
    return dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
