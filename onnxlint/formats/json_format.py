"""JSON like ruff's: a flat list, one object per finding (files that failed to load appear as OLX000); each names
the runtime tables its target was checked against (`checked_against`, null for a rule of every target)."""

from __future__ import annotations

import json
from typing import Any, Callable

from onnxlint.formats.escape import json_unicode


def render(report, **_) -> str:
    checked = getattr(report, "checked", {})
    out = [f.as_json(checked_against=checked.get(f.filename, {}).get(f.target))
           for f in report.findings if not f.suppressed and not f.fixed]
    for res in report.errors:
        out.append({"code": "OLX000", "name": "unreadable-model", "severity": "error", "target": "any",
                    "filename": res.filename, "node": None, "op_type": None, "message": res.error,
                    "hint": "", "fix": None, "suppressed": None, "fixable": False, "checked_against": None})
    # one finding per line: json's C encoder only runs without indent, and tens of thousands of findings
    # through the pure-Python indenting encoder cost more than linting them
    if not out:
        return "[]\n"
    encode = _encoder()
    # json_unicode: a file-name byte that is not UTF-8 (a lone surrogate in Python) becomes the text `\xNN`,
    # so the document is valid UTF-8 for any reader and any output stream (a raw lone surrogate cannot be
    # encoded at all, and `\udcNN` is rejected by strict parsers); json escapes control characters itself
    return json_unicode("[\n" + ",\n".join(["  " + encode(f) for f in out]) + "\n]\n")


def _encoder() -> Callable[[Any], str]:
    """json.dumps(obj, ensure_ascii=False) as one function made once: json.dumps makes a JSONEncoder, and that
    its C encoder, for every object (a third of the rendering at 1M nodes); where json has no C encoder, one
    JSONEncoder."""
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False).encode
    # the arguments JSONEncoder.iterencode hands it for json.dumps(obj, ensure_ascii=False)
    c_encode = make({}, json.JSONEncoder().default, encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda obj: "".join(c_encode(obj, 0))
