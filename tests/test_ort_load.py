""""ORT will refuse to load this model" only when ORT's session creation fails (ort.model_load): each model is built
here, linted, and loaded by the installed onnxruntime, which must agree."""

from __future__ import annotations

import struct

import onnx
import pytest
from conftest import make_model, vi
from onnx import TensorProto
from onnx import helper as h

import onnxlint
from onnxlint.ort import releases

ort = pytest.importorskip("onnxruntime")


def ort_refusal(model: onnx.ModelProto | str, strict: bool = False) -> str | None:
    """What the installed onnxruntime's CPU session creation fails with, or None when it loads the model (a
    ModelProto, or a file: where its external data is found)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if strict:
        opts.add_session_config_entry("session.strict_shape_type_inference", "1")
    try:
        ort.InferenceSession(model if isinstance(model, str) else model.SerializeToString(), opts,
                             providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - its words are the point
        return " ".join(str(exc).split())
    return None


def findings(model: onnx.ModelProto) -> dict[str, list]:
    settings = onnxlint.Settings.from_config(None, targets=["ort-cuda"], ort_version=ort.__version__)
    out: dict[str, list] = {}
    for f in onnxlint.lint(model, settings).findings:
        out.setdefault(f.code, []).append(f)
    return out


def _constant_declared_scalar() -> onnx.ModelProto:
    """ORT's GenAI builder's pattern: a Constant holding [1] whose value_info says rank 0."""
    c = h.make_node("Constant", [], ["c"], name="k", value=h.make_tensor("v", TensorProto.INT64, [1], [1]))
    add = h.make_node("Add", ["x", "c"], ["y"], name="a")
    m = make_model([c, add], [vi("x", TensorProto.INT64, [1])], [vi("y", TensorProto.INT64, [1])])
    m.graph.value_info.append(vi("c", TensorProto.INT64, []))
    return m


def _cast_declared_float16() -> onnx.ModelProto:
    """onnxconverter_common's float16 conversion leaving a Cast to float declared float16 (6 exports do)."""
    cast = h.make_node("Cast", ["x"], ["c"], name="cast", to=TensorProto.FLOAT)
    neg = h.make_node("Neg", ["c"], ["y"], name="neg")
    m = make_model([cast, neg], [vi("x", TensorProto.FLOAT16, [2])], [vi("y", TensorProto.FLOAT16, [2])])
    m.graph.value_info.append(vi("c", TensorProto.FLOAT16, [2]))
    return m


def _matmul_mixed() -> onnx.ModelProto:
    """A float MatMul whose weight the conversion made float16."""
    w = h.make_tensor("w", TensorProto.FLOAT16, [2, 2], [1.0] * 4)
    mm = h.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    return make_model([mm], [vi("x", TensorProto.FLOAT, [1, 2])], [vi("y", TensorProto.FLOAT, [1, 2])], [w])


def _declared_shape_conflict(opset: int) -> onnx.ModelProto:
    relu = h.make_node("Relu", ["x"], ["t"], name="r")
    ident = h.make_node("Identity", ["t"], ["y"], name="i")
    m = make_model([relu, ident], [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])], opset=opset, ir=10)
    m.graph.value_info.append(vi("t", TensorProto.FLOAT, [3]))
    return m


def _uneven_split() -> onnx.ModelProto:
    split = h.make_node("Split", ["x"], ["a", "b"], name="split", axis=1)
    return make_model([split], [vi("x", TensorProto.FLOAT, ["N", 5])],
                      [vi("a", TensorProto.FLOAT, ["N", None]), vi("b", TensorProto.FLOAT, ["N", None])])


def _simplified_layernorm() -> onnx.ModelProto:
    scale = h.make_tensor("scale", TensorProto.FLOAT, [4], [1.0] * 4)
    n = h.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], name="rms", axis=-1, epsilon=1e-5)
    return make_model([n], [vi("x", TensorProto.FLOAT, [2, 4])], [vi("y", TensorProto.FLOAT, [2, 4])], [scale], opset=21)


def _unsorted() -> onnx.ModelProto:
    return make_model([h.make_node("Relu", ["t"], ["y"], name="b"), h.make_node("Relu", ["x"], ["t"], name="a")],
                      [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])


@pytest.mark.parametrize("build", [_constant_declared_scalar, lambda: _declared_shape_conflict(17),
                                   lambda: _declared_shape_conflict(25)])
def test_onnx_strict_inference_rejects_but_ort_loads_no_claim(build):
    model = build()
    newest = releases.row(ort.__version__).max_opset  # the installed onnxruntime's newest opset (older on 3.10)
    if newest is not None and model.opset_import[0].version > newest:
        pytest.skip(f"onnxruntime {ort.__version__} loads ai.onnx opsets up to {newest}")
    with pytest.raises(onnx.shape_inference.InferenceError):  # onnx's strict inference (full_check) rejects it
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    assert ort_refusal(model) is None
    assert "OLX007" not in findings(model)


def test_declared_shape_conflict_fails_only_with_ort_strict_option():
    """What onnx's strict mode flags here is ORT's opt-in strict mode, not its default."""
    assert "Can't merge shape info" in (ort_refusal(_declared_shape_conflict(17), strict=True) or "")


@pytest.mark.parametrize("build, words", [
    (_cast_declared_float16, "Type Error: Type (tensor(float16)) of output arg (c) of node (cast) does not match "
                             "expected type (tensor(float))."),
    (_matmul_mixed, "Type Error: Type parameter (T) of Optype (MatMul) bound to different types (tensor(float) and "
                    "tensor(float16) in node (mm)."),
    (_uneven_split, "Node (split) Op (Split) [ShapeInferenceError]"),
])
def test_ort_refuses_error_in_its_words(build, words):
    model = build()
    refusal = ort_refusal(model)
    assert refusal is not None and words in refusal, refusal
    (f,) = findings(model)["OLX007"]
    assert f.severity == "error" and words in f.message, f.message


@pytest.mark.parametrize("build, portability", [(_unsorted, True), (_simplified_layernorm, False)])
def test_checker_rejects_ort_loads_is_no_error(build, portability):
    """An unsorted graph: a portability warning. An op only ORT defines: the model was prepared for ORT, nothing
    to report (the checker predicate says ort-op)."""
    model = build()
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(model)
    assert ort_refusal(model) is None
    found = findings(model)
    assert [f.severity for f in found.get("OLX001", [])] == (["warning"] if portability else [])
    assert not {"OLX007", "OLX202"} & set(found)


def test_checker_complaint_ort_shares_is_an_ort_refusal():
    """A name defined twice: the checker's SSA complaint, ORT's "Duplicate definition of name"."""
    model = make_model([h.make_node("Relu", ["x"], ["y"], name="a"), h.make_node("Neg", ["x"], ["y"], name="b")],
                       [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    refusal = ort_refusal(model)
    assert refusal is not None and "Duplicate definition of name (y)" in refusal
    found = findings(model)
    assert "Duplicate definition of name (y)" in found["OLX007"][0].message and "OLX001" not in found


# ----------------------------------------------------------------- refused while read, before the graph is resolved

def _tensor(name: str, elem: int) -> onnx.TensorProto:
    t = onnx.TensorProto(name=name, data_type=elem, dims=[1])
    t.raw_data = b"\0" * 8
    return t


def _relu(inputs=(), outputs=(), inits=(), value_info=(), nodes=()) -> onnx.ModelProto:
    """Relu(x) -> y, with what a case adds."""
    m = make_model([h.make_node("Relu", ["x"], ["y"], name="relu"), *nodes], [vi("x", TensorProto.FLOAT, [2]), *inputs],
                   [*outputs] or [vi("y", TensorProto.FLOAT, [2])], list(inits))
    m.graph.value_info.extend(value_info)
    return m


def _constant(elem: int) -> onnx.NodeProto:
    n = h.make_node("Constant", [], ["c"], name="k")
    n.attribute.append(h.make_attribute("value", _tensor("v", elem)))
    return n


def _float_constant() -> onnx.NodeProto:
    return h.make_node("Constant", [], ["c"], name="k", value=h.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))


def _sparse_constant(elem: int, out: str = "c") -> onnx.NodeProto:
    """A Constant whose sparse_value holds one value of elem (the values' tensor is named "v")."""
    values = _tensor("v", elem)
    sparse = h.make_sparse_tensor(values, h.make_tensor("i", TensorProto.INT64, [1], [1]), [4])
    return h.make_node("Constant", [], [out], name=out, sparse_value=sparse)


def _no_opset_import() -> onnx.ModelProto:
    m = _relu()
    del m.opset_import[:]
    return m


# the variants measured with the ORT CUDA truth harness on 1.20.2, 1.24.4 and 1.31.1: each refused on all three
@pytest.mark.parametrize("build, cause", [
    (lambda: _relu(inits=[_tensor("w", 99)]), f"initializer 'w' has element type 99, which ONNX Runtime {ort.__version__} "
                                           f"does not load (onnx {onnx.__version__} has no element type 99)"),
    (lambda: _relu(inits=[_tensor("w", 0)]), "initializer 'w' has element type 0 (UNDEFINED)"),
    (lambda: _relu(inputs=[vi("x2", 99, [2])]), "graph input 'x2' has element type 99"),
    (lambda: _relu(outputs=[vi("y", 99, [2])]), "graph output 'y' has element type 99"),
    (lambda: _relu(nodes=[h.make_node("Relu", ["y"], ["y2"], name="r2")], outputs=[vi("y2", TensorProto.FLOAT, [2])],
                   value_info=[vi("y", 99, [2])]), "the value_info of node output 'y' has element type 99"),
    (lambda: _relu(nodes=[_constant(99)]), "the value of Constant 'c' has element type 99"),
    (lambda: _relu(nodes=[_constant(0)]), "the value of Constant 'c' has element type 0 (UNDEFINED)"),
    (lambda: _relu(inits=[_tensor("w", 1000)]), "initializer 'w' has element type 1000"),
    (_no_opset_import, "the model imports no opset"),
    # a Constant's sparse value is made dense first, whatever else the graph holds (measured on 1.23.2, 1.24.4,
    # 1.31.1, 1.32.0: "tensor type 99 is not supported", from 1.31 an empty NOT_IMPLEMENTED status)
    (lambda: _relu(nodes=[_sparse_constant(99)]), "the sparse value of Constant 'c' has element type 99"),
    (lambda: _relu(nodes=[_sparse_constant(0)]), "the sparse value of Constant 'c' has element type 0 (UNDEFINED)"),
    (lambda: _relu(inputs=[vi("x2", 100, [2])], inits=[_tensor("w", 99)], nodes=[_constant(0), _sparse_constant(99, "s")]),
     "the sparse value of Constant 's' has element type 99"),
])
def test_ort_refuses_while_reading_the_model(build, cause):
    """Refused while ORT reads the model (no opset_import; a tensor of an element type no release loads): an error
    in ORT's words, naming the tensor, and the placement does not put it on CUDA."""
    model = build()
    refusal = ort_refusal(model)
    assert refusal is not None
    (f,) = findings(model)["OLX007"]
    words = f.message.split("fails with '", 1)[1].rsplit("' (", 1)[0]
    assert f.severity == "error" and words in refusal, (f.message, refusal)
    assert cause in f.message.rsplit("' (", 1)[1], f.message
    pl = onnxlint.predict(model, "ort-cuda", ort_version=ort.__version__)
    assert pl.refused and cause in pl.refused
    assert all(p.ep is None for p in pl.nodes.values())
    assert "OLX203" not in findings(model)  # said once, by OLX007


def _in_body(*body_nodes: onnx.NodeProto, outer: tuple = ()) -> onnx.ModelProto:
    """Relu(x) -> y, then an If whose then-branch holds body_nodes before its Identity; outer: main-graph nodes."""
    then_g = h.make_graph([*body_nodes, h.make_node("Identity", ["y"], ["t"], name="then_id")], "then", [],
                          [vi("t", TensorProto.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Neg", ["y"], ["e"], name="else_neg")], "else", [], [vi("e", TensorProto.FLOAT, [2])])
    cond = h.make_node("Constant", [], ["cond"], name="cond", value=h.make_tensor("cv", TensorProto.BOOL, [], [True]))
    iff = h.make_node("If", ["cond"], ["z"], name="if", then_branch=then_g, else_branch=else_g)
    return _relu(nodes=[*outer, cond, iff], outputs=[vi("z", TensorProto.FLOAT, [2])])


def _constant_named(out: str, elem: int) -> onnx.NodeProto:
    n = h.make_node("Constant", [], [out], name=out)
    n.attribute.append(h.make_attribute("value", _tensor(out, elem)))
    return n


# the linter reads a model file's graphs and tensor attributes from load's walk (loading.opening.load), a ModelProto
# in hand by walking it: each finds the tensor ORT names first (the main graph before its bodies)
@pytest.mark.parametrize("build, cause", [
    (lambda: _in_body(_constant_named("c", 99)), "the value of Constant 'c' has element type 99"),
    (lambda: _in_body(_constant_named("c", 0)), "the value of Constant 'c' has element type 0 (UNDEFINED)"),
    (lambda: _in_body(_constant_named("c", 99), outer=[_constant_named("k", 0)]),
     "the value of Constant 'k' has element type 0 (UNDEFINED)"),
    (lambda: _relu(nodes=[_constant(99)]), "the value of Constant 'c' has element type 99"),
    (lambda: _in_body(_sparse_constant(99)), "the sparse value of Constant 'c' has element type 99"),
    # a body's sparse value after the main graph's checks (measured on 1.23.2, 1.24.4, 1.31.1, 1.32.0)
    (lambda: _in_body(_sparse_constant(99), outer=[_constant_named("k", 0)]),
     "the value of Constant 'k' has element type 0 (UNDEFINED)"),
])
def test_a_refused_value_is_found_alike_in_a_file_and_in_hand(build, cause, tmp_path):
    model = build()
    assert ort_refusal(model) is not None
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    settings = onnxlint.Settings.from_config(None, targets=["ort-cuda"], ort_version=ort.__version__)
    in_file = [f.message for f in onnxlint.lint(path, settings).findings if f.code == "OLX007"]
    in_hand = [f.message for f in findings(model)["OLX007"]]
    assert len(in_file) == 1 and in_file == in_hand and cause in in_file[0], (in_file, in_hand)


@pytest.mark.parametrize("build", [
    lambda: _relu(value_info=[vi("nothing", 99, [2])]),  # a value_info naming no value
    lambda: _relu(value_info=[vi("y", 99, [2])]),  # naming a graph output, which declares float
    lambda: _relu(value_info=[vi("x", 99, [2])]),  # naming a graph input
    lambda: _relu(outputs=[vi("y", TensorProto.FLOAT, [2]), vi("x", 99, [2])]),  # an output no node makes
    # a Constant's output, declared (value_info, graph output) of a type ORT does not know: the Constant is an
    # initializer by then, its declared type not read (1.24.4 loads each)
    lambda: _relu(nodes=[_float_constant()], value_info=[vi("c", 99, [1])]),
    lambda: _relu(nodes=[_float_constant()], value_info=[vi("c", 0, [1])]),
    lambda: _relu(nodes=[_float_constant()], outputs=[vi("y", TensorProto.FLOAT, [2]), vi("c", 99, [1])]),
    # FLOAT4E2M1: 1.20.2 refuses it, 1.24.4 and 1.31.1 load it (releases differ: not claimed)
    lambda: _relu(inits=[_tensor("w", TensorProto.FLOAT4E2M1)]),
])
def test_a_tensor_type_ort_does_not_read_or_releases_differ_on_is_no_claim(build):
    model = build()
    if model.graph.initializer and ort_refusal(model):
        pytest.skip(f"onnxruntime {ort.__version__} does not load FLOAT4E2M1 initializers")
    assert ort_refusal(model) is None
    assert "OLX007" not in findings(model)
    assert not onnxlint.predict(model, "ort-cuda", ort_version=ort.__version__).refused


def _imports(node: onnx.NodeProto, opsets: list[tuple[str, int]]) -> onnx.ModelProto:
    m = make_model([node], [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    del m.opset_import[:]
    m.opset_import.extend(h.make_opsetid(d, v) for d, v in opsets)
    return m


# measured with the ORT CUDA truth harness on 1.20.2, 1.24.4 and 1.31.1: ORT imports ai.onnx, ai.onnx.ml and its
# own domains at their newest when the model does not, so each of these loads
@pytest.mark.parametrize("build", [
    lambda: _imports(h.make_node("Relu", ["x"], ["y"], name="relu"), [("com.acme", 1)]),
    lambda: _imports(h.make_node("Relu", ["x"], ["y"], name="relu"), [("ai.onnx.ml", 3)]),
    lambda: _imports(h.make_node("Gelu", ["x"], ["y"], name="g", domain="com.microsoft"), [("", 17)]),
    lambda: _imports(h.make_node("Binarizer", ["x"], ["y"], name="b", domain="ai.onnx.ml"), [("", 17)]),
])
def test_a_domain_ort_imports_itself_is_no_refusal(build):
    model = build()
    with pytest.raises(onnx.checker.ValidationError, match="No opset import for domain"):
        onnx.checker.check_model(model)
    assert ort_refusal(model) is None
    found = findings(model)
    assert "OLX007" not in found and [f.severity for f in found["OLX001"]] == ["warning"]


def test_a_custom_domain_not_imported_is_ort_s_refusal():
    model = _imports(h.make_node("MyOp", ["x"], ["y"], name="my", domain="com.acme"), [("", 17)])
    refusal = ort_refusal(model)
    assert refusal is not None and "No opset import for domain 'com.acme'" in refusal
    (f,) = findings(model)["OLX007"]
    assert 'In Node, ("my", MyOp, "com.acme", -1)' in f.message and "No opset import for domain 'com.acme'" in f.message


# ----------------------------------------------------------------- a model ORT refuses for more than one reason

def _newer(model: onnx.ModelProto, what: str) -> onnx.ModelProto:
    """The model with an IR version or ai.onnx opset one past what the installed onnxruntime loads."""
    row = releases.row(ort.__version__)
    if row.max_ir is None or row.max_opset is None:
        pytest.skip(f"onnxruntime {ort.__version__} is not in the release table")
    if what == "ir":
        model.ir_version = row.max_ir + 1
    else:
        model.opset_import[0].version = row.max_opset + 1
    return model


# measured (repro: ORT 1.20.2, 1.21.1, 1.22.1, 1.23.2, 1.24.4, 1.31.1, 1.32.0 CPU, 1.20.2/1.24.4/1.31.1 CUDA EP):
# the Model constructor refuses the IR version, then the opset, before the graph is built or resolved
@pytest.mark.parametrize("what, words", [("ir", "Unsupported model IR version"), ("opset", "is under development")])
@pytest.mark.parametrize("build", [
    lambda: _relu(inits=[_tensor("w", 99)]),  # refused while the graph is built
    lambda: _relu(inputs=[vi("x2", 99, [2])]),
    _cast_declared_float16,  # refused by Graph::Resolve's type check
    lambda: _imports(h.make_node("MyOp", ["x"], ["y"], name="my", domain="com.acme"), [("", 17)]),  # node check
])
def test_a_model_too_new_for_the_release_is_refused_for_that_alone(build, what, words):
    """ORT stops at the IR version or opset: OLX203 says so in its words, and no OLX007 quotes a later check's."""
    model = _newer(build(), what)
    refusal = ort_refusal(model)
    assert refusal is not None and words in refusal, refusal
    found = findings(model)
    assert "OLX007" not in found, found["OLX007"][0].message
    (f,) = found["OLX203"]
    assert ("IR version" if what == "ir" else "ai.onnx opset") in f.message
    pl = onnxlint.predict(model, "ort-cuda", ort_version=ort.__version__)
    assert pl.refused and ("IR version" if what == "ir" else "opset") in pl.refused


def test_no_opset_import_is_refused_before_the_ir_version():
    model = _no_opset_import()
    model.ir_version = (releases.row(ort.__version__).max_ir or 99) + 1
    refusal = ort_refusal(model)
    assert refusal is not None and "Missing opset in the model" in refusal
    (f,) = findings(model)["OLX007"]
    assert "Missing opset in the model" in f.message and "OLX203" not in findings(model)




def _beside_cast(kind: str, where: str) -> onnx.ModelProto:
    """A Type Error at a Cast (to float, declared float16) and an op with no schema (kind: a custom domain's op,
    an ai.onnx op no opset defines): where "first" in the file, "after" it in the file reading x, "chain" reading
    the Cast's consumer; "dfs": both read a Relu's output, the op after the Cast in the file."""
    other = (h.make_node("MyOp", ["r" if where == "dfs" else "y" if where == "chain" else "x"], ["z"], name="my",
                         domain="com.acme") if kind == "custom" else
             h.make_node("NoSuchOp", ["r" if where == "dfs" else "y" if where == "chain" else "x"], ["z"], name="no"))
    if where == "dfs":
        nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Cast", ["r"], ["c"], name="cast", to=TensorProto.FLOAT),
                 other, h.make_node("Identity", ["r"], ["y"], name="id")]
        outputs = [vi("y", TensorProto.FLOAT, [2]), vi("c", TensorProto.FLOAT16, [2]), vi("z", TensorProto.FLOAT, [2])]
        m = make_model(nodes, [vi("x", TensorProto.FLOAT, [2])], outputs)
    else:
        m = _cast_declared_float16()
        m.graph.node.insert(0 if where == "first" else len(m.graph.node), other)
        m.graph.output.append(vi("z", TensorProto.FLOAT16, [2]))
    if kind == "custom":
        m.opset_import.append(h.make_opsetid("com.acme", 1))
    return m


# measured (ORT 1.20.2-1.32.0 CPU; repro/gen_order.py): Graph::Resolve checks each node's op, then infers its
# types, node by node in its topological order (the nodes no node feeds in file order, then a DFS from the last
# leaf): the op with no schema ORT meets before the Cast is what it prints ("Fatal error: com.acme:MyOp(-1) is not
# a registered function/op", "No Op registered for NoSuchOp"); one it meets after, the Cast's Type Error
@pytest.mark.parametrize("where, first", [("first", True), ("dfs", True), ("after", False), ("chain", False)])
@pytest.mark.parametrize("kind, words", [("custom", "is not a registered function/op"), ("noop", "No Op registered")])
def test_what_graph_resolve_meets_first_is_said(kind, words, where, first):
    model = _beside_cast(kind, where)
    refusal = ort_refusal(model)
    assert refusal is not None and (words if first else "Type Error") in refusal, refusal
    found = findings(model)
    if first:
        assert "OLX007" not in found, found["OLX007"][0].message
    else:
        (f,) = found["OLX007"]
        assert "Type Error: Type (tensor(float16)) of output arg (c) of node (cast)" in f.message


# measured (1.20.2, 1.23.2, 1.24.4, 1.31.1, 1.32.0): the Graph constructor makes the graph inputs' NodeArgs before
# it reads an initializer or a Constant's value, so an input of a type ORT does not know is what it names first
@pytest.mark.parametrize("build", [
    lambda: _relu(inputs=[vi("z", 100, [1])], inits=[_tensor("w", 99)]),
    lambda: _relu(inputs=[vi("z", 100, [1])], inits=[_tensor("w", 0)]),
    lambda: _relu(inputs=[vi("z", 100, [1])], nodes=[_constant(99)]),
    lambda: _relu(inputs=[vi("w", 100, [1])], inits=[_tensor("w", 99)]),  # an initializer listed as an input
])
def test_a_graph_input_is_read_before_initializers(build):
    model = build()
    refusal = ort_refusal(model)
    assert refusal is not None and "Invalid tensor data type 100." in refusal, refusal
    (f,) = findings(model)["OLX007"]
    assert "fails with 'Invalid tensor data type 100.'" in f.message and "graph input" in f.message, f.message


def _complex_input(resolve: str) -> onnx.ModelProto:
    """An unused complex64 main-graph input (no MLDataType in ORT) beside an Add, of float and int64 where resolve is
    "type", or a custom domain's op where it is "custom"."""
    add = h.make_node("Add", ["x", "s"], ["y"], name="add")
    if resolve == "custom":
        add = h.make_node("MyOp", ["x", "s"], ["y"], name="add", domain="com.acme")
    ins = [vi("x", TensorProto.FLOAT, [2]), vi("s", TensorProto.INT64 if resolve == "type" else TensorProto.FLOAT, [2]),
           vi("c", TensorProto.COMPLEX64, [2])]
    m = make_model([add], ins, [vi("y", TensorProto.FLOAT, [2])])
    m.opset_import.extend([h.make_opsetid("com.acme", 1)] if resolve == "custom" else [])
    return m


@pytest.mark.parametrize("resolve, words", [("type", "Type Error: Type parameter (T) of Optype (Add)"),
                                            ("custom", "com.acme:MyOp(-1) is not a registered function/op"),
                                            ("none", "MLDataType for: tensor(complex64)")])
def test_an_input_without_an_mldatatype_is_refused_after_graph_resolve(resolve, words):
    """ORT reads the inputs' MLDataTypes in the model's metadata, once Graph::Resolve passed (measured on 1.24.4):
    what Resolve refuses first is what it prints, and OLX007 quotes that (naming no input as the cause) or, for an
    op with no schema (OLX014 names it), nothing."""
    model = _complex_input(resolve)
    refusal = ort_refusal(model)
    assert refusal is not None and words in refusal, refusal
    found = findings(model).get("OLX007", [])
    if resolve == "custom":
        assert not found and "OLX014" in findings(model)
        return
    (f,) = found
    assert f"fails with '{words}" in f.message, f.message
    assert ("graph input 'c'" in f.message) is (resolve == "none"), f.message


def _two_failing(kind: str, tmp_path) -> onnx.ModelProto | str:
    """Two nodes ORT's Graph::Resolve refuses, each reading only the graph input, each a graph output: two Casts to
    float declared float16 (kind "type"), or two Reshapes whose shapes are in the external data file (kind
    "external": a model saved with `size_threshold=0`; ORT's inference cannot read a value stored there). Resolve
    checks the nodes no node feeds in file order (the first one); GraphViewer's order (a DFS from the last leaf)
    visits the second one first."""
    if kind == "type":
        casts = [h.make_node("Cast", ["x"], [f"c{k}"], name=f"cast_{k}", to=TensorProto.FLOAT) for k in "ab"]
        return make_model(casts, [vi("x", TensorProto.FLOAT16, [2])], [vi("ca", TensorProto.FLOAT16, [2]),
                                                                      vi("cb", TensorProto.FLOAT16, [2])])
    # raw bytes: onnx's save moves only a tensor's raw_data to the data file (int64_data stays in the model)
    shapes = [h.make_tensor(f"shape_{k}", TensorProto.INT64, [len(v)], struct.pack(f"<{len(v)}q", *v), raw=True)
              for k, v in (("a", (3, 2)), ("b", (6,)))]
    reshapes = [h.make_node("Reshape", ["x", f"shape_{k}"], [f"y{k}"], name=f"reshape_{k}") for k in "ab"]
    m = make_model(reshapes, [vi("x", TensorProto.FLOAT, [2, 3])], [vi("ya", TensorProto.FLOAT, [3, 2]),
                                                                    vi("yb", TensorProto.FLOAT, [6])])
    m.graph.initializer.extend(shapes)
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path, save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    return path


# measured (ORT 1.23.2, 1.24.4, 1.31.1 CPU): ORT names the failing node Graph::Resolve meets first
# (model_load._resolve_order); OLX007 quoted the first in GraphViewer's order: on the 145 producer-set models saved
# with every initializer external, 9 of the 76 it rightly said ORT refuses named another node than ORT does
@pytest.mark.parametrize("kind, words", [
    ("type", "Type Error: Type (tensor(float16)) of output arg (ca) of node (cast_a)"),
    ("external", "Node (reshape_a) Op (Reshape) [ShapeInferenceError] Cannot parse data from external tensors"),
])
def test_the_failing_node_graph_resolve_meets_first_is_quoted(kind, words, tmp_path):
    model = _two_failing(kind, tmp_path)
    refusal = ort_refusal(model)
    assert refusal is not None and words in refusal, refusal
    settings = onnxlint.Settings.from_config(None, targets=["ort-cuda"], ort_version=ort.__version__)
    (f,) = [f for f in onnxlint.lint(model, settings).findings if f.code == "OLX007"]
    assert words in f.message, f.message


def test_a_value_in_an_external_data_file_is_claimed_only_where_the_release_refuses_it(tmp_path, monkeypatch):
    """The release's probe (ort-releases.json `external_inference`, tools/follow_releases.py) says whether
    Graph::Resolve refuses a node whose inference reads a value stored in an external data file: a release that
    reads it (onnxruntime PR 31169) or was not probed is claimed nothing."""
    import dataclasses

    path = _two_failing("external", tmp_path)
    line = releases.release(ort.__version__)
    assert line is not None and releases.row(ort.__version__).external_inference_refusal
    monkeypatch.setitem(releases.RELEASES, line, dataclasses.replace(releases.RELEASES[line],
                                                                    external_inference_refusal=False))
    settings = onnxlint.Settings.from_config(None, targets=["ort-cuda"], ort_version=ort.__version__)
    assert "OLX007" not in {f.code for f in onnxlint.lint(path, settings).findings}
# measured (ORT 1.23.2, 1.24.4, 1.31.1 CPU): from IR 4 on an initializer the graph also lists as an input can be
# overridden, and Graph::Resolve's inference gets no value for it (GetConstantInitializer): one stored in the data file
# is not read, the model loads; at IR 3 it is a constant, read, and refused
@pytest.mark.parametrize("ir, refused", [(8, False), (3, True)])
def test_an_overridable_initializer_in_the_data_file_is_not_read_by_resolve(ir, refused, tmp_path):
    shape = h.make_tensor("shape", TensorProto.INT64, [2], struct.pack("<2q", 3, 2), raw=True)
    m = make_model([h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                   [vi("x", TensorProto.FLOAT, [2, 3]), vi("shape", TensorProto.INT64, [2])],
                   [vi("y", TensorProto.FLOAT, [3, 2])])
    m.graph.initializer.append(shape)
    m.ir_version = ir
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path, save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    assert (ort_refusal(path) is not None) == refused, ort_refusal(path)
    settings = onnxlint.Settings.from_config(None, targets=["ort-cuda"], ort_version=ort.__version__)
    assert ("OLX007" in {f.code for f in onnxlint.lint(path, settings).findings}) == refused


def _cast_complex(where: str) -> onnx.ModelProto:
    """Cast(x) to complex64, which onnx's strict inference refuses ("output has unsupported type") and ORT's Graph::
    Resolve does not check: where "output", a graph output; "typeerror", beside an Add of float and int64 (Resolve's
    Type Error); "shape", read by an Identity and a Shape (ORT loads it); "body", in both branches of an If."""
    cast = h.make_node("Cast", ["x"], ["c"], name="cast", to=TensorProto.COMPLEX64)
    x = vi("x", TensorProto.FLOAT, [2])
    if where == "body":
        branches = {k: h.make_graph([h.make_node("Cast", ["x"], [k], name=k, to=TensorProto.COMPLEX64)], k, [],
                                    [vi(k, TensorProto.COMPLEX64, [2])]) for k in ("then", "else")}
        iff = h.make_node("If", ["b"], ["c"], name="if", then_branch=branches["then"], else_branch=branches["else"])
        nodes = [iff, h.make_node("Shape", ["c"], ["s"], name="shape")]
        return make_model(nodes, [x, vi("b", TensorProto.BOOL, [])], [vi("s", TensorProto.INT64, [1])])
    if where == "shape":
        nodes = [cast, h.make_node("Identity", ["c"], ["i"], name="id"), h.make_node("Shape", ["i"], ["s"], name="shape")]
        return make_model(nodes, [x], [vi("s", TensorProto.INT64, [1])])
    outputs = [vi("c", TensorProto.COMPLEX64, [2])]
    if where == "typeerror":
        add = h.make_node("Add", ["x", "k"], ["a"], name="bad_add")
        k = h.make_tensor("k", TensorProto.INT64, [2], [1, 2])
        return make_model([cast, add], [x], [*outputs, vi("a", TensorProto.FLOAT, [2])], [k])
    return make_model([cast], [x], outputs)


@pytest.mark.parametrize("where, words", [
    ("output", "MLDataType for: tensor(complex64) is not currently registered or supported"),
    ("typeerror", "Type Error: Type parameter (T) of Optype (Add) bound to different types"),
    ("shape", None), ("body", None)])
def test_a_node_s_output_type_is_not_checked_by_graph_resolve(where, words):
    """ORT's Graph::Resolve does not check a node's output type against its schema, as onnx's strict inference does
    (measured on 1.23.2, 1.24.4, 1.31.1, 1.32.0): a Cast to complex64 that is a graph output is refused for want of
    an MLDataType for the output (after Resolve: a Type Error elsewhere comes first), one read by other nodes loads.
    OLX007 quoted onnx's 'output has unsupported type tensor(complex64)'."""
    model = _cast_complex(where)
    refusal = ort_refusal(model)
    found = findings(model).get("OLX007", [])
    if words is None:
        assert refusal is None and not found, (refusal, found)
        return
    assert refusal is not None and words in refusal, refusal
    (f,) = found
    assert f"fails with '{words}" in f.message, f.message
    assert ("graph output 'c'" in f.message) is (where == "output"), f.message


@pytest.mark.parametrize("build, words", [
    (lambda: _complex_input("type"), "Type Error: Type parameter (T) of Optype (Add)"),
    (lambda: _complex_input("custom"), None),
    (lambda: _complex_input("none"), "MLDataType for: tensor(complex64)"),
    (lambda: _cast_complex("typeerror"), "Type Error: Type parameter (T) of Optype (Add)"),
    (lambda: _cast_complex("output"), "MLDataType for: tensor(complex64)")])
def test_the_placement_of_a_model_refused_after_graph_resolve_says_what_ort_says(build, words):
    """`onnxlint placement` has no Resolve step of its own: where the refusal it finds (no MLDataType for a main-graph
    input or output) comes after Graph::Resolve, it says what the lint's OLX007 quotes, Resolve's Type Error, and
    claims no refusal where an op with no schema comes first (placed as unsupported, OLX014). It said 'MLDataType
    for: tensor(complex64) ...'."""
    model = build()
    refusal = ort_refusal(model)
    assert refusal is not None and (words is None or words in refusal), refusal
    pl = onnxlint.predict(model, "ort-cuda", ort_version=ort.__version__)
    if words is None:
        assert pl.refused is None and [p.status for p in pl.nodes.values()] == ["unsupported"], pl.refused
        return
    assert pl.refused and f"fails with '{words}" in pl.refused, pl.refused
    (f,) = findings(model)["OLX007"]
    assert pl.refused.split("fails with ", 1)[1] in f.message, (pl.refused, f.message)


@pytest.mark.parametrize("build", [_cast_declared_float16, _matmul_mixed, _uneven_split])
def test_a_model_graph_resolve_refuses_is_placed_nowhere(build):
    """`onnxlint placement` (and the lint's summary line) described where ORT would place the nodes of a model its
    Graph::Resolve refuses (OLX007): ORT creates no session, so nothing is placed. It says ORT refuses the model, in
    the words OLX007 quotes, as for a model refused while it is read."""
    model = build()
    refusal = ort_refusal(model)
    assert refusal is not None
    (f,) = findings(model)["OLX007"]
    pl = onnxlint.predict(model, "ort-cuda", ort_version=ort.__version__)
    assert pl.refused is not None and pl.refused.split("'")[1] in refusal and pl.refused.split("'")[1] in f.message, \
        (pl.refused, refusal)
    assert not [p for p in pl.nodes.values() if p.ep], pl.nodes
