import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxlint
from onnxlint import fixers
from onnxlint.config.settings import Settings
from onnxlint.fixers import equivalence
from onnxlint.fixers import write as fix_write
from onnxlint.linting import fixing


def _apply(model, fixer):
    """The fixer on the findings that name it, as `--fix` runs it (findings from an in-memory lint)."""
    report = onnxlint.lint(model)
    requests = [fixers.FixRequest(f.fix, f.node, f.target) for f in report.findings if f.fix == fixer]
    assert requests, f"no finding names {fixer}"
    return fixers.apply(model, requests, unsafe=False)

def _copy(examples_dir, tmp_path, name):
    p = tmp_path / name
    p.write_bytes((examples_dir / name).read_bytes())
    return p


@pytest.mark.parametrize("name,code", [("dropout_training.onnx", "OLX010"), ("batchnorm_training.onnx", "OLX011"),
                                       ("equal_mismatch.onnx", "OLX015"), ("resize_opset10.onnx", "OLX020"),
                                       ("gridsample_custom_domain.onnx", "OLX021"), ("resize_align_corners.onnx", "OLX301")])
def test_fix_removes_safe_findings(tmp_path, examples_dir, cli, lint_json, name, code):
    p = _copy(examples_dir, tmp_path, name)
    rc, out, _ = cli(p, "--fix")
    assert "fixed" in out and "fix not written" not in out, out
    onnx.checker.check_model(onnx.load(p))
    _, after = lint_json(p)
    assert not any(f["code"] == code for f in after)


def test_diff_writes_nothing(tmp_path, examples_dir, cli):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    rc, out, _ = cli(p, "--diff")
    assert "-      [dropout] y = Dropout" in out and "+      [dropout] y = Identity" in out, out
    assert p.read_bytes() == before


def test_unsafe_fix_needs_flag(tmp_path, examples_dir, cli, lint_json):
    p = _copy(examples_dir, tmp_path, "double_input.onnx")
    rc, out, _ = cli(p, "--fix")
    assert "need --unsafe-fixes" in out
    rc, out, _ = cli(p, "--fix", "--unsafe-fixes", "--select", "OLX012")
    _, after = lint_json(p, "--select", "OLX012")
    assert after == []


def test_injected_failure_leaves_original_untouched(tmp_path, examples_dir):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    m = onnx.load(p)
    fixed, applied, _ = _apply(m, "dropout-inference")
    with pytest.raises(OSError):
        fixers.atomic_write(fixed, p, _fail_after_write=True)
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["dropout_training.onnx"]


def test_read_only_target_reports_cleanly(tmp_path, examples_dir, cli):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    d = tmp_path / "ro"
    d.mkdir()
    p = _copy(examples_dir, d, "dropout_training.onnx")
    before = p.read_bytes()
    d.chmod(0o500)
    try:
        rc, out, _ = cli(p, "--fix")
    finally:
        d.chmod(0o700)
    assert "fix not written" in out and p.read_bytes() == before


def test_equivalence_check_rejects_a_changed_model(examples_dir):
    m = onnx.load(examples_dir / "clean_conv.onnx")
    broken = onnx.load(examples_dir / "clean_conv.onnx")
    broken.graph.node[1].op_type = "Sigmoid"
    with pytest.raises(fixers.FixError, match="differs"):
        fixers.check_equivalent(m, broken)


def test_disk_full_leaves_original_and_no_temp_file(tmp_path, examples_dir, cli, monkeypatch):
    import errno

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fix_write.os, "fsync", full)
    rc, out, _ = cli(p, "--fix")
    assert "fix not written" in out and "No space left on device" in out
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["dropout_training.onnx"]


def test_read_only_folder_simulated(tmp_path, examples_dir, cli, monkeypatch):
    """Root ignores permissions, so the read-only case is simulated where the temp file is created."""
    import errno

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()

    def denied(*a, **k):
        raise PermissionError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(fix_write.tempfile, "mkstemp", denied)
    rc, out, _ = cli(p, "--fix")
    assert "fix not written" in out and "Read-only file system" in out
    assert p.read_bytes() == before


def _external_dropout_model(folder, output_shape=("n", 1024)):
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    folder.mkdir()
    w = nh.from_array(np.arange(1024, dtype=np.float32), "w")
    b = nh.from_array(np.full(1024, 3.0, np.float32), "b")
    g = h.make_graph([h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop"),
                      h.make_node("Add", ["d", "w"], ["s"], name="add"), h.make_node("Mul", ["s", "b"], ["y"], name="mul")],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 1024])], [h.make_tensor_value_info("y", T.FLOAT, output_shape)],
                     [w, b, nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "tm")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8  # onnxruntime 1.24 (the test pin) reads IR <= 13
    onnx.save(m, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=1024)
    return folder / "m.onnx"


def _outputs(path):
    import numpy as np
    import onnxruntime as ort

    x = np.random.default_rng(1).standard_normal((2, 1024)).astype(np.float32)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_external_data_model_fixed_in_place_keeps_its_data_file(tmp_path, cli, lint_json):
    p = _external_dropout_model(tmp_path / "src")
    data_before = (tmp_path / "src" / "m.data").read_bytes()
    rc, text, _ = cli(p, "--fix")
    assert " fixed, " in text and "fix not written" not in text, text
    assert (tmp_path / "src" / "m.data").read_bytes() == data_before
    assert not any(f["code"] == "OLX010" for f in lint_json(p)[1])
    assert sorted(os.listdir(tmp_path / "src")) == ["m.data", "m.onnx"]  # no temp files left


def test_output_naming_the_models_own_data_file_is_refused(tmp_path, cli):
    """-o never clobbers an input: not the model's external data file either."""
    p = _external_dropout_model(tmp_path / "src")
    data_before = (tmp_path / "src" / "m.data").read_bytes()
    rc, out, err = cli(p, "--fix", "-o", tmp_path / "src" / "m.data")
    assert rc == 2 and "external data file" in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "src" / "m.data").read_bytes() == data_before


def test_external_data_model_fixed_into_another_folder_gets_its_own_data(tmp_path, cli, monkeypatch):
    import numpy as np

    p = _external_dropout_model(tmp_path / "src")
    x = np.random.default_rng(1).standard_normal((2, 1024)).astype(np.float32)
    expected = (x + np.arange(1024, dtype=np.float32)) * 3.0  # Dropout in inference form is the identity
    out = tmp_path / "elsewhere"
    out.mkdir()
    reads = []
    real_open = open

    def spy(file, mode="r", *a, **k):
        fh = real_open(file, mode, *a, **k)
        if str(file).endswith("m.data") and "r" in mode:
            fh = _Reader(fh, reads)
        return fh

    monkeypatch.setattr("builtins.open", spy)
    monkeypatch.setattr(fix_write, "COPY_CHUNK", 1000)
    rc, text, _ = cli(p, "--fix", "-o", out / "fixed.onnx")
    monkeypatch.undo()
    assert " fixed, " in text, text
    assert reads and max(reads) <= 1000  # streamed, never the whole file at once
    assert sorted(os.listdir(out)) == ["fixed.onnx", "fixed.onnx.data"]
    fixed = onnx.load(out / "fixed.onnx", load_external_data=False)
    assert {e.value for t in fixed.graph.initializer for e in t.external_data if e.key == "location"} == {"fixed.onnx.data"}
    assert "Dropout" not in {n.op_type for n in fixed.graph.node}
    np.testing.assert_array_equal(_outputs(out / "fixed.onnx"), expected)
    (tmp_path / "src" / "m.data").unlink()  # the copy does not depend on the source folder
    np.testing.assert_array_equal(_outputs(out / "fixed.onnx"), expected)


class _Reader:
    def __init__(self, fh, sizes):
        self._fh, self._sizes = fh, sizes

    def read(self, n=-1):
        data = self._fh.read(n)
        self._sizes.append(len(data))
        return data

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def test_external_data_fix_failure_removes_the_new_data_file(tmp_path, cli, monkeypatch):
    p = _external_dropout_model(tmp_path / "src")
    out = tmp_path / "elsewhere"
    out.mkdir()

    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fix_write, "atomic_write", broken)
    rc, text, _ = cli(p, "--fix", "-o", out / "fixed.onnx")
    assert "fix not written" in text and "No space left" in text
    assert os.listdir(out) == []


def _grid_model(node, opset=13, extra=()):
    from onnx import TensorProto as T
    from onnx import helper as h

    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 5, 5]),
                                   h.make_tensor_value_info("grid", T.FLOAT, [1, 4, 4, 2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 4, 4])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), *[h.make_opsetid(d, v) for d, v in extra]])
    m.ir_version = 8
    return m


def _run(model, x, grid):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x, "grid": grid})[0]


def test_gridsample_com_microsoft_becomes_standard_and_numerics_are_checked(tmp_path, cli, lint_json):
    from onnx import helper as h

    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="com.microsoft",
                       mode="bicubic", padding_mode="reflection", align_corners=1)
    m = _grid_model(node, extra=[("com.microsoft", 1)])
    p = tmp_path / "gs.onnx"
    onnx.save(m, p)
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text and "only the fixed model" not in text, text  # ORT CPU runs the contrib original
    fixed = onnx.load(p)
    n = fixed.graph.node[0]
    assert (n.domain, n.op_type) == ("", "GridSample") and fixed.opset_import[0].version == 16
    assert {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} == {
        "mode": b"bicubic", "padding_mode": b"reflection", "align_corners": 1}
    assert not any(f["code"] == "OLX021" for f in lint_json(p)[1])


def test_mmcv_grid_sampler_integer_enums_map_to_the_same_sampling(tmp_path, cli):
    import numpy as np
    from onnx import helper as h

    node = h.make_node("grid_sampler", ["x", "grid"], ["y"], name="gs", domain="mmcv",
                       interpolation_mode=1, padding_mode=1, align_corners=1)  # nearest, border
    p = tmp_path / "mmcv.onnx"
    onnx.save(_grid_model(node, extra=[("mmcv", 1)]), p)
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text, text
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (1, 4, 4, 2)).astype(np.float32)
    same = h.make_node("GridSample", ["x", "grid"], ["y"], domain="com.microsoft", mode="nearest",
                       padding_mode="border", align_corners=1)
    np.testing.assert_allclose(_run(onnx.load(p), x, grid), _run(_grid_model(same, extra=[("com.microsoft", 1)]), x, grid))


def test_gridsample_with_unmapped_attribute_is_left_alone(tmp_path, cli):
    from onnx import helper as h

    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="mmcv", mode="bilinear", extra_flag=1)
    p = tmp_path / "odd.onnx"
    onnx.save(_grid_model(node, extra=[("mmcv", 1)]), p)
    before = p.read_bytes()
    rep = onnxlint.lint(p)
    assert [f.fixable for f in rep.findings if f.code == "OLX021"] == [False]  # no standard equivalent: not claimed
    rc, text, _ = cli(p, "--fix")
    assert "wrote" not in text, text
    assert p.read_bytes() == before


def test_fold_shapes_removes_cpu_shape_nodes_for_a_static_input(tmp_path, cli, lint_json):
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
             h.make_node("Concat", ["n1", "minus1"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["r"], name="reshape"),
             h.make_node("Relu", ["r"], ["y"], name="relu")]
    inits = [nh.from_array(np.array(0, np.int64), "zero"), nh.from_array(np.array([0], np.int64), "axes"),
             nh.from_array(np.array([-1], np.int64), "minus1")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 48])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = tmp_path / "shapes.onnx"
    onnx.save(m, p)
    # at ORT's default optimizations these shape nodes are folded away anyway: the fix is for sessions without
    _, before = lint_json(p, "--target", "ort-cuda", "--ort-optimization", "disabled")
    assert {f["node"] for f in before if f["code"] == "OLX201"} >= {"gather", "unsqueeze", "concat"}
    rc, text, _ = cli(p, "--fix", "--show-info", "--target", "ort-cuda", "--ort-optimization", "disabled")  # infos: shown, fixed
    assert "wrote" in text and "fix not written" not in text, text
    fixed = onnx.load(p)
    assert [n.op_type for n in fixed.graph.node] == ["Reshape", "Relu"]
    _, after = lint_json(p, "--target", "ort-cuda", "--ort-optimization", "disabled")
    assert not any(f["code"] == "OLX201" for f in after)


def test_resize_sizes_needs_static_scaled_dims(tmp_path, cli, lint_json):
    """A dynamic dim that is scaled (here the height) has no constant size: the fix is not claimed. (A dynamic
    batch at scale 1 is: test_resize_sizes_keeps_a_dynamic_batch.)"""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    g = h.make_graph([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear",
                                  coordinate_transformation_mode="align_corners")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 1, "h", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 1, "h2", 8])],
                     [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    p = tmp_path / "dyn.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    _, found = lint_json(p, "--target", "tensorrt")
    olx301 = [f for f in found if f["code"] == "OLX301"]
    assert olx301 and not olx301[0]["fixable"]  # no equivalent constant size for a scaled dynamic dim: not claimed
    rc, text, _ = cli(p, "--fix", "--target", "tensorrt")
    assert "wrote" not in text and p.read_bytes() == before


def test_resize_sizes_rewrite_is_numerically_identical(tmp_path, examples_dir):
    import numpy as np
    import onnxruntime as ort

    m = onnx.load(examples_dir / "resize_align_corners.onnx")
    fixed, applied, _ = _apply(m, "resize-sizes")
    assert applied == ["resize-sizes"] and list(fixed.graph.node[0].input)[2] == ""
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    run = lambda mm: ort.InferenceSession(mm.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(run(m), run(fixed))


def test_fix_over_the_examples_leaves_no_safely_fixable_finding(tmp_path, examples_dir, cli, lint_json):
    import shutil

    from onnxlint.fixers import REGISTRY

    d = tmp_path / "ex"
    shutil.copytree(examples_dir, d)
    _, before = lint_json(d)
    fixable = {(f["filename"], f["code"], f["node"]) for f in before if f["fix"] and REGISTRY[f["fix"]].safe}
    assert len({f for f, _, _ in fixable}) >= 6
    rc, out, _ = cli(d, "--fix")
    assert "fix not written" not in out, out
    _, after = lint_json(d)
    left = [(f["filename"], f["code"], f["node"]) for f in after if f["fix"] and REGISTRY[f["fix"]].safe]
    assert left == []
    for p in d.glob("*.onnx"):
        onnx.checker.check_model(onnx.load(p), full_check=True)


# ---------------------------------------------------------------- issue 16: fixes that work on real exports


def _model(nodes, inputs, outputs, inits=(), opset=17):
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _ort(model, feeds):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _equal_in_if_body():
    then = h.make_graph([h.make_node("Equal", ["a", "b"], ["eq"], name="eq_in_body")], "then", [],
                        [h.make_tensor_value_info("eq", T.BOOL, [3])])
    other = h.make_graph([h.make_node("Identity", ["c"], ["eq2"], name="id_else")], "else", [],
                         [h.make_tensor_value_info("eq2", T.BOOL, [3])])
    nodes = [h.make_node("If", ["cond"], ["y"], name="branch", then_branch=then, else_branch=other)]
    return _model(nodes, [h.make_tensor_value_info("cond", T.BOOL, []), h.make_tensor_value_info("a", T.INT64, [3]),
                          h.make_tensor_value_info("b", T.INT32, [3]), h.make_tensor_value_info("c", T.BOOL, [3])],
                  [h.make_tensor_value_info("y", T.BOOL, [3])])


def test_equal_inside_an_if_body_is_fixed(tmp_path, cli, lint_json):
    p = tmp_path / "if_equal.onnx"
    onnx.save(_equal_in_if_body(), p)
    _, before = lint_json(p)
    hit = [f for f in before if f["code"] == "OLX015"]
    assert hit and hit[0]["fixable"] and ":then_branch" in hit[0]["node"]
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text and "fix not written" not in text, text
    fixed = onnx.load(p)
    onnx.checker.check_model(fixed, full_check=True)
    body = next(a.g for a in fixed.graph.node[0].attribute if a.name == "then_branch")
    assert [n.op_type for n in body.node] == ["Cast", "Equal"]
    _, after = lint_json(p)
    assert not any(f["code"] == "OLX015" for f in after)
    a, b = np.array([1, 2, 3], np.int64), np.array([1, 0, 3], np.int32)
    out = _ort(fixed, {"cond": np.array(True), "a": a, "b": b, "c": np.zeros(3, bool)})[0]
    np.testing.assert_array_equal(out, a == b)


def _torch_resize(opset):
    """What torch's exporter writes for F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True):
    roi and scales as Constant nodes at opset 11 (an empty roi tensor), roi "" from opset 13."""
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 3, 5, 7])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 3, 10, 14])
    scales = h.make_node("Constant", [], ["sc"], name="Constant_1",
                         value=nh.from_array(np.array([1, 1, 2, 2], np.float32)))
    attrs = dict(mode="linear", coordinate_transformation_mode="align_corners", nearest_mode="floor")
    if opset < 13:
        roi = h.make_node("Constant", [], ["roi"], name="Constant_0", value=nh.from_array(np.zeros(0, np.float32)))
        nodes = [roi, scales, h.make_node("Resize", ["x", "roi", "sc"], ["y"], name="Resize_2", **attrs)]
    else:
        nodes = [scales, h.make_node("Resize", ["x", "", "sc"], ["y"], name="Resize_2", **attrs)]
    return _model(nodes, [x], [y], opset=opset)


@pytest.mark.parametrize("opset", [11, 12, 13, 17, 20])
def test_resize_sizes_on_torch_style_exports(tmp_path, cli, lint_json, opset):
    m = _torch_resize(opset)
    p = tmp_path / f"resize{opset}.onnx"
    onnx.save(m, p)
    _, before = lint_json(p, "--target", "tensorrt")
    assert any(f["code"] == "OLX301" and f["fixable"] for f in before)
    rc, text, _ = cli(p, "--fix", "--target", "tensorrt")
    assert "wrote" in text and "fix not written" not in text, text
    fixed = onnx.load(p)
    onnx.checker.check_model(fixed, full_check=True)
    rz = [n for n in fixed.graph.node if n.op_type == "Resize"][0]
    assert len(rz.input) == 4 and rz.input[3]
    if opset < 13:
        assert rz.input[1] and rz.input[2]  # Resize-11/12 have no optional inputs: empty tensors, not ""
    _, after = lint_json(p, "--target", "tensorrt")
    assert not any(f["code"] == "OLX301" for f in after)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 7)).astype(np.float32)
    np.testing.assert_array_equal(_ort(m, {"x": x})[0], _ort(fixed, {"x": x})[0])


def _noisy_fold_model(r_shape=("rows", 3)):
    """Shape plumbing under a dynamic batch: the channel count folds (Shape->Gather(1) of a fixed dim); [N, -1]
    becomes [0, -1] (N is the data's own dim 0); [N*C, -1] has no constant equivalent."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one"], ["c"], name="gather_c", axis=0),
             h.make_node("Unsqueeze", ["c", "axes"], ["c1"], name="unsq_c"),
             h.make_node("Concat", ["minus1", "c1"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["r"], name="reshape"),
             h.make_node("Gather", ["s", "zero"], ["n"], name="gather_n", axis=0),
             h.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq_n"),
             h.make_node("Concat", ["n1", "minus1"], ["shp2"], name="concat_n", axis=0),
             h.make_node("Reshape", ["x", "shp2"], ["r2"], name="reshape_n"),
             h.make_node("Mul", ["n", "c"], ["nc"], name="mul_nc"),
             h.make_node("Unsqueeze", ["nc", "axes"], ["nc1"], name="unsq_nc"),
             h.make_node("Concat", ["nc1", "minus1"], ["shp3"], name="concat_nc", axis=0),
             h.make_node("Reshape", ["r2", "shp3"], ["r3"], name="reshape_nc"),
             h.make_node("Reshape", ["r3", "shp2"], ["y"], name="reshape_back")]
    inits = [nh.from_array(np.array(1, np.int64), "one"), nh.from_array(np.array(0, np.int64), "zero"),
             nh.from_array(np.array([0], np.int64), "axes"), nh.from_array(np.array([-1], np.int64), "minus1")]
    return _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4, 4])],
                  [h.make_tensor_value_info("y", T.FLOAT, ["batch", 48]), h.make_tensor_value_info("r", T.FLOAT, r_shape)],
                  inits)


def test_fold_shapes_under_a_dynamic_batch_claims_only_what_it_folds(tmp_path, cli, lint_json):
    p = tmp_path / "dyn_fold.onnx"
    onnx.save(_noisy_fold_model(), p)
    args = ("--target", "ort-cuda", "--target", "tensorrt", "--ort-optimization", "disabled")
    _, before = lint_json(p, *args)
    fixable = {(f["code"], f["node"]) for f in before if f["fixable"]}
    unfixable = {(f["code"], f["node"]) for f in before if f["fix"] is None and f["code"] in ("OLX201", "OLX309")}
    assert ("OLX309", "reshape") in fixable  # [-1, C]: C is a fixed dim
    assert ("OLX309", "reshape_n") in fixable  # [N, -1] with N = the data's dim 0: [0, -1]
    assert ("OLX309", "reshape_nc") in unfixable  # [N*C, -1]: no constant equivalent
    assert ("OLX309", "reshape_back") in unfixable  # [N, -1] but N is not r3's dim 0
    rc, text, _ = cli(p, "--fix", "--show-info", *args)
    assert "wrote" in text and "outputs equal at batch=1 and batch=2" in text, text
    _, after = lint_json(p, *args)
    assert not [f for f in after if f["fixable"]]
    onnx.checker.check_model(onnx.load(p), full_check=True)


def test_fix_format_json_stays_valid_json(tmp_path, capfd):
    """onnx-graphsurgeon, onnxslim, ORT print from Python and C++: nothing may reach fd 1 but the report."""
    from onnxlint.cli import main

    p = tmp_path / "dyn_fold.onnx"
    onnx.save(_noisy_fold_model(), p)

    def noisy(model):
        print("[W] graphsurgeon-style warning on stdout")
        os.write(1, b"C++ level noise on fd 1\n")
        os.write(2, b"C++ level noise on fd 2\n")
        return fold(model)

    from onnxlint.fixers import fold_shapes as fs

    fold = fs.fold
    fs.fold = noisy
    try:
        main([str(p), "--fix", "--format", "json", "--target", "ort-cuda", "--target", "tensorrt", "--ort-optimization", "disabled"])
    finally:
        fs.fold = fold
    out, err = capfd.readouterr()
    data = json.loads(out)  # valid JSON: the noise went elsewhere
    assert any(f.get("fixed") or f["code"] == "OLX309" for f in data) or data == []
    assert "noise" not in out and "[W]" not in out


def _findings_naming(fixer_name, path):
    """The model's real findings, the first one naming fixer_name (so a re-lint still reports it)."""
    res = onnxlint.lint(path)
    assert res.findings
    res.findings[0].fix = fixer_name
    return res


def test_a_fixer_that_changes_nothing_writes_nothing(tmp_path, examples_dir):
    from onnxlint.fixers.base import REGISTRY, Fixer

    p = _copy(examples_dir, tmp_path, "double_input.onnx")
    stat = p.stat()
    REGISTRY["test-noop"] = Fixer("test-noop", True, "changes nothing", lambda ctx: ctx.model)

    def touch(ctx):
        ctx.model.doc_string = "touched"
        return ctx.model

    REGISTRY["test-touch"] = Fixer("test-touch", True, "changes a doc string", touch)
    try:
        res = _findings_naming("test-noop", p)
        fixing.fix_file(p, Settings.from_config(None), res, fixing.FixOptions())
        assert any(n.startswith("nothing written: test-noop") for n in res.notes), res.notes
        res = _findings_naming("test-touch", p)
        fixing.fix_file(p, Settings.from_config(None), res, fixing.FixOptions())
        assert any("cleared no finding" in n for n in res.notes), res.notes
        assert not any("wrote" in n for n in res.notes)
    finally:
        del REGISTRY["test-noop"], REGISTRY["test-touch"]
    assert p.stat().st_mtime_ns == stat.st_mtime_ns and sorted(os.listdir(tmp_path)) == ["double_input.onnx"]


def test_output_folder_for_several_models(tmp_path, examples_dir):
    from onnxlint.support.errors import UsageError

    a = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    b = _copy(examples_dir, tmp_path, "batchnorm_training.onnx")
    with pytest.raises(UsageError, match="existing folder"):
        fixing.check_output([a, b], tmp_path / "one.onnx")
    out = tmp_path / "fixed"
    out.mkdir()
    fixing.check_output([a, b], out)
    sub = tmp_path / "sub"
    sub.mkdir()
    c = _copy(examples_dir, sub, "dropout_training.onnx")
    with pytest.raises(UsageError, match="both be written"):
        fixing.check_output([a, c], out)
    before = {x: x.read_bytes() for x in (a, b)}
    for x in (a, b):
        res = onnxlint.fix(x, output=out)
        assert any(f"wrote {out / x.name}" in n for n in res.notes), res.notes
    assert sorted(os.listdir(out)) == ["batchnorm_training.onnx", "dropout_training.onnx"]
    assert all(x.read_bytes() == v for x, v in before.items())  # the inputs are untouched


def test_diff_lists_nodes_one_per_line_grouped_by_op(tmp_path):
    from onnxlint.fixers import diff

    m = _noisy_fold_model()
    from onnxlint.fixers.fold_shapes import fold

    lines = diff.describe_lines(m, fold(m))
    removed = [ln for ln in lines if ln.startswith("- ")]
    assert len(removed) >= 3 and all(len(ln.split()) == 3 for ln in removed)  # "- Op location"
    ops = [ln.split()[1] for ln in lines if ln[:2] in ("- ", "+ ", "~ ")]
    assert ops == sorted(ops)


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


def test_upgrade_opset_goes_to_the_minimum_not_17(tmp_path, examples_dir, cli):
    p = _copy(examples_dir, tmp_path, "resize_opset10.onnx")
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text, text
    assert fixers.base.opset_of(onnx.load(p)) == 11


def test_a_model_level_finding_is_marked_fixable_by_upgrade_opset(tmp_path):
    """OLX006 (a legacy opset) is a finding on the model, not a node: its fixer is asked about the model
    (fixers.base's model scope) and claims it, as on a node finding whose scope's root holds the model."""
    m = _model([h.make_node("Relu", ["x"], ["y"], name="relu")], [h.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
               [h.make_tensor_value_info("y", T.FLOAT, ["N", 4])], [], opset=9)
    path = tmp_path / "old.onnx"
    onnx.save(m, path)
    report = onnxlint.lint(path, onnxlint.Settings.from_config(None))
    legacy = [f for f in report.findings if f.code == "OLX006"]
    assert legacy and legacy[0].node is None and legacy[0].fix == "upgrade-opset" and legacy[0].fixable


def test_int64_graph_input_unsafe_fix_where_values_fit(tmp_path):
    nodes = [h.make_node("Gather", ["table", "idx"], ["y"], name="lookup", axis=0)]
    m = _model(nodes, [h.make_tensor_value_info("idx", T.INT64, [4])], [h.make_tensor_value_info("y", T.FLOAT, [4, 2])],
               [nh.from_array(np.arange(10, dtype=np.float32).reshape(5, 2), "table")])
    req = [fixers.FixRequest("int64-to-int32", "input:idx", "tensorrt")]
    fixed, applied, skipped = fixers.apply(m, req, unsafe=False)
    assert skipped == ["int64-to-int32"] and not applied
    fixed, applied, _ = fixers.apply(m, req, unsafe=True)
    assert applied == ["int64-to-int32"] and fixed.graph.input[0].type.tensor_type.elem_type == T.INT32
    onnx.checker.check_model(fixed, full_check=True)
    idx = np.array([0, 4, 2, 1])
    np.testing.assert_array_equal(_ort(m, {"idx": idx.astype(np.int64)})[0], _ort(fixed, {"idx": idx.astype(np.int32)})[0])


def test_fixable_claims_match_the_fixer():
    """A Dropout whose mask is read cannot become Identity: the finding is not marked fixable."""
    nodes = [h.make_node("Dropout", ["x", "ratio", "train"], ["y", "mask"], name="drop"),
             h.make_node("Cast", ["mask"], ["m"], name="use_mask", to=T.FLOAT)]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
               [h.make_tensor_value_info("y", T.FLOAT, [2, 3]), h.make_tensor_value_info("m", T.FLOAT, [2, 3])],
               [nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "train")])
    rep = onnxlint.lint(m)
    drop = [f for f in rep.findings if f.code == "OLX010"]
    assert drop and not drop[0].fixable


def test_fix_shape_sets_the_numeric_check_inputs(tmp_path, cli):
    """`--fix --shape` feeds the numeric check the user's dims; a name no input has is a usage error."""
    node = h.make_node("GridSample", ["x", "grid"], ["y"], name="gs", domain="com.microsoft")
    m = _grid_model(node, extra=[("com.microsoft", 1)])
    for inp in m.graph.input:  # a dynamic batch, as exports have
        inp.type.tensor_type.shape.dim[0].dim_param = "n"
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "n"
    p = tmp_path / "gs.onnx"
    onnx.save(m, p)
    rc, out, err = cli(p, "--fix", "--shape", "nosuch=1x2x5x5")
    assert rc == 2 and "nosuch" in err and len(err.strip().splitlines()) == 1, err
    assert onnx.load(p).graph.node[0].domain == "com.microsoft"  # nothing written
    rc, out, _ = cli(p, "--fix", "--shape", "x=3x2x5x5", "--shape", "grid=3x4x4x2")
    assert "outputs equal at fixed shapes" in out and "wrote" in out, out
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix")  # without --shape the check picks the symbolic batch itself
    assert "outputs equal at n=" in out and "wrote" in out, out


def test_a_checker_complaint_the_original_has_does_not_block_the_fix(tmp_path, cli, monkeypatch):
    """An output declared without a shape fails onnx's checker in the original too: the fix still lands (the
    note says so), and OLX001 keeps reporting it. (onnxslim would add the shape; onnxlint's own folder, used
    when onnxslim is absent or rejected, does not.)"""
    from onnxlint.fixers import fold_shapes

    monkeypatch.setitem(fold_shapes.ENGINE, "mode", "own")
    p = tmp_path / "noshape.onnx"
    onnx.save(_noisy_fold_model(r_shape=None), p)
    rc, text, _ = cli(p, "--fix", "--show-info", "--target", "tensorrt")
    assert "OLX001" in text and "wrote" in text and "fails the checker the same way" in text, text
    assert "concat" not in {n.name for n in onnx.load(p).graph.node}  # [-1, C] folded to a constant


def test_fix_keeps_the_file_mode_and_writes_through_a_symlink(tmp_path, examples_dir, cli):
    """--fix keeps what it does not own: the model's permission bits, and a symlink stays a symlink."""
    import os
    import stat

    real = tmp_path / "real" / "m.onnx"
    real.parent.mkdir()
    real.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    real.chmod(0o640)
    link = tmp_path / "link.onnx"
    os.symlink("real/m.onnx", link)
    rc, out, _ = cli(link, "--fix")
    assert "wrote" in out, out
    assert link.is_symlink() and os.readlink(link) == "real/m.onnx"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert onnx.load(real).graph.node[0].op_type != "Dropout"
    assert not [p for p in real.parent.iterdir() if p.name.startswith(".")]  # no temp file left


def test_fix_with_a_machine_format_says_on_stderr_what_it_wrote(tmp_path, examples_dir, cli):
    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, out, err = cli(p, "--fix", "--format", "json")
    assert not any(f["code"] == "OLX010" for f in json.loads(out))  # stdout stays one JSON document
    assert "wrote" in err and "d.onnx" in err, err


def test_external_data_model_fixed_through_a_symlink_keeps_loading_through_it(tmp_path, cli, lint_json):
    """A -> B link to a model with external data beside both: fixed in place through the link, the model still
    loads (ORT resolves the data from the link's folder) and no data file is copied."""
    real = _external_dropout_model(tmp_path / "B")
    (tmp_path / "A").mkdir()
    os.symlink(real, tmp_path / "A" / "m.onnx")
    (tmp_path / "A" / "m.data").write_bytes((tmp_path / "B" / "m.data").read_bytes())
    rc, text, _ = cli(tmp_path / "A" / "m.onnx", "--fix")
    assert "wrote" in text, text
    assert (tmp_path / "A" / "m.onnx").is_symlink()
    assert sorted(os.listdir(tmp_path / "A")) == ["m.data", "m.onnx"]
    codes = {f["code"] for f in lint_json(tmp_path / "A" / "m.onnx")[1]}
    assert "OLX003" not in codes and "OLX010" not in codes
    _outputs(tmp_path / "A" / "m.onnx")  # loads and runs


def test_external_data_model_with_an_inherited_checker_complaint_is_fixed(tmp_path, cli, monkeypatch):
    """The checker complains about the original already (an output without a shape); with external data it can
    only run by path, and the fix still lands."""
    from onnxlint.fixers import fold_shapes

    monkeypatch.setitem(fold_shapes.ENGINE, "mode", "own")  # onnxslim would add the missing shape
    p = _external_dropout_model(tmp_path / "src", output_shape=None)
    rc, text, _ = cli(p, "--fix")
    assert "wrote" in text and "OLX001" in text, text


def test_a_constant_if_condition_inside_a_body_is_left_to_ort():
    """Inside an If body, Shape(x)[0] -> Cast(bool) -> inner If condition: ORT folds that chain itself and
    inlines the inner If; a fold that leaves the condition as an initializer there makes onnxruntime 1.24 fail
    to load the model, so the fixer neither claims nor folds it; a chain feeding real work is still folded."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    from onnxlint.fixers import fold_shapes
    from onnxlint.model.graph import GraphIndex

    inner_then = h.make_graph([h.make_node("Identity", ["x"], ["it"])], "it", [], [h.make_tensor_value_info("it", T.FLOAT, [2, 3])])
    inner_else = h.make_graph([h.make_node("Neg", ["x"], ["ie"])], "ie", [], [h.make_tensor_value_info("ie", T.FLOAT, [2, 3])])
    body = h.make_graph([h.make_node("Shape", ["x"], ["s"], name="shape"),
                         h.make_node("Gather", ["s", "zero"], ["d"], name="gather", axis=0),
                         h.make_node("Cast", ["d"], ["c"], name="cast", to=T.BOOL),
                         h.make_node("If", ["c"], ["r"], name="inner", then_branch=inner_then, else_branch=inner_else),
                         h.make_node("Gather", ["s", "one"], ["w"], name="gather_w", axis=0),
                         h.make_node("Unsqueeze", ["w", "ax"], ["w1"], name="unsq"),
                         h.make_node("Concat", ["minus1", "w1"], ["shp"], name="concat", axis=0),
                         h.make_node("Reshape", ["r", "shp"], ["o"], name="reshape")],
                        "body", [], [h.make_tensor_value_info("o", T.FLOAT, [2, 3])],
                        [nh.from_array(np.array(0, np.int64), "zero"), nh.from_array(np.array(1, np.int64), "one"),
                         nh.from_array(np.array([0], np.int64), "ax"), nh.from_array(np.array([-1], np.int64), "minus1")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["o2"])], "other", [], [h.make_tensor_value_info("o2", T.FLOAT, [2, 3])])
    g = h.make_graph([h.make_node("If", ["flag"], ["y"], name="outer", then_branch=body, else_branch=other)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 3]), h.make_tensor_value_info("flag", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    idx = GraphIndex(onnx.shape_inference.infer_shapes(m))
    by = {n.name: n for n in idx.nodes}
    assert not fold_shapes.can_fold(by["cast"]) and not fold_shapes.can_fold(by["gather"])
    assert fold_shapes.can_fold(by["concat"])  # feeds a Reshape: real work
    folded = fold_shapes.fold(m, "own")
    names = {n.name for gr in _graphs_of(folded) for n in gr.node}
    assert "concat" not in names and {"gather", "cast"} <= names
    sess = ort.InferenceSession(folded.SerializeToString(), providers=["CPUExecutionProvider"])  # loads at default options
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(None, {"x": x, "flag": np.array(True)})[0], x)


def _graphs_of(model):
    from onnxlint.model.graph import iter_graphs

    return list(iter_graphs(model))


def test_a_new_fixed_file_gets_the_umask_mode(tmp_path, examples_dir, cli):
    """-o to a new file: the mode open() would give (the umask read, not set: a host's threads may race)."""
    import os
    import stat

    from onnxlint.fixers import write

    old = os.umask(0o027)
    try:
        assert write._umask() == 0o027
        src = tmp_path / "d.onnx"
        src.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
        rc, out, _ = cli(src, "--fix", "-o", tmp_path / "new.onnx")
        assert "wrote" in out, out
        assert stat.S_IMODE((tmp_path / "new.onnx").stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_fold_shapes_check_declines_a_slice_with_a_zero_step():
    """Slice with a step of 0 is invalid ONNX: the fold-shapes check says it cannot fold the shape it feeds
    (it raised ValueError from Python's slice before), and the finding stays unfixable."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    from onnxlint.fixers import fold_shapes
    from onnxlint.model.graph import GraphIndex

    def model(step):
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
                 h.make_node("Slice", ["s", "st", "en", "ax", "stp"], ["sl"], name="slice"),
                 h.make_node("Reshape", ["x", "sl"], ["y"], name="reshape")]
        inits = [nh.from_array(np.array([v], np.int64), n) for n, v in (("st", 0), ("en", 2), ("ax", 0), ("stp", step))]
        g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])

    for step, zeros in ((1, [0, 4]), (0, None)):
        index = GraphIndex(model(step))  # kept: its nodes' producer maps go with it
        assert fold_shapes.reshape_zeros(index.by_op["Reshape"][0]) == zeros


def test_the_builtin_fixer_table_names_the_module_that_registers_each_fixer():
    """base.BUILTIN decides which module a lint imports for a fixer its findings name: every module of the
    package that registers a fixer is in it, under the very names it registers."""
    import importlib
    import pkgutil

    from onnxlint.fixers.base import BUILTIN, REGISTRY

    registered = {}
    for info in pkgutil.iter_modules(fixers.__path__):
        mod = importlib.import_module(f"onnxlint.fixers.{info.name}")
        for name in list(REGISTRY._fixers):
            if REGISTRY._fixers[name].apply.__module__ == mod.__name__:
                registered[name] = info.name
    assert registered == BUILTIN
    assert list(REGISTRY) == list(BUILTIN)  # a listing is complete, in the table's order
    assert len(REGISTRY) == len(BUILTIN)


_FIXER_IMPORTS = r"""
import sys
from onnxlint.cli import main
rc = main(["--no-cache", "--no-progress", "--format", "json", sys.argv[1]])
print(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("onnxlint.fixers.")), file=sys.stderr)
"""


def test_a_lint_imports_only_the_fixers_its_findings_name(tmp_path, examples_dir):
    import subprocess
    import sys

    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    proc = subprocess.run([sys.executable, "-c", _FIXER_IMPORTS, str(p)], capture_output=True, text=True, timeout=120)
    fixes = {f["fix"] for f in json.loads(proc.stdout) if f["fix"]}
    assert fixes == {"dropout-inference"}, proc.stdout
    from onnxlint.fixers.base import BUILTIN

    assert proc.stderr.strip().splitlines()[-1] == str(sorted(["base", BUILTIN["dropout-inference"]]))


def test_fix_without_onnxruntime_says_so_in_one_line_and_writes_nothing(tmp_path, examples_dir, cli, monkeypatch):
    """The numeric check needs ORT: without it (sys.modules entry None: not importable, find_spec finds
    nothing) --fix is a usage error naming the extra, and the model is untouched."""
    import sys

    p = _copy(examples_dir, tmp_path, "batchnorm_training.onnx")
    before = p.read_bytes()
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    for extra in ((), ("--diff",), ("-o", str(tmp_path / "out.onnx"))):
        rc, out, err = cli(p, "--fix", *extra)
        assert rc == 2 and out == "", (extra, out)
        assert err.strip() == f"onnxlint: error: {fixing.NEEDS_ORT}"
        assert "pip install onnxruntime (the CPU build" in err and "onnxlint[" not in err and len(err.splitlines()) == 1
    assert p.read_bytes() == before and not (tmp_path / "out.onnx").exists()
    rc, out, _ = cli(examples_dir / "clean_conv.onnx", "--fix")  # nothing to fix: nothing to check either
    assert rc == 0


def test_fix_extra_and_hook_declare_onnxruntime():
    import yaml

    try:
        import tomllib
    except ImportError:  # Python 3.10: tomli, a dependency there
        import tomli as tomllib  # type: ignore[no-redef]

    root = Path(__file__).resolve().parent.parent
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    fix = [e for d in extras["fix"] for e in (extras["cpu"] if d == "onnxlint[cpu]" else [d])]
    assert fix and all(d.startswith("onnxruntime") for d in fix)
    hooks = {h["id"]: h for h in yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())}
    assert any(d.startswith("onnxruntime") for d in hooks["onnxlint-fix"]["additional_dependencies"])
    assert "additional_dependencies" not in hooks["onnxlint"]


def test_intended_change_is_reported_as_such(tmp_path, examples_dir, cli):
    """batch-norm and Dropout fixes change outputs on purpose: the note says so and names the reference."""
    for name, fixer in (("batchnorm_training.onnx", "batchnorm-inference"), ("dropout_training.onnx", "dropout-inference")):
        p = _copy(examples_dir, tmp_path, name)
        _, out, _ = cli(p, "--fix")
        note = next(line for line in out.splitlines() if "numeric check:" in line)
        assert f"an intended change ({fixer} " in note and "outputs equal to the original run with training_mode=0, at batch=1" in note
    p = _copy(examples_dir, tmp_path, "equal_mismatch.onnx")  # no reference: the original is the reference
    _, out, _ = cli(p, "--fix")
    assert "intended change" not in out


def test_fix_output_folder_with_trailing_slash_is_made(tmp_path, examples_dir, cli):
    p = _copy(examples_dir, tmp_path, "dropout_training.onnx")
    before = p.read_bytes()
    rc, out, _ = cli(p, "--fix", "-o", f"{tmp_path / 'newdir'}/")
    assert (tmp_path / "newdir").is_dir() and (tmp_path / "newdir" / "dropout_training.onnx").is_file(), out
    assert p.read_bytes() == before
    rc, _, err = cli(p, "-o", f"{tmp_path / 'report'}/")  # a report is a file
    assert rc == 2 and "is a folder" in err and not (tmp_path / "report").exists()


def test_diff_says_what_would_happen(tmp_path, cli):
    """--diff writes nothing, so its notes say 'would': a fix that is refused reads 'would not be written'."""
    m = h.make_model(h.make_graph([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")], "g",
                                  [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])],
                                  [nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")]),
                     opset_imports=[h.make_opsetid("", 13)])
    p = tmp_path / "d.onnx"
    m.ir_version = 14  # newer than ORT loads: the numeric check cannot run, the fix is refused
    onnx.save(m, p)
    _, out, _ = cli(p, "--fix", "--diff")
    assert "note: the fix would not be written: neither the original nor the fixed model runs on ORT CPU" in out, out
    assert "note: fix not written" not in out
    m.ir_version = 8
    onnx.save(m, p)
    _, out, _ = cli(p, "--fix", "--diff")
    assert "-      [d] y = Dropout (x, r, t)\n+      [d] y = Identity (x)" in out and "not written" not in out, out
    assert "note: would write" in out
    assert fixing._conditional("fix not written: x") == "the fix would not be written: x"
    assert fixing._conditional("nothing written: a found nothing") == "nothing would be written: a found nothing"


def _unsorted(k=3):
    """A chain of Relus listed last-first: onnx.checker rejects it, ORT sorts it itself."""
    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}") for i in range(k)][::-1]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("v0", T.FLOAT, ["n", 2])],
                                  [h.make_tensor_value_info(f"v{k}", T.FLOAT, ["n", 2])]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_toposort_fixes_an_unsorted_graph_through_the_cli(tmp_path, cli, lint_json):
    from onnxlint.fixers import tidy

    p = tmp_path / "u.onnx"
    onnx.save(_unsorted(), p)
    _, before = lint_json(p)
    assert any(f["code"] == "OLX001" and f["fix"] == "toposort" for f in before)
    rc, out, _ = cli(p, "--fix")
    assert "wrote" in out and "(toposort)" in out, out
    m = onnx.load(p)
    onnx.checker.check_model(m, full_check=True)
    assert tidy.is_sorted(m.graph) and [n.name for n in m.graph.node] == ["relu0", "relu1", "relu2"]
    _, after = lint_json(p)
    assert not any(f["code"] == "OLX001" for f in after)


def test_checker_failure_other_than_order_is_not_fixable(tmp_path, lint_json):
    m = _unsorted()
    m.graph.node.reverse()
    m.graph.node[0].attribute.append(h.make_attribute("bogus", 1))  # the checker rejects an unknown attribute
    p = tmp_path / "b.onnx"
    onnx.save(m, p)
    _, found = lint_json(p)
    # ORT's node check refuses the attribute too: the refusal (OLX007), which no fixer claims, not the checker's line
    (refusal,) = [f for f in found if f["code"] in ("OLX001", "OLX007")]
    assert refusal["code"] == "OLX007" and "Unrecognized attribute: bogus" in refusal["message"]
    assert refusal["fix"] is None and not refusal["fixable"]


def test_fix_leaves_no_dead_initializer_and_sorted_graphs(tmp_path, cli):
    """dropout-inference leaves the Dropout's ratio and training_mode unread, in the main graph and in an If
    body; the tidy step after all fixers removes them (ORT warns about every one on every load)."""
    from onnxlint.fixers import tidy

    drop = lambda x, y, n: h.make_node("Dropout", [x, f"r{n}", f"t{n}"], [y], name=f"drop{n}")
    inits = lambda n: [nh.from_array(np.array(0.5, np.float32), f"r{n}"), nh.from_array(np.array(True), f"t{n}")]
    then = h.make_graph([drop("x", "a", 1)], "then", [], [h.make_tensor_value_info("a", T.FLOAT, ["n", 2])], inits(1))
    other = h.make_graph([h.make_node("Identity", ["x"], ["b"], name="id")], "else", [],
                         [h.make_tensor_value_info("b", T.FLOAT, ["n", 2])])
    nodes = [drop("x", "d", 0), h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other)]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 2]),
                                               h.make_tensor_value_info("c", T.BOOL, [])],
                                  [h.make_tensor_value_info("d", T.FLOAT, ["n", 2]), h.make_tensor_value_info("y", T.FLOAT, ["n", 2])],
                                  inits(0)), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    h.set_model_props(m, {"owner": "team-a"})
    p = tmp_path / "d.onnx"
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix")
    assert "wrote" in out, out
    fixed = onnx.load(p)
    assert tidy.dead_initializers(fixed) == [] and tidy.is_sorted(fixed.graph)
    assert {n.op_type for g in _graphs_of(fixed) for n in g.node} == {"Identity", "If"}
    assert {pr.key: pr.value for pr in fixed.metadata_props} == {"owner": "team-a"}  # the model's own fields stay
    assert [i.name for i in fixed.graph.input] == ["x", "c"]


def test_fix_through_graphsurgeon_keeps_what_nodes_carry(tmp_path, cli):
    """onnx-graphsurgeon's export drops node doc_strings and metadata_props; a fixed model keeps them (a node's
    `onnxlint: ignore[...]` suppression lives there), on the rewritten node and on the others."""
    nodes = [h.make_node("Dropout", ["x", "r", "t"], ["d"], name="drop", doc_string="from module head.drop"),
             h.make_node("Mul", ["d", "z"], ["e"], name="eq", doc_string="onnxlint: ignore[OLX015]"),
             h.make_node("Relu", ["d"], ["y"], name="relu")]
    nodes[2].metadata_props.add(key="source", value="head.py:12")
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                                               h.make_tensor_value_info("z", T.FLOAT, [2])],
                                  [h.make_tensor_value_info("y", T.FLOAT, [2]), h.make_tensor_value_info("e", T.FLOAT, [2])],
                                  [nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")]),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 10
    p = tmp_path / "carry.onnx"
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix")
    assert "wrote" in out and "(dropout-inference)" in out, out
    fixed = {n.name: n for n in onnx.load(p).graph.node}
    assert fixed["drop"].op_type == "Identity" and fixed["drop"].doc_string == "from module head.drop"
    assert fixed["eq"].doc_string == "onnxlint: ignore[OLX015]"
    assert {e.key: e.value for e in fixed["relu"].metadata_props} == {"source": "head.py:12"}


def test_tidied_ir3_model_lists_its_initializers_as_inputs(tmp_path, cli):
    """IR 3 wants every initializer among the graph inputs; onnx-graphsurgeon's export drops them there, so a
    tidied IR-3 model failed the checker and upgrade-opset was never written (pypi-onnx light_resnet50)."""
    w, dead = nh.from_array(np.ones(2, np.float32), "w"), nh.from_array(np.zeros(2, np.float32), "dead")
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                     [h.make_tensor_value_info(n, T.FLOAT, [2]) for n in ("x", "w", "dead")],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])], [w, dead])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 9)])
    m.ir_version = 3
    p = tmp_path / "ir3.onnx"
    onnx.save(m, p)
    rc, out, _ = cli(p, "--fix", "--show-info")  # OLX006 (legacy opset) is an info: fixed when shown
    assert "wrote" in out and "(upgrade-opset)" in out, out
    fixed = onnx.load(p)
    onnx.checker.check_model(fixed, full_check=True)
    assert fixed.opset_import[0].version == 11 and {i.name for i in fixed.graph.initializer} <= {i.name for i in fixed.graph.input}


def test_tidy_returns_the_same_model_when_there_is_nothing_to_do(examples_dir):
    from onnxlint.fixers import tidy

    m = onnx.load(examples_dir / "clean_conv.onnx")
    assert tidy.tidy(m) is m


PLUGIN = Path(__file__).resolve().parent / "plugin_example"


@pytest.fixture
def acme_plugin(monkeypatch):
    """tests/plugin_example installed: its folder on sys.path (its dist-info declares the entry point)."""
    import sys

    from onnxlint.rulefiles import rule_schema

    monkeypatch.syspath_prepend(str(PLUGIN))
    rule_schema.rule_schema.cache_clear()
    yield PLUGIN
    fixers.REGISTRY.pop("acme-drop-identity", None)
    sys.modules.pop("acme_onnxlint_fixers", None)
    rule_schema.rule_schema.cache_clear()  # its fixer enum named the plug-in


def test_plugin_fixer_fixes_its_finding_through_the_cli(tmp_path, cli, lint_json, acme_plugin):
    """A user rule names the plug-in's fixer; --fix loads it from the entry point, hands it the gs graph and its
    findings' nodes, checks the result numerically and writes it; the dead Identity is cleaned up after."""
    from onnxlint.fixers import tidy

    nodes = [h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Identity", ["a"], ["b"], name="/copy/Identity"),
             h.make_node("Sigmoid", ["b"], ["y"], name="sig")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["n", 4])]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    rules = str(acme_plugin / "rules.yaml")
    _, found = lint_json(p, "--rules", rules)
    (acme,) = [f for f in found if f["code"] == "ACME900"]
    assert acme["fix"] == "acme-drop-identity" and acme["fixable"]
    rc, out, _ = cli(p, "--rules", rules, "--fix")
    assert "wrote" in out and "(acme-drop-identity)" in out and "numeric check: outputs equal" in out, out
    fixed = onnx.load(p)
    assert [n.op_type for n in fixed.graph.node] == ["Relu", "Sigmoid"] and not tidy.dead_nodes(fixed)
    onnx.checker.check_model(fixed, full_check=True)
    _, after = lint_json(p, "--rules", rules)
    assert not any(f["code"] == "ACME900" for f in after)


def test_plugin_fixer_gets_the_same_numeric_check(tmp_path, cli, acme_plugin):
    """A plug-in whose rewrite changes outputs is refused like a built-in fixer: nothing is written."""
    import acme_onnxlint_fixers  # noqa: F401 - registers acme-drop-identity

    def wrong(ctx):
        graph = ctx.graph()
        for node in graph.nodes:
            if node.op == "Identity":
                node.op = "Neg"
        return ctx.from_graph(graph)

    fx = fixers.REGISTRY["acme-drop-identity"]
    fixers.REGISTRY["acme-drop-identity"] = fixers.Fixer(fx.name, True, fx.summary, wrong)  # acme_plugin removes it
    nodes = [h.make_node("Identity", ["x"], ["b"], name="id"), h.make_node("Relu", ["b"], ["y"], name="relu")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["n", 4])]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    _, out, _ = cli(p, "--rules", acme_plugin / "rules.yaml", "--fix")
    assert "fix not written" in out and p.read_bytes() == before, out


def test_resize_sizes_keeps_a_dynamic_batch(tmp_path, cli, lint_json):
    """An align_corners Resize on [batch, 3, 8, 8] with scales [1, 1, 2, 2]: sizes = Concat(Shape(x)[:1],
    [3, 16, 16]), so the batch stays dynamic; the numeric check runs two batch sizes."""
    from onnxlint.fixers import tidy

    n = h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="up", mode="linear",
                    coordinate_transformation_mode="align_corners")
    m = h.make_model(h.make_graph([n], "g", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 8, 8])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["batch", 3, 16, 16])],
                                  [nh.from_array(np.zeros(0, np.float32), "roi"),
                                   nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]),
                     opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    p = tmp_path / "rz.onnx"
    onnx.save(m, p)
    _, before = lint_json(p)
    assert any(f["code"] == "OLX301" and f["fixable"] for f in before)
    _, out, _ = cli(p, "--fix")
    assert "outputs equal at batch=1 and batch=2" in out and "(resize-sizes)" in out, out
    fixed = onnx.load(p)
    assert [x.op_type for x in fixed.graph.node] == ["Shape", "Slice", "Concat", "Resize"] and tidy.is_sorted(fixed.graph)
    assert fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    _, after = lint_json(p)
    assert not any(f["code"] == "OLX301" for f in after)
    m.graph.initializer[1].CopyFrom(nh.from_array(np.array([2, 1, 2, 2], np.float32), "scales"))  # batch scaled
    onnx.save(m, p)
    _, again = lint_json(p)
    assert any(f["code"] == "OLX301" and not f["fixable"] for f in again)


def test_tidy_keeps_the_order_of_a_sorted_graph():
    """Cleanup alone when the nodes are in order: gs's toposort would reorder independent nodes, and the order
    of random ops decides which numbers each draws (a model whose RandomUniformLike moved failed the check)."""
    from onnxlint.fixers import tidy

    nodes = [h.make_node("Relu", ["x"], ["a"], name="a"), h.make_node("Sigmoid", ["a"], ["b"], name="b"),
             h.make_node("RandomUniformLike", ["x"], ["r"], name="rnd"), h.make_node("Add", ["b", "r"], ["y"], name="add")]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                                  [h.make_tensor_value_info("y", T.FLOAT, [2])], [nh.from_array(np.ones(2, np.float32), "dead")]),
                     opset_imports=[h.make_opsetid("", 17)])
    t = tidy.tidy(m)
    assert [n.name for n in t.graph.node] == ["a", "b", "rnd", "add"] and not t.graph.initializer  # gs: a, rnd, b
