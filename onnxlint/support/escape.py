"""Untrusted text (file, node and tensor names, messages that quote them) made safe to print.

A model can name a node `"\\n::error file=README.md::PWNED"` or `"\\x1b]8;;http://evil\\x07"`, and a file name
can hold any byte but `/` and NUL. Printed raw, such text starts GitHub workflow commands in a CI log, drives
the terminal (ANSI/OSC escapes), hides text (bidi overrides), or crashes a strict UTF-8 stream (a file name
byte that is not UTF-8, held by Python as a lone surrogate).

One policy for every command and every format (text, GitHub, JSON, SARIF, placement, verify, doctor, explain)
and the API's `str(FileReport)`; it lives in support/ so that the report model below the formats can use it:

- `text(s)`: for one line of human output (text, GitHub annotations, SARIF message texts). Every character that
  is not visible as itself becomes a visible escape (`\\n`, `\\x1b`, `\\u200b`, `\\U000e0041`, and `\\xff` for a
  file-name byte that is not UTF-8): control characters (C0, DEL, C1), line and paragraph separators, format
  characters (Unicode category Cf: bidi embeddings, overrides, isolates and marks, zero-width space and
  joiners, the BOM, soft hyphen, tag characters) and the rest of Unicode's Default_Ignorable_Code_Point set
  (variation selectors, Hangul fillers, the reserved default-ignorables), and lone surrogates. A node named
  `drop<U+200B>out` prints as `drop\\u200bout`, never as `dropout`. A leading `::` (after blanks) and any `##[`
  cannot start a workflow command. Plain text comes back unchanged (and fast).
- `lines(s)`: text() for each line of a multi-line text (a rule's explanation): its own line breaks kept.
- `line(s)`: the guard for a whole assembled line: no line may begin with `::` (after blanks and this
  program's own colour codes), whatever its pieces were. `joined(lines)` guards every line of an output.
- `unicode(s)`, `unicode_tree(obj)`, `json_unicode(doc)`, `dumps(obj)`: for JSON and SARIF documents: lone
  surrogates become the text `\\xNN`, so the document is valid UTF-8 for a strict reader; JSON escapes control
  characters itself, and names keep every other character (a JSON reader gets them exactly).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

# Characters that are not visible as themselves. C0 controls, DEL, C1 controls; line and paragraph separators;
# every format character (category Cf) of Unicode 15.1 (a test holds this to the running Python's unicodedata:
# each of its Cf characters is here); the default-ignorable code points that are not Cf (DerivedCoreProperties'
# Default_Ignorable_Code_Point: combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian
# variation selectors, variation selectors, the reserved U+2065, U+FFF0-FFF8 and U+E0000-E0FFF); and lone
# surrogates (Python's surrogateescape for undecodable file-name bytes).
_CONTROL = "\x00-\x1f\x7f-\x9f\u2028\u2029"
_FORMAT = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
           "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
           "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
_IGNORABLE = ("\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2065\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
              "\U000e0000-\U000e0fff")
_BAD = re.compile(f"[{_CONTROL}{_FORMAT}{_IGNORABLE}\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_V1_COMMAND = "##["  # the runner's older `##[command]` form is recognised anywhere in a line
_OWN_PREFIX = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)*")  # blanks and SGR colour codes that this program adds


def _one(m: re.Match) -> str:
    ch = m.group()
    if ch in _SHORT:
        return _SHORT[ch]
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: the byte that was not UTF-8
        return f"\\x{o - 0xDC00:02x}"
    if o <= 0xFF:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def text(s: Any) -> str:
    """One line's worth of untrusted text, safe to print (see the module docstring)."""
    if s is None:
        return ""
    if isinstance(s, bytes):  # a protobuf string field that is not UTF-8 (a node's domain): its text, not b'...'
        s = field_text(s)
    elif not isinstance(s, str):
        s = str(s)
    if _BAD.search(s):
        s = _BAD.sub(_one, s)
    if _V1_COMMAND in s:
        s = s.replace(_V1_COMMAND, "#\\x23[")
    if s.lstrip().startswith("::"):
        s = _defuse_start(s, len(s) - len(s.lstrip()))
    return s


def lines(s: Any) -> str:
    """Multi-line untrusted text (a rule file's explanation): each line made safe by text(), the breaks kept."""
    return "\n".join(text(part) for part in ("" if s is None else str(s)).split("\n"))


def line(s: str) -> str:
    """A whole output line whose pieces were escaped with text(): it must not begin with `::`.

    Blanks and this program's own colour codes before the colons are looked through (a log viewer might strip
    them); any other leading text makes the line harmless."""
    if "::" not in s:
        return s
    m = _OWN_PREFIX.match(s)
    start = m.end() if m else 0
    rest = s[start:]
    if rest.lstrip().startswith("::"):
        return _defuse_start(s, start + len(rest) - len(rest.lstrip()))
    return s


def joined(lines: list[str]) -> str:
    """An output of lines (each assembled from escaped pieces), every line guarded by line(), newline-ended."""
    return "".join(line(x) + "\n" for x in lines)


def _defuse_start(s: str, at: int) -> str:
    return s[:at] + "\\x3a" + s[at + 1:]


def unicode(s: Any) -> Any:
    """Valid Unicode for JSON/SARIF: a lone surrogate (a file-name byte that is not UTF-8) becomes `\\xNN`."""
    if s is None or not isinstance(s, str):
        return s
    if _SURROGATE.search(s):
        return _SURROGATE.sub(_one, s)
    return s


def json_unicode(doc: str) -> str:
    """A serialized JSON document (json.dumps, ensure_ascii=False) made valid Unicode: each lone surrogate,
    which can only sit inside a string literal, becomes the escaped text `\\\\xNN` (read back as `\\xNN`, as
    unicode() gives). One regex scan; documents without surrogates come back as they are (an ASCII one without
    the scan: str knows it is ASCII, 0.2 s of regex at 1M nodes' findings)."""
    if doc.isascii() or not _SURROGATE.search(doc):
        return doc
    return _SURROGATE.sub(lambda m: "\\" + _one(m), doc)


def field_text(value: str | bytes) -> str:
    """A protobuf string field as text: protobuf hands one whose bytes are not UTF-8 over as bytes, and those bad
    bytes become the text `\\xNN` (the same bytes give the same text everywhere, so references still match)."""
    return value if isinstance(value, str) else value.decode("utf-8", "backslashreplace")


def unicode_tree(obj: Any) -> Any:
    """unicode() applied to every string (keys included) in a JSON-like tree of dicts and lists; bytes (a
    model's string field that is not UTF-8, which protobuf hands over as bytes) as their text, each bad byte the
    text `\\xNN` (field_text), as loading.repair_strings makes it."""
    if isinstance(obj, str):
        return unicode(obj)
    if isinstance(obj, bytes):
        return field_text(obj)
    if isinstance(obj, dict):
        return {unicode_tree(k): unicode_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [unicode_tree(v) for v in obj]
    return obj


def dumps(obj: Any, indent: int | None = None) -> str:
    """A JSON document of obj that is valid UTF-8 whatever its strings hold: every string (keys included)
    through unicode(), then json.dumps as the formats always wrote it (ASCII, non-ASCII as \\u escapes)."""
    import json

    return json.dumps(unicode_tree(obj), indent=indent)


def dumps_chunks(obj: Any, indent: int, depth: int) -> Iterator[str]:
    """dumps(obj, indent) in pieces, for a document too large to hold twice (a million nodes' placement): the
    containers of its first `depth` levels are written as their items come, and a list there may be any iterable
    (a generator is never held whole); each item below is one piece, rendered at once. The same text as dumps():
    json's separators for an indent (',' and ': '), its ASCII escaping of strings, its number forms."""
    return _Pieces(indent).chunks(obj, depth, 0)


class _Pieces:
    """The writer of dumps_chunks: json.dumps's text for an indent, item by item."""

    def __init__(self, indent: int) -> None:
        from json.encoder import encode_basestring_ascii

        self.indent = indent
        self.quote = encode_basestring_ascii
        self.keys: dict[str, str] = {}  # a str key -> its text and ": " (a node row's eight keys, a million rows)

    def chunks(self, obj: Any, depth: int, level: int) -> Iterator[str]:
        if depth <= 0 or not (isinstance(obj, (dict, list, tuple)) or _is_lazy_list(obj)):
            yield self.encode(obj, level)
            return
        is_dict = isinstance(obj, dict)
        items = iter(obj.items() if is_dict else obj)
        first = next(items, _END)
        if first is _END:
            yield "{}" if is_dict else "[]"
            return
        inner = "\n" + " " * (self.indent * (level + 1))
        yield "{" if is_dict else "["
        sep = inner
        for item in itertools.chain((first,), items):
            if is_dict:
                yield f"{sep}{self.key(item[0])}: "
                item = item[1]
            else:
                yield sep
            yield from self.chunks(item, depth - 1, level + 1)
            sep = "," + inner
        yield "\n" + " " * (self.indent * level) + ("}" if is_dict else "]")

    def encode(self, obj: Any, level: int) -> str:
        """One value as json.dumps(unicode_tree(obj), indent) nests it at this level."""
        if obj.__class__ is dict and obj:
            return self.row(obj, level)
        if isinstance(obj, str):
            return self.quote(unicode(obj))
        if isinstance(obj, bytes):  # a string field that is not UTF-8 (a node's domain): as unicode_tree has it
            return self.quote(field_text(obj))
        if obj is None:
            return "null"
        if obj is True:
            return "true"
        if obj is False:
            return "false"
        if isinstance(obj, int):
            return int.__repr__(obj)
        if isinstance(obj, float):
            return _float(obj)
        if isinstance(obj, (dict, list, tuple)):
            if not obj:
                return "{}" if isinstance(obj, dict) else "[]"
            if isinstance(obj, dict):
                return self.row(obj, level)  # a dict's subclass (a plain dict went there above)
            inner = "\n" + " " * (self.indent * (level + 1))
            body = ("," + inner).join(self.encode(v, level + 1) for v in obj)
            return "[" + inner + body + "\n" + " " * (self.indent * level) + "]"
        raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")

    def row(self, obj: dict, level: int) -> str:
        """encode() of a non-empty dict (a subclass's too), the common values (text, null, booleans, ints) written
        here and each str key's text made once: json.dumps' text at a fraction of encode's calls (a placement row
        per node: a million at 1M nodes)."""
        quote, keys = self.quote, self.keys
        inner = "\n" + " " * (self.indent * (level + 1))
        parts = []
        for k, v in obj.items():
            head = keys.get(k) if k.__class__ is str else None
            if head is None:
                head = self.key(k) + ": "
                if k.__class__ is str:
                    keys[k] = head
            cls = v.__class__
            if cls is str:
                parts.append(head + quote(v if v.isascii() else unicode(v)))  # ASCII: no surrogate to replace
            elif v is None:
                parts.append(head + "null")
            elif v is True:
                parts.append(head + "true")
            elif v is False:
                parts.append(head + "false")
            elif cls is int:
                parts.append(head + int.__repr__(v))
            else:
                parts.append(head + self.encode(v, level + 1))
        return "{" + inner + ("," + inner).join(parts) + "\n" + " " * (self.indent * level) + "}"

    def key(self, key: Any) -> str:
        """A dict key as json writes it: a string as itself; a number, true, false or null as its JSON text, quoted."""
        if isinstance(key, str):
            return self.quote(unicode(key))
        if key is None or key is True or key is False or isinstance(key, (int, float)):
            return self.quote(self.encode(key, 0))
        raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


_END = object()


def _is_lazy_list(obj: Any) -> bool:
    """An iterable written as a JSON list (a generator, a view): not a string, bytes or mapping."""
    return isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, bytearray, dict))


def _float(x: float) -> str:
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    return float.__repr__(x)
