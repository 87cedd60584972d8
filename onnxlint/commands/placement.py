"""`onnxlint placement`: per node, the execution provider ORT assigns, for each model the paths name (text,
JSON, or one HTML page, optionally beside a second release)."""

from __future__ import annotations

import sys
from pathlib import Path

from onnxlint.formats.escape import text as esc
from onnxlint.support.errors import InputError, UsageError


def run(models: list[Path], target: str, ort_version: str | None, ort_optimization: str, format: str,
        compare: str | None = None, output: Path | None = None) -> int:
    """Print (or write to output) each model's placement; the exit code: 2 when a model could not be read, else 0."""
    from onnxlint.model import loading

    if compare and format != "html":
        raise UsageError("--compare: only with --format html (the page shows both releases side by side)")
    paths = loading.expand_paths([str(m) for m in models])
    if output is not None:
        from onnxlint.commands.lint import check_report_output

        check_report_output(output, paths)
    if format == "html":
        from onnxlint.formats import html_report

        text, failed = html_report.placement_page(paths, target, ort_version, ort_optimization, compare)
        for line in failed:
            print(f"onnxlint: error: {esc(line)}", file=sys.stderr)
        errors = len(failed)
    else:
        text, errors = _placements(paths, target, ort_version, ort_optimization, format)
    if output is not None:
        from onnxlint.model import write_guard

        try:
            write_guard.replace_text(output, text)
        except OSError as exc:  # a full disk, a folder gone: one line, exit 2
            raise UsageError(f"-o {output}: cannot write the report: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    return 2 if errors else 0


def _placements(paths: list[Path], target: str, ort_version: str | None, ort_optimization: str,
                format: str) -> tuple[str, int]:
    """The text or JSON of every readable model's placement, and how many could not be read (each said on stderr)."""
    from onnxlint import api
    from onnxlint.formats import placement_output

    results, errors = [], 0
    for path in paths:
        try:
            pl = api.predict(path, target, ort_version, ort_optimization=ort_optimization)
        except InputError as exc:
            print(f"onnxlint: error: {esc(str(exc))}", file=sys.stderr)
            errors += 1
            continue
        results.append(placement_output.as_json(str(path), target, pl))
    return placement_output.render(format, results), errors
