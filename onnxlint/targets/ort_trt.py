"""ONNX Runtime's TensorRT EP: TensorRT takes what its parser accepts, the rest falls through to CUDA, then CPU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from onnxlint.targets.base import Target

if TYPE_CHECKING:
    from onnxlint.rules.context import LintContext


def _predict(ctx: "LintContext") -> Any:
    from onnxlint.ort import tensorrt_ep

    return tensorrt_ep.partition(ctx.prediction("tensorrt"), ctx.prediction("ort-cuda"), ctx.index)


def _summary(prediction: Any) -> str:
    return str(prediction.summary_line())


def _none() -> tuple[str, ...]:
    return ()


def _versions() -> list[str]:
    from onnxlint.targets.tensorrt import TENSORRT

    return TENSORRT.available_versions()


ORT_TRT = Target(
    name="ort-trt", description="ONNX Runtime, TensorrtExecutionProvider with CUDA and CPU fall-through",
    runtime="TensorRT", vocabulary=None, statuses=_none, reasons=_none, versions=_versions, predict_fn=_predict,
    summary_fn=_summary, requires=("tensorrt", "ort-cuda"),
)
