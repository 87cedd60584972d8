"""A finding is marked fixable only where --fix could write its fix: a safe fix is written once its numeric check
ran the models on ORT CPU (fixers.equivalence), which a model with a node the CPU EP has no kernel for, or a
bfloat16 graph input, never passes (linting.fix_promise)."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _dropout_model(path, inner=T.BFLOAT16, io=T.FLOAT):
    """Cast to `inner`, Sqrt, Cast back, then a training-mode Dropout (OLX010, dropout-inference's fix)."""
    nodes = [h.make_node("Cast", ["x"], ["b"], to=inner, name="c1"), h.make_node("Sqrt", ["b"], ["s"], name="sqrt"),
             h.make_node("Cast", ["s"], ["f"], to=io, name="c2"), h.make_node("Dropout", ["f", "r", "t"], ["y"], name="d")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", io, [2, 3])], [h.make_tensor_value_info("y", io, [2, 3])],
                     [nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def _olx010(lint_json, path):
    _, found = lint_json(path)
    return next(f for f in found if f["code"] == "OLX010")


def test_a_fix_the_cpu_ep_cannot_check_is_not_claimed(tmp_path, cli, lint_json):
    """A bfloat16 Sqrt-13 (a CUDA kernel, no CPU one) before a training-mode Dropout: OLX010 was marked fixable
    (dropout-inference), and --fix wrote nothing ("neither the original nor the fixed model runs on ORT CPU: ...
    Could not find an implementation for Sqrt(13)"). It is not marked fixable, and its hint says why."""
    p = _dropout_model(tmp_path / "m.onnx")
    with pytest.raises(Exception, match="Could not find an implementation for Sqrt"):
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
    f = _olx010(lint_json, p)
    assert not f["fixable"] and f["fix"] is None, f
    assert "not fixed by --fix" in f["hint"] and "no CPU kernel for Sqrt-13 'sqrt'" in f["hint"], f
    before = p.read_bytes()
    rc, out, err = cli(p, "--fix")
    assert p.read_bytes() == before and "hint: not fixed by --fix" in out and "[*]" not in out, out + err
    _, out, _ = cli(p, "--statistics")
    assert "fixable with --fix" not in out, out


def test_a_bfloat16_graph_input_is_not_fed_by_the_check(tmp_path, lint_json):
    """NumPy cannot hand ORT a bfloat16 input ("Numpy_type 256 can't be converted to MLDataType"): no safe fix of
    such a model is ever checked, so none is claimed."""
    p = _dropout_model(tmp_path / "m.onnx", inner=T.FLOAT, io=T.BFLOAT16)
    f = _olx010(lint_json, p)
    assert not f["fixable"] and "graph input 'x' is bfloat16" in f["hint"], f


def test_a_model_the_cpu_ep_runs_keeps_its_fix(tmp_path, cli, lint_json):
    """float16 Sqrt and Dropout have CPU kernels: the finding stays fixable and --fix writes the fix."""
    p = _dropout_model(tmp_path / "m.onnx", inner=T.FLOAT16)
    f = _olx010(lint_json, p)
    assert f["fixable"] and f["fix"] == "dropout-inference", f
    rc, out, err = cli(p, "--fix")
    assert "wrote" in out and rc == 0, out + err



def test_a_node_the_fix_replaces_does_not_withhold_it(tmp_path):
    """The node with no CPU kernel is the finding's own (what its fix replaces): the marker stays. A finding names
    its node without the main graph's `graph/` (locations.node_path), the placement by its GraphIndex location."""
    from onnxlint.linting.fix_promise import withhold_unverifiable
    from onnxlint.linting.report import Finding
    from onnxlint.model.graph import GraphIndex
    from onnxlint.ort.verdicts import NodePlacement

    index = GraphIndex(onnx.shape_inference.infer_shapes(onnx.load(_dropout_model(tmp_path / "m.onnx"))))
    sqrt = next(n for n in index.nodes if n.op_type == "Sqrt")

    class Placement:
        refused = None

        def by_status(self, with_common=True):
            return {"unsupported": [sqrt]}

        def get(self, node):
            return NodePlacement(node, None, "unsupported", "dtype", "T=bfloat16 not supported")

    class Ctx:
        def __init__(self):
            self.index = index

        def predicted(self, target):  # the lint's own ort-cpu placement: no pre-test
            return True

        def prediction(self, target):
            assert target == "ort-cpu"
            return Placement()

    def finding(node):
        return Finding("OLX010", "x", "error", "any", "m.onnx", node, "Dropout", "m", "hint", "dropout-inference")

    kept, withheld = finding("sqrt"), finding("d")
    withhold_unverifiable([kept], Ctx())
    assert kept.fix == "dropout-inference" and kept.hint == "hint"
    withhold_unverifiable([withheld], Ctx())
    assert withheld.fix is None and "no CPU kernel for Sqrt-13 'sqrt': T=bfloat16 not supported" in withheld.hint


def test_a_model_whose_nodes_all_have_cpu_kernels_gets_no_optimized_cpu_placement(tmp_path, monkeypatch):
    """A float16 value makes the CPU EP's kernels worth asking about; where the placement without the optimizer
    passes finds a CPU kernel for every node, the lint's `all` placement (most of a lint's cost on a large graph)
    is not computed for the promise, and the marker stays. With a node that has none, it is, and decides."""
    from onnxlint.ort import partitioner

    levels = []
    real = partitioner.simulate
    monkeypatch.setattr(partitioner, "simulate", lambda *a, **k: levels.append(k["optimization"]) or real(*a, **k))
    p = _dropout_model(tmp_path / "half.onnx", inner=T.FLOAT16)  # every node with a CPU kernel: ORT runs it
    try:
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
        runs = True
    except Exception:  # noqa: BLE001
        runs = False
    from onnxlint import lint

    report = lint(str(p))
    olx010 = next(f for f in report.findings if f.code == "OLX010")
    assert runs and olx010.fix == "dropout-inference", (runs, olx010)
    assert levels.count("disabled") == 1 and levels.count("all") == 1, levels  # the pre-test; ort-cuda's own
    levels.clear()
    report = lint(str(_dropout_model(tmp_path / "b.onnx")))
    olx010 = next(f for f in report.findings if f.code == "OLX010")
    assert olx010.fix is None and "no CPU kernel for Sqrt-13" in olx010.hint, olx010
    assert levels.count("disabled") == 1 and levels.count("all") == 2, levels  # ort-cuda's, then ort-cpu's


def test_a_node_fold_shapes_folds_away_does_not_withhold_its_fix(tmp_path, cli, lint_json):
    """A bfloat16 Sqrt-13 (no CPU kernel) inside a Reshape's shape chain of static dims: fold-shapes replaces the
    chain by its value, the fixed model runs on CPU and --fix writes it (the original cannot run, so the check runs
    the fixed one alone). The finding was unmarked ("no CPU kernel for Sqrt-13") and --fix wrote nothing."""
    nodes = [h.make_node("Shape", ["x"], ["s0"], name="shape"), h.make_node("Cast", ["s0"], ["b"], to=T.BFLOAT16, name="c1"),
             h.make_node("Sqrt", ["b"], ["s"], name="sqrt"), h.make_node("Cast", ["s"], ["sh"], to=T.INT64, name="c2"),
             h.make_node("Reshape", ["z", "sh"], ["y"], name="r")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [4, 9]), h.make_tensor_value_info("z", T.FLOAT, [3, 2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    _, found = lint_json(p, "--show-info")
    f = next(f for f in found if f["code"] == "OLX309")
    assert f["fixable"] and f["fix"] == "fold-shapes", f
    rc, out, err = cli(p, "--fix", "--show-info", "-o", tmp_path / "out.onnx")
    assert "wrote" in out and "Sqrt" not in [n.op_type for n in onnx.load(tmp_path / "out.onnx").graph.node], out + err
