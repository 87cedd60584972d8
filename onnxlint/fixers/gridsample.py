"""gridsample-standard: custom-domain GridSample and mmcv::grid_sampler as ai.onnx GridSample-16."""

from __future__ import annotations

import onnx
from onnx import helper

from onnxlint.fixers.base import FixContext, fixer, opset_of, resolve
from onnxlint.graph import iter_graphs

# torch's GridSampler enums, which mmcv::grid_sampler carries as integers
_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}
_GRID_MODE_20 = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}  # GridSample-20 renamed them


def _standard_grid_attrs(node: onnx.NodeProto, opset: int) -> list | None:
    """ai.onnx GridSample attributes equal to this node's, or None when one does not map."""
    mode: str | None = "bilinear"
    padding: str | None = "zeros"
    align = 0
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        v = v.decode() if isinstance(v, bytes) else v
        if a.name in ("mode", "interpolation_mode"):
            mode = _GRID_MODES.get(v) if isinstance(v, int) else v
        elif a.name == "padding_mode":
            padding = _GRID_PADDING.get(v) if isinstance(v, int) else v
        elif a.name == "align_corners" and isinstance(v, int) and v in (0, 1):
            align = v
        else:
            return None
    if mode not in {*_GRID_MODE_20, *_GRID_MODE_20.values()} or padding not in _GRID_PADDING.values():
        return None
    if opset >= 20:
        mode = _GRID_MODE_20.get(mode, mode)
    elif mode in ("linear", "cubic"):
        mode = {"linear": "bilinear", "cubic": "bicubic"}[mode]
    return [helper.make_attribute("mode", mode), helper.make_attribute("padding_mode", padding),
            helper.make_attribute("align_corners", align)]


def _custom(n: onnx.NodeProto) -> bool:
    return ( (n.op_type == "GridSample" and n.domain not in ("", "ai.onnx")) or (n.op_type == "grid_sampler" and n.domain == "mmcv"))


def can_fix(node, rule=None) -> bool:
    """Lint time: a custom GridSample whose attributes map to ai.onnx GridSample (a standard GridSample below
    opset 16 is fixed by the version converter)."""
    if not _custom(node.proto):
        return node.op_type == "GridSample" and node.domain == "ai.onnx"
    return _standard_grid_attrs(node.proto, max(node.opset or 0, 16)) is not None


@fixer("gridsample-standard", True,
       "raise the opset to 16 (version converter) and rewrite custom-domain GridSample / mmcv::grid_sampler as ai.onnx GridSample",
       can_fix=can_fix)
def gridsample_standard(ctx: FixContext) -> onnx.ModelProto:
    model = ctx.model
    locations = [n.location for n in ctx.nodes if _custom(n.proto)]
    standard_below_16 = ctx.opset < 16 and any(n.op_type == "GridSample" and not _custom(n.proto) for n in ctx.nodes)
    if not standard_below_16 and not any(_standard_grid_attrs(n.proto, max(ctx.opset, 16)) is not None
                                         for n in ctx.nodes if _custom(n.proto)):
        return model
    if opset_of(model) < 16:
        model = onnx.version_converter.convert_version(model, 16)  # passes custom-domain nodes through
    opset = opset_of(model)
    for n in (ref.proto for ref in resolve(model, locations)):
        attrs = _standard_grid_attrs(n, opset)
        if attrs is None:
            continue
        n.op_type, n.domain = "GridSample", ""
        del n.attribute[:]
        n.attribute.extend(attrs)
    used = {n.domain for g in iter_graphs(model) for n in g.node}
    keep = [o for o in model.opset_import if o.domain in ("", "ai.onnx") or o.domain in used
            or any(f.domain == o.domain for f in model.functions)]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    return model


