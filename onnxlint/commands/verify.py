"""`onnxlint verify`: build a real ORT session per model and compare where its nodes ran with the prediction
(the work is `onnxlint.verify`; this is the command around it: options in, report out, exit code)."""

from __future__ import annotations

import sys
from pathlib import Path


def run(models: list[Path], providers: str, shapes: list[str] | None, timeout: float, ort_version: str, fix: bool,
        optimization: str, format: str) -> int:
    """Verify each model; the exit code: 1 when a check failed, else 0."""
    from onnxlint.commands.lint import providers as provider_names
    from onnxlint.formats import verify_output
    from onnxlint.verify.command import VerifyOptions, lint_report, parse_shapes, verify_paths

    options = VerifyOptions(providers=tuple(provider_names(providers)), shapes=parse_shapes(shapes),
                            timeout=timeout, ort_version=ort_version, fix=fix, optimization=optimization)
    results = verify_paths([str(m) for m in models], options)
    sarif = lint_report(results, ort_version) if format == "sarif" else None
    sys.stdout.write(verify_output.render(format, results, sarif))
    return 1 if any(r.failed for r in results) else 0
