"""Fixers, one module each, registered by name; the numeric check (`equivalence`) and the atomic write
(`write`) beside them.

`apply` runs the fixers a lint run's findings ask for: each receives the nodes of its own findings (inside
If/Loop/Scan bodies too), located again in the current working copy before it runs.
"""

from __future__ import annotations

import copy
import importlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import onnx

# the fixer modules register themselves when REGISTRY is first asked for them (base.BUILTIN); the numeric
# check and the write are imported when first used: a lint needs neither
from onnxlint.fixers.base import REGISTRY, Applicability, FixContext, Fixer, FixError, resolve
from onnxlint.model.graph import GraphIndex, iter_graphs
from onnxlint.model.locations import node_location

if TYPE_CHECKING:
    from onnxlint.fixers.equivalence import check_equivalent, has_external_data, verify
    from onnxlint.fixers.write import atomic_write, write_fixed

_LAZY = {"check_equivalent": "equivalence", "has_external_data": "equivalence", "verify": "equivalence",
         "atomic_write": "write", "write_fixed": "write"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = ["REGISTRY", "Applicability", "FixContext", "FixError", "FixRequest", "Fixer", "apply", "apply_in_child", "atomic_write",
           "check_equivalent", "has_external_data", "verify", "write_fixed"]


@dataclass(frozen=True)
class FixRequest:
    """One finding to fix: its fixer, its node (the finding's node path, `Finding.node`: "input:NAME" for a graph
    input; None: a model-level finding) and its target."""

    fixer: str
    location: str | None
    target: str


_TMP = "__onnxlint_fix_"
INPUT = "graph/input:"  # a graph-input finding's location
# the data file's small tensors moved in first (the others then read a shape or axes in the model), opset changes
# next (later fixers see the final opset), folding last (it folds what the others produced)
_ORDER = {"inline-small-tensors": -1, "upgrade-opset": 0, "gridsample-standard": 0, "fold-shapes": 2}


def _pin_locations(model: onnx.ModelProto, locations: set[str]) -> dict[str, str]:
    """Give the unnamed nodes at these locations a temporary name, so their location stays the same when an
    earlier fixer inserts or removes nodes (an unnamed node's location is its position). location -> the
    location under the temporary name."""
    pinned: dict[str, str] = {}
    for ref in GraphIndex(model).nodes:
        if ref.location in locations and not ref.proto.name:
            ref.proto.name = f"{_TMP}{len(pinned)}"
            pinned[ref.location] = ref.location.rsplit("/", 1)[0] + "/" + ref.proto.name
    return pinned


def _unpin(model: onnx.ModelProto) -> None:
    for g in iter_graphs(model):
        for n in g.node:
            if n.name.startswith(_TMP):
                n.name = ""


def apply(model: onnx.ModelProto, requests: Iterable[FixRequest], unsafe: bool,
          targets: Iterable[str] = (), notes: list[str] | None = None, base_dir: Path | None = None
          ) -> tuple[onnx.ModelProto, list[str], list[str]]:
    """Apply the requested fixers in order of first request; returns (new_model, applied, skipped_unsafe).

    A fixer that found nothing it can rewrite (e.g. a GridSample attribute with no standard equivalent) is
    not counted as applied. model is left as it is. notes: gets what the fixers said (FixContext.notes); base_dir:
    the folder of the model's external data (FixContext.base_dir)."""
    current = copy.deepcopy(model)
    # a finding names its node by path (locations.node_path); the fixers locate nodes by GraphIndex location
    requests = [FixRequest(r.fixer, node_location(r.location), r.target) for r in requests]
    pinned = _pin_locations(current, {r.location for r in requests if r.location})
    by_fixer: dict[str, list[FixRequest]] = {}
    for r in sorted(requests, key=lambda r: _ORDER.get(r.fixer, 1)):
        by_fixer.setdefault(r.fixer, []).append(r)
    applied: list[str] = []
    skipped: list[str] = []
    all_targets = frozenset(targets)
    before = _canonical(current)
    for name, reqs in by_fixer.items():
        fx = REGISTRY[name]
        if fx.applicability is Applicability.DISPLAY_ONLY:
            continue  # never applied: the finding names it for a user to make by hand
        if not fx.applicability.applies(unsafe):
            skipped.append(name)
            continue
        locations = [pinned.get(r.location, r.location) for r in reqs if r.location and not r.location.startswith(INPUT)]
        inputs = [r.location[len(INPUT):] for r in reqs if r.location and r.location.startswith(INPUT)]
        ctx = FixContext(current, resolve(current, locations) if locations else [],
                         all_targets | {r.target for r in reqs}, any(r.location is None for r in reqs) or bool(inputs),
                         inputs, base_dir=base_dir)
        current = fx.apply(ctx)
        if notes is not None:
            notes.extend(ctx.notes)
        after = _canonical(current)
        if after != before:
            applied.append(name)
        before = after
    _unpin(current)
    if applied:  # once, after every fixer: nodes in order, no initializer left that nothing reads
        from onnxlint.fixers.tidy import tidy

        current = tidy(current)
    return current, applied, skipped


# the address space the fixers' child may add beyond what it holds, and per byte of the model: onnx's inference
# and version converter (onnx < 1.23 spells out a shape input's declared length, benchmarks/native_limits.py)
# and onnxslim run in it
FIX_MEMORY = 4 << 30
FIX_MEMORY_PER_BYTE = 16
# and its CPU time: the fixers call onnx's inference themselves, outside native's screen and per-call limit, and
# onnxslim folds with ORT within its own cost bounds; as long as the numeric check may run the model
FIX_CPU_SECONDS = 600


def apply_in_child(model: onnx.ModelProto, requests: Iterable[FixRequest], unsafe: bool, targets: Iterable[str] = (),
                   notes: list[str] | None = None, base_dir: Path | None = None
                   ) -> tuple[onnx.ModelProto, list[str], list[str]]:
    """apply, in a child forked for it (loading.native.run_in_child): the fixers run native code on the model in
    the process that calls them (onnxslim evaluates constant subgraphs with onnxruntime; onnx's C++ infers and
    converts versions), and a crash there costs this fix ("the fixers' rewrite crashed on this model (signal
    11)", a FixError), not the run. Where there is no fork, apply itself."""
    from onnxlint.model.loading import endless, native

    requests, targets = list(requests), tuple(targets)
    why = endless.screen_model(model)
    if why:  # the fixers infer shapes: onnx would never return (each fix needs the model to run on ORT anyway)
        raise FixError(f"onnx's shape inference, which the fixes need, is not run on it: {why}")

    def work() -> bytes:
        said: list[str] = []
        fixed, applied, skipped = apply(model, requests, unsafe, targets, said, base_dir)
        head = json.dumps([applied, skipped, said]).encode()
        return _LENGTH.pack(len(head)) + head + fixed.SerializeToString()

    memory = FIX_MEMORY + FIX_MEMORY_PER_BYTE * model.ByteSize()
    try:
        answer = native.run_in_child("the fixers' rewrite", native.bounded(work, memory, cpu=FIX_CPU_SECONDS), memory,
                                     FIX_CPU_SECONDS)
    except native.NativeError as exc:  # what a fixer raised, by class name and text
        if native.raised(exc, FixError):  # apply raises no subclass of it (ChangedSinceRead is the writer's)
            raise FixError(str(exc)) from None
        raise
    except native.NativeCrash as exc:
        raise FixError(str(exc)) from None
    n = _LENGTH.unpack_from(answer)[0]
    applied, skipped, said = json.loads(answer[_LENGTH.size:_LENGTH.size + n])
    if notes is not None:
        notes.extend(said)
    return onnx.ModelProto.FromString(answer[_LENGTH.size + n:]), applied, skipped


_LENGTH = struct.Struct("<Q")


def _canonical(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString(deterministic=True)
