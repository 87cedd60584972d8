"""Whether ORT loads the model at all: the newest IR version and ai.onnx opset a release accepts
(model.cc's IR check, model_load_utils.h ValidateOpsetForDomain), read from the release table."""

from __future__ import annotations

import onnx

from onnxlint.ort import releases


def refuses_model(model: onnx.ModelProto, version: str | None) -> tuple[str, str] | None:
    """(reason, message) when ORT `version` refuses to load the model for its IR version or ai.onnx opset."""
    row = releases.row(version)
    if row.max_opset is None or row.max_ir is None:
        return None  # limits not known (a release newer or older than the table)
    max_opset, max_ir = row.max_opset, row.max_ir
    if model.ir_version > max_ir:
        return "model-ir", (f"IR version {model.ir_version} is newer than onnxruntime {version} loads (max {max_ir}): "
                            f"session creation fails with 'Unsupported model IR version'")
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx") and imp.version > max_opset:
            return "model-opset", (f"ai.onnx opset {imp.version} is newer than onnxruntime {version} supports (max {max_opset}): "
                                   f"session creation fails in ValidateOpsetForDomain")
    return None
