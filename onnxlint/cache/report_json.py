"""The report's JSON form, as an entry holds it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onnxlint.report import FileReport


def report_to_json(report: FileReport) -> dict[str, Any]:
    return {"filename": report.filename, "error": report.error, "notes": list(report.notes),
            "placement": dict(report.placement), "findings": [dict(vars(f)) for f in report.findings]}


def report_from_json(data: dict[str, Any]) -> FileReport:
    from onnxlint.report import FileReport, Finding

    fields = _finding_fields()
    findings = []
    for f in data["findings"]:
        if f.keys() != fields:
            raise KeyError("finding fields")  # another layout: a miss
        obj = object.__new__(Finding)  # Finding(**f) without the keyword binding: a third of a hit's time
        obj.__dict__.update(f)
        findings.append(obj)
    return FileReport(filename=data["filename"], error=data["error"], notes=list(data["notes"]),
                      placement=dict(data["placement"]), findings=findings)


_FIELDS: Any = None


def _finding_fields() -> Any:
    """Finding's field names (a keys view compares as a set): a stored finding must have exactly these."""
    global _FIELDS
    if _FIELDS is None:
        from dataclasses import fields

        from onnxlint.report import Finding

        _FIELDS = {f.name: None for f in fields(Finding)}.keys()
    return _FIELDS
