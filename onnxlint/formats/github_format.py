"""GitHub Actions workflow commands: `::error file=...,title=ID::message`.

One annotation per line of the text output (its grouping, `text_format.group`: a runner shows only the first few
annotations of a step, and 400 DequantizeLinear findings of one cause would bury everything else); infos only
with --show-info; `--expand` gives one per node. Each names the runtime tables its target was checked against."""

from __future__ import annotations

from pathlib import Path

from onnxlint.formats.repository_paths import real_folder, repository_root
from onnxlint.formats.text_format import also, group, shown_findings
from onnxlint.support.escape import text as _visible

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(s: str) -> str:
    """The runner's own escapes for %, CR and LF; any other control character, bidi control or undecodable
    file-name byte is shown escaped (escape.text), never passed to the log raw."""
    return _visible(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _in_repository(filename: str, root: Path) -> str:
    """The file's path from the repository root, where the runner places an annotation (a step with its own
    `working-directory` gave `file=m.onnx` for `models/m.onnx`); a file outside it, as given."""
    try:
        return real_folder(filename).relative_to(root).as_posix()
    except (ValueError, OSError):
        return filename


def render(report, expand: bool = False, show_info: bool = False, **_) -> str:
    lines = []
    checked = getattr(report, "checked", {})
    root = repository_root()
    for res in report.files:
        path = _in_repository(res.filename, root)
        for members in group(shown_findings(res.findings, show_info), expand):
            f = members[0]
            where = f" ({f.node})" if f.node else ""
            where += also(members)
            # the tables the finding's target was checked against, as JSON's checked_against: an annotation is
            # all a reader of the run sees (the text's summary line is not among them)
            against = checked.get(f.filename, {}).get(f.target)
            where += f"; checked against {against}" if against else ""
            lines.append(f"::{LEVEL[f.severity]} file={_escape_prop(path)},line=1,title={_escape_prop(f.code + ' ' + f.name)}::"
                         f"{_escape_data(f.message + where)}")
    for res in report.errors:
        at = _escape_prop(_in_repository(res.filename, root))
        lines.append(f"::error file={at},line=1,title=OLX000 unreadable-model::{_escape_data(res.error)}")
    return "\n".join(lines) + ("\n" if lines else "")
