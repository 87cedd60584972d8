"""ORT placement prediction (issue: CUDA kernel not found in registries)."""

import json

import numpy as np
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h


def _codes(findings, code):
    return [f for f in findings if f["code"] == code]


def test_fallbacks_with_reasons_at_ort_1_20_1(save, lint_json):
    models = {
        "resize10": make_model([h.make_node("Resize", ["x", "s"], ["y"], name="rz")], [vi("x", T.FLOAT, ["n", 3, 4, 4])],
                               [vi("y", T.FLOAT, ["n", 3, 8, 8])], [init("s", np.array([1, 1, 2, 2], np.float32))], opset=10),
        "grid": make_model([h.make_node("GridSample", ["x", "g"], ["y"], name="gs", domain="mmcv")],
                           [vi("x", T.FLOAT, ["n", 3, 4, 4]), vi("g", T.FLOAT, ["n", 4, 4, 2])], [vi("y", T.FLOAT, ["n", 3, 4, 4])],
                           opset=13, extra_opsets=[("mmcv", 1)]),
        "equal": make_model([h.make_node("Equal", ["a", "b"], ["y"], name="eq")], [vi("a", T.STRING, ["n"]), vi("b", T.STRING, ["n"])],
                            [vi("y", T.BOOL, ["n"])], opset=19),
        "equal_int8": make_model([h.make_node("Equal", ["a", "b"], ["y"], name="eq")], [vi("a", T.INT8, ["n"]), vi("b", T.INT8, ["n"])],
                                 [vi("y", T.BOOL, ["n"])], opset=13),
        "contrib": make_model([h.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["y"], name="qadd",
                                           domain="com.microsoft")],
                              [vi("a", T.UINT8, ["n"]), vi("b", T.UINT8, ["n"])], [vi("y", T.UINT8, ["n"])],
                              [init("as", np.float32(0.1)), init("az", np.uint8(0)), init("bs", np.float32(0.1)), init("bz", np.uint8(0)),
                               init("cs", np.float32(0.2)), init("cz", np.uint8(0))], extra_opsets=[("com.microsoft", 1)]),
        "conv": make_model([h.make_node("Conv", ["x", "w"], ["c"], name="conv"), h.make_node("Relu", ["c"], ["y"], name="relu")],
                           [vi("x", T.FLOAT, ["n", 3, 8, 8])], [vi("y", T.FLOAT, ["n", 4, 6, 6])],
                           [init("w", np.ones((4, 3, 3, 3), np.float32))]),
    }
    got = {}
    for name, m in models.items():
        _, findings = lint_json(save(m, f"{name}.onnx"), "--target", "ort-cuda", "--ort-version", "1.20.1")
        got[name] = findings
    # Resize-10 has a CUDA kernel (float); the old-opset semantics are reported by OLX020 instead
    assert not _codes(got["resize10"], "OLX200") and _codes(got["resize10"], "OLX020")
    # custom-domain GridSample: no provider at all (reported once, as a custom-domain op) plus the opset rule
    assert {f["code"] for f in got["grid"]} == {"OLX014", "OLX021"}
    # Equal-19: CUDA registers Equal as "13+", and ORT's kernel registry matches an open-ended kernel only at
    # its own since-version, so every opset-19 Equal runs on CPU (the decoder-model symptom users report)
    eq = _codes(got["equal"], "OLX200")
    assert len(eq) == 1 and "(opset)" in eq[0]["message"] and "13+" in eq[0]["message"]
    # Equal on int8 at opset 13: neither the CUDA nor the 1.20.1 CPU kernel lists int8
    eq8 = _codes(got["equal_int8"], "OLX202")
    assert len(eq8) == 1 and "(dtype)" in eq8[0]["message"] and "int8" in eq8[0]["message"]
    q = _codes(got["contrib"], "OLX200")
    assert len(q) == 1 and "(contrib-op)" in q[0]["message"]
    assert got["conv"] == []


def test_shape_subgraph_is_info_not_fallback(save, lint_json, cli):
    nodes = [
        h.make_node("Shape", ["x"], ["s"], name="shape"),
        h.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
        h.make_node("Unsqueeze", ["d0", "ax"], ["d0u"], name="unsq"),
        # dim 0 of x placed at position 1: not a "copy the dim" that ReshapeFusion folds at default options
        h.make_node("Concat", ["minus1", "d0u"], ["newshape"], name="concat", axis=0),
        h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape"),
    ]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 3, 4])], [vi("y", T.FLOAT, [12, "n"])],
                   [init("i0", np.array(0, np.int64)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))])
    path = save(m)
    _, findings = lint_json(path, "--target", "ort-cuda")
    infos = {f["node"] for f in findings if f["code"] == "OLX201"}
    assert infos == {"graph/gather", "graph/unsq", "graph/concat"}
    assert all(f["severity"] == "info" for f in findings if f["code"] == "OLX201")
    assert not _codes(findings, "OLX200")
    rc, out, _ = cli("placement", path, "--target", "ort-cuda", "--format", "json")
    data = json.loads(out)[0]
    assert data["target"] == "ort-cuda" and set(data) >= {"filename", "ort_version", "nodes", "summary"}
    by = {n["node"]: n for n in data["nodes"]}
    assert by["graph/shape"]["ep"] == "CUDAExecutionProvider" and by["graph/reshape"]["ep"] == "CUDAExecutionProvider"
    assert by["graph/gather"]["deliberate"] is True and by["graph/gather"]["ep"] == "CPUExecutionProvider"
    # Shape's output is already in host memory and Reshape takes its shape on CPU: no Memcpy needed
    assert data["summary"]["boundaries"] == 0 and data["summary"]["shape_only"] == 3


def test_real_fallback_counts_boundaries_and_bytes(save, cli):
    # Relu(float) on CUDA -> Equal(string) impossible; use an int8 Abs: CUDA Abs lacks int8 at 6-12? use Equal int8 via Cast
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("Cast", ["r"], ["s"], name="to_str", to=T.STRING),
             h.make_node("Cast", ["s"], ["f"], name="to_float", to=T.FLOAT),
             h.make_node("Relu", ["f"], ["y"], name="relu2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 8])], [vi("y", T.FLOAT, [2, 8])])
    rc, out, _ = cli("placement", save(m), "--target", "ort-cuda", "--format", "json")
    data = json.loads(out)[0]
    by = {n["node"]: n for n in data["nodes"]}
    assert by["graph/to_str"]["ep"] == "CPUExecutionProvider" and by["graph/to_str"]["reason"] in ("dtype", "attribute")
    assert data["summary"]["boundaries"] == 2  # relu -> to_str (to host), to_float -> relu2 (to device)
    assert data["summary"]["bytes_copied"] == 2 * 2 * 8 * 4


def test_nodes_inside_if_bodies_are_placed(save, lint_json):
    then_g = h.make_graph([h.make_node("Equal", ["a", "b"], ["o"], name="eq_then")], "then", [], [vi("o", T.BOOL, ["n"])])
    else_g = h.make_graph([h.make_node("Identity", ["c"], ["o2"], name="id_else")], "else", [], [vi("o2", T.BOOL, ["n"])])
    m = make_model([h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                   [vi("cond", T.BOOL, []), vi("a", T.STRING, ["n"]), vi("b", T.STRING, ["n"]), vi("c", T.BOOL, ["n"])],
                   [vi("y", T.BOOL, ["n"])], opset=19)
    _, findings = lint_json(save(m), "--target", "ort-cuda")
    assert [f["node"] for f in findings if f["code"] == "OLX200"] == ["graph/if:then_branch/eq_then"]


def test_ort_cpu_missing_kernel_is_error(save, lint_json):
    m = make_model([h.make_node("Equal", ["a", "b"], ["y"], name="eq")], [vi("a", T.INT8, ["n"]), vi("b", T.INT8, ["n"])],
                   [vi("y", T.BOOL, ["n"])], opset=13)
    _, findings = lint_json(save(m), "--target", "ort-cpu", "--ort-version", "1.20.1")
    assert [(f["code"], f["severity"]) for f in findings] == [("OLX250", "error")]
    _, findings = lint_json(save(m, "b.onnx"), "--target", "ort-cpu", "--ort-version", "1.24.4")
    assert findings == []  # 1.24 added int8 Equal on CPU


def test_cuda_attribute_fallback_rule(save, lint_json):
    m = make_model([h.make_node("ConvTranspose", ["x", "w"], ["y"], name="deconv", pads=[0, 0, 1, 1])],
                   [vi("x", T.FLOAT, ["n", 2, 4, 4])], [vi("y", T.FLOAT, ["n", 2, 5, 5])], [init("w", np.ones((2, 2, 3, 3), np.float32))])
    _, findings = lint_json(save(m), "--target", "ort-cuda")
    assert [f["code"] for f in findings] == ["OLX211"]


# ----------------------------------------------------------------------------------------------------------------
# Placement model against ORT's real partitioner (issue 14). Each test is built from a case where onnxlint and ORT
# disagreed (onnxruntime-gpu 1.20.2 / 1.24.4 / 1.31.1 sessions created under stub CUDA libraries). The kernel
# tables are given here (a few rows as ORT's binaries register them), so the tests pin the placement logic, not
# the shipped data.

import onnx  # noqa: E402
import pytest  # noqa: E402

import onnxlint.ort.kernel_registry as kernels  # noqa: E402
import onnxlint.ort.partitioner as placement  # noqa: E402
import onnxlint.ort.verdicts as verdicts  # noqa: E402
import onnxlint.ort_optimizer as ort_optimizer  # noqa: E402
from onnxlint.graph import GraphIndex  # noqa: E402

INF = kernels.OPEN_END
FLOATS = ["tensor(double)", "tensor(float)", "tensor(float16)"]
INTS = ["tensor(int32)", "tensor(int64)"]
CAST_TYPES = ["tensor(bool)", "tensor(double)", "tensor(float)", "tensor(float16)", "tensor(int32)", "tensor(int64)", "tensor(uint8)"]


def _rows(**ops):
    return {"ai.onnx": {op: rows for op, rows in ops.items()}}


ANY = {}  # a row with no type constraints accepts every type (CUDA NonMaxSuppression registers no constraint)
COMMON = dict(
    Shape=[[15, 18, ANY], [19, 20, ANY], [21, 22, ANY], [23, INF, ANY]], Gather=[[13, INF, ANY]], Concat=[[13, INF, ANY]],
    Reshape=[[14, 18, ANY], [19, 20, ANY], [21, 22, ANY], [23, INF, ANY]], Unsqueeze=[[13, 20, ANY], [21, 22, ANY], [23, INF, ANY]],
    Relu=[[14, INF, {"T": FLOATS}]], Add=[[14, INF, {"T": FLOATS + INTS}]], Identity=[[19, 20, ANY], [21, 22, ANY], [23, INF, ANY]],
    Dropout=[[13, INF, ANY]], Cast=[[19, 20, {"T1": CAST_TYPES, "T2": CAST_TYPES}], [21, 22, {"T1": CAST_TYPES, "T2": CAST_TYPES}],
                                    [23, 23, {"T1": CAST_TYPES, "T2": CAST_TYPES}], [24, 24, {"T1": CAST_TYPES, "T2": CAST_TYPES}],
                                    [25, INF, {"T1": CAST_TYPES, "T2": CAST_TYPES}]],
    ArgMax=[[13, INF, {"T": FLOATS}]], LSTM=[[14, INF, {"T": FLOATS, "T1": ["tensor(int32)"]}]],
    GRU=[[14, INF, {"T": FLOATS, "T1": ["tensor(int32)"]}]], ConvTranspose=[[11, INF, {"T": FLOATS}]],
    DequantizeLinear=[[21, 22, ANY], [23, INF, ANY]], Less=[[13, INF, ANY]], Mul=[[14, INF, {"T": FLOATS}]],
)


def _tables(cuda_extra=None, cpu_extra=None, version="1.24.4"):
    cuda = dict(COMMON, NonMaxSuppression=[[11, INF, ANY], [10, 10, ANY]], **(cuda_extra or {}))
    cpu = dict(COMMON, NonMaxSuppression=[[11, INF, ANY]], RandomUniformLike=[[1, 21, ANY]], **(cpu_extra or {}))
    return ({placement.CUDA: kernels.KernelTable(placement.CUDA, version, "test", _rows(**cuda)),
             placement.CPU: kernels.KernelTable(placement.CPU, version, "test", _rows(**cpu))}, version, [])


def _place(model, optimization="disabled", tables=None, version="1.24.4", target="ort-cuda"):
    index = GraphIndex(onnx.shape_inference.infer_shapes(model))
    pl = placement.Simulator(index, target, version, optimization=optimization, tables=tables or _tables(version=version)).run()
    return {p.node.name: p for p in pl.nodes.values()}, pl


def test_statuses_and_reasons_are_declared():
    assert {"device", "fallback", "deliberate", "unsupported", "expanded", "folded", "eliminated", "refused",
            "skipped"} == set(verdicts.STATUSES)
    assert set(verdicts.GONE_STATUSES) <= set(verdicts.STATUSES)
    for r in ("capability", "cpu-preferred", "constant-folding", "shape-folding", "cse", "identity", "model-opset", "kernel-init",
              "function-cpu"):
        assert r in verdicts.REASONS
    import inspect

    params = list(inspect.signature(placement.simulate).parameters)
    assert params[:5] == ["index", "target", "ort_version", "rejects", "reject_ops"] and "optimization" in params
    with pytest.raises(ValueError):
        placement.Simulator(GraphIndex(make_model([], [], [])), "ort-cuda", "1.24.4", optimization="extended", tables=_tables())


def test_kernel_without_type_constraints_nonmaxsuppression():
    # CUDA registers NonMaxSuppression 10 and 11+ with no type constraint at all: any type binds (was a false alarm)
    m = make_model([h.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"], name="nms")],
                   [vi("boxes", T.FLOAT, [1, 6, 4]), vi("scores", T.FLOAT, [1, 1, 6])], [vi("sel", T.INT64, ["k", 3])], opset=13)
    by, _ = _place(m)
    assert by["nms"].status == "device" and by["nms"].ep == placement.CUDA


def _one(op, inputs, outputs, opset=13, **attrs):
    return make_model([h.make_node(op, [n for n, *_ in inputs], [n for n, *_ in outputs], name="n", **attrs)],
                      [vi(*i) for i in inputs if i[1] is not None], [vi(*o) for o in outputs], opset=opset)


def test_argmax_select_last_index_refused_by_cuda_getcapability():
    last = _one("ArgMax", [("x", T.FLOAT, [2, 3])], [("y", T.INT64, [1, 3])], select_last_index=1)
    first = _one("ArgMax", [("x", T.FLOAT, [2, 3])], [("y", T.INT64, [1, 3])], select_last_index=0)
    p = _place(last)[0]["n"]
    assert (p.status, p.reason, p.ep) == ("fallback", "capability", placement.CPU) and "select_last_index" in p.detail
    assert _place(first)[0]["n"].status == "device"


def test_lstm_peepholes_and_gru_default_linear_before_reset_refused():
    x, w, r = ("x", T.FLOAT, [2, 1, 3]), ("w", T.FLOAT, [1, 12, 3]), ("r", T.FLOAT, [1, 12, 3])
    ins = [x, w, r, ("", None, None), ("", None, None), ("", None, None), ("", None, None), ("p", T.FLOAT, [1, 9])]
    peep = make_model([h.make_node("LSTM", ["x", "w", "r", "", "", "", "", "p"], ["y"], name="n", hidden_size=3)],
                      [vi(*i) for i in ins if i[1] is not None], [vi("y", T.FLOAT, [2, 1, 1, 3])], opset=14)
    plain = make_model([h.make_node("LSTM", ["x", "w", "r"], ["y"], name="n", hidden_size=3)],
                       [vi(*x), vi(*w), vi(*r)], [vi("y", T.FLOAT, [2, 1, 1, 3])], opset=14)
    assert _place(peep)[0]["n"].reason == "capability" and "peephole" in _place(peep)[0]["n"].detail
    assert _place(plain)[0]["n"].status == "device"
    gw, gr = ("w", T.FLOAT, [1, 9, 3]), ("r", T.FLOAT, [1, 9, 3])
    gru = lambda **a: make_model([h.make_node("GRU", ["x", "w", "r"], ["y"], name="n", hidden_size=3, **a)],  # noqa: E731
                                 [vi(*x), vi(*gw), vi(*gr)], [vi("y", T.FLOAT, [2, 1, 1, 3])], opset=14)
    assert _place(gru())[0]["n"].reason == "capability"  # linear_before_reset defaults to 0: cuDNN implements 1 only
    assert _place(gru(linear_before_reset=1))[0]["n"].status == "device"


def test_convtranspose_pads_compared_per_axis():
    def deconv(**a):
        return make_model([h.make_node("ConvTranspose", ["x", "w"], ["y"], name="n", **a)], [vi("x", T.FLOAT, [1, 2, 4, 4])],
                          [vi("y", T.FLOAT, [1, 2, "h", "w"])], [init("w", np.ones((2, 2, 3, 3), np.float32))], opset=13)

    assert _place(deconv(pads=[1, 2, 1, 2]))[0]["n"].status == "device"  # begin (1, 2) == end (1, 2): symmetric per axis
    assert _place(deconv(pads=[0, 0, 1, 1]))[0]["n"].reason == "capability"
    assert _place(deconv(auto_pad="SAME_UPPER", strides=[2, 2]))[0]["n"].reason == "capability"


def test_castlike_to_float4e2m1_expands_into_a_cast_no_provider_has():
    # ORT has no CastLike kernel, expands it into Cast-25 for the node's types; neither EP casts float4e2m1
    bad = make_model([h.make_node("CastLike", ["x", "t"], ["y"], name="n")], [vi("x", T.FLOAT4E2M1, [3]), vi("t", T.FLOAT, [0])],
                     [vi("y", T.FLOAT, [3])], opset=25, ir=11)
    ok = make_model([h.make_node("CastLike", ["x", "t"], ["y"], name="n")], [vi("x", T.FLOAT, [3]), vi("t", T.FLOAT16, [0])],
                    [vi("y", T.FLOAT16, [3])], opset=25, ir=11)
    p = _place(bad)[0]["n"]
    assert (p.status, p.reason) == ("unsupported", "function-body") and "float4e2m1" in p.detail
    p = _place(ok)[0]["n"]
    assert (p.status, p.reason, p.ep) == ("expanded", "function", placement.CUDA)


def test_bernoulli_body_is_built_for_its_types():
    # Bernoulli's body depends on its dtype (context-dependent function); RandomUniformLike-22 has no kernel here
    m = make_model([h.make_node("Bernoulli", ["x"], ["y"], name="n")], [vi("x", T.DOUBLE, [10])], [vi("y", T.DOUBLE, [10])], opset=22,
                   ir=10)
    p = _place(m)[0]["n"]
    assert (p.status, p.reason) == ("unsupported", "function-body") and "RandomUniformLike" in p.detail
    tables = _tables(cuda_extra={"RandomUniformLike": [[22, INF, ANY]], "Greater": [[13, INF, ANY]]})
    p = _place(m, tables=tables)[0]["n"]
    assert p.status == "expanded"


def test_model_newer_than_the_release_is_one_finding():
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Relu", ["a"], ["y"], name="r2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=26, ir=13)
    by, pl = _place(m)  # 1.24.4 loads opset <= 25
    assert [p.status for p in by.values()] == ["refused", "skipped"] and by["r1"].reason == "model-opset"
    assert pl.refused and "opset 26" in pl.refused
    m.ir_version = 11
    by, _ = _place(m, version="1.20.2")
    assert by["r1"].reason == "model-ir"  # 1.20 loads IR <= 10
    by, _ = _place(m, version="1.31.1")
    assert by["r1"].status == "device"


def test_cpu_preferred_sees_constant_value_ints():
    # CenterCropPad's expansion: Gather(Shape(x), Constant(value_ints)) - a Constant node's value_ints is a small
    # initializer for ORT, so GetCpuPreferredNodes keeps the Gather on CPU (was predicted on CUDA)
    nodes = [h.make_node("Constant", [], ["axes"], name="c", value_ints=[1, 2]),
             h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "axes"], ["g"], name="gather"),
             h.make_node("Concat", ["g", "g"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["a", "b", "c"])], [vi("y", T.FLOAT, None)], opset=19)
    by, _ = _place(m)
    assert by["gather"].status == "deliberate" and by["concat"].status == "deliberate" and by["reshape"].status == "device"


def _shape_model(dims):
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["d0", "ax"], ["d0u"], name="unsq"),
             h.make_node("Concat", ["d0u", "minus1"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")]
    return make_model(nodes, [vi("x", T.FLOAT, dims)], [vi("y", T.FLOAT, None)],
                      [init("i0", np.int64(0)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))], opset=19)


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
    monkeypatch.setattr(ort_optimizer, "ENHANCED_SHAPE_FOLDING", True)
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i1"], ["d1"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["d1", "ax"], ["d1u"], name="unsq"),
             h.make_node("Concat", ["minus1", "d1u"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)],
                   [init("i1", np.int64(1)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))], opset=19)
    by, _ = _place(m, "all")
    assert [by[n].status for n in ("shape", "gather", "unsq", "concat", "reshape")] == ["folded"] * 4 + ["device"]
    monkeypatch.setattr(ort_optimizer, "ENHANCED_SHAPE_FOLDING", False)
    by, _ = _place(m, "all")
    assert [by[n].status for n in ("shape", "gather", "unsq", "concat")] == ["device"] + ["deliberate"] * 3


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


def test_optimizer_levels():
    assert ort_optimizer.LEVELS == ("disabled", "basic", "all") == placement.OPTIMIZATION_LEVELS
    assert not ort_optimizer.optimize(GraphIndex(_shape_model([2, 3])), "disabled").removed


def test_reshape_fusion_removes_the_shape_subgraph_of_a_reshape():
    # Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): ORT's ReshapeFusion (Level 1) makes the shape the
    # constant [0, -1]; the Shape/Gather/Unsqueeze/Concat never reach partitioning (were reported as CPU nodes)
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["d0", "ax"], ["d0u"], name="unsq"),
             h.make_node("Concat", ["d0u", "minus1"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 3, 4])], [vi("y", T.FLOAT, ["n", 12])],
                   [init("i0", np.array(0, np.int64)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))])
    by, pl = _place(m, "all")
    assert {by[n].status for n in ("shape", "gather", "unsq", "concat")} == {"eliminated"} and by["concat"].reason == "fusion"
    assert by["reshape"].status == "device" and not pl.boundaries
    by, _ = _place(m, "disabled")
    assert [by[n].status for n in ("gather", "unsq", "concat")] == ["deliberate"] * 3


def test_data_propagation_survives_large_float_weights_but_not_large_integer_tensors():
    """Shapes from data propagation decide which shape nodes ORT keeps on CPU; a detector's big conv weights
    (float, bytes stripped for inference) must not switch it off, a large int64 tensor (which it would
    materialise) does."""
    import onnx

    from onnxlint import ort_optimizer
    from onnxlint.graph import GraphIndex

    def model(big_dtype):
        big = onnx.TensorProto(name="big", data_type=big_dtype, dims=[1100, 1000])  # stripped: dims, no bytes
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
                 h.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),  # Reshape-14 reads propagated data
                 h.make_node("Relu", ["r"], ["y"], name="relu"),
                 h.make_node("Identity", ["big"], ["b"], name="keep")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, None), vi("b", big_dtype, None)],
                          [big], opset=14)

    shapes = ort_optimizer._refined_shapes(GraphIndex(model(T.FLOAT)))
    assert shapes.get("r") == (2, 3)  # Reshape to Shape(x): only data propagation knows this
    assert ort_optimizer._refined_shapes(GraphIndex(model(T.INT64))).get("r") is None  # not run at all


# ----------------------------------------------------------------------------- Level-1 transformers measured

def _removed(model, level="all"):
    index = GraphIndex(onnx.shape_inference.infer_shapes(model))
    opt = ort_optimizer.optimize(index, level)
    return {n.name: opt.removed[n.index] for s in index.scopes for n in s.nodes if n.index in opt.removed}


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


def test_matmul_add_becomes_one_gemm_only_with_a_valid_bias():
    def model(bias_shape):
        nodes = [h.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"), h.make_node("Add", ["mm", "b"], ["y"], name="add")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, None)],
                          [init("w", np.ones((4, 3), np.float32)), init("b", np.ones(bias_shape, np.float32))], opset=13)

    assert set(_removed(model((3,)))) == {"add"}  # the MatMul stands for the Gemm: it is still placed
    assert set(_removed(model((1, 3)))) == {"add"}
    assert not _removed(model((2, 2, 3)))  # a bias Gemm cannot broadcast: both stay


def test_a_fused_matmul_still_counts_for_placement_and_copies():
    """Asin (no CUDA kernel) -> MatMul -> Add(bias) -> Asin: the Gemm runs on CUDA between two CPU nodes, so
    two Memcpy boundaries, as with any other CUDA op there."""
    tables = _tables(cuda_extra={"MatMul": [[13, INF, ANY]], "Add": [[14, INF, ANY]]},
                     cpu_extra={"Asin": [[7, INF, ANY]], "MatMul": [[13, INF, ANY]], "Add": [[14, INF, ANY]]})
    nodes = [h.make_node("Asin", ["x"], ["a"], name="asin1"), h.make_node("MatMul", ["a", "w"], ["mm"], name="matmul"),
             h.make_node("Add", ["mm", "b"], ["s"], name="add"), h.make_node("Asin", ["s"], ["y"], name="asin2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 3])],
                   [init("w", np.ones((4, 3), np.float32)), init("b", np.ones((3,), np.float32))], opset=14)
    by, pl = _place(m, optimization="all", tables=tables)
    assert by["matmul"].ep == placement.CUDA and by["add"].status == "eliminated"
    assert len(pl.boundaries) == 2


def test_identities_before_a_graph_output_all_go():
    """Relu -> Identity -> Identity -> output: ORT keeps only the Relu (the second Identity's input, once the
    first is gone, has one live reader)."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Identity", ["r"], ["i1"], name="id1"),
             h.make_node("Identity", ["i1"], ["y"], name="id2")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=13)
    assert set(_removed(m)) == {"id1", "id2"}


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


def test_shape_after_a_pad_with_computed_pads_folds_once_the_pads_are_known():
    """ORT re-runs shape inference after folding: Pad(x, Concat(...constants)) gets a static shape and the
    Shape of it folds (torchvision detectors pad their images this way)."""
    nodes = [h.make_node("Concat", ["p0", "p1"], ["pads"], name="concat", axis=0),
             h.make_node("Pad", ["x", "pads"], ["padded"], name="pad"),
             h.make_node("Shape", ["padded"], ["s"], name="shape"),
             h.make_node("Reshape", ["padded", "s"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, None)],
                   [init("p0", np.array([0, 1], np.int64)), init("p1", np.array([0, 1], np.int64))], opset=13)
    gone = _removed(m)
    assert gone["concat"].reason == "constant-folding" and gone["shape"].reason == "shape-folding"
    assert "pad" not in gone


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


def test_no_data_propagation_over_a_long_constant_range():
    """onnx's data propagation writes a Range's whole output out as dims (20M elements: 5.6 GB): a Range over
    constants longer than the limit switches it off; a short one does not."""
    def model(limit):
        nodes = [h.make_node("Range", ["s", "l", "d"], ["r"], name="range"), h.make_node("Cast", ["r"], ["y"], to=T.FLOAT)]
        return make_model(nodes, [], [vi("y", T.FLOAT, None)],
                          [init("s", np.array(0, np.int64)), init("l", np.array(limit, np.int64)),
                           init("d", np.array(1, np.int64))], opset=13)

    assert ort_optimizer._data_propagation_too_costly(model(200_000_000))
    assert not ort_optimizer._data_propagation_too_costly(model(16))


def test_no_data_propagation_over_a_long_one_dimensional_value(monkeypatch):
    """onnx's data propagation spells out every 1-D input of a known length to an op that propagates data (Add,
    Cast, Gather, ...), whatever its type: a 5M-element 1-D tensor into an Add took +686 MB. Such a value in the
    inferred model switches RefinedShapes' inference off, and so does a flatten to a computed length (plain
    inference does not know it, data propagation would), sized by the Reshape's input."""
    from onnxlint import loading

    monkeypatch.setattr(ort_optimizer, "DATA_PROP_MAX_ELEMENTS", 1000)

    def model(n, computed=False):
        if computed:  # Reshape(x, Shape(x)[1:2]): [1, n] -> [n], a length only data propagation knows
            nodes = [h.make_node("Shape", ["x"], ["xs"], name="xshape"),
                     h.make_node("Gather", ["xs", "one"], ["len"], name="len", axis=0),
                     h.make_node("Reshape", ["x", "len"], ["r"], name="flatten")]
        else:
            nodes = [h.make_node("Reshape", ["x", "flat"], ["r"], name="flatten")]
        nodes += [h.make_node("Add", ["r", "r"], ["y"], name="add"),
                  h.make_node("Shape", ["z"], ["zs"], name="shape"), h.make_node("Reshape", ["z", "zs"], ["w"], name="reshape")]
        inits = [init("flat", np.array([-1], np.int64)), init("one", np.array([1], np.int64))]
        return make_model(nodes, [vi("x", T.FLOAT, [1, n]), vi("z", T.FLOAT, ["n", 4])],
                          [vi("y", T.FLOAT, None), vi("w", T.FLOAT, None)], inits, opset=17)

    calls = []
    real = onnx.shape_inference.infer_shapes
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", lambda *a, **k: calls.append(k) or real(*a, **k))
    for n, computed, costly in ((500, False, False), (2000, False, True), (500, True, False), (2000, True, True)):
        mf = loading.ModelFile(path=None, display="m", model=model(n, computed), file_size=0)
        index = loading.index_model(mf)
        assert ort_optimizer._data_propagation_too_costly(index.model) is costly
        calls.clear()
        rs = ort_optimizer._refined_shapes(index)
        assert rs.get("w") == (None if costly else (None, 4))
        assert bool([k for k in calls if k.get("data_prop")]) is not costly
        if computed and not costly:
            assert rs.get("r") == (n,)  # what data propagation learns there


def test_refined_shapes_read_what_the_index_knows_instead_of_walking():
    """RefinedShapes skips the walks over every node (inference budget, Range search, subgraph search) when the
    graph index says there is nothing to find; the answers are those of the walks."""
    from onnxlint import loading

    def model(with_if, with_range):
        nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["r"], name="reshape")]
        if with_range:
            nodes.append(h.make_node("Range", ["a", "b", "c"], ["q"], name="range"))
        if with_if:
            then_g = h.make_graph([h.make_node("Identity", ["r"], ["t"])], "then", [], [vi("t", T.FLOAT, None)])
            else_g = h.make_graph([h.make_node("Neg", ["r"], ["e"])], "else", [], [vi("e", T.FLOAT, None)])
            nodes.append(h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g))
        else:
            nodes.append(h.make_node("Relu", ["r"], ["y"], name="relu"))
        inits = [init("a", np.array(0, np.int64)), init("b", np.array(10 ** 8, np.int64)), init("c", np.array(1, np.int64))]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, None)],
                          inits, opset=17)  # Shape's data propagation: opset 15 on

    for with_if in (False, True):
        for with_range in (False, True):
            m = model(with_if, with_range)
            inferred = onnx.shape_inference.infer_shapes(m)
            refined = ort_optimizer._refined_shapes(GraphIndex(inferred))
            assert refined._flat is not with_if and refined._has_range is with_range
            assert loading.over_inference_budget(inferred, budget=3, flat=refined._flat) \
                == loading.over_inference_budget(inferred, budget=3)
            assert ort_optimizer._data_propagation_too_costly(inferred, refined._flat, refined._has_range) \
                is ort_optimizer._data_propagation_too_costly(inferred) is with_range
            shaped = ort_optimizer._shaped_types(inferred.graph, refined._flat)
            assert shaped == ort_optimizer._shaped_types(inferred.graph) and ("t" in shaped) is with_if
            assert GraphIndex(inferred).scopes[0].type_of("r").shape == ("unk__0", "unk__1")
            # data propagation gives the Reshape its shape; not past a long constant Range
            assert refined.get("r") == (None if with_range else (2, 3))


def test_refined_shapes_find_bodies_where_the_index_says_and_read_entries_when_asked():
    """RefinedShapes finds the inferred model's bodies at the nodes the index names (no walk over every node)
    and keeps each name's last entry, reading its shape when asked: the answers are _shaped_types' over the
    full walk, a name given twice whose later entry has no shape included; bodies that do not match the index
    fall back to the full walk."""
    def branch(tag, inner=None):
        nodes = [h.make_node("Relu", ["r"], [f"{tag}_a"])]
        if inner is not None:
            nodes.append(h.make_node("If", ["cond"], [f"{tag}_o"], then_branch=inner[0], else_branch=inner[1]))
            nodes.append(h.make_node("Add", [f"{tag}_a", f"{tag}_o"], [f"{tag}_y"]))
        else:
            nodes.append(h.make_node("Identity", [f"{tag}_a"], [f"{tag}_y"]))
        return h.make_graph(nodes, tag, [], [vi(f"{tag}_y", T.FLOAT, None)])

    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Reshape", ["x", "s"], ["r"])]
    nodes += [h.make_node("Neg", ["r"], [f"n{i}"]) for i in range(5)]  # nodes before, between and after bodies
    nodes.append(h.make_node("If", ["cond"], ["y1"], then_branch=branch("t1", (branch("t1t"), branch("t1e"))),
                             else_branch=branch("e1")))
    nodes += [h.make_node("Neg", ["r"], [f"m{i}"]) for i in range(3)]
    nodes.append(h.make_node("If", ["cond"], ["y2"], then_branch=branch("t2"), else_branch=branch("e2")))
    nodes.append(h.make_node("Sum", ["y1", "y2", "n0", "m0"], ["y"]))
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, None)], opset=17)
    inferred = onnx.shape_inference.infer_shapes(m)
    # "r" once more, later, without a shape: the answer stays the shaped entry before it
    inferred.graph.output.append(onnx.helper.make_value_info("r", onnx.TypeProto()))
    gi = GraphIndex(inferred)
    bodies = ort_optimizer._body_positions(gi)
    full = ort_optimizer._walk_order(inferred.graph)
    assert len(full) == 7 and [g.name for g in ort_optimizer._walk_order(inferred.graph, bodies=bodies)] \
        == [g.name for g in full]
    assert [g.name for g in ort_optimizer._bodies_at(inferred.graph, bodies)] == [g.name for g in full]
    assert ort_optimizer._shaped_types(inferred.graph, bodies=bodies) == ort_optimizer._shaped_types(inferred.graph)
    refined = ort_optimizer._refined_shapes(gi)
    again = onnx.shape_inference.infer_shapes(inferred, data_prop=True)
    expected = ort_optimizer._shaped_types(again.graph)
    names = {vi_.name for g in full for part in (g.input, g.value_info, g.output) for vi_ in part} | {"nope"}
    for name in sorted(names):
        t = expected.get(name)
        want = None if t is None else tuple(d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim)
        assert refined.get(name) == want, name
    assert refined._types is None  # every last entry had its shape: no full dict was built
    # a name given twice, the later entry without a shape (inference fills a graph output's, so set by hand)
    g = h.make_graph([], "g", [vi("a", T.FLOAT, [2, 3])], [vi("a", T.FLOAT, None)])
    assert not g.output[0].type.tensor_type.HasField("shape")
    lone = ort_optimizer.RefinedShapes(None)
    lone._inferred, lone._infos = g, {v.name: v for v in (*g.input, *g.output)}
    assert lone.get("a") == (2, 3) and lone._types == ort_optimizer._shaped_types(g)
    # a copy whose bodies are not where the index says: the full walk answers
    other = onnx.ModelProto()
    other.CopyFrom(inferred)
    del other.graph.node[2]  # every node after it moves up one place
    assert ort_optimizer._bodies_at(other.graph, bodies) is None
    assert [g.name for g in ort_optimizer._walk_order(other.graph, bodies=bodies)] \
        == [g.name for g in ort_optimizer._walk_order(other.graph)] == [g.name for g in full]


def test_refined_shapes_bound_the_budget_by_the_count_made_before_inference(monkeypatch):
    """With bodies, RefinedShapes' budget check on the inferred model is answered from loading's count before
    inference (its cost plus bodies x value_info) when that bound is within the budget: no second walk, the
    same shapes. Over it, the walk decides as before."""
    from onnxlint import loading

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["r"], name="reshape")]
    # a body value too: the bound counts it for every body, though only bodies nested in this one see it
    then_g = h.make_graph([h.make_node("Identity", ["r"], ["t0"]), h.make_node("Relu", ["t0"], ["t"])], "then", [],
                          [vi("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Neg", ["r"], ["e"])], "else", [], [vi("e", T.FLOAT, None)])
    nodes.append(h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g))
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("cond", T.BOOL, [])], [vi("y", T.FLOAT, None)], [], opset=17)
    walks = []
    real = loading.inference._inference_work
    monkeypatch.setattr(loading.inference, "_inference_work", lambda *a, **k: walks.append(1) or real(*a, **k))

    def refined(budget):
        monkeypatch.setattr(loading.inference, "INFER_BUDGET", budget)
        index = loading.index_model(loading.ModelFile(path=None, display="m", model=m, file_size=0))
        cost, n, bodies = index.inference_work
        assert (n, bodies) == (6, 2) and cost <= budget
        added = sum(len(g.value_info) for g in ort_optimizer._model_graphs(index))
        walks.clear()
        got = ort_optimizer._refined_shapes(index).get("r")
        return got, len(walks), cost + bodies * added

    got, walked, bound = refined(loading.INFER_BUDGET)
    assert (got, walked) == ((2, 3), 0)  # data propagation ran, with no second walk
    exact = loading.inference_cost(loading.index_model(loading.ModelFile(path=None, display="m", model=m,
                                                                         file_size=0)).model)
    assert exact <= bound
    # a budget the count before inference fits but the bound does not: the walk decides, and it may run
    assert exact < bound
    got, walked, _ = refined(bound - 1)
    assert (got, walked) == ((2, 3), 1)
    assert loading.inference_cost(m) < exact  # inference adds value_info: the inferred model costs more
    got, walked, _ = refined(exact - 1)
    assert (got, walked) == (None, 1)  # over the budget on the inferred model: no data propagation


def test_transposes_cancelled_through_a_softmax():
    """Transpose(perm) -> LogSoftmax (opset 13+, last axis) -> Transpose(inverse perm): ORT's TransposeOptimizer
    pushes the first through and cancels both (the expanded SoftmaxCrossEntropyLoss); a non-inverse pair stays."""
    def model(perm2):
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
                 h.make_node("Transpose", ["r"], ["t"], name="t1", perm=[0, 2, 1]),
                 h.make_node("LogSoftmax", ["t"], ["l"], name="lsm", axis=-1),
                 h.make_node("Transpose", ["l"], ["u"], name="t2", perm=perm2),
                 h.make_node("Relu", ["u"], ["y"], name="relu2")]
        return make_model(nodes, [vi("x", T.FLOAT, [2, 3, 4])], [vi("y", T.FLOAT, None)], opset=13)

    assert set(_removed(model([0, 2, 1]))) == {"t1", "t2"}
    assert not _removed(model([1, 0, 2]))


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


def test_identity_of_an_inlined_if_branch_goes():
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"], name="id_then")], "then", [], [vi("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Abs", ["x"], ["e"], name="abs")], "else", [], [vi("e", T.FLOAT, [2])])
    nodes = [h.make_node("If", ["cond"], ["i"], name="if", then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["i"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], [init("cond", np.array(True))], opset=13)
    gone = _removed(m)
    assert gone["id_then"].reason == "identity" and gone["abs"].status == "eliminated"


def test_contiguous_reshapes_fuse_from_ort_1_31():
    nodes = [h.make_node("Reshape", ["x", "s1"], ["a"], name="r1"), h.make_node("Reshape", ["a", "s2"], ["b"], name="r2"),
             h.make_node("Relu", ["b"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 6])], [vi("y", T.FLOAT, [3, 4])],
                   [init("s1", np.array([12], np.int64)), init("s2", np.array([3, 4], np.int64))], opset=13)
    index = GraphIndex(onnx.shape_inference.infer_shapes(m))
    by = {n.index: n.name for n in index.nodes}
    assert {by[i] for i in ort_optimizer.optimize(index, "all", ort_version="1.31.1").removed} == {"r2"}
    assert not ort_optimizer.optimize(index, "all", ort_version="1.24.4").removed  # measured: not fused there


def test_reshape_fusion_sees_through_eliminated_identities():
    """Concat -> Identity -> Identity -> Reshape (paddle2onnx exports): once EliminateIdentity removed both, the
    Concat has one consumer, the Reshape, and ReshapeFusion replaces it."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Gather", ["s", "i0"], ["g"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["g"], ["u"], name="unsq", axes=[0]),
             h.make_node("Concat", ["u", "tail"], ["c"], name="concat", axis=0),
             h.make_node("Identity", ["c"], ["c1"], name="id1"), h.make_node("Identity", ["c1"], ["c2"], name="id2"),
             h.make_node("Reshape", ["x", "c2"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 2, 2])],
                   [init("i0", np.array(0, np.int64)), init("tail", np.array([2, 2], np.int64))], opset=11)
    gone = _removed(m)
    assert gone["concat"].reason == "fusion" and {"id1", "id2"} <= set(gone)


def test_shape_of_a_folded_range_chain_folds_after_reinference():
    """torchvision's anchor generators: Range(0, W) of a static feature-map width, Reshape(-1, 1), then Shape of
    that. ORT folds the Range chain, infers its shape again and folds the Shape too (measured on ssdlite320:
    the Concat of two such Shapes was reported as a CPU node ORT never runs)."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape_x"),
             h.make_node("Gather", ["s", "i3"], ["w"], name="gather", axis=0),
             h.make_node("Range", ["zero", "w", "one"], ["r"], name="range"),
             h.make_node("Reshape", ["r", "col"], ["rc"], name="reshape"),
             h.make_node("Shape", ["rc"], ["s2"], name="shape_rc"),
             h.make_node("Expand", ["y", "s2"], ["out"], name="expand")]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 3, 4, 5]), vi("y", T.FLOAT, ["n", 1])], [vi("out", T.FLOAT, None)],
                   [init("i3", np.array(3, np.int64)), init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
                    init("col", np.array([-1, 1], np.int64))], opset=13)
    gone = _removed(m)
    assert gone["range"].reason == "constant-folding" and gone["reshape"].reason == "constant-folding"
    assert gone["shape_rc"].reason == "shape-folding" and "expand" not in gone


def _sharing_model(opset):
    """Two int64 constants 1 index Shape(x); the first is also read in an If branch by an Unsqueeze."""
    axes = {"axes": [0]} if opset < 13 else {}
    unsq_in = ["one_a"] if opset < 13 else ["one_a", "ax"]
    then_g = h.make_graph([h.make_node("Identity", ["v"], ["t"], name="then_id")], "then", [], [vi("t", T.INT64, [1])])
    else_g = h.make_graph([h.make_node("Unsqueeze", unsq_in, ["u"], name="else_unsq", **axes),
                           h.make_node("Add", ["u", "v"], ["e"], name="else_add")], "else", [], [vi("e", T.INT64, [1])])
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one_a"], ["g1"], name="g1", axis=0),
             h.make_node("Gather", ["s", "one_b"], ["g2"], name="g2", axis=0),
             h.make_node("Add", ["g1", "g2"], ["sum"], name="add"),
             h.make_node("If", ["cond"], ["branch"], name="if", then_branch=then_g, else_branch=else_g)]
    return make_model(nodes, [vi("x", T.FLOAT, ["n", "m"]), vi("cond", T.BOOL, []), vi("v", T.INT64, [1])],
                      [vi("sum", T.INT64, []), vi("branch", T.INT64, [1])],
                      [init("one_a", np.array(1, np.int64)), init("one_b", np.array(1, np.int64)), init("ax", np.array([0], np.int64))],
                      opset=opset)


def test_constant_sharing_runs_once_after_the_first_rule_pass():
    """ConstantSharing runs once, on the main graph, right after the first rule-based pass; an initializer a
    subgraph still reads then is not shared. Measured on fasterrcnn_mobilenet_v3 (ORT 1.24.4): at opset 11
    UnsqueezeElimination (axes attribute) removes the branch's reader first, the constant is shared and the
    duplicate Gather goes; at opset 17 (axes as an input) the Unsqueeze is only folded later and both Gathers stay."""
    gone11 = _removed(_sharing_model(11))
    assert gone11["else_unsq"].reason == "unsqueeze"
    assert [k for k in ("g1", "g2") if k in gone11] and all(gone11[k].reason == "cse" for k in ("g1", "g2") if k in gone11)
    gone17 = _removed(_sharing_model(17))
    assert gone17["else_unsq"].reason == "constant-folding" and "g2" not in gone17 and "g1" not in gone17


def test_noop_elimination_needs_the_other_operands_rank():
    """noop_elimination.cc rejects the node when the other input has no shape at all (a Div by 1 after a
    Slice whose rank onnx cannot infer stays, measured on fasterrcnn op11)."""
    nodes = [h.make_node("Div", ["x", "c1"], ["d"], name="div"), h.make_node("Relu", ["d"], ["y"], name="relu")]
    m = make_model(nodes, [vi("x", T.FLOAT, None)], [vi("y", T.FLOAT, None)], [init("c1", np.array(1, np.float32))], opset=13)
    assert "div" not in _removed(m)


def _qkv_model(batch_dims):
    nodes = [h.make_node("MatMul", ["x", "w"], ["qkv"], name="matmul"),
             h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["b"], name="gb", axis=0),
             h.make_node("Gather", ["s", "i1"], ["t"], name="gt", axis=0),
             h.make_node("Gather", ["s", "i2"], ["c"], name="gc", axis=0),
             h.make_node("Div", ["c", "four"], ["cd"], name="div"),
             h.make_node("Unsqueeze", ["b", "ax"], ["ub"], name="ub"),
             h.make_node("Unsqueeze", ["t", "ax"], ["ut"], name="ut"),
             h.make_node("Unsqueeze", ["cd", "ax"], ["uc"], name="uc"),
             h.make_node("Concat", ["ub", "ut", "three_four", "uc"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["qkv", "shp"], ["y"], name="reshape")]
    return make_model(nodes, [vi("x", T.FLOAT, [*batch_dims, 64])], [vi("y", T.FLOAT, None)],
                      [init("w", np.zeros((64, 192), np.float32)), init("i0", np.array(0, np.int64)),
                       init("i1", np.array(1, np.int64)), init("i2", np.array(2, np.int64)), init("four", np.array(4, np.int64)),
                       init("ax", np.array([0], np.int64)), init("three_four", np.array([3, 4], np.int64))], opset=17)


def test_reshape_fusion_copies_a_dim_of_another_tensor_from_ort_1_31():
    """A qkv Reshape [B, T, 3, 4, C/4] built from the dims of x [B, T, 64] (the Reshape reads x @ W): ORT 1.31.1
    makes the shape [0, 0, 3, 4, -1] (dims B and T are the same named dims); 1.24.4 wants x of the very same shape
    as the Reshape's input and keeps the subgraph. Dims onnx's inference names unk__N prove nothing."""
    index = GraphIndex(onnx.shape_inference.infer_shapes(_qkv_model(["B", "T"])))
    by = {n.index: n.name for n in index.nodes}
    gone31 = {by[i] for i in ort_optimizer.optimize(index, "all", ort_version="1.31.1").removed}
    assert {"concat", "ub", "ut", "uc", "div"} <= gone31
    assert "concat" not in {by[i] for i in ort_optimizer.optimize(index, "all", ort_version="1.24.4").removed}
    index = GraphIndex(onnx.shape_inference.infer_shapes(_qkv_model(["unk__1", "unk__2"])))
    by = {n.index: n.name for n in index.nodes}
    assert "concat" not in {by[i] for i in ort_optimizer.optimize(index, "all", ort_version="1.31.1").removed}


def test_constant_sharing_sees_body_reads_through_bypassed_nodes_and_shares_what_rules_made():
    """Measured with ORT 1.24.4 (basic level): an initializer a branch reads through an Identity that
    EliminateIdentity bypasses is still an implicit input of the If, so not shared (both Gathers stay); the
    initializers UnsqueezeElimination makes in the first rule pass are shared (one of the two Gathers goes)."""
    then_g = h.make_graph([h.make_node("Identity", ["one_a"], ["i"], name="then_id"),
                           h.make_node("Add", ["i", "v"], ["t"], name="then_add")], "then", [], [vi("t", T.INT64, [1])])
    else_g = h.make_graph([h.make_node("Identity", ["v"], ["e"], name="else_id")], "else", [], [vi("e", T.INT64, [1])])
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one_a"], ["g1"], name="g1", axis=0),
             h.make_node("Gather", ["s", "one_b"], ["g2"], name="g2", axis=0),
             h.make_node("Add", ["g1", "g2"], ["sum"], name="add"),
             h.make_node("If", ["cond"], ["branch"], name="if", then_branch=then_g, else_branch=else_g)]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", "m"]), vi("cond", T.BOOL, []), vi("v", T.INT64, [1])],
                   [vi("sum", T.INT64, []), vi("branch", T.INT64, [1])],
                   [init("one_a", np.array(1, np.int64)), init("one_b", np.array(1, np.int64))], opset=13)
    gone = _removed(m)
    assert gone["then_id"].reason == "identity" and "g1" not in gone and "g2" not in gone

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Unsqueeze", ["one_a"], ["ua"], name="ua", axes=[0]),
             h.make_node("Unsqueeze", ["one_b"], ["ub"], name="ub", axes=[0]),
             h.make_node("Gather", ["s", "ua"], ["g1"], name="g1", axis=0),
             h.make_node("Gather", ["s", "ub"], ["g2"], name="g2", axis=0),
             h.make_node("Concat", ["g1", "g2"], ["cat"], name="cat", axis=0),
             h.make_node("Reshape", ["y", "cat"], ["out"], name="r")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["n", "m"]), vi("y", T.FLOAT, ["k"])], [vi("out", T.FLOAT, None)],
                   [init("one_a", np.array(1, np.int64)), init("one_b", np.array(1, np.int64))], opset=11)
    gone = _removed(m)
    assert gone["ua"].reason == "unsqueeze" and gone["ub"].reason == "unsqueeze"
    assert len([k for k in ("g1", "g2") if k in gone and gone[k].reason == "cse"]) == 1


def test_a_graph_input_read_on_both_sides_gets_one_memcpy():
    """transformer_memcpy.cc: a graph input read by a CPU node and a CUDA node gets one MemcpyFromHost (the
    attention node tests: Q read by a CPU Shape computation and a CUDA MatMul); read by CUDA nodes only it gets
    none (the session copies it in); an initializer never does (duplicated per device)."""
    def model(cpu_reader: bool, x_is_init: bool = False):
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu")]
        if cpu_reader:
            nodes.append(h.make_node("Sin", ["x"], ["s"], name="sin"))  # a CPU kernel only (tables below)
        inputs = [] if x_is_init else [vi("x", T.FLOAT, [2, 8])]
        inits = [init("x", np.ones((2, 8), np.float32))] if x_is_init else []
        outs = [vi("r", T.FLOAT, [2, 8])] + ([vi("s", T.FLOAT, [2, 8])] if cpu_reader else [])
        return make_model(nodes, inputs, outs, inits)

    tables = _tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]})
    by, pl = _place(model(cpu_reader=True), tables=tables)
    assert by["sin"].ep == placement.CPU and by["relu"].ep == placement.CUDA
    assert [(b.value, b.direction, b.producer, b.consumer.name, b.bytes) for b in pl.boundaries] == [("x", "to-device", None, "relu", 64)]
    assert not _place(model(cpu_reader=False), tables=tables)[1].boundaries
    assert not _place(model(cpu_reader=True, x_is_init=True), tables=tables)[1].boundaries


def test_cse_of_tensor_attributes_in_typed_fields_from_ort_1_31():
    """Two ConstantOfShape nodes on equal shapes: with `value` as raw bytes CSE merges them on every release;
    with `value` in float_data (older exporters, e.g. the light_inception models on PyPI) ORT 1.20.2 and 1.24.4
    keep both and 1.31.1 merges them (measured with ORT's optimized-model output)."""
    def model(value):
        nodes = [h.make_node("ConstantOfShape", ["s1"], ["c1"], name="cos1", value=value),
                 h.make_node("ConstantOfShape", ["s2"], ["c2"], name="cos2", value=value),
                 h.make_node("Mul", ["x", "c1"], ["m1"], name="mul1"), h.make_node("Mul", ["x", "c2"], ["m2"], name="mul2"),
                 h.make_node("Add", ["m1", "m2"], ["y"], name="add")]
        return make_model(nodes, [vi("x", T.FLOAT, ["n", 3, 4])], [vi("y", T.FLOAT, None)],
                          [init("s1", np.array([2, 3, 4], np.int64)), init("s2", np.array([2, 3, 4], np.int64))], opset=17)

    def merged(m, version):
        index = GraphIndex(onnx.shape_inference.infer_shapes(m))
        by = {n.index: n.name for n in index.nodes}
        gone = ort_optimizer.optimize(index, "all", ort_version=version).removed
        return {by[i] for i, r in gone.items() if r.reason == "cse"}

    typed = model(h.make_tensor("v", T.FLOAT, [1], [0.02]))
    raw = model(init("v", np.array([0.02], np.float32)))
    assert merged(typed, "1.24.4") == set() and merged(typed, "1.20.2") == set()
    # measured: ORT keeps mul2 and removes mul1
    assert "mul1" in merged(typed, "1.31.1") and "mul1" in merged(raw, "1.24.4") and "mul1" in merged(raw, "1.20.2")


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
    for version in ("1.20.2", "1.24.4", "1.31.1"):
        assert {by[i] for i in ort_optimizer.optimize(index, "all", ort_version=version).removed} == {"drop"}
    assert not _removed(model(True))
    assert not _removed(model(False, after_relu=False))


def test_an_expanded_function_counts_copies_on_the_provider_its_body_runs_on():
    """ORT expands a CastLike with no kernel into a Cast on CUDA: its output read by a CPU node needs a
    MemcpyToHost (the attention `_expanded` node tests: 2,124 -> 2,320 of ORT's 2,332 Memcpy nodes on 1.24.4)."""
    nodes = [h.make_node("CastLike", ["x", "like"], ["c"], name="castlike"),
             h.make_node("Sin", ["c"], ["y"], name="sin")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 8]), vi("like", T.FLOAT16, [1])], [vi("y", T.FLOAT16, [2, 8])], opset=19)
    by, pl = _place(m, tables=_tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]}))
    assert by["castlike"].status == "expanded" and by["castlike"].ep == placement.CUDA and by["sin"].ep == placement.CPU
    assert [(b.value, b.direction, b.producer.name, b.consumer.name, b.bytes) for b in pl.boundaries] == [
        ("c", "to-host", "castlike", "sin", 32)]


def test_a_folded_value_whose_size_is_learnt_after_folding_counts_as_a_small_initializer():
    """fasterrcnn op11's image padding: Concat(CPU shape values, ConstantOfShape(folded)) -> ... -> Pad pads.
    onnx's inference cannot size the ConstantOfShape; ORT, re-inferring after folding it, can, so the Concat
    reads a small initializer and a CPU tensor and is CPU-preferred (was predicted on CUDA: 5 misses)."""
    nodes = [h.make_node("Shape", ["x"], ["sx"], name="shape_x"),
             h.make_node("Gather", ["sx", "i0"], ["g"], name="gather_x", axis=0),
             h.make_node("Abs", ["g"], ["a"], name="abs"),  # no data propagation through Abs
             h.make_node("ConstantOfShape", ["a"], ["ones"], name="cos", value=init("v", np.array([1], np.int64))),
             h.make_node("Shape", ["z"], ["sz"], name="shape_z"),
             h.make_node("Gather", ["sz", "i01"], ["nz"], name="gather_z", axis=0),
             h.make_node("Concat", ["nz", "ones"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["z", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, [1, 2]), vi("z", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)],
                   [init("i0", np.array([0], np.int64)), init("i01", np.array([0, 1], np.int64))], opset=17)
    extra = {"Abs": [[13, INF, ANY]], "ConstantOfShape": [[9, INF, ANY]]}
    by, _ = _place(m, "all", tables=_tables(cuda_extra=extra, cpu_extra=extra))
    assert by["cos"].status == "folded" and by["concat"].status == "deliberate" and by["concat"].ep == placement.CPU


def test_cse_compares_a_tensor_attribute_by_value_not_name():
    """Measured on 1.24.4 and 1.31.1: ConstantOfShape values named `v` and `w` with one value are merged."""
    nodes = [h.make_node("ConstantOfShape", ["s1"], ["c1"], name="cos1", value=init("v", np.array([2.0], np.float32))),
             h.make_node("ConstantOfShape", ["s1"], ["c2"], name="cos2", value=init("w", np.array([2.0], np.float32))),
             h.make_node("Shape", ["x"], ["s1"], name="shape"),
             h.make_node("Add", ["c1", "c2"], ["y"], name="add")]
    m = make_model(nodes[2:3] + nodes[:2] + nodes[3:], [vi("x", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, None)], opset=17)
    gone = _removed(m)
    assert [k for k in ("cos1", "cos2") if k in gone and gone[k].reason == "cse"]


def test_memcpy_of_an_inlined_if_branch_is_counted_in_the_graph_around_it():
    """ORT inlines the branch of an If on a constant condition into the enclosing graph (checked with 1.24.4's
    optimized model): a graph input read by a CUDA node outside and a CPU node inside the branch gets one copy,
    and the If's output, made by a CUDA node in the branch and read by a CPU node, one MemcpyToHost."""
    tables = _tables(cpu_extra={"Sin": [[7, INF, {"T": FLOATS}]]})
    else_g = h.make_graph([h.make_node("Relu", ["x"], ["eo"], name="erelu")], "else", [], [vi("eo", T.FLOAT, [2, 8])])
    then_b = h.make_graph([h.make_node("Sin", ["x"], ["to"], name="tsin")], "then", [], [vi("to", T.FLOAT, [2, 8])])
    m = make_model([h.make_node("Relu", ["x"], ["r"], name="relu"),
                    h.make_node("If", ["c"], ["io"], name="if", then_branch=then_b, else_branch=else_g)],
                   [vi("x", T.FLOAT, [2, 8])], [vi("r", T.FLOAT, [2, 8]), vi("io", T.FLOAT, [2, 8])],
                   [init("c", np.array(True))], opset=17)
    _, pl = _place(m, "all", tables=tables)
    assert [(b.value, b.direction, b.producer, b.consumer.name) for b in pl.boundaries] == [("x", "to-device", None, "relu")]
    then_c = h.make_graph([h.make_node("Relu", ["x"], ["to"], name="trelu")], "then", [], [vi("to", T.FLOAT, [2, 8])])
    m = make_model([h.make_node("If", ["c"], ["io"], name="if", then_branch=then_c, else_branch=else_g),
                    h.make_node("Sin", ["io"], ["s"], name="sin"), h.make_node("Relu", ["io"], ["r"], name="relu")],
                   [vi("x", T.FLOAT, [2, 8])], [vi("s", T.FLOAT, [2, 8]), vi("r", T.FLOAT, [2, 8])],
                   [init("c", np.array(True))], opset=17)
    _, pl = _place(m, "all", tables=tables)
    assert [(b.value, b.direction, b.producer.name, b.consumer.name) for b in pl.boundaries] == [("to", "to-host", "trelu", "sin")]


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
