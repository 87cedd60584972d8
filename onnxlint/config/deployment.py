"""Deployment intent that files beside a model state: ONNX Runtime GenAI's `genai_config.json`.

The GenAI model builder writes, next to `model.onnx`, the provider the model was built for
(`model.decoder.session_options.provider_options`: `[{"cuda": {...}}]`, or `[]` for the CPU EP). A model built
for the CPU EP gets no CUDA-placement findings (GroupQueryAttention "falls back to CPU" is what it was built
for). Only the model's own folder is read, and only a small JSON file; anything unreadable states nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from onnxlint.support import reading

GENAI_CONFIG = "genai_config.json"
_MAX_BYTES = 1 << 20


def genai_config_path(model_path: Path) -> Path | None:
    p = Path(model_path).parent / GENAI_CONFIG
    return p if p.is_file() else None


def genai_provider(model_path: Path) -> str | None:
    """'cpu', 'cuda', 'dml', ... when a genai_config.json beside the model describes this model file; else None."""
    p = genai_config_path(model_path)
    if p is None:
        return None
    try:
        decoder = json.loads(reading.read_regular(p, reading.within(_MAX_BYTES, GENAI_CONFIG)).decode("utf-8"))["model"]["decoder"]
        if decoder.get("filename", Path(model_path).name) != Path(model_path).name:
            return None  # the config describes another file of the folder
        providers = (decoder.get("session_options") or {}).get("provider_options") or []
        names = [name for entry in providers if isinstance(entry, dict) for name in entry]
    except (reading.Refused, RecursionError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return str(names[0]).lower() if names else "cpu"
