"""fold-shapes (fixers/fold_shapes.py): shape subgraphs folded to constants, claimed only where they fold."""

import numpy as np
import onnx
from fix_cases import _graphs_of, _noisy_fold_model
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def test_fold_shapes_removes_cpu_shape_nodes_for_a_static_input(tmp_path, cli, lint_json):
    import numpy as np

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


def test_a_constant_if_condition_inside_a_body_is_left_to_ort():
    """Inside an If body, Shape(x)[0] -> Cast(bool) -> inner If condition: ORT folds that chain itself and
    inlines the inner If; a fold that leaves the condition as an initializer there makes onnxruntime 1.24 fail
    to load the model, so the fixer neither claims nor folds it; a chain feeding real work is still folded."""
    import numpy as np
    import onnxruntime as ort

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


def test_fold_shapes_check_declines_a_slice_with_a_zero_step():
    """Slice with a step of 0 is invalid ONNX: the fold-shapes check says it cannot fold the shape it feeds
    (it raised ValueError from Python's slice before), and the finding stays unfixable."""

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


def test_a_body_of_a_thousand_constant_nodes_in_a_row_is_folded(tmp_path, cli):
    """Whether a body's constant node reaches work (can_fold's walk down its readers) recursed once a node: a
    chain of 1,500 Negs of a Shape in an If branch was a RecursionError, the model's fix refused as "internal error
    in a fixer"."""
    n = 1500
    nodes = [h.make_node("Shape", ["x"], ["c0"], name="s")]
    nodes += [h.make_node("Neg", [f"c{k}"], [f"c{k + 1}"], name=f"n{k}") for k in range(n)]
    nodes.append(h.make_node("Reshape", ["x", f"c{n}"], ["t"], name="r"))
    then = h.make_graph(nodes, "then", [], [h.make_tensor_value_info("t", T.FLOAT, [2, 3])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [h.make_tensor_value_info("e", T.FLOAT, [2, 3])])
    g = h.make_graph([h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other, name="if")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 3]), h.make_tensor_value_info("cond", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(m)
    p = tmp_path / "chain.onnx"
    onnx.save(m, p)
    rc, text, _ = cli(p, "--fix", "--show-info", "-o", tmp_path / "out.onnx")
    assert "internal error" not in text and "wrote" in text, text
    branch = {a.name: a.g for a in onnx.load(tmp_path / "out.onnx").graph.node[0].attribute}["then_branch"]
    assert [x.op_type for x in branch.node] == ["Reshape"]
