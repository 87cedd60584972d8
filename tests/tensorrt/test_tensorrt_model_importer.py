"""TensorRT target: verdicts from the parser-verified tables (tools/gen_trt_support.py) and the docs-only ones.

Every model here is a real ONNX model built in the test; the expected verdicts are what TensorRT's parser did
with the same pattern when the tables were generated (TensorRT 8.4.1.5 / 8.5.3.1 / 8.6.0 and TensorRT-RTX 1.4)."""


import numpy as np
import pytest
from conftest import CORPUS_GRAPHS, init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.model.graph import GraphIndex
from onnxlint.tensorrt import model_importer, tables, versions

RTX = "10.1+rtx1.4"
VERIFIED = [v for v in ("8.4", "8.5", "8.6", RTX) if v in tables.verified_versions()]
NEW = [v for v in ("8.6", RTX) if v in tables.verified_versions()]


def _trt(lint_json, path, *extra):
    _, findings = lint_json(path, "--target", "tensorrt", *extra)
    return findings


def index_of(model):
    import onnx

    return GraphIndex(onnx.shape_inference.infer_shapes(model))  # as onnxlint's loader does


def verdicts(model, version):
    pred = model_importer.predict(index_of(model), version)
    return {v.node.name or v.node.op_type: v for v in pred.nodes.values()}


def rejected(model, version):
    return {name: (v.reason, v.detail) for name, v in verdicts(model, version).items() if v.status == "unsupported"}


# ------------------------------------------------------------------------------------------ model fixes


def test_constant_of_shape_int64_shape_is_no_false_alarm():
    m = make_model([h.make_node("ConstantOfShape", ["s"], ["y"], name="cos", value=h.make_tensor("v", T.FLOAT, [1], [0.0]))],
                   [vi("s", T.INT64, [2])], [vi("y", T.FLOAT, ["a", "b"])])
    for v in tables.available():
        assert "cos" not in rejected(m, v), v


def test_stft_with_int32_frame_step_and_length_is_no_false_alarm():
    """STFT's frame_step and frame_length as int32 initializers: every TensorRT-RTX parser takes them (1.4.0.76,
    1.5, 1.7, measured); RTX 1.4's table said T2=int32 is rejected (accepted: int64), a fact its regeneration
    (tools/gen_trt_support.py, unchanged probes) no longer holds."""
    m = make_model([h.make_node("STFT", ["s", "st", "", "fl"], ["y"], name="stft", onesided=1)],
                   [vi("s", T.FLOAT, [1, 128, 1])], [vi("y", T.FLOAT, [1, 15, 9, 2])],
                   [init("st", np.array(8, np.int32)), init("fl", np.array(16, np.int32))])
    for v in [v for v in tables.verified_versions() if versions.is_rtx(v)]:
        assert "stft" not in rejected(m, v), v


def _one_hot(depth_dtype):
    return make_model([h.make_node("OneHot", ["i", "d", "v"], ["y"], name="oh")],
                      [vi("i", T.INT64, [3]), vi("d", depth_dtype, [])], [vi("y", T.FLOAT, [3, "k"])],
                      [init("v", np.array([0.0, 1.0], np.float32))])


def test_one_hot_depth_as_an_int64_network_input_is_no_false_alarm():
    """OneHot's depth as a network input: TensorRT 8.6.0 and TensorRT-RTX 1.4-1.7 reject a float one (the node
    cases' depth; the parser wants a shape tensor, Int32 or Int64) and take an int64 or int32 one (measured); the
    tables said "rejects input 1 as a network input" whatever its dtype. tools/gen_trt_support.py now tries the
    input's other dtypes. 8.5.3.1 rejects the int64 one too ("OneHot does not support dynamic depth input"): its
    table, not regenerated, still says so."""
    for v in [v for v in tables.verified_versions() if versions.is_rtx(v) or v == "8.6"]:
        for dt in (T.INT64, T.INT32):
            assert "oh" not in rejected(_one_hot(dt), v), (v, dt)
        got = rejected(_one_hot(T.FLOAT), v)
        assert got["oh"][0] == "constant-input" and "rejects input 1 of OneHot as a network input" in got["oh"][1], v
    if "8.5" in tables.verified_versions():
        assert rejected(_one_hot(T.INT64), "8.5")["oh"][0] == "constant-input"


def test_nonzero_on_bool_and_cumsum_int64_are_accepted():
    nz = make_model([h.make_node("NonZero", ["m"], ["y"], name="nz")], [vi("m", T.BOOL, [4, 4])], [vi("y", T.INT64, [2, "k"])])
    cs = make_model([h.make_node("CumSum", ["x", "ax"], ["y"], name="cs")], [vi("x", T.INT64, [8])], [vi("y", T.INT64, [8])],
                    [init("ax", np.array(0, np.int64))])
    for v in NEW:
        assert rejected(nz, v) == {}, v
        assert rejected(cs, v) == {}, v


def test_dtype_is_checked_per_type_parameter():
    # Where: the condition is bool (B), the data float (T): bool must not be checked against T's list
    m = make_model([h.make_node("Where", ["c", "a", "b"], ["y"], name="where")],
                   [vi("c", T.BOOL, [4]), vi("a", T.FLOAT, [4]), vi("b", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    for v in tables.available():
        assert rejected(m, v) == {}, v


@pytest.mark.skipif("8.6" not in tables.verified_versions(), reason="no parser-verified 8.6 table")
def test_cast_to_bf16_rejected_on_8_6_accepted_on_rtx():
    m = make_model([h.make_node("Cast", ["x"], ["y"], name="cast", to=T.BFLOAT16)], [vi("x", T.FLOAT, [4])], [vi("y", T.BFLOAT16, [4])])
    assert rejected(m, "8.6")["cast"][0] == "cast-type"
    assert rejected(m, RTX) == {}


def _calls_local_function(body_node, y_type):
    f = h.make_function("local", "F", ["a"], ["b"], [body_node], [h.make_opsetid("", 17)])
    m = make_model([h.make_node("F", ["x"], ["y"], name="call", domain="local")], [vi("x", T.FLOAT, [2, 3])],
                   [vi("y", y_type, [2, 3])])
    m.opset_import.append(h.make_opsetid("local", 1))
    m.functions.append(f)
    return m


def test_cast_to_string_inside_a_local_function_is_rejected():
    # TensorRT-RTX 1.7's parser imports the body and rejects the Cast (checkCast: "Unsupported data type for the
    # Cast operator!"), as in the main graph; shape inference leaves the body's values untyped, so `to` says it
    to_string = _calls_local_function(h.make_node("Cast", ["a"], ["b"], name="body_cast", to=T.STRING), T.STRING)
    to_float16 = _calls_local_function(h.make_node("Cast", ["a"], ["b"], name="body_cast", to=T.FLOAT16), T.FLOAT16)
    for v in tables.available():
        assert rejected(to_string, v)["body_cast"][0] == "dtype", v
        assert "body_cast" not in rejected(to_float16, v), v


def test_a_local_function_nothing_calls_is_not_judged():
    """The parser imports a function's body at each call: a function no imported node calls (directly or through
    another function) is never imported (TensorRT-RTX 1.7 accepted a model whose uncalled function Casts to
    string, or holds a Unique)."""
    m = _calls_local_function(h.make_node("Relu", ["a"], ["b"], name="body_relu"), T.FLOAT)
    m.functions.append(h.make_function("local", "Unused", ["a"], ["b"],
                                       [h.make_node("Cast", ["a"], ["b"], name="unused_cast", to=T.STRING)],
                                       [h.make_opsetid("", 17)]))
    # called only from a function that is itself never called: not imported either
    m.functions.append(h.make_function("local", "Caller", ["a"], ["b"],
                                       [h.make_node("Unused", ["a"], ["b"], name="unused_call", domain="local")],
                                       [h.make_opsetid("", 17), h.make_opsetid("local", 1)]))
    for v in tables.available():
        assert rejected(m, v) == {}, v
    m.functions[0].node[0].op_type = "Caller"  # F now calls Caller, which calls Unused: its Cast is imported
    m.functions[0].node[0].domain = "local"
    m.functions[0].opset_import.append(h.make_opsetid("local", 1))
    for v in tables.available():
        assert rejected(m, v)["unused_cast"][0] == "dtype", v


def test_uint8_arithmetic_rejected_int8_accepted_on_rtx():
    def add(dt):
        return make_model([h.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", dt, [4]), vi("b", dt, [4])], [vi("y", dt, [4])],
                          opset=14)
    assert rejected(add(T.UINT8), RTX)["add"][0] in ("dtype", "constant-input")
    assert rejected(add(T.INT8), RTX) == {}


def test_inputs_that_must_be_constant():
    def unsq(const):
        inits = [init("axes", np.array([0], np.int64))] if const else []
        ins = [vi("x", T.FLOAT, [4])] + ([] if const else [vi("axes", T.INT64, [1])])
        return make_model([h.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsq")], ins, [vi("y", T.FLOAT, [1, 4])], inits, opset=13)
    for v in NEW:
        assert rejected(unsq(False), v)["unsq"][0] == "constant-input", v
        assert rejected(unsq(True), v) == {}, v


def test_constant_node_output_counts_as_constant():
    nodes = [h.make_node("Constant", [], ["axes"], name="c", value_ints=[0]),
             h.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsq")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [1, 4])], opset=13)
    for v in NEW:
        assert rejected(m, v) == {}, v


def test_layer_normalization_extra_outputs():
    def ln(n_out):
        outs = ["y", "mean", "istd"][:n_out]
        return make_model([h.make_node("LayerNormalization", ["x", "s", "b"], outs, name="ln")], [vi("x", T.FLOAT, [2, 4])],
                          [vi(o, T.FLOAT, None) for o in outs], [init("s", np.ones(4, np.float32)), init("b", np.zeros(4, np.float32))])
    for v in NEW:
        assert rejected(ln(3), v)["ln"][0] == "outputs", v
        assert rejected(ln(1), v) == {}, v


def test_dropout_training_mode_and_batchnorm_training():
    def drop(training):
        return make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])],
                          [init("r", np.array(0.5, np.float32)), init("t", np.array(training))])
    bn = make_model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn", training_mode=1)],
                    [vi("x", T.FLOAT, [1, 2, 4])], [vi("y", T.FLOAT, [1, 2, 4])],
                    [init(n, np.ones(2, np.float32)) for n in ("s", "b", "m", "v")], opset=15)
    for v in NEW:
        assert rejected(drop(True), v)["drop"][0] == "attribute", v
        assert rejected(drop(False), v) == {}, v
        assert rejected(bn, v)["bn"][0] == "attribute", v


def test_attribute_limits_are_version_specific():
    sc = make_model([h.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc", reduction="add")],
                    [vi("x", T.FLOAT, [4]), vi("u", T.FLOAT, [1])], [vi("y", T.FLOAT, [4])], [init("i", np.array([[1]], np.int64))],
                        opset=18)
    mp = make_model([h.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2], dilations=[2, 2])],
                    [vi("x", T.FLOAT, [1, 1, 8, 8])], [vi("y", T.FLOAT, [1, 1, 6, 6])])
    assert rejected(sc, RTX)["sc"][0] == "attribute"
    assert rejected(mp, RTX)["mp"][0] == "attribute"
    for v in [v for v in VERIFIED if v.startswith("8.")]:
        assert "sc" not in rejected(sc, v), v  # TensorRT 8.x's parser accepts a ScatterND reduction


def test_mod_fmod0_on_floats():
    def mod(dt):
        return make_model([h.make_node("Mod", ["a", "b"], ["y"], name="mod", fmod=0)], [vi("a", dt, [4]), vi("b", dt, [4])], [vi("y", dt,
            [4])])
    assert rejected(mod(T.INT32), RTX) == {}
    assert rejected(mod(T.FLOAT), RTX)["mod"][0] == "attribute"


def test_plugin_domain():
    m = make_model([h.make_node("Gelu", ["x"], ["y"], name="g", domain="com.microsoft")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])],
                   extra_opsets=[("com.microsoft", 1)])
    for v in tables.available():
        if versions.is_rtx(v):  # its parser picks importers by op type alone: ONNX Gelu's importer takes it (measured)
            assert "g" not in rejected(m, v)
        else:  # an ORT contrib op: the model was prepared for ORT (reported once per model, OLX314/OLX315)
            assert rejected(m, v)["g"][0] == "ort-op"
    custom = make_model([h.make_node("FancyNorm", ["x"], ["y"], name="f", domain="com.example")], [vi("x", T.FLOAT, [4])],
                        [vi("y", T.FLOAT, [4])], extra_opsets=[("com.example", 1)])
    for v in tables.available():
        assert rejected(custom, v)["f"][0] == "plugin"


def test_if_branches_of_different_rank(save, lint_json):
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", T.FLOAT, [4])])
    else_g = h.make_graph([h.make_node("Unsqueeze", ["x", "ax"], ["e"])], "else", [], [vi("e", T.FLOAT, [1, 4])],
                          [init("ax", np.array([0], np.int64))])
    m = make_model([h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                   [vi("c", T.BOOL, []), vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, None)])
    assert "OLX311" in {f["code"] for f in _trt(lint_json, save(m))}


# ------------------------------------------------------------------------------------------ rules end to end


def test_seed_cases(save, lint_json):
    cases = {
        "align": (make_model([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear",
                                          coordinate_transformation_mode="align_corners")],
                             [vi("x", T.FLOAT, ["n", 1, 4, 4])], [vi("y", T.FLOAT, ["n", 1, 8, 8])], [init("sc", np.array([1, 1, 2, 2],
                                 np.float32))]), "OLX301"),
        "nonzero": (make_model([h.make_node("NonZero", ["x"], ["y"], name="nz")], [vi("x", T.FLOAT, [4])], [vi("y", T.INT64, [1, "k"])]),
                    "OLX306"),
        "double": (make_model([h.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", T.DOUBLE, ["n"]), vi("b", T.DOUBLE, ["n"])],
                              [vi("y", T.DOUBLE, ["n"])]), "OLX307"),
        "reshape": (make_model([h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s2"], ["y"],
                                                                                              name="reshape"),
                                h.make_node("Identity", ["s"], ["s2"], name="ident")],
                               [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 4])]), "OLX309"),
    }
    for name, (m, code) in cases.items():
        findings = _trt(lint_json, save(m, f"{name}.onnx"))
        assert code in {f["code"] for f in findings}, (name, findings)
        assert all(f["message"] for f in findings)


def test_scatternd_reduction_per_version(save, lint_json):
    m = make_model([h.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc", reduction="mul")],
                   [vi("x", T.FLOAT, [4]), vi("u", T.FLOAT, [1])], [vi("y", T.FLOAT, [4])], [init("i", np.array([[1]], np.int64))])
    p = save(m)
    assert "OLX300" in {f["code"] for f in _trt(lint_json, p, "--trt-version", RTX)}
    assert "OLX303" in {f["code"] for f in _trt(lint_json, p, "--trt-version", "10.1")}  # docs-only matrix
    if "8.6" in tables.verified_versions():
        assert not {f["code"] for f in _trt(lint_json, p, "--trt-version", "8.6")} & {"OLX300", "OLX303"}


def test_resize_antialias_not_an_error_on_8x(save, lint_json):
    m = make_model([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rz", mode="linear", antialias=1)],
                   [vi("x", T.FLOAT, [1, 1, 8, 8])], [vi("y", T.FLOAT, [1, 1, 4, 4])], [init("sc", np.array([1, 1, .5, .5], np.float32))],
                       opset=18)
    for v in [v for v in VERIFIED if v.startswith("8.")]:
        errors = [f for f in _trt(lint_json, save(m), "--trt-version", v) if f["severity"] == "error"]
        assert errors == [], (v, errors)


def test_version_awareness(save, lint_json):
    m = make_model([h.make_node("NonZero", ["x"], ["y"], name="nz")], [vi("x", T.FLOAT, [4])], [vi("y", T.INT64, [1, "k"])])
    p = save(m)
    old = {f["code"] for f in _trt(lint_json, p, "--trt-version", "8.4")}
    new = {f["code"] for f in _trt(lint_json, p, "--trt-version", RTX)}
    assert "OLX300" in old and "OLX300" not in new


def test_int64_rule_only_for_8x(save, lint_json):
    m = make_model([h.make_node("Add", ["x", "c"], ["y"], name="add")], [vi("x", T.INT64, [4])], [vi("y", T.INT64, [4])],
                   [init("c", np.arange(4, dtype=np.int64))])
    p = save(m)
    assert "OLX308" in {f["code"] for f in _trt(lint_json, p, "--trt-version", "8.6")}
    assert "OLX308" not in {f["code"] for f in _trt(lint_json, p, "--trt-version", RTX)}


def test_conv_relu_net_is_clean(save, lint_json):
    m = make_model([h.make_node("Conv", ["x", "w"], ["c"], name="conv"), h.make_node("Relu", ["c"], ["y"], name="relu")],
                   [vi("x", T.FLOAT, ["n", 3, 8, 8])], [vi("y", T.FLOAT, ["n", 4, 6, 6])], [init("w", np.ones((4, 3, 3, 3), np.float32))])
    assert _trt(lint_json, save(m)) == []


def test_ort_trt_partition_summary(save, cli):
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Cast", ["a"], ["s"], name="to_str", to=T.STRING),
             h.make_node("Cast", ["s"], ["b"], name="to_f", to=T.FLOAT), h.make_node("Relu", ["b"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n"])], [vi("y", T.FLOAT, ["n"])])
    rc, out, _ = cli(save(m), "--target", "ort-trt")
    assert "ort-trt:" in out and "TensorRT subgraph" in out
    assert "in 2 TensorRT subgraphs" in out


def test_ort_trt_uses_the_tensorrt_verdicts():
    from onnxlint.ort import tensorrt_ep as ort_trt

    # uint8 Add on graph values is rejected by the RTX parser: the EP leaves it out, splitting TensorRT's part in two
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Cast", ["a"], ["u"], name="c1", to=T.UINT8),
             h.make_node("Add", ["u", "u"], ["v"], name="add"), h.make_node("Cast", ["v"], ["b"], name="c2", to=T.FLOAT),
             h.make_node("Relu", ["b"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], opset=14)
    index = index_of(m)
    pred = model_importer.predict(index, RTX)

    class NoCuda:
        def get(self, node):
            return None

    part = ort_trt.partition(pred, NoCuda(), index)
    assert part.trt_nodes == 4 and part.subgraphs == 2


def test_align_corners_with_sizes_is_exact_on_8_4_and_later(save, lint_json):
    m = make_model([h.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rz", mode="linear",
                                coordinate_transformation_mode="align_corners")],
                   [vi("x", T.FLOAT, ["n", 1, 4, 4])], [vi("y", T.FLOAT, ["n", 1, 8, 8])], [init("sz", np.array([1, 1, 8, 8], np.int64))])
    assert not any(f["code"] == "OLX301" for f in _trt(lint_json, save(m)))


def test_no_false_error_on_the_corpus():
    import onnx

    # what the real parsers did with the corpus: the RTX parser accepts all six; TensorRT 8.6.0 rejects
    # silero_vad_16k_op15 (Slice with run-time axes) and crashes on silero_vad_op18_ifless
    not_accepted = {"8.6": {"silero_vad_16k_op15", "silero_vad_op18_ifless"}}
    models = sorted(CORPUS_GRAPHS.glob("*.onnx"))
    assert len(models) == 6 and NEW
    for p in models:
        m = onnx.load(p, load_external_data=False)
        for v in NEW:
            if p.stem not in not_accepted.get(v, ()):
                assert rejected(m, v) == {}, (p.name, v)


@pytest.mark.skipif("8.4" not in tables.verified_versions(), reason="no parser-verified 8.4 table")
def test_reshape_14_needs_allowzero_on_8_4():
    def reshape(opset, **attrs):
        return make_model([h.make_node("Reshape", ["x", "s"], ["y"], name="rs", **attrs)], [vi("x", T.FLOAT, [2, 3])],
                          [vi("y", T.FLOAT, [3, 2])], [init("s", np.array([3, 2], np.int64))], opset=opset)
    assert rejected(reshape(14), "8.4")["rs"][0] == "attribute"  # 8.4: "Attribute not found: allowzero"
    assert rejected(reshape(14, allowzero=1), "8.4") == {}
    assert rejected(reshape(13), "8.4") == {}
    for v in NEW:
        assert rejected(reshape(14), v) == {}, v


@pytest.mark.skipif("8.6" not in tables.verified_versions(), reason="no parser-verified 8.6 table")
def test_pad_axes_input_rejected_on_8_6():
    def pad(with_axes):
        ins = ["x", "p", "", "ax"] if with_axes else ["x", "p"]
        inits = [init("p", np.array([1, 1], np.int64))] + ([init("ax", np.array([1], np.int64))] if with_axes else [])
        if not with_axes:
            inits[0] = init("p", np.array([0, 1, 0, 1], np.int64))
        return make_model([h.make_node("Pad", ins, ["y"], name="pad")], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 5])], inits,
                          opset=18)
    assert rejected(pad(True), "8.6")["pad"][0] == "attribute"
    assert rejected(pad(False), "8.6") == {}


def test_plugin_backed_importer_missing_only_in_probes_is_no_error():
    """RoiAlign: onnx-tensorrt imports it through a plugin (8.6 and the 10.x matrices list it); the probes load no
    plugin library, so the 8.6 and RTX tables say "no importer". That is doubtful for TensorRT proper: no error.
    Where neither the parser nor the matrix has it (8.4), it stays an error."""
    m = make_model([h.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], name="roi", output_height=7, output_width=7)],
                   [vi("x", T.FLOAT, ["N", 256, 32, 32]), vi("rois", T.FLOAT, ["R", 4]), vi("bi", T.INT64, ["R"])],
                   [vi("y", T.FLOAT, ["R", 256, 7, 7])], opset=16)
    for v in ("8.6", RTX):
        assert rejected(m, v) == {}, v
        assert verdicts(m, v)["roi"].status == "restricted", v
    assert rejected(m, "8.4")["roi"][0] == "not-supported"


def test_int8_qdq_is_accepted_by_8x_and_uint8_dequantize_is_not():
    """The 8.4/8.6 tables have no accepted QuantizeLinear probe at all (every probe failed for another reason) and
    list float as rejected; TensorRT 8.x imports int8 Q/DQ (its matrix: QuantizeLinear on float, DequantizeLinear
    on int8), so a float -> int8 QuantizeLinear is no error. uint8 DequantizeLinear stays one."""
    def qdq(zp_type, zp_value):
        return make_model([h.make_node("QuantizeLinear", ["x", "sc", "zp"], ["q"], name="q"),
                           h.make_node("DequantizeLinear", ["q", "sc", "zp"], ["y"], name="dq")],
                          [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 4])],
                          [init("sc", np.array(0.1, np.float32)), init("zp", np.array(zp_value, zp_type))], opset=13)
    for v in ("8.4", "8.6"):
        assert rejected(qdq(np.int8, 0), v) == {}, v
        # 8.4: its table's uint8 row; 8.6: the Q/DQ probes (tools/gen_trt_behaviour.py), asymmetric zero point
        assert rejected(qdq(np.uint8, 128), v).get("dq", ("",))[0] == ("dtype" if v == "8.4" else "quantization"), v
    # a uint8 QuantizeLinear alone (the node itself, not only its DequantizeLinear) stays rejected on 8.x: for its
    # asymmetric zero point, in the parser's words (tools/gen_trt_behaviour.py's Q/DQ probes)
    q_only = make_model([h.make_node("QuantizeLinear", ["x", "sc", "zp"], ["q"], name="q")], [vi("x", T.FLOAT, ["N", 4])],
                        [vi("q", T.UINT8, ["N", 4])], [init("sc", np.array(0.1, np.float32)), init("zp", np.array(128, np.uint8))],
                        opset=13)
    got = rejected(q_only, "8.6").get("q", ("", ""))
    assert got[0] == "quantization" and "TensorRT only supports symmetric quantization" in got[1]


def _rotary(x_batch, pos_batch, dtype=T.FLOAT16, pos_shape=None):
    """com.microsoft::RotaryEmbedding as ORT's transformer optimizer writes it: x [batch, heads, tokens, 16],
    position_ids int64 [batch, tokens] (or pos_shape), cos/sin caches as initializers (dims None: the shape is not
    known)."""
    x_shape = None if x_batch is None else [x_batch, 2, 3, 16]
    node = h.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], name="rope", domain="com.microsoft", interleaved=0)
    return make_model([node], [vi("x", dtype, x_shape), vi("pos", T.INT64, pos_shape or [pos_batch, 3])], [vi("y", dtype, x_shape)],
                      [init("cos", np.ones((8, 8), np.float16 if dtype == T.FLOAT16 else np.float32)),
                       init("sin", np.zeros((8, 8), np.float16 if dtype == T.FLOAT16 else np.float32))],
                      opset=21, extra_opsets=[("com.microsoft", 1)], ir=10)


@pytest.mark.parametrize("dtype", [T.FLOAT16, T.FLOAT])
def test_contrib_rotary_embedding_as_each_rtx_parser_measured(dtype):
    """RTX 1.4 gives com.microsoft::RotaryEmbedding ONNX's importer, which reads position_ids as cos_cache; 1.7
    imports ORT's op and checks that position_ids' batch is x's: a static 1 beside a dynamic batch is refused
    (ORT-optimized Llama/Phi-3/Qwen2 TorchScript exports, whose position_ids come from an Unsqueeze)."""
    old, new = "10.1+rtx1.4", "10.1+rtx1.7"
    for xb, pb in ((1, 1), ("n", "n"), ("n", 1)):
        got = rejected(_rotary(xb, pb, dtype), old)
        assert got["rope"][0] == "ort-op" and "cosCache has type Int64" in got["rope"][1], (xb, pb)
    assert rejected(_rotary(1, 1, dtype), new) == {}
    assert rejected(_rotary("n", "m", dtype), new) == {}  # both dynamic: accepted
    got = rejected(_rotary("n", 1, dtype), new)
    assert "positionIds has batch size 1 but must have the same batch size as input" in got["rope"][1]
    assert "x batch dynamic, position ids batch static" in got["rope"][1]
    assert "rope" in rejected(_rotary(1, "n", dtype), new)
    assert rejected(_rotary(None, 1, dtype), new) == {}  # x's batch not known: the probes disagree, no verdict


def test_contrib_rotary_embedding_with_1d_position_ids_is_refused_by_every_rtx_parser():
    """ORT's RotaryEmbedding also takes position_ids of shape [1]; RTX 1.5-1.7 refuse it whatever x's batch
    ('positionIds has rank 1 but must have rank 2', tools/gen_trt_behaviour.py's probes), where the batch
    comparison alone read its one dimension as a static batch (accepted beside a static x, another reason beside a
    dynamic one)."""
    for v in [v for v in tables.verified_versions() if versions.is_rtx(v) and v != "10.1+rtx1.4"]:
        for xb in (1, 2, "n"):
            got = rejected(_rotary(xb, None, pos_shape=[1]), v)
            assert "positionIds has rank 1 but must have rank 2" in got["rope"][1], (v, xb)
        assert rejected(_rotary("n", "n"), v) == {}, v  # 2-D, both batches dynamic: still accepted
    assert rejected(_rotary(1, None, pos_shape=[1]), "10.1+rtx1.4")["rope"][0] == "ort-op"


def test_the_verdict_key_reads_constants_and_network_inputs_as_node_facts_does():
    """The key that shares one verdict between nodes reads the main graph's constants and network inputs from two
    sets made once (model_importer._main_names), not through node_facts.is_constant and is_graph_input per input:
    both answer alike for every input of every node: an initializer, one that is also a graph input, a Constant's
    `value` and `value_float` outputs, a computed value, a graph input and an omitted input."""
    from onnxlint.tensorrt.node_facts import is_constant

    nodes = [h.make_node("Constant", [], ["c"], value=h.make_tensor("c", T.FLOAT, [1], [2.0])),
             h.make_node("Constant", [], ["cf"], value_float=3.0),
             h.make_node("Add", ["x", "w"], ["a"]), h.make_node("Mul", ["a", "c"], ["b"]),
             h.make_node("Sub", ["b", "cf"], ["d"]), h.make_node("Add", ["d", "wi"], ["e"]),
             h.make_node("Clip", ["e", "", "w"], ["y"])]
    m = make_model(nodes, [vi("x", T.FLOAT, [1]), vi("wi", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])],
                   [init("w", np.ones(1, np.float32)), init("wi", np.ones(1, np.float32))])
    index = index_of(m)
    main = index.scopes[0]
    constants, network = model_importer._main_names(main, index.by_op.get("Constant", []))
    asked = [(n, v) for n in index.nodes for v in n.inputs]
    assert {v for _, v in asked} == {"x", "w", "a", "c", "b", "cf", "d", "wi", "e", ""}
    assert [v in constants for _, v in asked] == [bool(v) and is_constant(n, v) for n, v in asked]
    assert [v in network for _, v in asked] == [main.is_graph_input(v) for _, v in asked]
    assert {v for _, v in asked if v in constants} == {"w", "wi", "c", "cf"}


def test_share_keys_part_nodes_by_which_inputs_are_constants_and_network_inputs():
    """_share_key: two nodes of one signature share a verdict exactly when the same inputs are constants
    (is_constant: initializers, Constant values) and network inputs (is_graph_input) and they write as many
    outputs, in the main graph (one role an input) and in a body alike; a body's node never shares a main
    graph node's."""
    import onnx

    from onnxlint.tensorrt.node_facts import is_constant

    adds = [("x", "w"), ("w", "x"), ("x", "y1"), ("y1", "w"), ("y1", "y2"), ("y2", "y1"), ("x", "x"), ("w", "w"),
            ("k", "x"), ("g", "x"), ("x", "g"), ("g", "y1"), ("y1", "k"), ("x", "w")]
    body = h.make_graph([h.make_node("Add", list(pair), [f"b{i}"], name=f"body_add{i}") for i, pair in enumerate(adds)]
                        + [h.make_node("Identity", ["b0"], ["t"])], "then", [], [vi("t", T.FLOAT, [2])])
    nodes = [h.make_node("Constant", [], ["k"], value=h.make_tensor("kv", T.FLOAT, [2], [1.0, 2.0])),
             h.make_node("Constant", [], ["g"], value=h.make_tensor("gv", T.FLOAT, [2], [1.0, 2.0])),
             h.make_node("Relu", ["x"], ["y1"]), h.make_node("Relu", ["y1"], ["y2"])]
    nodes += [h.make_node("Add", list(pair), [f"a{i}"], name=f"add{i}") for i, pair in enumerate(adds)]
    nodes.append(h.make_node("If", ["c"], ["z"], then_branch=body, else_branch=body))
    m = make_model(nodes, [vi("x", T.FLOAT, [2]), vi("g", T.FLOAT, [2]), vi("c", T.BOOL, [])], [vi("z", T.FLOAT, [2])],
                   [init("w", np.ones(2, np.float32))])
    index = GraphIndex(onnx.shape_inference.infer_shapes(m))
    table = tables.load(tables.resolve(None)[0])
    key_of = model_importer._share_key(table, index)[0]
    adders = [n for n in index.nodes if n.op_type == "Add"]
    keys = {n.index: key_of(n, index.signature(n)) for n in adders}
    facts = {n.index: (index.signature(n), n.scope.parent is None, tuple(is_constant(n, v) for v in n.inputs),
                       tuple(n.scope.is_graph_input(v) for v in n.inputs)) for n in adders}
    # network inputs count only in the main graph (a body's inputs are not the network's)
    facts = {i: f if f[1] else (*f[:3], None) for i, f in facts.items()}
    assert len(set(facts.values())) > 6
    for a in adders:
        for b in adders:
            assert (keys[a.index] == keys[b.index]) == (facts[a.index] == facts[b.index]), (a.name, b.name)


def _keyed_model():
    """Nodes of one signature each op that the parser judges by which inputs are constants (Unsqueeze's axes), which
    are network inputs (a float Range's), how many outputs they write (LayerNormalization's Mean and InvStdDev,
    left untyped by _untyped_statistics so that the signatures agree) and their attributes (Shape's start on 8.x),
    each also in an If body; a local function the main graph calls, whose computed and constant axes have the names
    of the main graph's constants."""
    f, i64 = T.FLOAT, T.INT64
    ranges = [("s", "one", "one"), ("one", "s", "one"), ("one", "one", "one"), ("sc", "one", "one"), ("kc", "one", "one"),
              ("one", "kc", "sc"), ("s", "s", "s")]
    def group(p):
        nodes = [h.make_node("Identity", ["s"], [f"{p}sc"]), h.make_node("Identity", ["ax"], [f"{p}axc"]),
                 h.make_node("Identity", ["x2"], [f"{p}x2c"]), h.make_node("Identity", ["sc1"], [f"{p}sc1c"])]
        nodes += [h.make_node("Range", [a if a in ("s", "one") else f"{p}{a}" if a == "sc" else a for a in r],
                              [f"{p}r{k}"], name=f"{p}range{k}") for k, r in enumerate(ranges)]
        nodes += [h.make_node("Unsqueeze", ["x", a], [f"{p}u{k}"], name=f"{p}unsq{k}")
                  for k, a in enumerate(("axi", "ax", f"{p}axc", "kax", "axi"))]
        nodes += [h.make_node("LayerNormalization", [f"{p}x2c", f"{p}sc1c", ""], outs, name=f"{p}ln{k}")
                  for k, outs in enumerate(([f"{p}y0", f"{p}m0", f"{p}d0"], [f"{p}y1", "", ""], [f"{p}y2", f"{p}m2", ""],
                                            [f"{p}y3", "", f"{p}d3"], [f"{p}y4", f"{p}m4", f"{p}d4"]))]
        nodes += [h.make_node("Shape", ["x2"], [f"{p}sh{k}"], name=f"{p}shape{k}", **attrs)
                  for k, attrs in enumerate(({}, {"start": 1}, {}, {"end": -1}, {"start": 0}, {}))]
        return nodes
    consts = [h.make_node("Constant", [], ["kc"], value=h.make_tensor("kcv", f, [], [1.0])),
              h.make_node("Constant", [], ["kax"], value=h.make_tensor("kaxv", i64, [1], [0]))]
    body = h.make_graph(group("b_"), "then", [], [vi("b_r0", f, None)])
    nodes = consts + group("") + [h.make_node("If", ["c"], ["z"], then_branch=body, else_branch=body, name="if"),
                                  h.make_node("F", ["x", "ax"], ["fu"], name="call", domain="local")]
    fn = h.make_function("local", "F", ["x", "axi"], ["u"], [
        h.make_node("Identity", ["axi"], ["one"]), h.make_node("Unsqueeze", ["x", "one"], ["u0"], name="f_unsq0"),
        h.make_node("Unsqueeze", ["x", "one"], ["u1"], name="f_unsq"),
        h.make_node("Constant", [], ["kax"], value_ints=[0]), h.make_node("Unsqueeze", ["x", "kax"], ["u"], name="f_unsq2")],
        [h.make_opsetid("", 18)])
    return make_model(nodes, [vi("s", f, []), vi("ax", i64, [1]), vi("x", f, [4]), vi("x2", f, [2, 4]), vi("c", T.BOOL, []),
                              vi("axi", i64, [1])],
                      [vi("z", f, None)], [init("one", np.array(1.0, np.float32)), init("axi", np.array([0], np.int64)),
                                           init("sc1", np.ones(4, np.float32))], opset=18, extra_opsets=[("local", 1)],
                      functions=[fn])


def _untyped_statistics(model):
    """The model with LayerNormalization's Mean and InvStdDev outputs untyped, in the main graph and the bodies."""
    import re

    graphs = [model.graph] + [a.g for n in model.graph.node for a in n.attribute if a.type == onnx_attr_graph()]
    for g in graphs:
        keep = [v for v in g.value_info if not re.fullmatch(r"(b_)?[md]\d", v.name)]
        del g.value_info[:]
        g.value_info.extend(keep)
    return model


def onnx_attr_graph():
    import onnx

    return onnx.AttributeProto.GRAPH


@pytest.mark.parametrize("version", tables.available())
@pytest.mark.parametrize("keep_protos", [True, False])
def test_each_node_gets_the_verdict_made_for_it_alone(version, keep_protos):
    """predict shares one verdict between the nodes of one key, the key of most nodes made in its own loop (the main
    graph's nodes of an op whose row asks only which inputs are constants and network inputs and the output count;
    read from the signature alone where no input is either and every output is written) and the others' by key_of
    (a body's nodes, Shape's attributes, read from the index walk's flags in a lint's index): every node's verdict is
    the one made for that node alone. An axes input given as a network input, a float Range's, a LayerNormalization
    writing its Mean, Shape's start: each changes the verdict somewhere below."""
    import onnx

    index = GraphIndex(_untyped_statistics(onnx.shape_inference.infer_shapes(_keyed_model())), keep_protos=keep_protos)
    table = tables.load(version)
    check = model_importer.verdict_verified if table.get("verified") == "parser" else model_importer.verdict_docs
    pred = model_importer.predict(index, version)
    judged = [n for n in index.nodes if n.name != "call"]  # the call of a local function: its body is judged
    alone = {n.index: model_importer._verdict(n, index.signature(n), table, version, check) for n in judged}
    got = {n.index: (v.status, v.reason, v.detail) for n in index.nodes if (v := pred.get(n)) is not None}
    assert got == alone
    key_of, row_only, main, _ = model_importer._share_key(table, index)
    for n in index.nodes:
        key_of(n, index.signature(n))
    ops = {n.op_type for n in index.nodes if id(index.signature(n)) in row_only}
    sigs = {n.name: id(index.signature(n)) for n in index.nodes}
    assert sigs["ln1"] == sigs["ln4"] and sigs["f_unsq"] == sigs["f_unsq2"] and sigs["shape0"] == sigs["shape1"]
    assert {"Range", "Unsqueeze", "LayerNormalization"} <= ops and "Shape" not in ops, ops
    reasons = {n.name: got[n.index][1] for n in judged}
    if version in ("8.6", RTX):  # the cases read: each answer differs between nodes of one signature
        assert [reasons[n] for n in ("range0", "range2", "b_range0", "unsq1", "unsq0")] == ["constant-input", None, None,
                                                                                         "constant-input", None]
        assert [reasons[f"ln{k}"] for k in range(5)] == ["outputs", None, "outputs", "outputs", "outputs"]
        assert [reasons["f_unsq"], reasons["f_unsq2"]] == ["constant-input", None]
    if version == "8.6":
        assert [reasons[f"shape{k}"] for k in range(3)] == [None, "other-shapes", None]


def _casts_model():
    """Casts of one signature and `to` each: to float where the model declares float16 (a float16 conversion's
    leftover), one met by float16 in an Add, one read by a Relu; to float16 as declared, twice; from two sequence
    network inputs (the importer names the input it refuses)."""
    f16, f = T.FLOAT16, T.FLOAT
    seq = h.make_tensor_sequence_value_info
    nodes = [h.make_node("Cast", ["x"], ["c1"], name="cast_mixed", to=f), h.make_node("Add", ["c1", "x"], ["a1"]),
             h.make_node("Cast", ["x"], ["c2"], name="cast_alone", to=f), h.make_node("Relu", ["c2"], ["r2"]),
             h.make_node("Cast", ["x"], ["c3"], name="cast_same", to=f16), h.make_node("Add", ["c3", "x"], ["a3"]),
             h.make_node("Cast", ["x"], ["c4"], name="cast_same2", to=f16),
             h.make_node("Cast", ["sq1"], ["s1"], name="cast_seq1", to=f),
             h.make_node("Cast", ["sq2"], ["s2"], name="cast_seq2", to=f)]
    m = make_model(nodes, [vi("x", f16, [2]), seq("sq1", f, [2]), seq("sq2", f, [2])],
                   [vi(o, f16, [2]) for o in ("a1", "r2", "a3", "c4")] + [vi(o, f, [2]) for o in ("s1", "s2")])
    m.graph.value_info.extend(vi(o, f16, [2]) for o in ("c1", "c2", "c3"))
    return m


MIXED_REJECTED = [v for v in tables.available() if (tables.load(v).get("behaviour") or {}).get("mixed_float_inputs") == "reject"]


@pytest.mark.parametrize("version", MIXED_REJECTED)
@pytest.mark.parametrize("keep_protos", [True, False])
def test_casts_share_a_verdict_unless_it_reads_their_consumers(version, keep_protos):
    """Where the parser rejects an element-wise layer meeting a Cast's contradicting type (TensorRT-RTX), a Cast
    whose `to` is its declared output type shares its key's verdict (it reads no consumer), while one that
    contradicts its declared type, or that reads a non-tensor network input (named in its verdict), gets its own:
    every Cast's verdict is the one made for it alone."""
    index = GraphIndex(_casts_model(), keep_protos=keep_protos)  # the declared types, as written
    table = tables.load(version)
    check = model_importer.verdict_verified if table.get("verified") == "parser" else model_importer.verdict_docs
    pred = model_importer.predict(index, version)
    alone = {n.name: model_importer._verdict(n, index.signature(n), table, version, check) for n in index.nodes}
    got = {n.name: (v.status, v.reason, v.detail) for n in index.nodes if (v := pred.get(n)) is not None}
    assert got == alone
    sigs = {n.name: id(index.signature(n)) for n in index.nodes}
    assert sigs["cast_mixed"] == sigs["cast_alone"] and sigs["cast_seq1"] == sigs["cast_seq2"]
    assert [got[n][1] for n in ("cast_mixed", "cast_alone", "cast_same", "cast_same2")] == ["dtype", None, None, None]
    assert "'sq1'" in got["cast_seq1"][2] and "'sq2'" in got["cast_seq2"][2]


@pytest.mark.parametrize("version", tables.available())
def test_nodes_reading_non_tensor_inputs_name_their_own(version):
    """Nodes of one signature that read different sequence network inputs: the importer's verdict names the input
    it refuses, so each node gets its own (before, both named the first node's input, on one grouped line)."""
    seq = h.make_tensor_sequence_value_info
    nodes = [h.make_node(op, [f"sq{k}"], [f"o{k}_{op}"], name=f"{op}{k}") for op in ("Identity", "Cast") for k in (1, 2)]
    for n in nodes[2:]:
        n.attribute.append(h.make_attribute("to", T.FLOAT))
    m = make_model(nodes, [seq("sq1", T.FLOAT, [2]), seq("sq2", T.FLOAT, [2])],
                   [seq(n.output[0], T.FLOAT, [2]) for n in nodes])
    got = verdicts(m, version)
    for op in ("Identity", "Cast"):
        first, second = got[f"{op}1"], got[f"{op}2"]
        assert first.reason == second.reason == "dtype"
        assert "'sq1'" in first.detail and "'sq2'" in second.detail, (first.detail, second.detail)
