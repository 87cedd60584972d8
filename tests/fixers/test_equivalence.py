"""The numeric check (fixers/equivalence.py): the fixed model and the original run on the same inputs."""

import numpy as np
import onnx
import pytest
from fix_cases import _model
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnxlint import fixers
from onnxlint.fixers import equivalence


def test_equivalence_check_rejects_a_changed_model(examples_dir):
    m = onnx.load(examples_dir / "clean_conv.onnx")
    broken = onnx.load(examples_dir / "clean_conv.onnx")
    broken.graph.node[1].op_type = "Sigmoid"
    with pytest.raises(fixers.FixError, match="differs"):
        fixers.check_equivalent(m, broken)


def test_numeric_check_tries_sizes_until_the_original_runs():
    """A model that only runs when its spatial dims are a multiple of 8 (like a strided detector) and at an
    even batch: the check finds sizes that run and compares at two of them."""
    nodes = [h.make_node("Reshape", ["x", "shp"], ["r"], name="pairs"),
             h.make_node("SpaceToDepth", ["x"], ["s"], name="s2d", blocksize=8),
             h.make_node("ReduceSum", ["s"], ["y"], name="sum", keepdims=0)]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n", 1, "h", "w"])],
               [h.make_tensor_value_info("y", T.FLOAT, []), h.make_tensor_value_info("r", T.FLOAT, None)],
               [nh.from_array(np.array([2, -1], np.int64), "shp")], opset=13)
    text = equivalence.check_equivalent(m, m)
    assert text.startswith("outputs equal at") and " and " in text, text
    assert "n=2" in text and "h=8" in text
    text = equivalence.check_equivalent(m, m, shapes={"x": [4, 1, 16, 16]})
    assert text == "outputs equal at fixed shapes", text


def test_numeric_check_sizes_a_dim_that_is_a_sum_of_symbols():
    """optimum's KV-cache decoders declare attention_mask [batch, "past_sequence_length + sequence_length"]: the
    check gives that dim the sum of the two symbols' sizes, so the original runs (it found no size before)."""
    nodes = [h.make_node("Concat", ["past", "new"], ["kv"], name="cat", axis=1),
             h.make_node("Add", ["kv", "mask"], ["y"], name="add")]
    m = _model(nodes, [h.make_tensor_value_info("past", T.FLOAT, ["batch", "past_len"]),
                       h.make_tensor_value_info("new", T.FLOAT, ["batch", "seq"]),
                       h.make_tensor_value_info("mask", T.FLOAT, ["batch", "past_len + seq"])],
               [h.make_tensor_value_info("y", T.FLOAT, None)], [], opset=13)
    text = equivalence.check_equivalent(m, m)
    assert text.startswith("outputs equal at batch=1, past_len=1, seq=1 and batch=2, past_len=2, seq=2"), text


def test_numeric_check_takes_a_symbolic_channel_count_from_the_conv_weight():
    """optimum's ViT declares pixel_values [batch_size, num_channels, height, width]: every non-batch symbol took
    one size, and no size made 3 channels and a 16-pixel patch at once. The Conv's weight fixes the channels."""
    nodes = [h.make_node("Conv", ["x", "w"], ["y"], name="patch", kernel_shape=[4, 4], strides=[4, 4])]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["batch", "channels", "height", "width"])],
               [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(np.ones((8, 3, 4, 4), np.float32), "w")],
               opset=13)
    text = equivalence.check_equivalent(m, m)
    assert text.startswith("outputs equal at batch=1, height=4, width=4"), text


def test_numeric_check_says_why_the_original_cannot_run():
    nodes = [h.make_node("Reshape", ["x", "shp"], ["y"], name="bad")]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [3])], [h.make_tensor_value_info("y", T.FLOAT, None)],
               [nh.from_array(np.array([2, 2], np.int64), "shp")], opset=13)
    fixed = onnx.ModelProto()
    fixed.CopyFrom(m)
    fixed.graph.node[0].input[1] = "shp3"
    fixed.graph.initializer.append(nh.from_array(np.array([3], np.int64), "shp3"))
    text = equivalence.check_equivalent(m, fixed)
    assert text.startswith("the original cannot run (") and "Reshape" in text or "shape" in text.lower(), text


def test_numeric_check_tolerance_per_dtype():
    equivalence.compare(0, np.float16([1.0, 2.0]), np.float16([1.0, 2.001]))
    equivalence.compare(0, np.float32([1.0, 1000.0]), np.float32([1.0, 1000.0 + 1e-3]))
    with pytest.raises(fixers.FixError):
        equivalence.compare(0, np.float32([1.0, 2.0]), np.float32([1.0, 2.1]))
    with pytest.raises(fixers.FixError):
        equivalence.compare(0, np.int64([1, 2]), np.int64([1, 3]))


def _add_with_external_weights(folder):
    """y = x + arange(8), saved as folder/m.onnx with its weight in folder/m.data; loaded without the data."""
    w = nh.from_array(np.arange(8, dtype=np.float32), "w")
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [8])], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.save(m, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    return onnx.load(folder / "m.onnx", load_external_data=False)


def test_a_session_of_a_model_with_external_data_writes_nothing_in_its_folder(tmp_path, monkeypatch):
    """The check child's session of a model with external data loaded from a file written in the model's folder:
    a read-only folder failed the check. ORT (1.21 and later) reads the weights from that folder named as theirs."""
    import os
    import tempfile

    import onnxruntime

    if tuple(int(p) for p in onnxruntime.__version__.split(".")[:2]) < (1, 21):
        pytest.skip(f"ORT {onnxruntime.__version__} reads external data beside the model file only")
    model = _add_with_external_weights(tmp_path)
    made: list[str] = []
    real = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", lambda *a, **k: made.append(k.get("dir")) or real(*a, **k))
    run = equivalence.session(model, tmp_path)
    assert run({"x": np.ones(8, np.float32)})[0].tolist() == [float(k + 1) for k in range(8)]
    assert made == [] and sorted(os.listdir(tmp_path)) == ["m.data", "m.onnx"]


def test_an_ort_1_20_session_of_a_model_with_external_data_writes_nothing_in_its_folder(tmp_path, monkeypatch):
    """ORT 1.20 ignores the data-folder option: the check's session loaded the model from a file written in the
    model's folder (`.onnxlint-check.XXXXXXXX.s.XXXXXXXX.onnx`, measured with ORT 1.20.1: a write into the
    repository under review). It loads one in a temporary folder beside a link to the data file (ORT 1.20.1 follows
    it; the installed ORT, which would refuse such a link, is stood in for)."""
    import os

    import onnxruntime

    model = _add_with_external_weights(tmp_path)
    seen = []

    class Session:  # ORT 1.20's reading: the data beside the model file it loads
        def __init__(self, source, so, providers):
            assert isinstance(source, str), "ORT 1.20 needs a file"
            seen.append((os.path.dirname(source), sorted(os.listdir(tmp_path))))
            self.w = np.fromfile(os.path.join(os.path.dirname(source), "m.data"), np.float32)

        def run(self, names, feeds):
            return [feeds["x"] + self.w]

    monkeypatch.setattr(onnxruntime, "__version__", "1.20.1")
    monkeypatch.setattr(onnxruntime, "InferenceSession", Session)
    run = equivalence.session(model, tmp_path)
    assert run({"x": np.ones(8, np.float32)})[0].tolist() == [float(k + 1) for k in range(8)]
    assert seen[0][0] != str(tmp_path) and seen[0][1] == ["m.data", "m.onnx"], seen
    assert sorted(os.listdir(tmp_path)) == ["m.data", "m.onnx"] and not os.path.exists(seen[0][0])
