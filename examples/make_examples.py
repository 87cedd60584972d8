#!/usr/bin/env python3
"""Build the example models: each shows one problem onnxlint reports, plus one clean model.

  python examples/make_examples.py [OUTDIR]      (default: the folder of this script)

EXPECTED maps each file to the rule it demonstrates and the node location it is reported at.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

EXPECTED = {
    "clean_conv.onnx": None,
    "resize_opset10.onnx": ("OLX020", "resize"),
    "gridsample_custom_domain.onnx": ("OLX021", "grid_sample"),
    "dropout_training.onnx": ("OLX010", "dropout"),
    "batchnorm_training.onnx": ("OLX011", "bn"),
    "double_input.onnx": ("OLX012", "input:x"),
    "static_batch.onnx": ("OLX013", None),
    "custom_op.onnx": ("OLX014", "my_op"),
    "equal_mismatch.onnx": ("OLX015", "eq"),
    "resize_align_corners.onnx": ("OLX301", "resize"),
    "scatternd.onnx": ("OLX302", "scatter"),
    "equal_string_cuda.onnx": ("OLX200", "eq"),
}


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=(), name="example"):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), *[h.make_opsetid(d, v) for d, v in extra_opsets]],
                     producer_name="onnxlint-examples")
    m.ir_version = 8
    return m


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def build() -> dict[str, onnx.ModelProto]:
    rng = np.random.default_rng(0)
    w = nh.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    b = nh.from_array(np.zeros(8, np.float32), "b")
    out = {}
    out["clean_conv.onnx"] = model(
        [h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c"], ["y"], name="relu")],
        [vi("x", T.FLOAT, ["batch", 3, 32, 32])], [vi("y", T.FLOAT, ["batch", 8, 32, 32])], [w, b])
    scales = nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    out["resize_opset10.onnx"] = model(
        [h.make_node("Resize", ["x", "scales"], ["y"], name="resize", mode="nearest")],
        [vi("x", T.FLOAT, ["batch", 3, 16, 16])], [vi("y", T.FLOAT, ["batch", 3, 32, 32])], [scales], opset=10)
    out["gridsample_custom_domain.onnx"] = model(
        [h.make_node("GridSample", ["x", "grid"], ["y"], name="grid_sample", domain="mmcv", align_corners=0)],
        [vi("x", T.FLOAT, ["batch", 3, 16, 16]), vi("grid", T.FLOAT, ["batch", 16, 16, 2])],
        [vi("y", T.FLOAT, ["batch", 3, 16, 16])], opset=13, extra_opsets=[("mmcv", 1)])
    ratio = nh.from_array(np.array(0.5, np.float32), "ratio")
    train = nh.from_array(np.array(True), "training_mode")
    out["dropout_training.onnx"] = model(
        [h.make_node("Dropout", ["x", "ratio", "training_mode"], ["y"], name="dropout", seed=0)],
        [vi("x", T.FLOAT, ["batch", 16])], [vi("y", T.FLOAT, ["batch", 16])], [ratio, train])
    bn = [nh.from_array(v, n) for v, n in ((np.ones(3, np.float32), "scale"), (np.zeros(3, np.float32), "bias"),
                                           (np.zeros(3, np.float32), "mean"), (np.ones(3, np.float32), "var"))]
    out["batchnorm_training.onnx"] = model(
        [h.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn", training_mode=1)],
        [vi("x", T.FLOAT, ["batch", 3, 8, 8])], [vi("y", T.FLOAT, ["batch", 3, 8, 8])], bn)
    out["double_input.onnx"] = model(
        [h.make_node("Relu", ["x"], ["y"], name="relu")],
        [vi("x", T.DOUBLE, ["batch", 4])], [vi("y", T.DOUBLE, ["batch", 4])])
    out["static_batch.onnx"] = model(
        [h.make_node("Relu", ["x"], ["y"], name="relu")],
        [vi("x", T.FLOAT, [1, 3, 8, 8])], [vi("y", T.FLOAT, [1, 3, 8, 8])])
    out["custom_op.onnx"] = model(
        [h.make_node("FancyNorm", ["x"], ["y"], name="my_op", domain="com.example.ops")],
        [vi("x", T.FLOAT, ["batch", 4])], [vi("y", T.FLOAT, ["batch", 4])], extra_opsets=[("com.example.ops", 1)])
    out["equal_mismatch.onnx"] = model(
        [h.make_node("Equal", ["a", "b"], ["y"], name="eq")],
        [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])
    up2 = nh.from_array(np.array([1, 1, 2, 2], np.float32), "up2")
    out["resize_align_corners.onnx"] = model(
        [h.make_node("Resize", ["x", "", "up2"], ["y"], name="resize", mode="linear",
                     coordinate_transformation_mode="align_corners")],
        [vi("x", T.FLOAT, [1, 3, 16, 16])], [vi("y", T.FLOAT, [1, 3, 32, 32])], [up2])
    idx = nh.from_array(np.array([[0], [2]], np.int64), "indices")
    out["scatternd.onnx"] = model(
        [h.make_node("ScatterND", ["x", "indices", "updates"], ["y"], name="scatter")],
        [vi("x", T.FLOAT, [4, 4]), vi("updates", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [4, 4])], [idx])
    out["equal_string_cuda.onnx"] = model(
        [h.make_node("Equal", ["a", "b"], ["y"], name="eq")],
        [vi("a", T.STRING, ["n"]), vi("b", T.STRING, ["n"])], [vi("y", T.BOOL, ["n"])], opset=19)
    return out


def main(outdir: str | None = None) -> None:
    dest = Path(outdir) if outdir else Path(__file__).resolve().parent
    dest.mkdir(parents=True, exist_ok=True)
    for name, m in build().items():
        onnx.save(m, dest / name)
    print(f"wrote {len(EXPECTED)} models to {dest}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
