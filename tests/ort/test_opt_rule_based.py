"""The rule-based transformer's rewrite rules (ort.optimizer.rule_based_graph_transformer)."""

import numpy as np
import onnx
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _place, _removed

from onnxlint.model.graph import GraphIndex
from onnxlint.ort import partitioner as placement
from onnxlint.ort import releases
from onnxlint.ort.optimizer import (
    graph_transformer_mgr,
)


def test_default_options_eliminate_identity_dropout_noop_cast_and_duplicates():
    nodes = [h.make_node("Identity", ["x"], ["a"], name="id"),
             h.make_node("Dropout", ["a"], ["b"], name="drop"),
             h.make_node("Cast", ["b"], ["c"], name="cast", to=T.FLOAT),
             h.make_node("Unsqueeze", ["c", "ax1"], ["u1"], name="u1"),
             h.make_node("Unsqueeze", ["c", "ax2"], ["u2"], name="u2"),  # same op, same input, equal small constant
             h.make_node("Add", ["u1", "u2"], ["y"], name="add")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, None)],
                   [init("ax1", np.array([0], np.int64)), init("ax2", np.array([0], np.int64))], opset=19)
    by, pl = _place(m, "all")
    assert (by["id"].status, by["id"].reason) == ("eliminated", "identity")
    assert by["drop"].reason == "dropout" and by["cast"].reason == "cast"
    # CSE keeps the first node of ORT's topological order (a reverse DFS from the leaves that visits the producer
    # with the highest index first): u2, so u1 goes (keeping u1 put ORT's kept node on the wrong side)
    assert (by["u1"].status, by["u1"].reason) == ("eliminated", "cse") and by["u2"].status == "device"
    assert by["add"].status == "device"
    by, _ = _place(m, "disabled")
    assert all(p.status == "device" for p in by.values())


def test_identity_feeding_a_graph_output_stays_when_its_source_is_shared():
    # attention's present_key: Identity(Concat output also used elsewhere) -> graph output; ORT keeps it
    nodes = [h.make_node("Relu", ["x"], ["k"], name="relu"), h.make_node("Identity", ["k"], ["present"], name="id"),
             h.make_node("Relu", ["k"], ["y"], name="relu2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("present", T.FLOAT, [2]), vi("y", T.FLOAT, [2])], opset=19)
    by, _ = _place(m, "all")
    assert by["id"].status == "device"


def test_conv_mul_and_add_fusion_with_two_input_mul_and_add():
    """Conv -> Mul(per-channel) -> Add(per-channel): ConvMulFusion and ConvAddFusion (a two-input Mul/Add that is
    no no-op must still reach the fusion rules)."""
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             h.make_node("Mul", ["c", "s"], ["m"], name="mul"),
             h.make_node("Add", ["m", "b"], ["y"], name="add")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 2, 4, 4])], [vi("y", T.FLOAT, None)],
                   [init("w", np.ones((3, 2, 1, 1), np.float32)), init("s", np.full((3, 1, 1), 2, np.float32)),
                    init("b", np.ones((3, 1, 1), np.float32))], opset=13)
    gone = _removed(m)
    assert {k: v.reason for k, v in gone.items()} == {"mul": "fusion", "add": "fusion"}
    assert not _removed(m, "disabled")


def test_identities_before_a_graph_output_all_go():
    """Relu -> Identity -> Identity -> output: ORT keeps only the Relu (the second Identity's input, once the
    first is gone, has one live reader)."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Identity", ["r"], ["i1"], name="id1"),
             h.make_node("Identity", ["i1"], ["y"], name="id2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=13)
    assert set(_removed(m)) == {"id1", "id2"}


def test_noop_elimination_needs_a_one_element_constant():
    def model(const, from_input=False):
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu0"),
                 h.make_node("Add", ["x" if from_input else "r", "z"], ["a"], name="add"),
                 h.make_node("Relu", ["a"], ["y"], name="relu")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3]), vi("r", T.FLOAT, [2, 3])],
                          [init("z", const)], opset=13)

    assert _removed(model(np.zeros((1,), np.float32)))["add"].reason == "noop"
    assert not _removed(model(np.zeros((3,), np.float32)))  # noop_elimination.cc: more than one element stays
    # CanRemoveNode: a graph input plus the constant is no input edge and two inputs (measured on 1.24.4: kept)
    assert not _removed(model(np.zeros((1,), np.float32), from_input=True))


def test_cast_to_its_own_type_feeding_a_graph_output_stays():
    """CanRemoveNode: a rewrite rule other than EliminateIdentity keeps a node producing a graph output."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Cast", ["r"], ["c"], name="mid", to=T.FLOAT),
             h.make_node("Cast", ["c"], ["y"], name="last", to=T.FLOAT)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=13)
    assert set(_removed(m)) == {"mid"}


def test_zero_plus_x_is_removed_and_its_readers_read_x():
    """NoopElimination with the constant first: the Add goes and its consumers read x, so a Cast after it is no
    constant (folding it would be wrong)."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Add", ["z", "r"], ["a"], name="add"),
             h.make_node("Cast", ["a"], ["c"], name="cast", to=T.INT64), h.make_node("Relu", ["c"], ["y"], name="out")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.INT64, [2])], [init("z", np.zeros((1,), np.float32))],
                   opset=13)
    gone = _removed(m)
    assert gone["add"].reason == "noop" and "cast" not in gone


def test_noop_elimination_needs_the_other_operands_rank():
    """noop_elimination.cc rejects the node when the other input has no shape at all (a Div by 1 after a
    Slice whose rank onnx cannot infer stays, measured on fasterrcnn op11)."""
    nodes = [h.make_node("Div", ["x", "c1"], ["d"], name="div"), h.make_node("Relu", ["d"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, None)], [vi("y", T.FLOAT, None)], [init("c1", np.array(1, np.float32))], opset=13)
    assert "div" not in _removed(m)


def test_ort_removes_a_training_mode_dropout_at_default_options():
    """EliminateDropout up to 1.31 never reads training_mode (measured on the torch 2.13 exports of a CNN with
    a training-mode Dropout: gone on 1.20.2, 1.24.4 and 1.31.1); its mask output still keeps it, and so does
    reading a graph input directly (CanRemoveNode: no input edge and three inputs; measured on 1.24.4/1.31.1)."""
    def model(mask_used, after_relu=True):
        src = "r" if after_relu else "x"
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu0"),
                 h.make_node("Dropout", [src, "ratio", "train"], ["d", "mask"] if mask_used else ["d"], name="drop"),
                 h.make_node("Relu", ["d"], ["y"], name="relu")]
        outs = [vi("y", T.FLOAT, [2, 3]), vi("r", T.FLOAT, [2, 3])] + ([vi("mask", T.BOOL, [2, 3])] if mask_used else [])
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3])], outs,
                          [init("ratio", np.array(0.5, np.float32)), init("train", np.array(True))], opset=13)

    index = GraphIndex(onnx.shape_inference.infer_shapes(model(False)))
    by = {n.index: n.name for n in index.nodes}
    for version in releases.measured():
        assert {by[i] for i in graph_transformer_mgr.optimize(index, "all", ort_version=version).removed} == {"drop"}
    assert not _removed(model(True))
    assert not _removed(model(False, after_relu=False))


def test_noop_elimination_reads_a_folded_operand():
    """NoopElimination's constant may be a value constant folding made (a Cast of an initializer 0, folded in the
    first round): the next round's rules read its value and remove the Add (one_element_value of a computed
    operand is None only where it was not folded)."""
    nodes = [h.make_node("Cast", ["zero"], ["z"], name="cast", to=T.FLOAT), h.make_node("Neg", ["x"], ["nx"], name="neg"),
             h.make_node("Add", ["nx", "z"], ["a"], name="add"), h.make_node("Relu", ["a"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], [init("zero", np.array([0], np.int64))])
    gone = _removed(m)
    assert gone["cast"].reason == "constant-folding" and gone["add"].reason == "noop" and "neg" not in gone


def _cast_shape_model(opset, readers=(), outputs=(), dims=("N", 3), to=T.FLOAT16, src="r", inputs=()):
    """x -> Relu -> Cast -> Shape (and a Shape<start=1> from opset 15), plus the readers and outputs given."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Cast", [src], ["c"], name="cast", to=to),
             h.make_node("Shape", ["c"], ["s"], name="shape")]
    if opset >= 15:
        nodes.append(h.make_node("Shape", ["c"], ["t"], name="tail", start=1))
    outs = [vi("s", T.INT64, [2]), vi("r", T.FLOAT, list(dims))] + ([vi("t", T.INT64, [1])] if opset >= 15 else [])
    ir = {13: 7, 19: 9, 21: 10}[opset]
    return make_model(nodes + list(readers), [vi("x", T.FLOAT, list(dims)), *inputs], outs + list(outputs), opset=opset, ir=ir)


def _real(m, level, version):
    """Each node's placement by the release's own kernel tables."""
    pl = placement.Simulator(GraphIndex(onnx.shape_inference.infer_shapes(m)), "ort-cuda", version, optimization=level).run()
    return {p.node.name: p for p in pl.nodes.values()}


def test_pre_shape_node_elimination_removes_a_cast_only_shapes_read():
    """PreShapeNodeElimination: a Cast whose every reader is a Shape goes at basic and all, whatever the dims,
    the Cast of a node's output or of a graph input (measured on ORT 1.23.2, 1.24.4 and 1.31.1, opsets 13-20; a
    Shape<start=1> reader too); with optimizations off it stays on CUDA."""
    for version in ("1.23.2", "1.24.4", "1.31.1"):
        for opset, src in ((13, "r"), (19, "r"), (19, "x")):
            m = _cast_shape_model(opset, src=src)
            for level in ("basic", "all"):
                by = _real(m, level, version)
                assert (by["cast"].status, by["cast"].reason) == ("eliminated", "cast"), (version, opset, src, level)
                assert "PreShapeNodeElimination" in by["cast"].detail
                assert by["shape"].status == "device"
            assert _real(m, "disabled", version)["cast"].status == "device"


def test_pre_shape_node_elimination_takes_a_cast_21_from_1_25_on():
    """The sources up to 1.24 check the since-versions {13, 15, 19}: a Cast-21 -> Shape stays there (measured on
    1.23.2 and 1.24.4, opsets 21 and 23), and goes from 1.25 (opsets 13 to 26); opset 11 stays everywhere. Each
    line's set is probed on its own wheel (tools/follow_releases.py: ort-releases.json's `pre_shape`): 1.16-1.24
    take {13, 15, 19}, 1.15 none (its Cast-13 -> Shape stays)."""
    m = _cast_shape_model(21)
    assert _real(m, "all", "1.24.4")["cast"].status == "device"
    for version in ("1.25.1", "1.26.0", "1.31.1"):
        assert _real(m, "all", version)["cast"].status == "eliminated", version
    for version in ("1.16.3", "1.20.2", "1.22.1"):
        assert _real(_cast_shape_model(13), "all", version)["cast"].status == "eliminated", version
        if version != "1.16.3":  # which loads opsets up to 19
            assert _real(m, "all", version)["cast"].status in ("device", "fallback"), version  # kept (1.20: CPU's)
    assert releases.row("1.15.1").pre_shape_versions == frozenset() == releases.OLDEST.pre_shape_versions
    assert releases.row("1.20.2").pre_shape_versions == releases.row("1.24.4").pre_shape_versions == {13, 15, 19}
    assert releases.row("1.32.0").pre_shape_versions == releases.NEWEST.pre_shape_versions


def test_pre_shape_node_elimination_keeps_a_cast_another_node_reads():
    """A Cast that is a graph output, also read by a Size, or read by a Shape in an If branch stays (measured on
    ORT 1.23.2, 1.24.4 and 1.31.1)."""
    out = _cast_shape_model(19, outputs=[vi("c", T.FLOAT16, None)])
    size = _cast_shape_model(19, readers=[h.make_node("Size", ["c"], ["z"], name="size")], outputs=[vi("z", T.INT64, [])])
    branch = [h.make_graph([h.make_node("Shape", ["c"], [o], name=f"s{o}")], f"g{o}", [], [vi(o, T.INT64, [2])]) for o in "uv"]
    body = _cast_shape_model(13, readers=[h.make_node("If", ["b"], ["w"], name="cond", then_branch=branch[0], else_branch=branch[1])],
                             outputs=[vi("w", T.INT64, [2])], inputs=[vi("b", T.BOOL, [])])
    for m in (out, size, body):
        for version in ("1.23.2", "1.31.1"):
            assert _real(m, "all", version)["cast"].status == "device"


def test_the_shapes_of_a_removed_complex_cast_read_its_input():
    """Cast(to complex64) -> Shape with a symbolic dim: ORT removes the Cast and its Shape reads the float input,
    so the model loads (ORT 1.23.2, 1.24.4, 1.31.1; OLX202 said the Cast and the Shape had no kernel). Placed with
    the releases' own kernel tables; a Cast another node reads keeps both unsupported."""
    for version in ("1.23.2", "1.24.4", "1.31.1"):
        by = _real(_cast_shape_model(19, to=T.COMPLEX64), "all", version)
        assert by["cast"].status == "eliminated" and by["shape"].status == by["tail"].status == "device", version
    by = _real(_cast_shape_model(19, to=T.COMPLEX64, readers=[h.make_node("Size", ["c"], ["z"], name="size")],
                                 outputs=[vi("z", T.INT64, [])]), "all", "1.24.4")
    assert by["cast"].status == by["shape"].status == "unsupported"


def test_pre_shape_node_elimination_in_an_if_branch():
    """In a body, as in the main graph: a Cast read only by a Shape of its branch goes, of an outer value or of a
    branch node's output (measured on ORT 1.23.2, 1.24.4 and 1.31.1, opsets 13 and 19; a complex64 one loads)."""
    def branch(nm, src):
        nodes = [h.make_node("Relu", ["x"], [nm + "r"], name=nm + "relu")] if src == "inner" else []
        nodes += [h.make_node("Cast", [nm + "r" if src == "inner" else "x"], [nm + "c"], name=nm + "cast", to=T.COMPLEX64),
                  h.make_node("Shape", [nm + "c"], [nm + "s"], name=nm + "shape")]
        return h.make_graph(nodes, nm, [], [vi(nm + "s", T.INT64, [2])])
    for src in ("outer", "inner"):
        m = make_model([h.make_node("If", ["b"], ["s"], name="cond", then_branch=branch("t", src), else_branch=branch("e", src))],
                       [vi("x", T.FLOAT, ["N", 3]), vi("b", T.BOOL, [])], [vi("s", T.INT64, [2])], opset=19, ir=9)
        by = _real(m, "all", "1.24.4")
        assert by["tcast"].status == by["ecast"].status == "eliminated", src
        assert by["tshape"].status == by["eshape"].status == by["cond"].status == "device", src
