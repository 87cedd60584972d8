"""`onnxlint verify`: build a real ORT session per model and compare where its nodes ran with the prediction
(the work is `onnxlint.verify`; this is the command around it: options in, report out, exit code)."""

from __future__ import annotations

import sys
from pathlib import Path


def run(models: list[Path], providers: str, shapes: list[str] | None, timeout: float, ort_version: str, fix: bool,
        optimization: str, format: str, output: Path | None = None) -> int:
    """Verify each model; the exit code: 2 when a file is no model onnxlint can read (bad input, as the lint says
    it), 1 when a check failed, else 0. output: `verify --fix -o`, where the fixed
    model is written whatever its session says (without it, only a verified fix is written, in place)."""
    from onnxlint.commands.lint import check_fix_output
    from onnxlint.commands.lint import providers as provider_names
    from onnxlint.formats import verify_output
    from onnxlint.model import loading
    from onnxlint.support.errors import UsageError
    from onnxlint.verify.command import VerifyOptions, lint_report, parse_shapes, verify_paths

    if output is not None:
        if not fix:
            raise UsageError("verify -o names where --fix writes the fixed model: add --fix")
        check_fix_output(output, loading.expand_paths([str(m) for m in models]))
    options = VerifyOptions(providers=tuple(provider_names(providers)), shapes=parse_shapes(shapes),
                            timeout=timeout, ort_version=ort_version, fix=fix, optimization=optimization, output=output)
    results = verify_paths([str(m) for m in models], options)
    sarif = lint_report(results, ort_version) if format == "sarif" else None
    sys.stdout.write(verify_output.render(format, results, sarif))
    return 2 if any(r.unreadable for r in results) else 1 if any(r.failed for r in results) else 0
