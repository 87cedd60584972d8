"""`--baseline FILE`: adopt onnxlint on models that already have findings, and fail only on new ones.

`--update-baseline` records every current finding's fingerprint (rule, model path relative to the baseline
file's folder, node location: independent of the working directory and of weight values); later runs mark
recorded findings suppressed ("baseline"), so only new findings count for the exit code. A baseline that does not
exist is an error of the run (commands.lint), never recorded in passing.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from onnxlint.linting.report import Finding, Report
from onnxlint.model import write_guard
from onnxlint.model.locations import node_location
from onnxlint.support import reading
from onnxlint.support.errors import UsageError, first_line

VERSION = 1


def fingerprint(f: Finding, base: Path, rels: dict[str, str] | None = None) -> str:
    """rels: each model's path as fingerprints name it, by file name, worked out once a model: resolved again for
    each finding, the paths cost a baseline run over a model of many findings more than its fingerprints."""
    rels = {} if rels is None else rels
    rel = rels.get(f.filename)
    if rel is None:
        rel = rels[f.filename] = _relative(f.filename, base)
    key = f"{f.code}\0{rel}\0{node_location(f.node) or ''}"
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _relative(filename: str, base: Path) -> str:
    # the model's folder is resolved, not a model that is a link: git-annex, DVC's link cache and the Hugging Face
    # cache link it to a blob named by its content, and each new version of the model made its findings new ones
    given = Path(filename)
    real = given.parent.resolve() / given.name
    try:
        return Path(os.path.relpath(real, base.resolve())).as_posix()
    except ValueError:  # another drive
        return real.as_posix()


MAX_BYTES = 16 << 20  # ~460,000 fingerprints
MAX_CONTAINERS = 64  # a baseline is one object holding one list: anything nested deeper is not one


def load(path: Path) -> set[str]:
    """The recorded fingerprints. The file goes through the read guard (a regular file within MAX_BYTES: never
    /dev/zero, a FIFO or /dev/stdin) and is parsed only when it cannot nest (a document of deeply nested
    brackets is refused before the parser recurses)."""
    try:
        data = reading.read_regular(path, reading.within(MAX_BYTES, "a baseline"))
    except reading.Refused as exc:
        raise UsageError(f"{path}: cannot read the baseline: {exc}") from None
    if data.count(b"[") + data.count(b"{") > MAX_CONTAINERS:  # brackets inside strings count too: still no baseline
        raise UsageError(f"{path}: not an onnxlint baseline (version {VERSION}): nested lists or objects")
    try:
        doc = json.loads(data.decode("utf-8-sig"))  # an editor on Windows may write a BOM first
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: cannot read the baseline: {first_line(exc)}") from None
    version = doc.get("version") if isinstance(doc, dict) else None
    # true == 1 in Python: a version that is not a number is a wrong one
    if isinstance(version, bool) or version != VERSION or not isinstance(doc.get("fingerprints"), list):
        raise UsageError(f"{path}: not an onnxlint baseline (version {VERSION})")
    return {str(x) for x in doc["fingerprints"]}


# findings that say the model was never looked at (OLX009: a Git LFS pointer, its objects not fetched): recorded,
# a baseline made in a checkout without LFS would pass every model unlinted from then on
NEVER_RECORDED = frozenset({"OLX009"})


def write(path: Path, report: Report) -> int:
    base = path.parent
    # a finding --fix cleared is not in the written model: recorded, it would hide the same finding coming back
    rels: dict[str, str] = {}
    prints = sorted({fingerprint(f, base, rels) for f in report.findings
                     if not f.suppressed and not f.fixed and f.code not in NEVER_RECORDED})
    text = json.dumps({"version": VERSION, "tool": "onnxlint", "fingerprints": prints}, indent=1) + "\n"
    # never through a link: a committed `.baseline.json.tmp` link made the fixed temporary name write the
    # baseline over the file it leads to
    write_guard.replace_text(path, text)
    return len(prints)


def records(recorded: set[str], path: Path) -> Callable[[Finding], bool]:
    """Whether the baseline at path, holding the fingerprints recorded, records a finding: what apply suppresses and
    --fix leaves alone before the report is done."""
    rels: dict[str, str] = {}
    return lambda f: f.code not in NEVER_RECORDED and fingerprint(f, path.parent, rels) in recorded


def apply(report: Report, path: Path, recorded: set[str]) -> int:
    """Mark recorded findings suppressed (never one --fix cleared: it is counted fixed); returns how many were."""
    n = 0
    held = records(recorded, path)
    for f in report.findings:
        if not f.suppressed and not f.fixed and held(f):
            f.suppressed = "baseline"
            n += 1
    return n
