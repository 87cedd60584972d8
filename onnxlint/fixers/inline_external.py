"""inline-small-tensors: move the small tensors a model keeps in its external data file into the model.

A model saved with every tensor in its data file (`onnx.save(m, p, save_as_external_data=True,
size_threshold=0)`, and ORT's own offline-optimized output) keeps a Reshape's shape, Unsqueeze's axes, Pad's pads
there too. ORT's Graph::Resolve runs onnx's inference at session creation, which cannot read a value from a data
file, so ORT refuses the model (`[ShapeInferenceError] Cannot parse data from external tensors`; every release
probed, OLX007). Such values are a few bytes. Every external tensor of at most INLINE_LIMIT bytes (1024, onnx's
default `size_threshold`: what `onnx.save(..., save_as_external_data=True)` keeps in the model unless told
otherwise, so what every exporter's default output holds there) is moved into the model, its bytes read from the
model's own data file with the bounded, folder-confined reader the lint uses (loading.external.small_bytes_reader:
never onnx's numpy_helper.to_array, which reads relative to the working folder); larger ones stay where they are,
in the same data file. (onnx compares sys.getsizeof of the bytes with its threshold, which counts the bytes
object's own header: it keeps up to 990 bytes of data in the model; 1024 bytes of data is the size a user reads.)

Constant nodes' values onnx put in the data file (`convert_attribute=True`) are tensors too: moved the same way,
in every graph, body and local function. The rewrite changes where bytes are stored, nothing the model computes;
the numeric check runs the fixed model (the original is the model ORT refuses, so only the fixed one can run).

Lint time (can_fix): an OLX007 is fixable only where ORT's refusal is this one and the model with those tensors
moved is one ORT's resolution accepts (model_load.refusal_is_external_data): another cause of OLX007, or one met
once these values are read, is not claimed, and its hint stays "no automatic fix".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx

from onnxlint.fixers.base import Applicability, FixContext, fixer

INLINE_LIMIT = 1024  # bytes: onnx's default size_threshold (the module's docstring says why)


def can_fix(node: Any, rule: Any = None) -> bool:
    """Lint time (a model-level finding: its stand-in node carries the lint's context): ORT refuses the model for
    a value stored in its data file, and refuses nothing once the small tensors are moved in."""
    lint = getattr(node, "lint", None)
    if lint is None:
        return False
    from onnxlint.ort import model_load

    return model_load.refusal_is_external_data(lint, INLINE_LIMIT)


@fixer("inline-small-tensors", Applicability.SAFE,
       "move the tensors of at most 1024 bytes (onnx's default size_threshold) a model keeps in its external data file "
       "into the model, so ORT's graph resolution reads its shapes and axes; larger ones stay in that file",
       can_fix=can_fix, declined="no automatic fix", storage_only=True)
def inline_small_tensors(ctx: FixContext) -> onnx.ModelProto:
    if ctx.base_dir is None:  # a model in memory: no data file to read
        return ctx.model
    from onnxlint.model.loading.external import external_tensors, inline_small, small_bytes_reader

    external = external_tensors(ctx.model, Path(ctx.base_dir))
    inline_small(ctx.model, small_bytes_reader(external, INLINE_LIMIT))
    return ctx.model
