"""ORT's TensorRT EP partition (onnxlint.ort.tensorrt_ep): what GetCapability is handed and claims, counted once.

ORT's Graph turns every Constant node into an initializer when it loads a graph (bodies too), so GetCapability
never sees one; it runs on the main graph and on each control-flow body, and takes an If/Loop/Scan only when
every node of its bodies is TensorRT's (the bodies then run inside that engine)."""

from __future__ import annotations

import onnx
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint import api

RTX = "10.1+rtx1.4"


def _const(name, dtype, dims, vals):
    return h.make_node("Constant", [], [name], name=name, value=h.make_tensor(name + "_v", dtype, dims, vals))


def _loop_model(body_nodes):
    """x + k -> Loop(3 times: the body's nodes on v) -> Relu; k, the trip count and the condition are Constants."""
    body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"), *body_nodes], "body",
                        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v", T.FLOAT, [4])],
                        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [4])])
    nodes = [_const("k", T.FLOAT, [4], [1, 2, 3, 4]), _const("m", T.INT64, [], [3]), _const("c", T.BOOL, [], [True]),
             h.make_node("Add", ["x", "k"], ["a"], name="add"),
             h.make_node("Loop", ["m", "c", "a"], ["l"], name="loop", body=body),
             h.make_node("Relu", ["l"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    onnx.checker.check_model(m, full_check=True)
    return m


def _ort_nodes(m):
    """The nodes ORT's graphs hold once loaded: every graph's nodes but Constants."""
    out = []

    def walk(g):
        for n in g.node:
            if n.op_type != "Constant":
                out.append(n.name)
            for a in n.attribute:
                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(sub)

    walk(m.graph)
    return out


def _placed(part):
    return part.trt_nodes + len(part.cuda_nodes) + len(part.cpu_nodes) + len(part.unsupported)


def test_constants_and_a_supported_loop_body_are_counted_as_getcapability_sees_them():
    # before: 9 nodes in 3 TensorRT subgraphs (the 4 Constants counted, the body's nodes as subgraphs of their own)
    body = [_const("one", T.FLOAT, [1], [1.0]), h.make_node("Add", ["v", "one"], ["v_out"], name="inc")]
    m = _loop_model(body)
    part = api.predict(m, target="ort-trt", trt_version=RTX)
    trt = api.predict(m, target="tensorrt", trt_version=RTX)
    assert all(v.status != "unsupported" for v in trt.nodes.values())  # the parser takes every node
    assert sorted(_ort_nodes(m)) == ["add", "inc", "keep", "loop", "relu"]
    assert part.trt_nodes == 5 == len(_ort_nodes(m))  # never more than the nodes ORT holds
    assert _placed(part) == len(_ort_nodes(m))
    assert part.subgraphs == 1  # the Loop's body runs in the Loop's engine
    assert part.summary_line().startswith("5 nodes in 1 TensorRT subgraph,")


def test_a_loop_whose_body_tensorrt_does_not_take_wholly_is_left_to_cuda():
    # uint8 Add on graph values: the RTX parser rejects it (test_ort_trt_uses_the_tensorrt_verdicts)
    body = [h.make_node("Cast", ["v"], ["u"], name="to_u8", to=T.UINT8), h.make_node("Add", ["u", "u"], ["w"], name="add_u8"),
            h.make_node("Cast", ["w"], ["v_out"], name="to_f", to=T.FLOAT)]
    m = _loop_model(body)
    trt = api.predict(m, target="tensorrt", trt_version=RTX)
    assert {v.node.name for v in trt.nodes.values() if v.status == "unsupported"} == {"add_u8"}
    part = api.predict(m, target="ort-trt", trt_version=RTX)
    names = {v.node.index: v.node.name for v in trt.nodes.values()}
    assert sorted(names[i] for i in part.claimed) == ["add", "keep", "relu", "to_f", "to_u8"]
    assert {loc.rsplit("/", 1)[-1] for loc in part.cuda_nodes + part.cpu_nodes} == {"loop", "add_u8"}
    assert _placed(part) == len(_ort_nodes(m)) == 7
    # add | relu | keep | to_u8 | to_f: the Loop and the uint8 Add between them are not TensorRT's
    assert part.subgraphs == 5


def test_a_local_function_is_counted_by_its_body():
    fn = onnx.helper.make_function("local", "Twice", ["a"], ["b"],
                                   [h.make_node("Add", ["a", "a"], ["s"], name="f_add"), h.make_node("Relu", ["s"], ["b"], name="f_relu")],
                                   [h.make_opsetid("", 17)])
    nodes = [_const("k", T.FLOAT, [4], [1, 2, 3, 4]), h.make_node("Mul", ["x", "k"], ["a"], name="mul"),
             h.make_node("Twice", ["a"], ["y"], name="call", domain="local")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], extra_opsets=[("local", 1)], functions=[fn])
    part = api.predict(m, target="ort-trt", trt_version=RTX)
    # ORT inlines the call: mul, f_add, f_relu (the Constant is an initializer, the call node is its body)
    assert part.trt_nodes == 3
    assert _placed(part) == 3


def test_the_html_report_marks_the_nodes_the_partition_gives_tensorrt(tmp_path):
    from onnxlint.formats.html_report import Release, model_doc

    body = [h.make_node("Cast", ["v"], ["u"], name="to_u8", to=T.UINT8), h.make_node("Add", ["u", "u"], ["w"], name="add_u8"),
            h.make_node("Cast", ["w"], ["v_out"], name="to_f", to=T.FLOAT)]
    path = tmp_path / "loop.onnx"
    onnx.save(_loop_model(body), path)
    doc = model_doc(path, "loop.onnx", [Release("ort-trt", None, trt_version=RTX)])
    marked = {name for name, on in zip(doc["nodes"]["name"], doc["runs"][0]["trt"]) if on}
    assert marked == {"add", "keep", "relu", "to_f", "to_u8"}  # not the Loop, whose body TensorRT does not wholly take
    assert "loop" in doc["nodes"]["name"] and "k" not in doc["nodes"]["name"]  # the Constants are no nodes of ORT's


def test_unconnected_supported_groups_are_one_tensorrt_subgraph_unless_that_makes_a_cycle():
    # two chains with nothing between them: GetCapability consolidates them into one subgraph (was: 2)
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Neg", ["z"], ["b"], name="n1")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4]), vi("z", T.FLOAT, [4])], [vi("a", T.FLOAT, [4]), vi("b", T.FLOAT, [4])])
    part = api.predict(m, target="ort-trt", trt_version=RTX)
    assert (part.trt_nodes, part.subgraphs) == (2, 1)
    # a node TensorRT does not take between two supported ones: one engine would read its own output, so two
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Cast", ["a"], ["s"], name="to_str", to=T.STRING),
             h.make_node("Cast", ["s"], ["b"], name="to_f", to=T.FLOAT), h.make_node("Relu", ["b"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n"])], [vi("y", T.FLOAT, ["n"])])
    part = api.predict(m, target="ort-trt", trt_version=RTX)
    assert (part.trt_nodes, part.subgraphs) == (2, 2)


def _call_model(fn, calls):
    nodes = [h.make_node("Relu", ["x"], ["v0"], name="r_in")]
    for i in range(calls):
        nodes.append(h.make_node(fn.name, [f"v{i}"], [f"v{i + 1}"], name=f"call{i}", domain="local"))
    nodes.append(h.make_node("Relu", [f"v{calls}"], ["y"], name="r_out"))
    return make_model(nodes, [vi("x", T.FLOAT, ["n"])], [vi("y", T.FLOAT, ["n"])], extra_opsets=[("local", 1)],
                      functions=[fn])


def test_a_local_function_called_twice_is_inlined_twice_into_the_callers_graph():
    # ORT inlines each call into the main graph (a CPU session's optimized model holds 4 Relus, no function):
    # 4 nodes in one TensorRT subgraph. Before: the body counted once, as a graph of its own (3 nodes in 2)
    fn = h.make_function("local", "F", ["a"], ["b"], [h.make_node("Relu", ["a"], ["b"], name="f_relu")],
                         [h.make_opsetid("", 17)])
    part = api.predict(_call_model(fn, 2), target="ort-trt", trt_version=RTX)
    assert (part.trt_nodes, part.subgraphs) == (4, 1)
    assert _placed(part) == 4


def test_a_node_tensorrt_does_not_take_inside_an_inlined_call_splits_the_callers_subgraph():
    # r_in -> call(Bernoulli: not TensorRT's, CUDA's) -> r_out: once inlined, one engine for r_in and r_out would
    # read its own output through the Bernoulli, so two subgraphs (before: the call was no node, so one)
    fn = h.make_function("local", "S", ["a"], ["b"], [h.make_node("Bernoulli", ["a"], ["b"], name="draw")],
                         [h.make_opsetid("", 17)])
    part = api.predict(_call_model(fn, 1), target="ort-trt", trt_version=RTX)
    assert (part.trt_nodes, part.subgraphs) == (2, 2)
    assert [loc.rsplit("/", 1)[-1] for loc in part.cuda_nodes] == ["draw"]
    assert _placed(part) == 3


def test_the_branch_an_if_on_a_constant_condition_inlines_is_counted_in_the_ifs_graph():
    # r1 -> If(constant true: then Neg, else Abs) -> r2: ORT's constant folding puts the Neg in the main graph before
    # partitioning, so 3 nodes in one TensorRT subgraph (8b90c66 left the taken branch out: 2 nodes; daa238f counted
    # it as a graph of its own: 2 subgraphs)
    then_g = h.make_graph([h.make_node("Neg", ["a"], ["t"], name="neg")], "then", [], [vi("t", T.FLOAT, [4])])
    else_g = h.make_graph([h.make_node("Abs", ["a"], ["e"], name="abs")], "else", [], [vi("e", T.FLOAT, [4])])
    nodes = [_const("c", T.BOOL, [], [True]), h.make_node("Relu", ["x"], ["a"], name="r1"),
             h.make_node("If", ["c"], ["b"], name="if", then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["b"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    cuda = api.predict(m, target="ort-cuda")
    assert {v.node.name: v.status for v in cuda.nodes.values() if v.node.name in ("if", "abs")} == \
        {"if": "folded", "abs": "eliminated"}
    part = api.predict(m, target="ort-trt", trt_version=RTX)
    assert (part.trt_nodes, part.subgraphs) == (3, 1)
    assert _placed(part) == 3
