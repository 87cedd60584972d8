"""int64-to-int32 (unsafe): INT64 initializers stored as INT32 behind a Cast, where every value fits."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxlint.fixers.base import FixContext, fixer


@fixer("int64-to-int32", False, "store INT64 initializers as INT32 behind a Cast where every value fits (TensorRT)")
def int64_to_int32(ctx: FixContext) -> onnx.ModelProto:
    model = ctx.model
    g = model.graph
    casts = []
    for init in g.initializer:
        if init.data_type == TensorProto.INT64 and init.data_location != TensorProto.EXTERNAL:
            arr = numpy_helper.to_array(init)
            if arr.size and (arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max):
                continue
            name = init.name
            init.CopyFrom(numpy_helper.from_array(arr.astype(np.int32), f"{name}__int32"))
            casts.append(helper.make_node("Cast", [f"{name}__int32"], [name], to=TensorProto.INT64, name=f"{name}_to_int64"))
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model
