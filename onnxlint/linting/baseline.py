"""`--baseline FILE`: adopt onnxlint on models that already have findings, and fail only on new ones.

The first run records every current finding's fingerprint (rule, model path relative to the baseline file's
folder, node location: the same identity as SARIF's partialFingerprints, independent of the working
directory and of weight values); later runs mark recorded findings suppressed ("baseline"), so only new
findings count for the exit code. `--update-baseline` records the current findings again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from onnxlint.linting.report import Finding, Report
from onnxlint.model.locations import node_location
from onnxlint.support.errors import UsageError

VERSION = 1


def fingerprint(f: Finding, base: Path) -> str:
    try:
        rel = Path(os.path.relpath(Path(f.filename).resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive
        rel = Path(f.filename).resolve().as_posix()
    key = f"{f.code}\0{rel}\0{node_location(f.node) or ''}"
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def load(path: Path) -> set[str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read the baseline: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("fingerprints"), list):
        raise UsageError(f"{path}: not an onnxlint baseline (version {VERSION})")
    return {str(x) for x in doc["fingerprints"]}


def write(path: Path, report: Report) -> int:
    base = path.parent
    prints = sorted({fingerprint(f, base) for f in report.findings if not f.suppressed})
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"version": VERSION, "tool": "onnxlint", "fingerprints": prints}, indent=1) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)
    return len(prints)


def apply(report: Report, path: Path, recorded: set[str]) -> int:
    """Mark recorded findings suppressed; returns how many were."""
    n = 0
    for f in report.findings:
        if not f.suppressed and fingerprint(f, path.parent) in recorded:
            f.suppressed = "baseline"
            n += 1
    return n
