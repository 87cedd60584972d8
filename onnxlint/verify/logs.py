"""Reading what ORT says: the VERBOSE "Node placements" log (session_state.cc VerifyEachNodeIsAssignedToAnEp),
the profiling JSON, and the error line of a child that failed."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from onnxlint.support.errors import strip_cpp_frames
from onnxlint.verify.cuda_status import ANSI


class Placed(NamedTuple):
    """One line of the placement block: a node of the session's final graph (subgraphs included)."""

    op_type: str
    name: str
    ep: str


def parse_profile(events: list[dict[str, Any]]) -> dict[str, str]:
    """Node name -> provider, from ORT's profiling JSON (events with cat 'Node' carry args.provider)."""
    out: dict[str, str] = {}
    for ev in events:
        if ev.get("cat") != "Node":
            continue
        args = ev.get("args", {})
        prov = args.get("provider")
        name = ev.get("name", "")
        for suffix in ("_kernel_time", "_fence_before", "_fence_after"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        if prov and name:
            out[name] = prov
    return out


_BLOCK = "VerifyEachNodeIsAssignedToAnEp]"
_PLACED = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
_ALL = re.compile(r"All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)")
_NODE = re.compile(r"^  (\S+) \((.*)\)$")  # "  OpType (name)": two spaces after the source location's "] "


def _block_lines(text: str) -> list[str]:
    """The messages of the placement block's lines, in order (the text after 'VerifyEachNodeIsAssignedToAnEp] ')."""
    out = []
    for line in ANSI.sub("", text).splitlines():
        at = line.find(_BLOCK)
        if at >= 0:
            out.append(line[at + len(_BLOCK) + 1:].rstrip("\r"))
    return out


def all_placed_on(text: str) -> tuple[str, int] | None:
    """(provider, node count) when the log says 'All nodes placed on [X]' (then no node is named)."""
    for msg in _block_lines(text):
        m = _ALL.search(msg)
        if m:
            return m.group(1), int(m.group(2))
    return None


def parse_placements(text: str) -> list[Placed]:
    """Every node the 'Node placements' block lists, with its provider (names may repeat: ORT's Memcpy nodes)."""
    out: list[Placed] = []
    current = None
    for msg in _block_lines(text):
        m = _PLACED.search(msg)
        if m:
            current = m.group(1)
            continue
        m = _NODE.match(msg)
        if current and m:
            out.append(Placed(m.group(1), m.group(2), current))
    return out


def parse_verbose_log(text: str) -> dict[str, str]:
    """Node name -> provider (the last one listed under a name)."""
    return {p.name: p.ep for p in parse_placements(text)}


_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d")


def error_line(stderr: str) -> str:
    """The exception line of the child's traceback, not ORT's log lines printed after it."""
    lines = [ln for ln in ANSI.sub("", stderr).splitlines() if ln.strip() and not ln.startswith((" ", "\t"))
             and not _LOG_LINE.match(ln) and not ln.startswith("Traceback")]
    line = lines[-1] if lines else ""
    return strip_cpp_frames(line.replace("onnxruntime.capi.onnxruntime_pybind11_state.", ""))
