"""Reading what ORT says: the VERBOSE "Node placements" log, the profiling JSON, and why the CUDA EP did not
come up."""

from __future__ import annotations

import re
from typing import Any

from onnxlint.errors import strip_cpp_frames


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


_PLACED = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
_ALL = re.compile(r"All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)")
_LINE = re.compile(r"^\s+(\w+) \((.*)\)\s*$")


def all_placed_on(text: str) -> tuple[str, int] | None:
    """(provider, node count) when the log says 'All nodes placed on [X]' for the main graph (no names follow)."""
    m = _ALL.search(text)
    return (m.group(1), int(m.group(2))) if m else None


def parse_verbose_log(text: str) -> dict[str, str]:
    """Node name -> provider, from ORT's VERBOSE 'Node placements' lines (session_state.cc)."""
    out: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        m = _PLACED.search(line)
        if m:
            current = m.group(1)
            continue
        m = _LINE.match(line.split("]", 1)[-1] if "] " in line and not line.startswith(" ") else line)
        if current and m:
            out[m.group(2)] = current
        elif current and not line.startswith(" "):
            current = None if not _PLACED.search(line) else current
    return out


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
MISSING_SO = re.compile(r"(lib[\w.+-]+\.so[.\d]*): cannot open shared object file")


def cuda_problem(stderr: str) -> str | None:
    """Why the CUDA EP did not come up, in one line, from ORT's own messages."""
    text = _ANSI.sub("", stderr)
    missing = sorted(set(MISSING_SO.findall(text)) - {"libonnxruntime_providers_cuda.so"})
    need = re.search(r"Require ([^.]*\.\* and [^.]*\.\*)", text)
    if "not in available provider names" in text:
        return "this onnxruntime build has no CUDA EP (install onnxruntime-gpu)"
    if missing or need or "Failed to create CUDAExecutionProvider" in text:
        parts = [f"missing {', '.join(missing)}"] if missing else []
        if need:
            parts.append(f"ORT requires {need.group(1)}")
        return "failed to create CUDAExecutionProvider" + (f" ({'; '.join(parts)})" if parts else "")
    return None


_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d")


def error_line(stderr: str) -> str:
    """The exception line of the child's traceback, not ORT's log lines printed after it."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith((" ", "\t")) and not _LOG_LINE.match(ln)
             and not ln.startswith("Traceback")]
    line = lines[-1] if lines else ""
    return strip_cpp_frames(line.replace("onnxruntime.capi.onnxruntime_pybind11_state.", ""))
