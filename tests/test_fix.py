import os

import onnx
import onnxlint
import pytest

from onnxlint import fixers
from onnxlint.fixers import write as fix_write



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
    assert "would change" in out and "Dropout" in out
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


def _external_dropout_model(folder):
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    folder.mkdir()
    w = nh.from_array(np.arange(1024, dtype=np.float32), "w")
    b = nh.from_array(np.full(1024, 3.0, np.float32), "b")
    g = h.make_graph([h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop"),
                      h.make_node("Add", ["d", "w"], ["s"], name="add"), h.make_node("Mul", ["s", "b"], ["y"], name="mul")],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 1024])], [h.make_tensor_value_info("y", T.FLOAT, ["n", 1024])],
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
    assert "1 fixed" in text and "fix not written" not in text, text
    assert (tmp_path / "src" / "m.data").read_bytes() == data_before
    assert not any(f["code"] == "OLX010" for f in lint_json(p)[1])
    assert sorted(os.listdir(tmp_path / "src")) == ["m.data", "m.onnx"]  # no temp files left


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
    assert "1 fixed" in text, text
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
    from onnx import TensorProto as T, helper as h

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
    rc, text, _ = cli(p, "--fix")
    assert "nothing rewritten: gridsample-standard" in text, text
    assert p.read_bytes() == before


def test_fold_shapes_removes_cpu_shape_nodes_for_a_static_input(tmp_path, cli, lint_json):
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

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
    assert {f["node"] for f in before if f["code"] == "OLX201"} >= {"graph/gather", "graph/unsqueeze", "graph/concat"}
    rc, text, _ = cli(p, "--fix", "--target", "ort-cuda", "--ort-optimization", "disabled")
    assert "wrote" in text and "fix not written" not in text, text
    fixed = onnx.load(p)
    assert [n.op_type for n in fixed.graph.node] == ["Reshape", "Relu"]
    _, after = lint_json(p, "--target", "ort-cuda", "--ort-optimization", "disabled")
    assert not any(f["code"] == "OLX201" for f in after)


def test_resize_sizes_needs_a_static_input_shape(tmp_path, cli):
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    g = h.make_graph([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear",
                                  coordinate_transformation_mode="align_corners")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 1, 4, 4])], [h.make_tensor_value_info("y", T.FLOAT, ["n", 1, 8, 8])],
                     [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    p = tmp_path / "dyn.onnx"
    onnx.save(m, p)
    before = p.read_bytes()
    rc, text, _ = cli(p, "--fix", "--target", "tensorrt")
    assert "nothing rewritten: resize-sizes" in text and p.read_bytes() == before


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
