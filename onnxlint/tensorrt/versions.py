"""The TensorRT version table: what each major line of TensorRT's ONNX parser does that its support tables do not
say, and how table labels compare and are named.

Every version-dependent gate of the package reads this table and nowhere else (tests/tensorrt/test_tensorrt_layout.py
fails on a version read or a version literal elsewhere): a version of a known line is a support table alone
(tools/gen_trt_support.py); a new major line is a row of `LINES` too, each behaviour as measured on it.
Labels are packaging versions: the TensorRT-RTX parser's table is `10.1+rtx1.4`, a 10.x-line parser newer than
10.1's docs. Nothing here imports onnx: the summary of a run whose models all come from the cache names its
TensorRT table through this module.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, NamedTuple

from packaging.version import InvalidVersion, Version

# a TensorRT-RTX table's label: '10.1+rtx1.4'; a requested version as packaging writes it may have a dot after
# "rtx" ('10.1+rtx-1.6' and '10.1+rtx_1.6' are the version '10.1+rtx.1.6')
RTX_LABEL = re.compile(r"\+rtx\.?(\d+(?:\.\d+)*)")


class Line(NamedTuple):
    """One major line of the parser: what it does that its support table does not say. (A NamedTuple: a dataclass
    would cost every cached run its generated methods.)"""

    name: str  # how messages call the line: '8.x'
    # If branches whose outputs differ in rank: the 8.x conditional layer rejects them (`IIfConditionalOutputLayer
    # inputs must have the same shape`: silero_vad on 8.6); the 10.x-line parser accepted the same model, though
    # onnx-tensorrt documents equal ranks for conditional outputs
    if_branch_ranks_must_match: bool
    # a requested version of this line newer than every numbered table resolves to the TensorRT-RTX table (RTX's
    # parser is of this line), not to the nearest numbered one
    rtx_stands_in: bool


# major -> row, oldest first. A major between two rows takes the older row; one older than the table, the oldest.
LINES: dict[int, Line] = {
    8: Line("8.x", if_branch_ranks_must_match=True, rtx_stands_in=False),
    10: Line("10.x", if_branch_ranks_must_match=False, rtx_stands_in=True),
}


@lru_cache(maxsize=256)
def version_key(label: str) -> Version:
    """A table label as a packaging version ('10.1+rtx1.4' sorts after '10.1')."""
    return Version(label)


def requested(version: str) -> Version | None:
    """A requested version as a packaging version; None when it is not one (the default table answers)."""
    try:
        return Version(version)
    except InvalidVersion:
        return None


def equal_label(labels: Iterable[str], want: Version) -> str | None:
    """The label that is the requested version ('8.6' for 8.6.0), if one is."""
    return next((v for v in labels if version_key(v) == want), None)


def sort_key(label: str) -> tuple[object, ...]:
    """Oldest first: by major line, a line's numbered tables before its TensorRT-RTX ones, those by RTX release
    (1.10 after 1.7: compared as versions, not as text)."""
    v = version_key(label)
    return (v.release[0], 1 if v.local else 0, v.release, rtx_release(label) or Version("0"))


def rtx_release(label: str) -> Version | None:
    """The TensorRT-RTX release a label names ('10.1+rtx1.7' -> 1.7), None for a numbered one."""
    m = RTX_LABEL.search(label)
    return Version(m.group(1)) if m else None


def nearest_rtx(rtx: list[str], want: str) -> str:
    """The TensorRT-RTX table answering for an RTX release without one: the newest not newer than it, else the
    oldest (rtx: oldest first)."""
    asked = rtx_release(want)
    older = [v for v in rtx if asked is not None and (rtx_release(v) or Version("0")) <= asked]
    return older[-1] if older else rtx[0]


def line(version: Version) -> Line:
    """The row of a version's major line."""
    older = [major for major in LINES if major <= version.release[0]]
    return LINES[max(older)] if older else LINES[min(LINES)]


def line_of(label: str) -> Line:
    return line(version_key(label))


def is_rtx(label: str) -> bool:
    """A TensorRT-RTX table: RTX ships no plugin ops, which a verdict must not promise."""
    return RTX_LABEL.search(label) is not None


def asks_for_rtx(want: Version) -> bool:
    """A requested version that names the RTX line itself ('10.1+rtx1.4')."""
    return bool(want.local and "rtx" in str(want.local))


def stands_in_for(want: Version, numbered: Iterable[str]) -> bool:
    """Whether the TensorRT-RTX table answers for a requested version: its line says so and it is newer than
    every numbered table."""
    return line(want).rtx_stands_in and want > max(version_key(v) for v in numbered)


def nearest(numbered: list[str], want: Version) -> str:
    """The numbered table closest to a requested version by (major, minor)."""
    wr = (want.release + (0,))[:2]

    def distance(label: str) -> int:
        have = version_key(label).release + (0,)
        return abs((have[0] * 100 + have[1]) - (wr[0] * 100 + wr[1]))

    return min(numbered, key=distance)


def product(label: str) -> str:
    """The product a table is for: 'TensorRT 8.6', 'TensorRT-RTX 1.4'."""
    m = RTX_LABEL.search(label)
    return f"TensorRT-RTX {m.group(1)}" if m else f"TensorRT {label}"


@lru_cache(maxsize=64)
def describe(label: str) -> str:
    """'TensorRT 8.6' or "TensorRT-RTX 1.4's parser (10.x line)"."""
    name = product(label)
    return f"{name}'s parser ({line_of(label).name} line)" if is_rtx(label) else name


def checked(label: str) -> str:
    """The table a run checks, for the summary line: a TensorRT user is told once what answers for them."""
    if not is_rtx(label):
        return product(label)
    major = version_key(label).release[0]
    return (f"{product(label)} (its {line_of(label).name}-line parser stands in for TensorRT {major}: measured on RTX, "
            f"not on TensorRT {major} itself, which has plugins RTX lacks)")
