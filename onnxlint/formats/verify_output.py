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
                lines.append(f"  CPU nodes {b.on_cpu} -> {a.on_cpu}" + _off_the_cpu(b, a))
            continue
        lines.append(f"{esc(r.filename)}: {esc(r.summary_line())}")
        lines.extend(f"  note: {esc(n)}" for n in r.notes())
        for kind, checks in (("missed", r.missed), ("false_alarms", r.false_alarms)):
            lines.extend(f"    {kind}: {esc(c.location)}" for c in checks)
    return joined(lines)


def _off_the_cpu(before: Any, after: Any) -> str:
    """The confirmed CPU nodes the fix took off the CPU, by where they went: a provider in the fixed model's session
    ("back on the device"), or none (the fix removed them, or ORT did: a training-mode Dropout made an Identity)."""
    left = sorted({c.location for c in before.confirmed} - {c.location for c in after.confirmed})
    device = [loc for loc in left if after.ran_on.get(loc) not in (None, "CPUExecutionProvider")]
    removed = [loc for loc in left if loc not in after.ran_on]
    return "".join(f"; {what}: {esc(', '.join(locs))}" for what, locs in
                   (("back on the device", device), ("no longer in the session", removed)) if locs)
