"""batchnorm-inference (fixers/batchnorm.py): a training-mode BatchNormalization in its inference form, checked
against the original run with training_mode=0 (its reference), claimed only where nothing reads the running
statistics."""

import numpy as np
import onnx
from fix_cases import _apply, _model, _ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxlint
from onnxlint.fixers.base import REGISTRY


def test_training_mode_is_dropped_and_the_outputs_are_the_references(examples_dir):
    m = onnx.load(examples_dir / "batchnorm_training.onnx")
    fixed, applied, _ = _apply(m, "batchnorm-inference")
    assert applied == ["batchnorm-inference"]
    (bn,) = [n for n in fixed.graph.node if n.op_type == "BatchNormalization"]
    assert list(bn.output) == ["y"] and not any(a.name == "training_mode" for a in bn.attribute)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    reference = REGISTRY["batchnorm-inference"].reference(m)
    np.testing.assert_allclose(_ort(fixed, {"x": x})[0], _ort(reference, {"x": x})[0], rtol=1e-6, atol=1e-6)


def test_a_batchnorm_whose_running_mean_is_read_is_not_claimed():
    stats = [nh.from_array(np.ones(3, np.float32), n) for n in ("scale", "bias", "mean", "var")]
    nodes = [h.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y", "rm", "rv"], name="bn",
                         training_mode=1),
             h.make_node("Identity", ["rm"], ["m"], name="use_mean")]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4, 4])],
               [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 4, 4]), h.make_tensor_value_info("m", T.FLOAT, [3])], stats)
    found = [f for f in onnxlint.lint(m).findings if f.code == "OLX011"]
    assert found and not found[0].fixable
