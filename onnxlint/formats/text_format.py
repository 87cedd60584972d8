"""Human output: `path:node: ID [severity] message`, then an indented hint line."""

from __future__ import annotations

from collections import Counter

COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
BOLD, DIM, RESET = "\033[1m", "\033[2m", "\033[0m"


def render(report, colour: bool = False, show_hints: bool = True, statistics: bool = False, quiet: bool = False,
           show_summary: bool = True, **_) -> str:
    lines: list[str] = []
    notes: dict[str, None] = {}  # run-wide notes (table substitutions), printed once

    def c(code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if colour else text

    for res in report.files:
        if res.error:
            lines.append(f"{res.filename}: error: {res.error}")
            continue
        for f in res.findings:
            if f.suppressed or f.fixed:
                continue
            where = f"{f.filename}:{f.node}" if f.node else f.filename
            lines.append(f"{c(BOLD, where)}: {c(COLOURS[f.severity], f.code)} [{f.severity}] {f.message}")
            if show_hints and not quiet and f.hint:
                lines.append(c(DIM, f"    hint: {f.hint}"))
        if not quiet:
            for target, line in res.placement.items():
                if " 0 fall back" not in line or "no provider" in line or target == "ort-trt":
                    lines.append(c(DIM, f"{res.filename}: {target}: {line}"))
            for note in res.notes:
                if note.startswith(("CUDA kernel table", "CPU kernel table", "TensorRT ")):
                    notes.setdefault(note, None)
                else:
                    lines.append(c(DIM, f"{res.filename}: note: {note}"))
    if not quiet:
        lines.extend(c(DIM, f"note: {n}") for n in notes)
    active = report.active
    if statistics:
        counts = Counter((f.code, f.name) for f in active)
        for (code, name), n in counts.most_common():
            lines.append(f"{n:5d}  {code}  {name}")
    if show_summary and not quiet:
        sev = Counter(f.severity for f in active)
        suppressed = sum(1 for f in report.findings if f.suppressed)
        parts = [f"{sev.get(s, 0)} {s}{'s' if sev.get(s, 0) != 1 else ''}" for s in ("error", "warning", "info")]
        tail = f", {suppressed} suppressed" if suppressed else ""
        bad = f", {len(report.errors)} file(s) could not be linted" if report.errors else ""
        lines.append(f"Found {len(active)} finding(s) in {len(report.files)} file(s): {', '.join(parts)}{tail}{bad}.")
    return "\n".join(lines) + ("\n" if lines else "")
