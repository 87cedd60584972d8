"""TensorRT's ONNX parser (`onnxlint.tensorrt` holds the support data and the per-node model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from onnxlint.targets.base import Target

if TYPE_CHECKING:
    from onnxlint.engine import LintContext


def _statuses() -> tuple[str, ...]:
    from onnxlint import tensorrt

    return tuple(tensorrt.STATUSES)


def _reasons() -> tuple[str, ...]:
    from onnxlint import tensorrt

    return tuple(tensorrt.REASONS)


def _versions() -> list[str]:
    from onnxlint import tensorrt

    return list(tensorrt.available())


def _predict(ctx: "LintContext") -> Any:
    from onnxlint import tensorrt

    return tensorrt.predict(ctx.index, ctx.options.trt_version)


def _summary(prediction: Any) -> str:
    counts: dict[str, int] = {}
    for verdict in prediction.nodes.values():
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    parts = [f"{n} {status}" for status, n in sorted(counts.items())]
    return f"TensorRT {prediction.version}: " + (", ".join(parts) if parts else "no nodes")


TENSORRT = Target(
    name="tensorrt", description="TensorRT's ONNX parser (trtexec, OnnxParser)", runtime="TensorRT",
    predicate="tensorrt", statuses=_statuses, reasons=_reasons, versions=_versions, predict_fn=_predict,
    summary_fn=_summary, common_status="supported",
)
