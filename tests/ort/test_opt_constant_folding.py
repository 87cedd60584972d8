"""ConstantFolding (ort.optimizer.constant_folding), with the If inlining and Shape folding it does."""

import numpy as np
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import (
    INF,
    _anchor_blocks,
    _computed_reshape_blocks,
    _cse_after_a_rewrite,
    _foldable_blocks,
    _fusion_blocks,
    _if_fold_chain,
    _optimized_both_ways,
    _place,
    _removed,
    _shape_model,
    _tables,
    _transformer_blocks,
)

import onnxlint
import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex
from onnxlint.ort.optimizer import constant_folding
from onnxlint.ort.optimizer import state as optimizer_state


def test_default_options_fold_shape_computations_of_static_shapes():
    m = _shape_model([2, 3, 4])
    by, pl = _place(m, "disabled")
    assert [by[n].status for n in ("gather", "unsq", "concat")] == ["deliberate"] * 3
    by, pl = _place(m, "all")
    assert {by[n].status for n in ("shape", "gather", "unsq", "concat")} == {"folded"}
    assert by["shape"].reason == "shape-folding" and by["reshape"].status == "device" and not pl.boundaries
    assert pl.summary()["folded"] == 4 and pl.summary()["shape_only"] == 0
    # a stored -1 dim is a dim value for ORT too: Shape folds (rapidocr's PaddlePaddle export)
    by, _ = _place(_shape_model([-1, 3, 4]), "all")
    assert by["shape"].status == "folded"
    # a symbolic dim 0: ORT folds only what the Gather picks when that dim is known - here it is not
    by, _ = _place(_shape_model(["n", 3, 4]), "all")
    assert by["shape"].status == "device" and by["gather"].status == "deliberate"


def test_partial_shape_fold_of_known_dims(monkeypatch):
    # off by default (measured: ORT 1.24.4 keeps such Gathers, on CPU by GetCpuPreferredNodes); the model exists
    monkeypatch.setattr(constant_folding, "ENHANCED_SHAPE_FOLDING", True)
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i1"], ["d1"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["d1", "ax"], ["d1u"], name="unsq"),
             h.make_node("Concat", ["minus1", "d1u"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)],
                   [init("i1", np.int64(1)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))], opset=19)
    by, _ = _place(m, "all")
    assert [by[n].status for n in ("shape", "gather", "unsq", "concat", "reshape")] == ["folded"] * 4 + ["device"]
    monkeypatch.setattr(constant_folding, "ENHANCED_SHAPE_FOLDING", False)
    by, _ = _place(m, "all")
    assert [by[n].status for n in ("shape", "gather", "unsq", "concat")] == ["device"] + ["deliberate"] * 3


@pytest.mark.parametrize("dims", [[2, 3, 4], ["n", 3, 4]])
def test_a_shape_whose_start_is_not_an_int_lints_without_an_internal_error(dims):
    # a FLOAT `start` (onnx.checker and ORT's load reject the model): Shape folding reads start/end only where a
    # Gather/Slice of the picked dims may fold (ENHANCED_SHAPE_FOLDING), so the lint says what onnx.checker says;
    # reading them first ended the model's lint in an internal error at 63dd588
    shape = h.make_node("Shape", ["x"], ["s"], name="shape")
    shape.attribute.append(h.make_attribute("start", 1.0))
    m = make_model([shape], [vi("x", T.FLOAT, dims)], [vi("s", T.INT64, [3])])
    report = onnxlint.lint(m, onnxlint.Settings.from_config(None, targets=["ort-cuda"]))
    assert report.error is None and {f.code for f in report.findings} & {"OLX001", "OLX007"}  # onnx.checker's words


def test_constant_folding_skips_dequantizelinear_and_random_ops():
    nodes = [h.make_node("DequantizeLinear", ["q", "s", "z"], ["w"], name="dq"),
             h.make_node("Add", ["x", "w"], ["y"], name="add"),
             h.make_node("Mul", ["c1", "c2"], ["m"], name="mul"),
             h.make_node("Add", ["y", "m"], ["out"], name="add2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("out", T.FLOAT, [4])],
                   [init("q", np.ones(4, np.uint8)), init("s", np.float32(0.5)), init("z", np.uint8(0)),
                    init("c1", np.ones(4, np.float32)), init("c2", np.ones(4, np.float32))], opset=21, ir=10)
    by, _ = _place(m, "all")
    assert by["dq"].status == "device" and (by["mul"].status, by["mul"].reason) == ("folded", "constant-folding")


def test_if_on_a_folded_condition_is_inlined_and_the_other_branch_dropped():
    then_g = h.make_graph([h.make_node("Neg", ["x"], ["t"], name="neg")], "then", [], [vi("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Abs", ["x"], ["e"], name="abs")], "else", [], [vi("e", T.FLOAT, [2])])
    nodes = [h.make_node("Equal", ["a", "b"], ["cond"], name="eq"),
             h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])],
                   [init("a", np.array(1, np.int64)), init("b", np.array(1, np.int64))], opset=13)
    gone = _removed(m)
    assert gone["eq"].reason == "constant-folding" and gone["if"].reason == "if-constant"
    assert gone["abs"].status == "eliminated" and "neg" not in gone  # the taken branch runs, inlined


def test_identity_of_an_inlined_if_branch_goes():
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"], name="id_then")], "then", [], [vi("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Abs", ["x"], ["e"], name="abs")], "else", [], [vi("e", T.FLOAT, [2])])
    nodes = [h.make_node("If", ["cond"], ["i"], name="if", then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["i"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], [init("cond", np.array(True))], opset=13)
    gone = _removed(m)
    assert gone["id_then"].reason == "identity" and gone["abs"].status == "eliminated"


def test_constant_folding_needs_a_cpu_kernel_for_the_exact_float16_type():
    """ORT folds with a CPU kernel for the node's own types; the float16<->float Casts its InsertCastTransformer
    adds come after the Level-1 transformers (measured on 1.24.4: a float16 ReduceMax-20 of constants is kept
    and runs on CPU)."""
    nodes = [h.make_node("ReduceMax", ["c", "axes"], ["m"], name="rmax", keepdims=1),
             h.make_node("Add", ["x", "m"], ["y"], name="add")]
    m = make_model(nodes, [vi("x", T.FLOAT16, [2, 3])], [vi("y", T.FLOAT16, [2, 3])],
                   [init("c", np.ones((2, 3), np.float16)), init("axes", np.array([1], np.int64))], opset=20)
    float_only = {"ReduceMax": [[20, INF, {"T": ["tensor(float)"]}]]}
    by, _ = _place(m, "all", tables=_tables(cpu_extra=float_only))
    assert by["rmax"].status != "folded" and by["rmax"].ep == placement.CPU
    with_half = {"ReduceMax": [[20, INF, {"T": ["tensor(float)", "tensor(float16)"]}]]}
    by, _ = _place(m, "all", tables=_tables(cpu_extra=with_half))
    assert by["rmax"].status == "folded"


@pytest.mark.parametrize("build", [lambda: _foldable_blocks(1), lambda: _foldable_blocks(12), _if_fold_chain])
def test_later_folding_runs_look_only_at_changed_nodes_with_the_same_answer(monkeypatch, build):
    """After its first run over the main graph, constant folding skips the nodes none of whose inputs were
    made constant or rewired since: what it removes, rewires and makes constant is what a run over every node
    gives, and it asks about the inputs of fewer nodes."""

    # the full runs' own shortcut off: a run over every node would step over as many nodes both ways
    monkeypatch.setattr(constant_folding, "SKIP_COMPUTED_INPUTS", False)
    results = _optimized_both_ways(monkeypatch, constant_folding, "INCREMENTAL_FOLDING", "inputs_constant", build)
    full, inc = results[False], results[True]
    assert inc[:3] == full[:3]
    reasons = {r["reason"] for r in full[0].values()}
    assert {"constant-folding", "if-constant", "identity"} <= reasons, reasons
    assert inc[3] < full[3] or (build is _if_fold_chain and inc[3] == full[3])  # its runs all find work


def test_a_node_rewired_to_a_constant_after_a_folding_run_is_folded_on_the_next():
    """What lets the later runs skip nodes: every change to a node's inputs (a value made constant, a value
    rewired by a removal) marks its readers; a reader marked since the last run is looked at again."""

    nodes = [h.make_node("Identity", ["x"], ["i"], name="ident"), h.make_node("Neg", ["i"], ["y"], name="neg")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], [init("k", np.ones(4, np.float32))])
    gi = GraphIndex(m)
    state = optimizer_state.OptimizerState(gi, "all", lambda n: True)
    folding = constant_folding.ConstantFolding(state.node_count())
    main = gi.scopes[0]
    state.set_tracking(True)
    assert not folding.apply(state, main) and not folding.apply(state, main)
    ident, neg = main.nodes
    state.remove(ident, "eliminated", "test", "a later pass rewires its readers to k", {"i": "k"})
    assert folding.apply(state, main) and state.result().removed[neg.index].reason == "constant-folding"


def test_a_shape_folds_only_when_every_dim_of_its_input_is_known():
    """ConstantFoldShapeNode checks the whole input shape, whatever start/end pick: Shape(x, start=-1) of
    [N, 77] stays (measured on 1.24.4 and 1.31.1); of [3, 77] it folds."""
    def model(dims):
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape", start=-1),
                 h.make_node("Concat", ["m1", "s"], ["c"], name="cat", axis=0), h.make_node("Reshape", ["x", "c"], ["y"], name="resh")]
        return make_model(nodes, [vi("x", T.FLOAT, dims)], [vi("y", T.FLOAT, None)], [init("m1", np.array([-1], np.int64))])

    assert not _removed(model(["N", 77]), "basic")
    assert {"shape", "cat"} <= set(_removed(model([3, 77]), "basic"))


@pytest.mark.parametrize("op", ["ConstantOfShape", "Expand", "Reshape"])
def test_no_dims_for_a_value_shaped_output_of_a_computed_shape(op):
    """ORT's inference of ConstantOfShape, Expand and Reshape reads a shape input only when it is a constant: of
    Concat(Unsqueeze(Gather(Shape(x), 1)), ...) with x [N, 77], onnx's data propagation says [77, 77], ORT knows
    no dims and keeps the Shape after it (measured on 1.24.4 and 1.31.1: a CLIP text encoder's causal mask)."""
    src = [h.make_node("Shape", ["x"], ["s"], name="shape_x"), h.make_node("Gather", ["s", "one"], ["g"], name="gather", axis=0),
           h.make_node("Unsqueeze", ["g", "ax0"], ["u"], name="unsq"), h.make_node("Concat", ["u", "u"], ["v"], name="cat", axis=0)]
    made = {"ConstantOfShape": h.make_node("ConstantOfShape", ["v"], ["cs"], name="made"),
            "Expand": h.make_node("Expand", ["f1", "v"], ["cs"], name="made"),
            "Reshape": h.make_node("Reshape", ["z", "v"], ["cs"], name="made")}[op]
    tail = [h.make_node("Shape", ["cs"], ["s2"], name="tshape"), h.make_node("Concat", ["m1", "s2"], ["c2"], name="tcat", axis=0),
            h.make_node("Reshape", ["w", "c2"], ["y"], name="tresh")]
    m = make_model(src + [made] + tail, [vi("x", T.FLOAT, ["N", 77]), vi("w", T.FLOAT, ["M"])], [vi("y", T.FLOAT, None)],
                   [init("one", np.array(1, np.int64)), init("ax0", np.array([0], np.int64)), init("m1", np.array([-1], np.int64)),
                    init("f1", np.ones((1,), np.float32)), init("z", np.ones((77 * 77,), np.float32))])
    assert "tshape" not in _removed(m, "basic")


def _name_shared_with_a_body():
    """Neg(t), t = Relu(x) in the main graph; an If branch (on a graph input) writes its own t = Identity(c), which
    the first rule pass removes, rewiring the name t to the initializer c: the model's optimizer reads rewirings
    by name, so the main graph's Neg reads c then and folds (bodies reuse names)."""
    branch = [h.make_graph([h.make_node("Identity", ["c"], ["t"], name=f"id_{side}"), h.make_node("Neg", ["t"], [side])],
                           side, [], [vi(side, T.FLOAT, [2])]) for side in ("then", "else")]
    nodes = [h.make_node("Relu", ["x"], ["t"], name="relu"), h.make_node("Neg", ["t"], ["y"], name="neg"),
             h.make_node("Abs", ["t"], ["a"], name="abs"),  # reads t too: one node more that asks (not skipped)
             h.make_node("Sin", ["x"], ["s"], name="sin"), h.make_node("Cos", ["s"], ["u"], name="cos"),  # skipped
             h.make_node("If", ["cond"], ["z"], name="if", then_branch=branch[0], else_branch=branch[1])]
    outs = [vi(o, T.FLOAT, [2]) for o in ("y", "a", "u", "z")]
    return make_model(nodes, [vi("x", T.FLOAT, [2]), vi("cond", T.BOOL, [])], outs, [init("c", np.ones(2, np.float32))], opset=13)


def _constant_also_computed():
    """a is a Relu's output, then a Constant's (a name written twice): constant folding reads the Constant's value
    (the name's last writer), so c = Add(a, k) folds; no node is stepped over in such a graph."""
    nodes = [h.make_node("Relu", ["x"], ["a"], name="relu"),
             h.make_node("Constant", [], ["a"], name="const", value=h.make_tensor("v", T.FLOAT, [2], [1.0, 2.0])),
             h.make_node("Add", ["a", "k"], ["c"], name="add"), h.make_node("Add", ["c", "x"], ["y"], name="add2"),
             h.make_node("Sin", ["x"], ["s"], name="sin"), h.make_node("Cos", ["s"], ["u"], name="cos")]
    return make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2]), vi("u", T.FLOAT, [2])],
                      [init("k", np.ones(2, np.float32))], opset=13)


def _initializer_also_computed():
    """w is an initializer and a Relu's output: constant folding reads the initializer (inputs_constant), so
    Neg(w) folds; no node is stepped over in such a graph."""
    nodes = [h.make_node("Relu", ["x"], ["w"], name="relu"), h.make_node("Neg", ["w"], ["y"], name="neg"),
             h.make_node("Sin", ["x"], ["s"], name="sin"), h.make_node("Cos", ["s"], ["u"], name="cos")]
    return make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2]), vi("u", T.FLOAT, [2])],
                      [init("w", np.ones(2, np.float32))], opset=13)


@pytest.mark.parametrize("build", [lambda: _foldable_blocks(12), _if_fold_chain, _transformer_blocks, _cse_after_a_rewrite,
                                   lambda: _anchor_blocks(3), lambda: _computed_reshape_blocks(3), lambda: _fusion_blocks(2),
                                   _name_shared_with_a_body, _initializer_also_computed, _constant_also_computed])
def test_a_full_folding_run_steps_over_nodes_reading_computed_values_with_the_same_answer(monkeypatch, build):
    """A folding run over every node of the main graph does not ask inputs_constant of a node reading a value
    a live node computes (OptimizerState.reads_computed) unless one of its inputs changed during the run (a
    Cast -> Mul chain of constants folds whole in one run; an If inlined rewires its readers): what the
    optimizer model removes, rewires and makes constant is what asking of every node gives."""
    results = _optimized_both_ways(monkeypatch, constant_folding, "SKIP_COMPUTED_INPUTS", "inputs_constant", build)
    full, short = results[False], results[True]
    assert short[:3] == full[:3] and (short[3] < full[3] or build in (_initializer_also_computed, _constant_also_computed))
    if build is _initializer_also_computed:
        assert full[0][1]["reason"] == "constant-folding" and short[3] == full[3]
    if build is _constant_also_computed:
        assert full[0][2]["reason"] == "constant-folding" and short[3] == full[3]  # add reads the Constant's a
    if build is _name_shared_with_a_body:
        assert {r["reason"] for r in full[0].values()} == {"identity", "constant-folding"}
        assert full[0][1]["reason"] == full[0][2]["reason"] == "constant-folding"  # neg and abs read c
    once = {}  # and after one run alone (the passes after it would fold what a run left out)
    for skip in (False, True):
        monkeypatch.setattr(constant_folding, "SKIP_COMPUTED_INPUTS", skip)
        gi = GraphIndex(build())
        state = optimizer_state.OptimizerState(gi, "all", lambda n: True)
        state.set_tracking(True)
        constant_folding.ConstantFolding(state.node_count()).apply(state, gi.scopes[0])
        out = state.result()
        once[skip] = (dict(out.removed), dict(out.alias), set(out.constants))
    assert once[True] == once[False]


def test_the_chain_that_only_fed_a_folded_shape_goes_with_it():
    """ConstantFolding removes a folded Shape's input chain bottom-up (RemoveNodesWithOneOutputBottomUp), as for
    any folded node: measured on ORT 1.23.2, 1.24.4 and 1.31.1 (Transpose -> Shape with x [2, 3]: the Transpose
    is gone; a Cast to complex64 -> Identity -> Shape loads, its Cast's kernel never looked up). A producer with
    another reader stays (Transpose -> Shape and Relu; Relu -> Transpose -> Shape and Neg: the Relu stays)."""
    def model(extra, outs):
        nodes = [h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Transpose", ["a"], ["t"], name="tr"),
                 h.make_node("Shape", ["t"], ["s"], name="shape"), *extra]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("s", T.INT64, [2]), *outs])

    assert {"shape", "tr", "relu"} <= set(_removed(model([], []), "basic"))
    gone = _removed(model([h.make_node("Neg", ["a"], ["r"], name="neg")], [vi("r", T.FLOAT, None)]), "basic")
    assert {"shape", "tr"} <= set(gone) and "relu" not in gone and "neg" not in gone
    gone = _removed(model([h.make_node("Neg", ["t"], ["r"], name="neg")], [vi("r", T.FLOAT, None)]), "basic")
    assert "shape" in gone and not {"tr", "relu"} & set(gone)


def test_the_branches_of_an_if_that_only_fed_a_folded_shape_go_with_it():
    """An If read only by a folded Shape goes with its branches (Graph::RemoveNode drops its subgraphs): ORT
    1.23.2-1.31.1 load If(complex64 Casts) -> Shape with x [2]; with x [N] the Shape stays, and ORT refuses."""
    def model(dims):
        branch = [h.make_graph([h.make_node("Cast", ["x"], [o], name=f"c{o}", to=T.COMPLEX64)], f"g{o}", [],
                               [vi(o, T.COMPLEX64, dims)]) for o in ("t", "e")]
        nodes = [h.make_node("If", ["b"], ["y"], name="cond", then_branch=branch[0], else_branch=branch[1]),
                 h.make_node("Shape", ["y"], ["s"], name="shape")]
        return make_model(nodes, [vi("x", T.FLOAT, dims), vi("b", T.BOOL, [])], [vi("s", T.INT64, [1])], opset=21, ir=10)

    by, pl = _place(model([2]), "all")
    assert {n: p.status for n, p in by.items()} == {n: "folded" for n in ("cond", "shape", "ct", "ce")}
    by, _ = _place(model(["N"]), "all")
    assert [by[n].status for n in ("cond", "ct", "ce")] == ["unsupported"] * 3 and by["shape"].status != "folded"
