"""What every fixer shares: the registry, the context a fixer works in, and the error that stops a write.

A fixer receives the findings it fixes (their node locations, resolved to the nodes of the model being
fixed, inside If/Loop/Scan bodies too) and the selected targets; it returns the rewritten model. A fixer
that finds nothing it can change safely returns the model unchanged, and the caller says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import onnx

from onnxlint.graph import GraphIndex, NodeRef


class FixError(Exception):
    """The fixed model must not be written; the text says why."""


@dataclass
class FixContext:
    """model: the working copy (fixers edit it in place or return a new one); nodes: the nodes of this
    fixer's findings in that copy; targets: the selected targets; model_level: a finding with no node (the
    fix is about the whole model)."""

    model: onnx.ModelProto
    nodes: list[NodeRef] = field(default_factory=list)
    targets: frozenset[str] = frozenset()
    model_level: bool = False

    @property
    def opset(self) -> int:
        return opset_of(self.model)


@dataclass(frozen=True)
class Fixer:
    name: str
    safe: bool
    summary: str
    apply: Callable[[FixContext], onnx.ModelProto]
    reference: Callable[[onnx.ModelProto], onnx.ModelProto] | None = None


REGISTRY: dict[str, Fixer] = {}


FixFn = Callable[[FixContext], onnx.ModelProto]


def fixer(name: str, safe: bool, summary: str,
          reference: Callable[[onnx.ModelProto], onnx.ModelProto] | None = None) -> Callable[[FixFn], FixFn]:
    """Register a fixer. reference(model) gives the behaviour the fix must keep when the original's own outputs
    are not it (a training-mode Dropout is random: the fix must match the original run in inference mode)."""

    def deco(fn: FixFn) -> FixFn:
        REGISTRY[name] = Fixer(name, safe, summary, fn, reference)
        return fn

    return deco


def opset_of(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def resolve(model: onnx.ModelProto, locations: list[str]) -> list[NodeRef]:
    """The nodes at these locations in model (the same locations the lint index gives)."""
    wanted = set(locations)
    return [n for n in GraphIndex(model).nodes if n.location in wanted]
