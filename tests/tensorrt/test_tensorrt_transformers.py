"""TensorRT verdicts behind issue 31's misses and false alarms on the transformer export set, each on a model built
here with the pattern of the real case (what tools/gen_trt_behaviour.py measured on the parsers: TensorRT 8.6.0
and TensorRT-RTX 1.4)."""

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.model.graph import GraphIndex
from onnxlint.tensorrt import model_importer, tables

RTX = "10.1+rtx1.4"
MS = ("com.microsoft", 1)


def verdicts(model, version):
    pred = model_importer.predict(GraphIndex(onnx.shape_inference.infer_shapes(model)), version)
    return {v.node.name: v for v in pred.nodes.values()}


def test_tables_carry_what_the_behaviour_probes_measured():
    for v in ("8.5", "8.6", RTX):
        t = tables.load(v)
        assert set(t["behaviour"]) >= {"shape_start_end", "mixed_float_inputs", "if_constant_output"}, v
        assert "supports_operator" in t["ort_ops_source"], v
    assert tables.load("8.6")["behaviour"]["shape_start_end"] == "ignored"
    assert tables.load("8.5")["behaviour"]["reduce_axes_input"]["ReduceMean"] == "ignored"
    assert tables.load(RTX)["behaviour"]["shape_start_end"] == "honoured"


# ------------------------------------------------- ORT's own ops: the parser picks importers by op type alone


def _llama_ortopt_layer():
    """What ORT's transformer optimizer leaves in a fused Llama: ONNX-domain SimplifiedLayerNormalization and
    com.microsoft SkipSimplifiedLayerNormalization."""
    nodes = [h.make_node("SimplifiedLayerNormalization", ["x", "g"], ["n"], name="sln", axis=-1, epsilon=1e-5),
             h.make_node("SkipSimplifiedLayerNormalization", ["n", "x", "g"], ["y"], name="ssln", domain="com.microsoft",
                         epsilon=1e-5)]
    return make_model(nodes, [vi("x", T.FLOAT, [1, 4, 8])], [vi("y", T.FLOAT, [1, 4, 8])],
                      [init("g", np.ones(8, np.float32))], extra_opsets=[MS])


def test_rtx_imports_ort_simplified_layer_norms():
    """llama/phi3/qwen2 _ortopt_fp32: the RTX parser accepted them; the old table called both ops unsupported."""
    v = verdicts(_llama_ortopt_layer(), RTX)
    assert v["sln"].status == "supported" and v["ssln"].status == "supported"


def test_tensorrt_8_has_no_importer_for_them():
    v = verdicts(_llama_ortopt_layer(), "8.6")
    assert v["sln"].status == "unsupported" and v["ssln"].status == "unsupported"
    assert v["ssln"].reason == "ort-op" and "needs a plugin" in v["ssln"].detail


def test_rtx_plugin_backed_importer_is_a_rejection():
    """GenAI fp16 CUDA models: RTX's GroupQueryAttention importer loads a plugin it does not ship."""
    gqa = h.make_node("GroupQueryAttention", ["q", "k", "v"], ["o"], name="gqa", domain="com.microsoft",
                      num_heads=2, kv_num_heads=2)
    m = make_model([gqa], [vi(n, T.FLOAT16, [1, 4, 8]) for n in "qkv"], [vi("o", T.FLOAT16, [1, 4, 8])],
                   extra_opsets=[MS])
    v = verdicts(m, RTX)["gqa"]
    assert (v.status, v.reason) == ("unsupported", "ort-op") and "failed to load GroupQueryAttention plugin" in v.detail


def test_contrib_op_named_like_an_onnx_op_gets_the_onnx_importer():
    """roberta _ortopt: com.microsoft::Attention reaches ONNX Attention's importer on RTX, which rejects it."""
    att = h.make_node("Attention", ["x", "w", "b"], ["o"], name="att", domain="com.microsoft", num_heads=2)
    m = make_model([att], [vi("x", T.FLOAT, [1, 4, 8])], [vi("o", T.FLOAT, [1, 4, 8])],
                   [init("w", np.ones((8, 24), np.float32)), init("b", np.ones(24, np.float32))], extra_opsets=[MS])
    v = verdicts(m, RTX)["att"]
    assert (v.status, v.reason) == ("unsupported", "ort-op") and "by op type alone" in v.detail
    # a contrib op whose inputs are ONNX's (com.microsoft::Gelu) is judged as the ONNX op
    gelu = make_model([h.make_node("Gelu", ["x"], ["y"], name="gelu", domain="com.microsoft")],
                      [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])], extra_opsets=[MS])
    assert verdicts(gelu, RTX)["gelu"].status == "supported"


# ------------------------------------------------- Shape-15 start/end: TensorRT 8.6 builds the whole shape


def _dynamo_shape(start, end=None):
    """torch.export's `x.size(1)`: Shape(x, start=1, end=2), then Squeeze and Range, as in gpt2_dy_op18."""
    kw = {"start": start} if end is None else {"start": start, "end": end}
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape", **kw),
             h.make_node("Squeeze", ["s"], ["n"], name="sq"),
             h.make_node("Range", ["zero", "n", "one"], ["r"], name="range")]
    return make_model(nodes, [vi("x", T.FLOAT, [1, "seq"])], [vi("r", T.INT64, ["seq"])],
                      [init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64))], opset=18)


def test_shape_start_end_ignored_by_tensorrt_8_6():
    v = verdicts(_dynamo_shape(1, 2), "8.6")["shape"]
    # the parser accepts the node (measured) and builds the whole shape: other shapes, not a rejection
    assert (v.status, v.reason) == ("restricted", "other-shapes")
    assert "gives all 2 dims where the model takes dims 1:2" in v.detail
    assert verdicts(_dynamo_shape(1, 2), RTX)["shape"].status == "supported"


@pytest.mark.parametrize("start,end", [(0, None), (0, 2), (-2, None), (0, 9)])
def test_shape_start_end_taking_every_dim_is_fine(start, end):
    assert verdicts(_dynamo_shape(start, end), "8.6")["shape"].status == "supported"


# ------------------------------------------------- a Cast whose declared output type contradicts its `to`


def _fp16_converted(declared=T.FLOAT16):
    """onnxconverter_common float16: Sub(Constant fp16, Cast(to=float)) with the Cast's output declared float16."""
    nodes = [h.make_node("Cast", ["mask"], ["mf"], name="cast", to=T.FLOAT),
             h.make_node("Constant", [], ["one"], name="const", value=h.make_tensor("v", T.FLOAT16, [], [1.0])),
             h.make_node("Sub", ["one", "mf"], ["y"], name="sub")]
    m = make_model(nodes, [vi("mask", T.INT64, [1, 4])], [vi("y", T.FLOAT16, [1, 4])])
    m.graph.value_info.append(vi("mf", declared, [1, 4]))
    return m


def test_rtx_rejects_mixed_types_a_cast_leaves():
    """fp16-converter bert/clip/gpt2/llama/t5/whisper: RTX rejects the Sub; the Cast is the defect (one cause)."""
    v = verdicts(_fp16_converted(), RTX)
    assert (v["cast"].status, v["cast"].reason) == ("unsupported", "dtype")
    assert "Cast makes float where the model declares its output float16" in v["cast"].detail
    assert "meets it with float16" in v["cast"].detail
    assert verdicts(_fp16_converted(), "8.6")["cast"].status == "supported"  # 8.6 accepted mixed inputs


def test_consistent_cast_is_not_mixed():
    m = _fp16_converted()
    m.graph.node[0].attribute[0].i = T.FLOAT16  # the Cast really makes float16
    assert verdicts(m, RTX)["cast"].status == "supported"
    m = _fp16_converted(declared=T.FLOAT)  # declared as made: the Sub meets float16 and float, invalid ONNX, but
    assert verdicts(m, RTX)["cast"].status == "supported"  # not this cause


# ------------------------------------------------- If branches returning Constants (optimum merged decoders)


def _merged_decoder_if(const_in_then=True):
    c = h.make_node("Constant", [], ["kv"], name="empty_kv", value=h.make_tensor("v", T.FLOAT, [0, 2], []))
    computed = h.make_node("Neg", ["x"], ["t"], name="then_neg")
    then = h.make_graph([c, computed] if const_in_then else [computed, h.make_node("Neg", ["x"], ["kv"], name="kv_neg")],
                        "then", [], [vi("kv", T.FLOAT, None), vi("t", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Neg", ["x"], ["e0"], name="e0"), h.make_node("Neg", ["x"], ["e1"], name="e1")],
                         "else", [], [vi("e0", T.FLOAT, None), vi("e1", T.FLOAT, None)])
    node = h.make_node("If", ["use_cache"], ["y0", "y1"], name="if", then_branch=then, else_branch=other)
    return make_model([node], [vi("use_cache", T.BOOL, []), vi("x", T.FLOAT, ["n", 2])],
                      [vi("y0", T.FLOAT, None), vi("y1", T.FLOAT, None)])


def test_if_branch_returning_a_constant_beside_a_computed_output():
    v = verdicts(_merged_decoder_if(), "8.6")["if"]
    assert (v.status, v.reason) == ("unsupported", "control-flow") and "then_branch returns 1 constant(s) (kv)" in v.detail
    assert verdicts(_merged_decoder_if(), RTX)["if"].status == "supported"
    assert verdicts(_merged_decoder_if(const_in_then=False), "8.6")["if"].status == "supported"


# ------------------------------------------------- ReduceX-18's axes input: TensorRT 8.6 reduces every axis


def _pooled_layernorm(keepdims):
    """convnext_dy_op18's head: ReduceMean-18 over the spatial axes, then LayerNormalization on [N, C]."""
    nodes = [h.make_node("ReduceMean", ["x", "ax"], ["m"], name="mean", keepdims=keepdims),
             h.make_node("LayerNormalization", ["m", "g", "b"], ["y"], name="ln", axis=-1)]
    return make_model(nodes, [vi("x", T.FLOAT, ["n", 8, 2, 2])], [vi("y", T.FLOAT, None)],
                      [init("ax", np.array([-2, -1], np.int64)), init("g", np.ones(8, np.float32)),
                       init("b", np.zeros(8, np.float32))], opset=18)


def test_reduce_18_axes_input_ignored_by_8_6():
    v = verdicts(_pooled_layernorm(0), "8.6")["mean"]
    assert (v.status, v.reason) == ("restricted", "other-shapes") and "axes [-2, -1] of a rank-4 input" in v.detail
    kept = verdicts(_pooled_layernorm(1), "8.6")["mean"]  # same rank: the parse succeeds, the values differ
    assert (kept.status, kept.reason) == ("restricted", "ignored-input")
    assert verdicts(_pooled_layernorm(0), RTX)["mean"].status == "supported"
