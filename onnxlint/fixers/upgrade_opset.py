"""upgrade-opset: onnx's version converter to the oldest opset that clears the findings.

OLX006 (legacy opset) and OLX020 (Resize-10 semantics) flag ai.onnx opsets below 11. Every target supports
11: ORT CPU/CUDA load opset 7+, TensorRT's parser 8.x starts at 7 and 10.x at 9, and Resize-11 is the first
with coordinate_transformation_mode (the converter keeps Resize-10's behaviour as `asymmetric`). So 11 is the
least change that clears both, whatever the selected targets; later opsets are left to the user.

Whether the converter can convert a model is known only by trying: `can_convert` tries it once per model at
lint time (on the weight-less copy the linter indexes), so a model the converter rejects is not claimed."""

from __future__ import annotations

import onnx

from onnxlint.fixers.base import Applicability, FixContext, fixer

MIN_OPSET = 11

_tried: dict[int, tuple[onnx.ModelProto, bool]] = {}


def min_opset(targets=()) -> int:
    """The oldest ai.onnx opset the flagged rules accept for these targets (11 for every target today)."""
    return MIN_OPSET


def can_convert(model: onnx.ModelProto) -> bool:
    """Whether the converter converts the model, tried in the native worker under its limits (the converter
    infers shapes of the whole model, and its C++ can crash: a lint's answer is no, not a lost run), and not past
    the shape-inference budget (loading.over_inference_budget): a fix not known to work is not claimed."""
    hit = _tried.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    from onnxlint.model import loading
    from onnxlint.model.loading import native

    ok = False
    if loading.over_inference_budget(model) is None:
        try:
            native.convert_version(model, MIN_OPSET)
            ok = True
        except Exception:  # onnx's error (a NativeError), NativeCrash or NativeLimit: not convertible here
            pass
    _tried.clear()  # one model at a time: keep no reference to earlier ones
    _tried[id(model)] = (model, ok)
    return ok


def can_fix(node, rule=None) -> bool:
    model = getattr(node.scope.root, "_onnxlint_model", None)
    return True if model is None else can_convert(model)


@fixer("upgrade-opset", Applicability.SAFE,
       "convert the model to ai.onnx opset 11 (the oldest every target fully supports) with onnx's version converter",
       can_fix=can_fix)
def upgrade_opset(ctx: FixContext) -> onnx.ModelProto:
    target = min_opset(ctx.targets)
    if ctx.opset >= target:
        return ctx.model
    before = ctx.opset
    out = onnx.version_converter.convert_version(ctx.model, target)
    if before < 11:
        _keep_asymmetric(out)
    return out


def _keep_asymmetric(model: onnx.ModelProto) -> None:
    """Upsample and Resize-10 sample with asymmetric coordinates (nearest: floor). The converter turns
    Upsample into a Resize-11 with no coordinate_transformation_mode, i.e. half_pixel, which moves every
    output pixel: give each Resize without one the mode it had."""
    from onnx import helper

    from onnxlint.model.graph import iter_graphs

    for g in iter_graphs(model):
        for n in g.node:
            if n.op_type != "Resize" or n.domain not in ("", "ai.onnx"):
                continue
            names = {a.name for a in n.attribute}
            if "coordinate_transformation_mode" not in names:
                n.attribute.append(helper.make_attribute("coordinate_transformation_mode", "asymmetric"))
            mode = next((a.s for a in n.attribute if a.name == "mode"), b"nearest")
            if mode == b"nearest" and "nearest_mode" not in names:
                n.attribute.append(helper.make_attribute("nearest_mode", "floor"))
