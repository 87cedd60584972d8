"""ONNX Runtime's CPU and CUDA execution providers: kernel-table placement (`onnxlint.ort.partitioner`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from onnxlint.targets.base import Target
from onnxlint.targets.ort_vocabulary import PLACEMENT

if TYPE_CHECKING:
    from onnxlint.rules.context import LintContext


def _statuses() -> tuple[str, ...]:
    from onnxlint.ort import verdicts

    return tuple(verdicts.STATUSES)


def _reasons() -> tuple[str, ...]:
    from onnxlint.ort import verdicts

    return tuple(verdicts.REASONS)


def _versions(ep: str) -> Callable[[], list[str]]:
    def versions() -> list[str]:
        from onnxlint.ort import kernel_registry

        return list(kernel_registry.available().get(ep, []))

    return versions


def simulate(ctx: "LintContext", name: str, optimization: str | None = None) -> Any:
    """The target's placement of ctx's model at an optimization level (None: the lint's)."""
    from onnxlint.ort import model_load, partitioner

    rejects, ops = ctx.fallback_rejects(name)
    return partitioner.simulate(ctx.index, name, ctx.options.ort_version, rejects, ops,
                                optimization=optimization or ctx.options.ort_optimization,
                                resolved=model_load.resolved_for(ctx))


def _predict(name: str) -> Callable[["LintContext"], Any]:
    return lambda ctx: simulate(ctx, name)


def _summary(prediction: Any) -> str:
    return str(prediction.summary_line())


ORT_CPU = Target(
    name="ort-cpu", description="ONNX Runtime, CPUExecutionProvider", runtime="ORT", vocabulary=PLACEMENT,
    statuses=_statuses, reasons=_reasons, versions=_versions("cpu"), predict_fn=_predict("ort-cpu"),
    summary_fn=_summary, common_status="device",
)
ORT_CUDA = Target(
    name="ort-cuda", description="ONNX Runtime, CUDAExecutionProvider with CPU fallback", runtime="ORT",
    vocabulary=PLACEMENT, statuses=_statuses, reasons=_reasons, versions=_versions("cuda"),
    predict_fn=_predict("ort-cuda"), summary_fn=_summary, common_status="device",
)
