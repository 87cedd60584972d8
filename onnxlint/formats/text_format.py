"""Human output: per file its placement summary first, then `path:location: SEVERITY: CODE message`.

What a deployment engineer reads: errors and warnings; infos are counted in the summary and shown with
--show-info. Findings of one rule with one cause in one model print once, with the count and the first few
locations (--expand prints every one); a rule's hint is printed once per file. Every piece of untrusted text
(file, node and value names, messages quoting them) goes through `escape.text`, and no line can begin a
GitHub workflow command. SARIF and GitHub annotations group the same way (`group`); JSON keeps every finding.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from onnxlint.rules.rule import UNSAFE_FIXES
from onnxlint.support.escape import line as _guard
from onnxlint.support.escape import text as esc

COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
BOLD, DIM, RESET = "\033[1m", "\033[2m", "\033[0m"
SHOWN_LOCATIONS = 3  # of a group of findings, the locations printed before "and N more"
MAX_LOCATION = 80  # longer subgraph paths are shortened in text (full in JSON and SARIF)
NO_FIX = "no automatic fix"  # a rule with neither fixer nor hint: saying so on every finding is noise
RUN_WIDE_NOTES = ("CUDA kernel table", "CPU kernel table", "CUDA and CPU kernel table", "TensorRT ", "ORT ",
                  "--verify did not run: ")
# a run of path characters; one that holds a `/` is a value path. Matched as runs (linear in the message): a regex
# asking for `/` after a run backtracked over each start in it, quadratic in a value name of the model's (40,000
# letters: 2.7 s a finding)
_PATH_RUN = re.compile(r"[\w./:#\[\]-]+")


def _dot_path(m: re.Match) -> str:
    return "·" if "/" in m.group() else m.group()


def display_location(node: str | None) -> str:
    """A finding's node path (`/encoder/Reshape_9`, `If_3:then_branch/Resize_7`: locations.node_path) as a line
    shows it: long paths keep their head and tail."""
    if not node:
        return ""
    loc = node
    if len(loc) > MAX_LOCATION:
        loc = f"{loc[:MAX_LOCATION // 2 - 2]}…{loc[-(MAX_LOCATION // 2 - 1):]}"
    return loc


def without_location(f: Any) -> str:
    """The message without the node path the line already starts with ("Dropout graph/d runs ..." ->
    "Dropout runs ..."): the finding's short_message, rendered from the rule's template without {node} and
    {name}. Nothing is cut out of the message text (a node named `a`, or named like its op type, leaves the
    message whole)."""
    short = getattr(f, "short_message", None)
    return str(f.message) if short is None or not f.node else str(short)


def _worth_saying(summary: str) -> bool:
    """A placement summary says something when a node really leaves the preferred provider (not only the shape
    computations ORT puts on CPU on purpose), a node has no provider, or ORT refuses the model."""
    if "no provider" in summary or summary.startswith("ORT refuses"):
        return True
    return not summary.startswith("0 fall back") and " 0 fall back" not in summary


def cause(f: Any) -> tuple[str, str | None, str]:
    """Findings of one rule whose messages differ only in node and value names share one cause: the message
    without the node's location (without_location), value paths in it as `·`."""
    return f.code, f.op_type, _PATH_RUN.sub(_dot_path, without_location(f))


def group(findings: list[Any], expand: bool = False) -> list[list[Any]]:
    """One model's findings as the text prints them: one group per rule and cause, in first-seen order (with
    expand, one per finding). SARIF and GitHub annotations group with this too, so every surface shows as many
    results as the text shows lines."""
    groups: dict[tuple[str, str | None, str], list[Any]] = {}
    repeated = Counter(f.code for f in findings)
    for f in findings:  # a code seen once in the model is its own group: no need to work out its cause
        alone = expand or repeated[f.code] == 1
        groups.setdefault((f.code, None, f.node or "") if alone else cause(f), []).append(f)
    return list(groups.values())


def also(members: list[Any], esc: Any = str, more_tail: str = "") -> str:
    """A group's count and its next locations, as every format words them: ' (×5; also a, b and 2 more)'; ''
    for a single finding. esc escapes each location for the format; more_tail follows 'and N more'."""
    if len(members) < 2:
        return ""
    locs = ", ".join(esc(display_location(m.node)) for m in members[1:SHOWN_LOCATIONS])
    more = len(members) - SHOWN_LOCATIONS
    return f" (×{len(members)}; also {locs}" + (f" and {more} more{more_tail}" if more > 0 else "") + ")"


def shown_findings(findings: list[Any], show_info: bool = False) -> list[Any]:
    """What a report shows of a model's findings: not suppressed, not fixed, infos only when asked."""
    return [f for f in findings if not f.suppressed and not f.fixed and (show_info or f.severity != "info")]


def render(report: Any, colour: bool = False, show_hints: bool = True, statistics: bool = False, quiet: bool = False,
           show_summary: bool = True, show_info: bool = False, expand: bool = False, **_: Any) -> str:
    lines: list[str] = []
    run_notes: dict[str, None] = {}  # run-wide notes (table substitutions), printed once

    def c(code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if colour else text

    if statistics:
        return _statistics(report, show_info)
    problem_lines = 0  # finding lines printed: one per group (rule, cause, model)
    for res in report.files:
        if res.error:
            continue  # reported once, on stderr, by the command
        name = esc(res.filename)
        shown = shown_findings(res.findings, show_info)
        if not quiet and (shown or any(_worth_saying(s) for s in res.placement.values())):
            for target, summary in res.placement.items():  # a clean model prints nothing
                lines.append(c(DIM, f"{name}: {target}: {esc(summary)}"))
        hinted: set[tuple[str, str]] = set()  # a hint once per rule and wording (a node's own hint can differ)
        for members in group(shown, expand):
            f = members[0]
            where = f"{name}:{esc(display_location(f.node))}" if f.node else name
            text = esc(without_location(f))
            text += also(members, esc, "; --expand lists them")
            # the severity as a word, where gcc, clang and mypy put it: readable without colour (CI logs, pipes)
            # a rule file's code is held to the schema's pattern; escaped as every repository text is all the same
            lines.append(f"{c(BOLD, where)}: {c(COLOURS[f.severity], f.severity + ':')} {esc(f.code)} {text}")
            problem_lines += 1
            if show_hints and not quiet and f.hint and not f.hint.startswith(NO_FIX) and (f.code, f.hint) not in hinted:
                hinted.add((f.code, f.hint))
                lines.append(c(DIM, f"    hint: {esc(f.hint)}"))
        lines.extend(diff_lines(getattr(res, "diff", ""), c))
        if not quiet:
            for note in res.notes:
                if note.startswith(RUN_WIDE_NOTES):
                    run_notes.setdefault(note, None)
                else:
                    lines.append(c(DIM, f"{name}: note: {esc(note)}"))
    if not quiet:
        lines.extend(c(DIM, f"note: {esc(n)}") for n in run_notes)
    if show_summary and not quiet:
        lines.append(summary_line(report, show_info, None if expand else problem_lines))
    return "\n".join(map(_guard, lines)) + ("\n" if lines else "")


DIFF_COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}


def diff_lines(diff: str, c: Any = None) -> list[str]:
    """A --diff's lines as the text shows them: escaped (node and value names come from the model), coloured
    like `git diff` when colour is on."""
    out = []
    for ln in diff.splitlines():
        shown = esc(ln)
        colour = DIFF_COLOURS.get(ln[:1]) if not ln.startswith(("+++", "---")) else BOLD
        out.append(c(colour, shown) if c is not None and colour else shown)
    return out


def summary_line(report: Any, show_info: bool = False, problem_lines: int | None = None) -> str:
    """`Found N findings in F files: ...`; when grouping printed fewer lines than findings, how many: the
    number a reader compares with what is on the screen (every finding is one node; a line is one cause)."""
    active = report.active
    sev = Counter(f.severity for f in active)

    def n(s: str) -> str:
        k = sev.get(s, 0)
        return f"{k} {s}{'s' if k != 1 else ''}"

    shown = sev.get("error", 0) + sev.get("warning", 0) + (sev.get("info", 0) if show_info else 0)
    parts = [n("error"), n("warning")]
    if show_info:
        parts.append(n("info"))
    elif sev.get("info"):
        parts.append(f"{n('info')} not shown (--show-info)")
    suppressed = sum(1 for f in report.findings if f.suppressed)
    fixed = sum(1 for f in report.findings if f.fixed)
    tail = (f", {suppressed} suppressed" if suppressed else "") + (f", {fixed} fixed" if fixed else "")
    bad = f", {len(report.errors)} file(s) could not be linted" if report.errors else ""
    files = len(report.files)
    grouped = (f"; {problem_lines} line{'s' if problem_lines != 1 else ''} after grouping, --expand lists every node"
               if problem_lines is not None and 0 < problem_lines < shown else "")
    checked = f" Checked against {report.releases}." if getattr(report, "releases", "") else ""
    return (f"Found {shown} finding{'s' if shown != 1 else ''} in {files} file{'s' if files != 1 else ''}: "
            f"{', '.join(parts)}{tail}{bad}{grouped}.{checked}")


def rule_counts(report: Any) -> list[tuple[str, str, str, int, int, int]]:
    """--statistics' table, the text's and JSON's: (code, name, severity, findings, how many --fix fixes, how many
    only --fix --unsafe-fixes does) per rule, most frequent first, infos included."""
    active = report.active
    counts = Counter((f.code, f.name, f.severity) for f in active)
    safe = Counter(f.code for f in active if f.fixable and UNSAFE_FIXES not in f.hint)
    unsafe = Counter(f.code for f in active if f.fixable and UNSAFE_FIXES in f.hint)
    return [(code, name, sev, k, safe[code], unsafe[code]) for (code, name, sev), k in counts.most_common()]


def _statistics(report: Any, show_info: bool = False) -> str:
    """Only the table: findings per rule (infos included), most frequent first; `[*]` (as ruff marks it) where
    --fix can fix some of them, `[!]` where only --fix --unsafe-fixes can (an unsafe fix changes the interface
    or numerics), and last lines counting each as --fix would: infos only with --show-info (--fix fixes what a
    run shows)."""
    fixable = [f for f in report.active if f.fixable]

    def mark(safe: int, unsafe: int) -> str:
        return "[*]" if safe else "[!]" if unsafe else "   "

    rows = [f"{k:5d}  {esc(code)}  {mark(safe, unsafe)} {esc(name)} [{sev}]"
            for code, name, sev, k, safe, unsafe in rule_counts(report)]
    hidden = [f for f in fixable if f.severity == "info" and not show_info]
    for marker, unsafe_fix, how in (("[*]", False, "--fix"), ("[!]", True, f"--fix {UNSAFE_FIXES} (unsafe fixes)")):
        n = sum(1 for f in fixable if (UNSAFE_FIXES in f.hint) == unsafe_fix and f not in hidden)
        infos = sum(1 for f in hidden if (UNSAFE_FIXES in f.hint) == unsafe_fix)
        more = f" ({infos} info{'s' if infos != 1 else ''} more with --show-info)" if infos else ""
        if n or infos:
            rows.append(f"{marker} {n} finding{'s' if n != 1 else ''} fixable with {how}{more}")
    return "\n".join(rows) + ("\n" if rows else "")
