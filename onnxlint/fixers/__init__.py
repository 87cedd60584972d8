"""Fixers, one module each, registered by name; the numeric check (`equivalence`) and the atomic write
(`write`) beside them.

`apply` runs the fixers a lint run's findings ask for: each receives the nodes of its own findings (inside
If/Loop/Scan bodies too), located again in the current working copy before it runs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Iterable

import onnx

from onnxlint.fixers import (  # noqa: F401  (each module registers its fixer)
    batchnorm,
    double_inputs,
    dropout,
    equal_cast,
    fold_shapes,
    gridsample,
    int64_to_int32,
    resize_sizes,
    upgrade_opset,
)
from onnxlint.fixers.base import REGISTRY, FixContext, FixError, Fixer, resolve
from onnxlint.fixers.equivalence import check_equivalent, verify
from onnxlint.fixers.write import atomic_write, write_fixed

__all__ = ["REGISTRY", "FixContext", "FixError", "FixRequest", "Fixer", "apply", "atomic_write", "check_equivalent",
           "verify", "write_fixed"]


@dataclass(frozen=True)
class FixRequest:
    """One finding to fix: its fixer, its node location (None: a model-level finding) and its target."""

    fixer: str
    location: str | None
    target: str


def apply(model: onnx.ModelProto, requests: Iterable[FixRequest], unsafe: bool,
          targets: Iterable[str] = ()) -> tuple[onnx.ModelProto, list[str], list[str]]:
    """Apply the requested fixers in order of first request; returns (new_model, applied, skipped_unsafe).

    A fixer that found nothing it can rewrite (e.g. a GridSample attribute with no standard equivalent) is
    not counted as applied."""
    current = copy.deepcopy(model)
    by_fixer: dict[str, list[FixRequest]] = {}
    for r in requests:
        by_fixer.setdefault(r.fixer, []).append(r)
    applied: list[str] = []
    skipped: list[str] = []
    all_targets = frozenset(targets)
    for name, reqs in by_fixer.items():
        fx = REGISTRY[name]
        if not fx.safe and not unsafe:
            skipped.append(name)
            continue
        locations = [r.location for r in reqs if r.location]
        ctx = FixContext(current, resolve(current, locations) if locations else [],
                         all_targets | {r.target for r in reqs}, any(r.location is None for r in reqs))
        before = current.SerializeToString(deterministic=True)
        current = fx.apply(ctx)
        if current.SerializeToString(deterministic=True) != before:
            applied.append(name)
    return current, applied, skipped
