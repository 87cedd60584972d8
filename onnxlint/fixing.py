"""`--fix`: apply the fixers a model's findings name, verify the result, write it atomically, re-lint.

The fixers receive the findings they fix; nothing is written unless the fixed model passes the checker,
strict shape inference and (for safe fixes) the numeric check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from onnxlint import loading
from onnxlint.linter import lint_file, one_line
from onnxlint.report import FileReport
from onnxlint.settings import Settings


@dataclass(frozen=True)
class FixOptions:
    unsafe: bool = False
    diff: bool = False
    output: Path | None = None  # write the fixed model here instead of over the input


def fix_file(path: Path, settings: Settings, res: FileReport, options: FixOptions) -> None:
    """Fix one linted model in place (or into options.output); what happened goes into res.notes and the
    findings the re-lint no longer reports are marked fixed."""
    from onnxlint import fixers

    requests = [fixers.FixRequest(f.fix, f.node if f.node and not f.node.startswith("graph/input:") else None, f.target)
                for f in res.findings if f.fix and not f.suppressed]
    if not requests:
        return
    mf = loading.load(path)
    model = mf.model
    dest = Path(options.output) if options.output else path
    if mf.missing_external:
        res.notes.append("fix not written: external data is missing or short (see OLX003)")
        return
    try:
        fixed, applied, skipped = fixers.apply(model, requests, unsafe=options.unsafe, targets=settings.targets)
        if not applied:
            tried = list(dict.fromkeys(r.fixer for r in requests if r.fixer not in skipped))
            if tried:
                res.notes.append(f"nothing rewritten: {', '.join(tried)} found no node it can change safely")
            if skipped:
                res.notes.append(f"{len(skipped)} fix(es) need --unsafe-fixes: {', '.join(skipped)}")
            return
        caveat = fixers.verify(model, fixed, safe=all(fixers.REGISTRY[n].safe for n in applied), applied=applied,
                               base_dir=path.parent)
        if caveat:
            res.notes.append(f"numeric check: {caveat}")
    except fixers.FixError as exc:
        res.notes.append(f"fix not written: {exc}")
        return
    except Exception as exc:
        res.notes.append(f"fix not written: {type(exc).__name__}: {one_line(exc)}")
        return
    if options.diff:
        from onnxlint import diff

        res.notes.append("would change: " + diff.describe(model, fixed))
        return
    try:
        fixers.write_fixed(fixed, dest, path.parent)
    except OSError as exc:
        res.notes.append(f"fix not written to {dest}: {exc.strerror or exc}")
        return
    after = lint_file(dest, settings, want_placement=False)
    remaining = {(f.code, f.node) for f in after.findings}
    n_fixed = 0
    for f in res.findings:  # a finding the re-lint no longer reports is fixed, whichever fixer removed it
        if (f.code, f.node) not in remaining and not f.suppressed:
            f.fixed = True
            n_fixed += 1
    left = [f for f in after.findings if not f.suppressed]
    need_unsafe = sum(1 for f in left if f.fix in skipped)
    res.notes.append(f"{n_fixed} fixed, {len(left)} remaining ({need_unsafe} need --unsafe-fixes); wrote {dest}")
