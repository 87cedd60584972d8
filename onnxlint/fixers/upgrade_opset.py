"""upgrade-opset: onnx's version converter to the oldest opset that clears the findings."""

from __future__ import annotations

import onnx

from onnxlint.fixers.base import FixContext, fixer

# OLX005 (legacy opset) and OLX020 (Resize-10 semantics) flag opsets below 11; every target (ORT CPU/CUDA,
# TensorRT 8.4+) supports 11 and later, so 11 is the least change that clears them
MIN_OPSET = 11


@fixer("upgrade-opset", True, "convert the model to ai.onnx opset 11 (the oldest the targets fully support) with onnx's version converter")
def upgrade_opset(ctx: FixContext) -> onnx.ModelProto:
    if ctx.opset >= MIN_OPSET:
        return ctx.model
    return onnx.version_converter.convert_version(ctx.model, MIN_OPSET)
