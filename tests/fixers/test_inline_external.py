"""inline-small-tensors: OLX007's fix for a model ORT refuses because a value its graph resolution reads (a Reshape's
shape, Unsqueeze's axes) is stored in the external data file (a model saved with `size_threshold=0`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ort = pytest.importorskip("onnxruntime")

REFUSED = "Cannot parse data from external tensors"


def _save_all_external(model: onnx.ModelProto, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "m.onnx"
    onnx.save(model, p, save_as_external_data=True, all_tensors_to_one_file=True, location="m.onnx.data",
              size_threshold=0, convert_attribute=True)
    return p


def _model(type_error: bool = False) -> onnx.ModelProto:
    """x -> Reshape(shape) -> MatMul(w, 384 bytes) -> MatMul(big, 2048 bytes) -> Add(Constant) -> Unsqueeze(axes);
    type_error: an Add of that float and an int64 initializer after it (a Type Error ORT meets once it reads the
    shape)."""
    rs = np.random.RandomState(0)
    inits = [numpy_helper.from_array(np.array([2, 12], np.int64), "shape"),
             numpy_helper.from_array(rs.rand(12, 8).astype(np.float32), "w"),
             numpy_helper.from_array(rs.rand(8, 256).astype(np.float32), "big"),
             numpy_helper.from_array(np.array([0], np.int64), "axes")]
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             helper.make_node("MatMul", ["r", "w"], ["m"], name="mm"),
             helper.make_node("MatMul", ["m", "big"], ["m2"], name="mm2"),
             helper.make_node("Constant", [], ["c"], name="const",
                              value=numpy_helper.from_array(np.linspace(0, 1, 256).astype(np.float32))),
             helper.make_node("Add", ["m2", "c"], ["a"], name="add"),
             helper.make_node("Unsqueeze", ["a", "axes"], ["y"], name="unsq")]
    if type_error:
        inits.append(numpy_helper.from_array(np.ones(256, np.int64), "ints"))
        nodes.append(helper.make_node("Add", ["y", "ints"], ["z"], name="bad_add"))
    out = ("z", [1, 2, 256]) if type_error else ("y", [1, 2, 256])
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                          [helper.make_tensor_value_info(out[0], TensorProto.FLOAT, out[1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _olx007(lint_json, p: Path) -> dict:
    _, found = lint_json(p)
    return next(f for f in found if f["code"] == "OLX007")


def _outputs_whole(p: Path, x: np.ndarray) -> list:
    """The original's outputs, its data loaded whole into the model (onnx.load reads it from the model's folder)."""
    return ort.InferenceSession(onnx.load(p).SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})


def test_olx007_for_a_value_in_the_data_file_is_fixable(tmp_path, lint_json):
    p = _save_all_external(_model(), tmp_path)
    with pytest.raises(Exception, match=REFUSED):
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
    f = _olx007(lint_json, p)
    assert REFUSED in f["message"] and f["fixable"] and f["fix"] == "inline-small-tensors", f
    assert f["hint"] == "fixable with --fix (inline-small-tensors)"


def test_olx007_of_another_cause_is_not_fixable(tmp_path, lint_json):
    """The model ORT refuses for the shape in its data file, and for a Type Error once it reads it: moving the
    small tensors in does not make it load, so the finding is not fixable, and its hint is the one OLX007 had."""
    p = _save_all_external(_model(type_error=True), tmp_path / "both")
    f = _olx007(lint_json, p)
    assert REFUSED in f["message"] and not f["fixable"] and f["fix"] is None and f["hint"] == "no automatic fix", f
    m = _model(type_error=True)  # the same model, its tensors in the file: a Type Error alone
    onnx.save(m, tmp_path / "plain.onnx")
    f = _olx007(lint_json, tmp_path / "plain.onnx")
    assert "inconsistent type" in f["message"] and not f["fixable"] and f["hint"] == "no automatic fix", f


def test_fix_in_place_loads_on_ort_and_computes_what_the_original_does(tmp_path, cli):
    p = _save_all_external(_model(), tmp_path)
    x = np.random.RandomState(1).rand(2, 3, 4).astype(np.float32)
    want = _outputs_whole(p, x)
    data = (tmp_path / "m.onnx.data").read_bytes()
    rc, out, err = cli(p, "--fix")
    assert "wrote" in out and "(inline-small-tensors)" in out, out + err
    assert ("numeric check: the original cannot run ([ONNXRuntimeError] : 1 : FAIL : Node (reshape) Op (Reshape) "
            "[ShapeInferenceError] Cannot parse data from external tensors") in out, out
    assert "so only the fixed model was run" in out
    got = ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    # the data file stays as it was; the tensors past 1024 bytes are still read from it, the small ones are in the model
    assert (tmp_path / "m.onnx.data").read_bytes() == data
    fixed = onnx.load(p, load_external_data=False)
    external = {t.name for t in fixed.graph.initializer if t.data_location == TensorProto.EXTERNAL}
    assert external == {"big"}, external
    const = next(n for n in fixed.graph.node if n.op_type == "Constant").attribute[0].t
    assert const.data_location != TensorProto.EXTERNAL and len(const.raw_data) == 1024


def test_fix_into_another_folder_copies_the_data_still_used(tmp_path, cli):
    p = _save_all_external(_model(), tmp_path / "src")
    x = np.random.RandomState(2).rand(2, 3, 4).astype(np.float32)
    want = _outputs_whole(p, x)
    out_dir = tmp_path / "out"
    rc, out, err = cli(p, "--fix", "-o", f"{out_dir}{os.sep}")
    assert f"wrote {out_dir / 'm.onnx'}" in out, out + err
    os.chdir(tmp_path)  # ORT reads the data beside the model, wherever it runs
    got = ort.InferenceSession(str(out_dir / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    fixed = onnx.load(out_dir / "m.onnx", load_external_data=False)
    where = {e.value for t in fixed.graph.initializer for e in t.external_data if e.key == "location"}
    assert where == {"m.onnx.data"} and (out_dir / "m.onnx.data").exists()
    assert not (tmp_path / "src" / "m.onnx").read_bytes() == (out_dir / "m.onnx").read_bytes()


def _reshape(shape: list[int], x_dims: list[int], y_dims: list[int] | None) -> onnx.ModelProto:
    """One Reshape of x (x_dims) to `shape` (an int64 initializer), its output declared y_dims (None: no shape)."""
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_dims)],
                          [numpy_helper.from_array(np.array(shape, np.int64), "shape")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_a_checker_complaint_the_original_has_too_does_not_block_the_fix(tmp_path, cli):
    """Every tensor moved in (none past the limit): the fixed model has no external data and onnx's checker runs on
    it in memory, the original's only by path. A complaint both files have (a graph output with no shape) was taken
    for the fix's own: 'fixed model fails the checker or shape inference', though OLX007 was marked fixable."""
    p = _save_all_external(_reshape([2, 3], [6], None), tmp_path)
    with pytest.raises(onnx.checker.ValidationError, match="Field 'shape' of 'type'"):
        onnx.checker.check_model(str(p))
    rc, out, err = cli(p, "--fix")
    assert "wrote" in out and "(inline-small-tensors)" in out, out + err
    assert ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(
        None, {"x": np.arange(6, dtype=np.float32)})[0].shape == (2, 3)


def test_diff_shows_the_values_moved_in_and_writes_nothing(tmp_path, cli):
    p = _save_all_external(_model(), tmp_path)
    before = p.read_bytes()
    rc, out, err = cli(p, "--diff")
    assert "+   <int64[2] shape = [2, 12]>" in out and "would write" in out, out + err
    assert p.read_bytes() == before


def test_a_value_past_the_limit_stays_in_the_data_file(tmp_path, lint_json):
    """A Reshape whose shape is past 1024 bytes (129 int64 dims: no model has one) is not moved, so ORT still
    refuses: not claimed fixable."""
    dims = [1] * 129
    p = _save_all_external(_reshape(dims, [1], dims), tmp_path)
    f = _olx007(lint_json, p)
    assert REFUSED in f["message"] and not f["fixable"], f


def test_the_fixer_reads_the_models_own_data_file_not_the_working_folders(tmp_path, monkeypatch):
    """A data file of that name in the working folder (onnx's to_array reads there) is never read."""
    from onnxlint import fixers

    p = _save_all_external(_model(), tmp_path / "src")
    decoy = tmp_path / "cwd"
    decoy.mkdir()
    (decoy / "m.onnx.data").write_bytes(b"\xff" * (tmp_path / "src" / "m.onnx.data").stat().st_size)
    monkeypatch.chdir(decoy)
    model = onnx.load(p, load_external_data=False)
    fixed, applied, _ = fixers.apply(model, [fixers.FixRequest("inline-small-tensors", None, "any")], unsafe=False,
                                     base_dir=p.parent)
    assert applied == ["inline-small-tensors"]
    shape = next(t for t in fixed.graph.initializer if t.name == "shape")
    assert numpy_helper.to_array(shape).tolist() == [2, 12]
    assert json.dumps(applied)


def test_olx007_is_not_fixable_where_resolve_then_meets_an_op_with_no_schema(tmp_path, lint_json):
    """The shape in the data file is what ORT names first; once it is read, Graph::Resolve meets an op no schema
    defines (a TF PartitionedCall tf2onnx left: hf-tf convnext of the producer set), so the fixed model is refused
    too: not claimed fixable (OLX202/OLX014 name that node)."""
    m = _model()
    m.graph.node.append(helper.make_node("PartitionedCall", ["y"], ["z"], name="tf_call", domain="com.acme"))
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    m.opset_import.append(helper.make_opsetid("com.acme", 1))
    p = _save_all_external(m, tmp_path)
    f = _olx007(lint_json, p)
    assert REFUSED in f["message"] and not f["fixable"] and f["hint"] == "no automatic fix", f


def test_the_fixed_model_alone_is_run_at_a_size_it_runs_at(tmp_path, cli):
    """The original cannot run, so only the fixed model is: it was run at the first size tried alone, where a 3x3
    Conv without pads cannot run on a 1x1 image ("Invalid input shape"), and the fix was not written ("neither the
    original nor the fixed model runs"; the producer set's MobileNetV3 and UNet). It is run at the sizes the check
    tries for an original, until one runs."""
    rs = np.random.RandomState(0)
    inits = [numpy_helper.from_array(rs.rand(2, 1, 3, 3).astype(np.float32), "k"),
             numpy_helper.from_array(np.array([1, -1], np.int64), "shape")]
    nodes = [helper.make_node("Conv", ["x", "k"], ["c"], name="conv"),
             helper.make_node("Reshape", ["c", "shape"], ["y"], name="flat")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "H", "W"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    p = _save_all_external(m, tmp_path)
    rc, out, err = cli(p, "--fix")
    assert "so only the fixed model was run" in out and "wrote" in out, out + err
    ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])


def test_a_long_refusal_quoted_in_the_note_says_it_was_cut(tmp_path, cli):
    """ORT's words past 200 characters were cut mid-sentence ("... into raw data ), so only the fixed model was run",
    a tf2onnx MobileNet's long node name): the cut is marked."""
    m = _model()
    m.graph.node[0].name = "MobilenetV3small/expanded_conv/depthwise/pad/" + "x" * 120
    p = _save_all_external(m, tmp_path)
    rc, out, err = cli(p, "--fix")
    assert "…), so only the fixed model was run" in out, out + err


def test_olx007_fixable_is_kept_where_the_cpu_ep_has_no_kernel_for_a_node(tmp_path, cli, lint_json):
    """A bfloat16 Sqrt-13 (a CUDA kernel, no CPU one) before a Reshape whose shape is in the data file: OLX007 says
    `fixable with --fix`, and --fix wrote nothing ("neither the original nor the fixed model runs on ORT CPU: ...
    Could not find an implementation for Sqrt(13)"), a promise not kept. ORT raises that after its graph
    resolution accepted the fixed model, what inline-small-tensors was claimed to give, and the fix only moves
    stored bytes: it is written, the note saying it was not run, and the written model's OLX007 is gone."""
    x = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3, 2])
    nodes = [helper.make_node("Sqrt", ["x"], ["s"], name="sqrt"),
             helper.make_node("Reshape", ["s", "shape"], ["y"], name="reshape")]
    g = helper.make_graph(nodes, "g", [x], [y], [numpy_helper.from_array(np.array([3, 2], np.int64), "shape")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    whole = m.SerializeToString()
    p = _save_all_external(m, tmp_path / "src")
    with pytest.raises(Exception, match="Could not find an implementation for Sqrt"):
        ort.InferenceSession(whole, providers=["CPUExecutionProvider"])
    f = _olx007(lint_json, p)
    assert f["fixable"] and f["fix"] == "inline-small-tensors", f
    out_dir = tmp_path / "out"
    rc, out, err = cli(p, "--fix", "-o", f"{out_dir}{os.sep}")
    assert "numeric check: not run: ORT CPU has no kernel for a node of either model (" in out, out + err
    assert "Sqrt(13)" in out and "inline-small-tensors only moved stored bytes" in out, out
    assert f"wrote {out_dir / 'm.onnx'}" in out and rc == 0, out + err
    _, found = lint_json(out_dir / "m.onnx")
    assert not [g for g in found if g["code"] == "OLX007"], found
    fixed = onnx.load(out_dir / "m.onnx")
    assert numpy_helper.to_array(fixed.graph.initializer[0]).tolist() == [3, 2]


def test_a_fix_that_changes_nodes_is_not_written_unrun():
    """Only a fix that moves stored bytes is written where neither model runs for a missing CPU kernel: any other
    (a training-mode Dropout made an Identity, a Cast inserted) keeps the refusal."""
    from onnxlint.fixers import equivalence

    error = ("neither the original nor the fixed model runs on ORT CPU: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : "
             "Could not find an implementation for Sqrt(13) node with name 'n0'")
    assert equivalence._unrun_storage_fix(error, ["inline-small-tensors"]).startswith("not run: ")
    assert equivalence._unrun_storage_fix(error, ["inline-small-tensors", "dropout-inference"]) is None
    assert equivalence._unrun_storage_fix(error, ["equal-cast"]) is None
    assert equivalence._unrun_storage_fix(error.replace("Could not find an implementation for", "Invalid"),
                                          ["inline-small-tensors"]) is None
