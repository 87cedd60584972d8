"""`onnxlint verify` output: the confirmed/missed/false-alarm comparison as text, JSON or SARIF."""

from __future__ import annotations

from typing import Any

from onnxlint.support.escape import dumps, joined
from onnxlint.support.escape import text as esc


def render(fmt: str, results: list[Any], sarif_report: Any = None) -> str:
    if fmt == "json":
        return dumps([r.as_json() for r in results], indent=2) + "\n"
    if fmt == "sarif":
        from onnxlint.formats import render as render_report

        return render_report("sarif", sarif_report)
    lines: list[str] = []
    for r in results:
        if hasattr(r, "before"):
            b, a = r.before, r.after
            lines.append(f"{esc(r.filename)}:")
            lines.append(f"  before fix: {esc(b.summary_line())}")
            lines.extend(f"    note: {esc(n)}" for n in b.notes())
            lines.extend(f"  fix: {esc(n)}" for n in r.fix_notes)
            if a is b:  # nothing was written: the model is the one verified above
                lines.append("  after fix:  the model as above (nothing written)")
                continue
            lines.append(f"  after fix:  {esc(a.summary_line())}")
            lines.extend(f"    note: {esc(n)}" for n in a.notes())
            if not a.error and not b.error:
                back = sorted({c.location for c in b.confirmed} - {c.location for c in a.confirmed})
                lines.append(f"  CPU nodes {b.on_cpu} -> {a.on_cpu}" + (f"; back on the device: {esc(', '.join(back))}" if back else ""))
            continue
        lines.append(f"{esc(r.filename)}: {esc(r.summary_line())}")
        lines.extend(f"  note: {esc(n)}" for n in r.notes())
        for kind, checks in (("missed", r.missed), ("false_alarms", r.false_alarms)):
            lines.extend(f"    {kind}: {esc(c.location)}" for c in checks)
    return joined(lines)
