"""Where the shipped rule files and data tables live, installed or in a source checkout.

Rules (`rules/*.yaml`) are force-included into the wheel as `onnxlint/_rules`; data tables (kernel tables,
TensorRT support) are package data under `onnxlint/data/`, apart from the rules.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent.parent  # the onnxlint package


@lru_cache(maxsize=None)
def rules_dir() -> Path:
    for candidate in (_HERE / "_rules", _HERE.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("onnxlint's bundled rules directory is missing from this installation")


def data_dir() -> Path:
    """Generated data tables: kernels/, tensorrt/, ort-cuda-memory.json."""
    return _HERE / "data"
