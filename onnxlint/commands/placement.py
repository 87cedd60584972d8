"""`onnxlint placement`: per node, the execution provider ORT assigns, for each model the paths name."""

from __future__ import annotations

import sys
from pathlib import Path

from onnxlint.formats.escape import text as esc
from onnxlint.support.errors import InputError


def run(models: list[Path], target: str, ort_version: str | None, ort_optimization: str, format: str) -> int:
    """Print each model's placement; the exit code: 2 when a model could not be read, else 0."""
    from onnxlint import api
    from onnxlint.formats import placement_output
    from onnxlint.model import loading

    results, errors = [], 0
    for path in loading.expand_paths([str(m) for m in models]):
        try:
            pl = api.predict(path, target, ort_version, ort_optimization=ort_optimization)
        except InputError as exc:
            print(f"onnxlint: error: {esc(str(exc))}", file=sys.stderr)
            errors += 1
            continue
        results.append(placement_output.as_json(str(path), target, pl))
    sys.stdout.write(placement_output.render(format, results))
    return 2 if errors else 0
