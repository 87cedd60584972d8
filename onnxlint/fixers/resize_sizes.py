"""resize-sizes: an align_corners Resize with constant scales gets an explicit, exactly equivalent `sizes`.

Torch exports at opsets 11-20 give Resize `roi` and `scales` as Constant nodes (empty tensors when unused)
or as empty names (opset 13+, where both are optional). Resize-11/12 have no optional inputs: there roi and
scales stay present (an empty float tensor), so the rewritten node is [X, roi, <empty scales>, sizes];
from opset 13 it is [X, roi or "", "", sizes].
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from onnxlint.fixers.base import Applicability, FixContext, fixer
from onnxlint.model.graph import iter_graphs


def _is_align_corners(n: onnx.NodeProto) -> bool:
    return any(a.name == "coordinate_transformation_mode" and a.s == b"align_corners" for a in n.attribute)


def _has_sizes(n: onnx.NodeProto) -> bool:
    return len(n.input) > 3 and bool(n.input[3])


def _scales(const: TensorProto | None) -> np.ndarray | None:
    if const is None or const.data_location == TensorProto.EXTERNAL:
        return None
    arr = numpy_helper.to_array(const).astype(np.float64).reshape(-1)
    return arr if arr.size else None


def _plan(shape, scales: np.ndarray | None) -> tuple[int, np.ndarray] | None:
    """(k, tail): the output's first k dims are the input's own at run time (dynamic dims, a batch, at scale 1:
    read from Shape(X)), the rest floor(input * scales) as Resize computes them (a constant); None when a
    dynamic dim is scaled or follows a static one."""
    if shape is None or scales is None or len(shape) != scales.size:
        return None
    static = [isinstance(d, int) and d > 0 for d in shape]
    k = static.index(True) if True in static else len(shape)
    if not all(static[k:]) or any(scales[:k] != 1.0):
        return None
    # Resize computes in float32 (ORT) and floors; the same expression keeps the sizes ORT produced
    tail = np.floor(np.asarray(shape[k:], np.float32) * scales[k:].astype(np.float32)).astype(np.int64)
    return k, tail


def can_fix(node, rule=None) -> bool:
    """Lint time: the scales are a constant of matching length, and the input shape static but for leading dims
    (a dynamic batch) at scale 1."""
    n = node.proto
    if node.op_type != "Resize" or node.domain != "ai.onnx" or (node.opset or 0) < 11 or _has_sizes(n):
        return False
    if len(n.input) < 3 or not n.input[2]:
        return False
    scales = _scales(node.scope.constant(n.input[2]))
    return _plan(node.input_type(0).shape, scales) is not None


def _shapes(model: onnx.ModelProto) -> dict[str, list[int | None]]:
    """Inferred shapes by value name: an int per static dim, None per dynamic one."""
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for v in (v for g in iter_graphs(inferred) for v in list(g.input) + list(g.value_info)):
        tt = v.type.tensor_type
        if tt.HasField("shape"):
            out[v.name] = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    return out


@fixer("resize-sizes", Applicability.SAFE,
       "give an align_corners Resize an explicit 'sizes' input (from its static input shape and constant scales; a "
       "dynamic batch at scale 1 is read from Shape at run time)",
       can_fix=can_fix)
def resize_sizes(ctx: FixContext) -> onnx.ModelProto:
    """With align_corners the sampling positions depend on the input and output lengths only, so 'sizes' =
    floor(input * scales) gives the same result, and TensorRT is exact with sizes, not with scales."""
    import onnx_graphsurgeon as gs

    opset = ctx.opset
    if opset < 11:
        return ctx.model
    graph = ctx.graph()
    hits = [h for h in ctx.found(graph) if h.node.op == "Resize" and _is_align_corners(h.ref.proto)
            and not _has_sizes(h.ref.proto) and len(h.ref.proto.input) >= 3 and h.ref.proto.input[2]]
    if not hits:
        return ctx.model
    shapes = _shapes(ctx.model)
    taken = {i.name for g in iter_graphs(ctx.model) for i in g.initializer} | {
        o for g in iter_graphs(ctx.model) for n in g.node for o in n.output}

    def fresh(base: str) -> str:
        name = base
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    for hit in hits:
        n, ref = hit.node, hit.ref
        # the one constant lookup every fixer and the lint use: this graph's, then an enclosing graph's
        plan = _plan(shapes.get(ref.proto.input[0]), _scales(ref.scope.constant(ref.proto.input[2])))
        if plan is None:
            continue
        k, tail = plan
        base = n.name or "resize"
        x = n.inputs[0]
        if k == 0:
            sizes = gs.Constant(fresh(f"{base}_sizes"), tail)
        else:  # sizes = Concat(Shape(X)[:k], tail): the batch stays dynamic; the three nodes go before the Resize
            shape, head, sizes = (gs.Variable(fresh(f"{base}_{w}"), dtype=np.int64) for w in ("shape", "head", "sizes"))
            made = [gs.Node("Shape", f"{base}_sizes_shape", inputs=[x], outputs=[shape]),
                    gs.Node("Slice", f"{base}_sizes_head", inputs=[
                        shape, gs.Constant(fresh(f"{base}_zero"), np.array([0], np.int64)),
                        gs.Constant(fresh(f"{base}_k"), np.array([k], np.int64))], outputs=[head]),
                    gs.Node("Concat", f"{base}_sizes_concat", {"axis": 0},
                            inputs=[head, gs.Constant(fresh(f"{base}_tail"), tail)], outputs=[sizes])]
            at = next(i for i, m in enumerate(hit.graph.nodes) if m is n)
            hit.graph.nodes[at:at] = made
        roi = n.inputs[1] if len(n.inputs) > 1 else gs.Variable.empty()
        if opset < 13:
            # Resize-11/12: roi and scales are required inputs; an unused one is an empty float tensor
            if not roi.name:
                roi = gs.Constant(fresh(f"{base}_roi"), np.zeros(0, np.float32))
            scales = gs.Constant(fresh(f"{base}_no_scales"), np.zeros(0, np.float32))
        else:
            scales = gs.Variable.empty()
        n.inputs.clear()
        n.inputs.extend([x, roi, scales, sizes])
    return ctx.from_graph(graph)
