"""gridsample-standard: custom-domain GridSample and mmcv::grid_sampler as ai.onnx GridSample-16."""

from __future__ import annotations

import onnx
from onnx import helper

from onnxlint.fixers.base import Applicability, FixContext, FixError, fixer, graft, gs_locations, opset_of
from onnxlint.model.graph import iter_graphs

# torch's GridSampler enums, which mmcv::grid_sampler carries as integers
_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}
_GRID_MODE_20 = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}  # GridSample-20 renamed them


def _standard_grid_attrs(attrs: dict, opset: int) -> dict | None:
    """ai.onnx GridSample attributes equal to these (a node's, by name), or None when one does not map."""
    mode: str | None = "bilinear"
    padding: str | None = "zeros"
    align = 0
    for name, v in attrs.items():
        v = v.decode() if isinstance(v, bytes) else v
        if name in ("mode", "interpolation_mode"):
            mode = _GRID_MODES.get(v) if isinstance(v, int) else v
        elif name == "padding_mode":
            padding = _GRID_PADDING.get(v) if isinstance(v, int) else v
        elif name == "align_corners" and isinstance(v, int) and v in (0, 1):
            align = v
        else:
            return None
    if mode not in {*_GRID_MODE_20, *_GRID_MODE_20.values()} or padding not in _GRID_PADDING.values():
        return None
    if opset >= 20:
        mode = _GRID_MODE_20.get(mode, mode)
    elif mode in ("linear", "cubic"):
        mode = {"linear": "bilinear", "cubic": "bicubic"}[mode]
    return {"mode": mode, "padding_mode": padding, "align_corners": align}


def _unconvertible(opset: int) -> str | None:
    """Why onnx's version converter cannot raise a model importing this ai.onnx opset to 16: below 1, no opset (a
    malformed import onnx's checker and ORT let by, where the converter asserts "invalid version"); None: it can."""
    if opset >= 1:
        return None
    return (f"the model imports ai.onnx opset {opset}, which is no opset (they start at 1): onnx's version converter "
            "cannot raise it to 16")


def _attrs(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _custom(n: onnx.NodeProto) -> bool:
    return ( (n.op_type == "GridSample" and n.domain not in ("", "ai.onnx")) or (n.op_type == "grid_sampler" and n.domain == "mmcv"))


def can_fix(node, rule=None) -> bool:
    """Lint time: a custom GridSample whose attributes map to ai.onnx GridSample (a standard GridSample below
    opset 16 is fixed by the version converter). Not where the model imports ai.onnx opset 0 or below (_unconvertible)."""
    if _unconvertible(getattr(node.scope, "opsets", {}).get("ai.onnx", 1)) is not None:
        return False
    if not _custom(node.proto):
        return node.op_type == "GridSample" and node.domain == "ai.onnx"
    return _standard_grid_attrs(_attrs(node.proto), max(node.opset or 0, 16)) is not None


@fixer("gridsample-standard", Applicability.SAFE,
       "raise the opset to 16 (version converter) and rewrite custom-domain GridSample / mmcv::grid_sampler as ai.onnx GridSample",
       can_fix=can_fix)
def gridsample_standard(ctx: FixContext) -> onnx.ModelProto:
    model = ctx.model
    locations = {n.location for n in ctx.nodes if _custom(n.proto)}
    standard_below_16 = ctx.opset < 16 and any(n.op_type == "GridSample" and not _custom(n.proto) for n in ctx.nodes)
    if not standard_below_16 and not any(_standard_grid_attrs(_attrs(n.proto), max(ctx.opset, 16)) is not None
                                         for n in ctx.nodes if _custom(n.proto)):
        return model
    if opset_of(model) < 16:
        why = _unconvertible(opset_of(model))
        if why is not None:
            raise FixError(why)
        model = onnx.version_converter.convert_version(model, 16)  # passes custom-domain nodes through
    opset = opset_of(model)
    import onnx_graphsurgeon as gs

    graph = gs.import_onnx(model)  # the converted model: its nodes keep their locations
    for loc, _, n in gs_locations(graph):
        attrs = _standard_grid_attrs(n.attrs, opset) if loc in locations else None
        if attrs is not None:
            n.op, n.domain, n.attrs = "GridSample", None, attrs
    model = graft(model, graph)
    used = {n.domain for g in iter_graphs(model) for n in g.node}
    keep = [o for o in model.opset_import if o.domain in ("", "ai.onnx") or o.domain in used
            or any(f.domain == o.domain for f in model.functions)]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    return model
