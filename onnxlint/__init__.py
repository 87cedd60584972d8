"""onnxlint: a rule-based static linter for ONNX models deployed on ONNX Runtime (CUDA, TensorRT).

Public API (imported on first use, so `import onnxlint` stays cheap): `lint`, `fix`, `predict`,
`Settings`, `FileReport`, `Finding`, `Report`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0"

_API = {"lint": "onnxlint.api", "fix": "onnxlint.api", "predict": "onnxlint.api",
        "Settings": "onnxlint.config.settings", "FileReport": "onnxlint.linting.report", "Finding": "onnxlint.linting.report",
        "Report": "onnxlint.linting.report"}

__all__ = ["FileReport", "Finding", "Report", "Settings", "__version__", "fix", "lint", "predict"]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'onnxlint' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
