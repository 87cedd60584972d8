"""GitHub Actions workflow commands: `::error file=...,title=ID::message`.

One annotation per cause, as the text output groups them (a runner shows only the first few annotations of a
step: 400 DequantizeLinear findings of one cause would bury everything else); `--expand` gives one per node."""

from __future__ import annotations

from onnxlint.formats.escape import text as _visible
from onnxlint.formats.text_format import cause, display_location

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(s: str) -> str:
    """The runner's own escapes for %, CR and LF; any other control character, bidi control or undecodable
    file-name byte is shown escaped (escape.text), never passed to the log raw."""
    return _visible(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(report, expand: bool = False, **_) -> str:
    lines = []
    groups: dict[tuple, list] = {}
    for f in report.active:
        groups.setdefault((f.filename, f.code, None, f.node or "") if expand else (f.filename, *cause(f)), []).append(f)
    for members in groups.values():
        f = members[0]
        where = f" ({f.node})" if f.node else ""
        if len(members) > 1:
            locs = ", ".join(display_location(m.node) for m in members[1:4])
            more = len(members) - 4
            where += f" (×{len(members)}; also {locs}" + (f" and {more} more" if more > 0 else "") + ")"
        lines.append(f"::{LEVEL[f.severity]} file={_escape_prop(f.filename)},line=1,title={_escape_prop(f.code + ' ' + f.name)}::"
                     f"{_escape_data(f.message + where)}")
    for res in report.errors:
        lines.append(f"::error file={_escape_prop(res.filename)},line=1,title=OLX000 unreadable-model::{_escape_data(res.error)}")
    return "\n".join(lines) + ("\n" if lines else "")
