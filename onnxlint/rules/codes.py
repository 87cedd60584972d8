"""Rule codes as users write them: comma-separated lists, prefixes (`OLX1` selects OLX100-OLX199), and the
in-model suppression `onnxlint: ignore[CODE, ...]` in a node's doc_string. Shared by the settings (selection) and
the predicates (`reported_by` must not defer to a finding that will not be shown)."""

from __future__ import annotations

import re
from typing import Iterable


def split_codes(values: Iterable[str] | str | None) -> list[str]:
    """'OLX1,OLX2' and ['OLX1', 'OLX2,OLX3'] alike -> ['OLX1', 'OLX2', 'OLX3']."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def matches(code: str, prefixes: Iterable[str]) -> bool:
    """Whether code starts with one of prefixes; an empty one names nothing (config files refuse it). A set of
    prefixes (prefix_set) is looked up by the code's own prefixes, in time linear in the code, not in their count."""
    if isinstance(prefixes, frozenset):
        return any(code[:k] in prefixes for k in range(1, len(code) + 1))
    return any(p and code.startswith(p) for p in prefixes)


def prefix_set(prefixes: Iterable[str]) -> frozenset[str]:
    """Prefixes for matches() from text a repository chose (a model's `onnxlint:ignore` metadata: 200,000 codes
    compared with every finding took minutes)."""
    return frozenset(p for p in prefixes if p)


# the list stops at a bracket either way: `[^\]]*` let each of n unclosed `onnxlint: ignore[` in a doc_string scan
# to its end (quadratic: 20,000 of them, 340 KB, took 19 s a finding)
_SUPPRESS = re.compile(r"onnxlint:\s*ignore\[([^\][]*)\]")


def doc_string_suppresses(doc_string: str | bytes | None, code: str) -> bool:
    """Whether a node's doc_string says `onnxlint: ignore[CODE, ...]` for code."""
    if isinstance(doc_string, bytes):  # protobuf hands a string field that is not UTF-8 over as bytes
        doc_string = doc_string.decode("utf-8", "surrogateescape")
    if not doc_string or "onnxlint:" not in doc_string:
        return False
    return any(matches(code, [c.strip() for c in m.group(1).split(",") if c.strip()]) for m in _SUPPRESS.finditer(doc_string))
