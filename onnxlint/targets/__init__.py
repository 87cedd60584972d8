"""The target registry: every deployment target behind one protocol (`base.Target`).

CLI choices, config validation, rule-file validation (statuses and reasons are enums declared here), text
summaries and `verify` all read this registry. Adding a target is one module plus its data, registered below.
"""

from __future__ import annotations

from onnxlint.targets.base import Target, VersionError, Vocabulary
from onnxlint.targets.ort import ORT_CPU, ORT_CUDA
from onnxlint.targets.ort_trt import ORT_TRT
from onnxlint.targets.tensorrt import TENSORRT

REGISTRY: dict[str, Target] = {t.name: t for t in (ORT_CPU, ORT_CUDA, TENSORRT, ORT_TRT)}

# what runs when neither the command line nor a config names targets: the deployments onnxlint is for. ort-cpu
# is left out: ort-cuda's prediction already places on the CPU EP whatever CUDA does not take, so ort-cpu
# would only repeat those findings for a CPU-only deployment (select it with --target ort-cpu).
DEFAULT_TARGETS: tuple[str, ...] = ("ort-cuda", "tensorrt")

# `any` in a rule's targets: the rule runs whatever the targets are
ANY = "any"


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get(name: str) -> Target:
    return REGISTRY[name]


def vocabularies() -> list[tuple[Vocabulary, list[Target]]]:
    """Each rule vocabulary the registered targets declare, with the targets that share it, in registry order."""
    out: list[tuple[Vocabulary, list[Target]]] = []
    for t in REGISTRY.values():
        if t.vocabulary is None:
            continue
        for vocabulary, shared in out:
            if vocabulary is t.vocabulary:
                shared.append(t)
                break
        else:
            out.append((t.vocabulary, [t]))
    return out


def verdict_fields() -> dict[str, tuple[str, ...]]:
    """The message placeholders of the targets' verdicts and their fields ({placement.reason}, {trt.version})."""
    return {v.message_root: v.message_fields for v, _ in vocabularies()}


def closure(selected: set[str] | tuple[str, ...] | list[str]) -> set[str]:
    """The selected targets plus the targets they are built on (ort-trt needs tensorrt and ort-cuda)."""
    out = set(selected)
    stack = list(out)
    while stack:
        for dep in REGISTRY[stack.pop()].requires:
            if dep not in out:
                out.add(dep)
                stack.append(dep)
    return out


__all__ = ["ANY", "DEFAULT_TARGETS", "REGISTRY", "Target", "VersionError", "Vocabulary", "closure", "get", "names",
           "verdict_fields", "vocabularies"]
