"""Output formats, declared once: which formats each command offers, and the modules that render them.

Lint reports: one module per format with render(report, **options) -> str. The placement, verify and doctor
front ends render through `placement_output`, `verify_output` and `doctor_output`; the HTML page of a lint run
and of `placement` is `html_report` (its script and style in `html/`).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

FORMATS: dict[str, tuple[str, ...]] = {
    "lint": ("text", "json", "sarif", "github", "html"),
    "placement": ("text", "json", "html"),
    "verify": ("text", "json", "sarif"),
    "doctor": ("text", "json"),
}


def render(fmt: str, report: Any, **options: Any) -> str:
    module = import_module(f"onnxlint.formats.{fmt}_format")
    return str(module.render(report, **options))
