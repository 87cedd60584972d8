"""Output formats: each is one module with render(report, options) -> str."""

from __future__ import annotations

from importlib import import_module

FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, report, **options) -> str:
    module = import_module(f"onnxlint.formats.{fmt}_format")
    return module.render(report, **options)
