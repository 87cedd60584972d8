"""The report's JSON form, as an entry holds it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onnxlint.linting.report import FileReport


def report_to_json(report: FileReport) -> dict[str, Any]:
    return {"filename": report.filename, "error": report.error, "notes": list(report.notes),
            "placement": dict(report.placement), "findings": [dict(vars(f)) for f in report.findings],
            "targets": list(report.targets) if report.targets is not None else None}


class BadEntry(ValueError):
    """A stored report that is not one onnxlint wrote for this file: a miss."""


def report_from_json(data: Any, filename: str | None = None) -> FileReport:
    """The FileReport an entry holds, every value checked as data (types, severities, the file it is about):
    whatever the cache folder holds, a report that is not what onnxlint stores is a BadEntry (a miss), and
    a good one is rendered by the output formats like a fresh result (their escaping included).

    filename: the path as this run names it; the stored report must be about it."""
    from onnxlint.linting.report import FileReport, Finding
    from onnxlint.rules.severity import SEVERITIES

    if not isinstance(data, dict) or data.keys() != _REPORT_KEYS:
        raise BadEntry("report fields")
    name, notes, placement, stored = data["filename"], data["notes"], data["placement"], data["findings"]
    if not isinstance(name, str) or (filename is not None and name != filename) or data["error"] is not None:
        raise BadEntry("report file")
    if not isinstance(notes, list) or not all(type(n) is str for n in notes):
        raise BadEntry("notes")
    if not isinstance(placement, dict) or not all(type(v) is str for v in placement.values()):
        raise BadEntry("placement")
    if not isinstance(stored, list):
        raise BadEntry("findings")
    chosen = data["targets"]
    if chosen is not None and not _target_names(chosen):
        raise BadEntry("targets")
    kinds = _finding_kinds()
    findings = []
    for f in stored:
        if type(f) is not dict or f.keys() != kinds.keys():
            raise BadEntry("finding fields")  # another layout: a miss
        for k, v in f.items():
            if type(v) not in kinds[k]:
                raise BadEntry(f"finding field {k}")
        if f["severity"] not in SEVERITIES:
            raise BadEntry("severity")
        if not ID.fullmatch(f["code"]) or not NAME.fullmatch(f["name"]):  # fullmatch: `$` passes a final "\n"
            raise BadEntry("rule code or name")  # printed unquoted by the text formats: only a rule's shape passes
        obj = object.__new__(Finding)  # Finding(**f) without the keyword binding: a third of a hit's time
        obj.__dict__.update(f)
        findings.append(obj)
    return FileReport(filename=name, error=None, notes=list(notes), placement=dict(placement), findings=findings,
                      targets=tuple(chosen) if chosen is not None else None)


def _target_names(value: Any) -> bool:
    """Whether a stored report's targets are targets' names (the summary line looks each one up)."""
    if not isinstance(value, list) or not value or not all(type(t) is str for t in value):
        return False
    from onnxlint.targets import names

    return set(value) <= set(names())


# a rule's id and name as rule_schema.ID_PATTERN and NAME_PATTERN have them (the hit path does not import the
# rule schema, which imports onnx; a test keeps the two the same)
ID = re.compile(r"^[A-Z]{2,6}[0-9]{3,4}$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REPORT_KEYS = {"filename": None, "error": None, "notes": None, "placement": None, "findings": None, "targets": None}.keys()
_TYPES: dict[str, tuple[type, ...]] = {"str": (str,), "str | None": (str, type(None)), "bool": (bool,)}
_KINDS: dict[str, tuple[type, ...]] | None = None


def _finding_kinds() -> dict[str, tuple[type, ...]]:
    """Finding's field names and the exact types a stored value of each may have (from its annotations): a
    stored finding must have exactly these fields. A field of another type is a KeyError here (a new kind of
    field must be added to _TYPES)."""
    global _KINDS
    if _KINDS is None:
        from dataclasses import fields

        from onnxlint.linting.report import Finding

        _KINDS = {f.name: _TYPES[str(f.type)] for f in fields(Finding)}
    return _KINDS
