"""JSON like ruff's: a flat list, one object per finding (files that failed to load appear as OLX000); each names
the runtime tables its target was checked against (`checked_against`, null for a rule of every target)."""

from __future__ import annotations

import json
from typing import Any, Callable

from onnxlint.support.escape import json_unicode


def render(report, statistics: bool = False, **_) -> str:
    if statistics:
        return _statistics(report)
    checked = getattr(report, "checked", {})
    # one finding per line: json's C encoder only runs without indent, and tens of thousands of findings
    # through the pure-Python indenting encoder cost more than linting them
    encode = _encoder()
    line = _finding_line(checked, encode)
    out = [line(f) for f in report.findings if not f.suppressed and not f.fixed]
    for res in report.errors:
        out.append("  " + encode({"code": "OLX000", "name": "unreadable-model", "severity": "error", "target": "any",
                                  "filename": res.filename, "node": None, "op_type": None, "message": res.error,
                                  "hint": "", "fix": None, "suppressed": None, "fixable": False,
                                  "checked_against": None}))
    if not out:
        return "[]\n"
    # one join makes the document, the brackets put on its first and last lines: each copy of a document of
    # 100 MB (1M nodes' findings) costs a fresh allocation's page faults
    out[0] = "[\n" + out[0]
    out[-1] += "\n]\n"
    # json_unicode: a file-name byte that is not UTF-8 (a lone surrogate in Python) becomes the text `\xNN`,
    # so the document is valid UTF-8 for any reader and any output stream (a raw lone surrogate cannot be
    # encoded at all, and `\udcNN` is rejected by strict parsers); json escapes control characters itself
    return json_unicode(",\n".join(out))


def _finding_line(checked: dict, encode: Callable[[Any], str]) -> Callable[[Any], str]:
    """A finding's line: "  " + encode(f.as_json(checked_against=...)), written from its parts. Most of a
    finding's object is shared with others (its rule's code, name, severity and target, its file, the tables
    checked, its fix): that text is encoded once per distinct value, and only the node, op type, message and
    hint are encoded per finding (with the encoder's own string quoting), no dict made a finding (266k findings
    at 1M nodes: a dict each was half the rendering, and the collector's passes over them). A finding of
    another shape (a verified provider) is encoded whole."""
    from json.encoder import encode_basestring as quote  # how JSONEncoder(ensure_ascii=False) writes a str

    heads: dict[tuple, tuple[str, Any, dict]] = {}

    def whole(f: Any) -> str:
        return "  " + encode(f.as_json(checked_against=checked.get(f.filename, {}).get(f.target)))

    def line(f: Any) -> str:
        if f.verified:
            return whole(f)
        try:
            key = (f.code, f.name, f.severity, f.target, f.filename)
            got = heads.get(key)
            if got is None:
                got = heads[key] = (
                    "  " + encode({"code": f.code, "name": f.name, "severity": f.severity, "target": f.target,
                                   "filename": f.filename})[:-1] + ', "node": ',
                    checked.get(f.filename, {}).get(f.target), {})
            head, against, tails = got
            fix, suppressed = f.fix, f.suppressed
            tail = tails.get((fix, suppressed))
            if tail is None:
                tail = tails[(fix, suppressed)] = ", " + encode({"fix": fix, "suppressed": suppressed,
                                                                 "fixable": fix is not None,
                                                                 "checked_against": against})[1:]
        except TypeError:  # an unhashable value: not shared, encoded whole
            return whole(f)
        node, op, message, hint = f.node, f.op_type, f.message, f.hint
        return (f"{head}{quote(node) if node.__class__ is str else 'null' if node is None else encode(node)}"
                f", \"op_type\": {quote(op) if op.__class__ is str else 'null' if op is None else encode(op)}"
                f", \"message\": {quote(message) if message.__class__ is str else encode(message)}"
                f", \"hint\": {quote(hint) if hint.__class__ is str else encode(hint)}{tail}")

    return line


def _encoder() -> Callable[[Any], str]:
    """json.dumps(obj, ensure_ascii=False) as one function made once: json.dumps makes a JSONEncoder, and that
    its C encoder, for every object; where json has no C encoder, or its C encoder does not take the arguments
    JSONEncoder hands it in this Python (a private function: its signature may change), one JSONEncoder."""
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)
    if make is not None:
        try:
            # the arguments JSONEncoder.iterencode hands it for json.dumps(obj, ensure_ascii=False)
            c_encode = make({}, json.JSONEncoder().default, encoder.encode_basestring, None, ": ", ", ", False,
                            False, True)
        except TypeError:  # another signature: the plain encoder below
            pass
        else:
            return lambda obj: "".join(c_encode(obj, 0))
    return json.JSONEncoder(ensure_ascii=False).encode


def _statistics(report: Any) -> str:
    """--statistics as ruff's JSON gives it: one object per rule, most frequent first, with how many of its findings
    --fix fixes (`fixable`) and how many only --fix --unsafe-fixes does (`unsafe_fixable`); infos included."""
    from onnxlint.formats.text_format import rule_counts

    rows = [{"code": code, "name": name, "severity": sev, "count": k, "fixable": safe, "unsafe_fixable": unsafe}
            for code, name, sev, k, safe, unsafe in rule_counts(report)]
    return json_unicode(json.dumps(rows, indent=2, ensure_ascii=False)) + "\n"
