"""The release table (ort.releases): the model limits and behaviours each ORT release line reads from it."""

import dataclasses

import onnx
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import _place

import onnxlint.ort.kernel_registry as kernels
from onnxlint.ort import model_load, releases


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


def test_a_version_reads_its_own_row_or_the_newest_or_oldest_behaviour():
    assert releases.row("1.24.4") is releases.RELEASES[(1, 24)] and releases.row("1.24.0-dev") is releases.RELEASES[(1, 24)]
    newest = max(releases.RELEASES)
    later = f"{newest[0]}.{newest[1] + 1}.0"
    for version in (None, "", "nightly", later, "2.0.0"):
        assert releases.row(version) is releases.NEWEST, version
    assert releases.row("1.13.1") is releases.OLDEST and releases.row("0.9") is releases.OLDEST
    assert releases.NEWEST.max_opset is None and releases.OLDEST.max_ir is None  # nothing refused: limits unknown
    # the behaviours measured on each release the truth benchmark checks
    r20, r24, r31 = (releases.row(v) for v in releases.measured())
    assert releases.measured() == ["1.20.2", "1.24.4", "1.31.1"]
    assert (r20.max_opset, r20.max_ir, r24.max_opset, r24.max_ir, r31.max_opset, r31.max_ir) == (21, 10, 25, 13, 26, 13)
    assert (r20.contiguous_reshapes, r24.contiguous_reshapes) == (0, 14) and r31.contiguous_reshapes >= 25
    assert not r31.dropout_reads_training_mode
    assert r24.function_node_cpu_in_first_pass and not r31.function_node_cpu_in_first_pass


def test_the_measured_releases_have_kernel_tables_and_every_row_is_a_published_line():
    shipped = {ep: set(versions) for ep, versions in kernels.available().items()}
    for version in releases.measured():
        assert version in shipped["cpu"] and version in shipped["cuda"], version
    lines = {releases.release(v) for versions in shipped.values() for v in versions}
    assert {rel for rel in releases.RELEASES if rel >= min(lines)} <= lines


def test_a_model_limit_comes_from_the_row(monkeypatch):
    """model_load reads the row: a row saying 1.24 loads opset 26 makes it load the opset-26 model."""
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=26, ir=13)
    assert model_load.refuses_model(m, "1.24.4")[0] == "model-opset"
    monkeypatch.setitem(releases.RELEASES, (1, 24), dataclasses.replace(releases.RELEASES[(1, 24)], max_opset=26))
    assert model_load.refuses_model(m, "1.24.4") is None


def test_a_model_every_measured_release_refuses_while_reading_it():
    """The truth harness's words on each measured release (session creation of these models on 1.20.2, 1.24.4 and
    1.31.1): an initializer of element type 99, a graph input of 27 (FLOAT6E2M3), no opset_import. FLOAT4E2M1 (23)
    to INT2 (26) only 1.20.2 refuses (test_element_types_follow_the_release)."""
    w = onnx.TensorProto(name="w", data_type=99, dims=[1], raw_data=b"\0" * 4)
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], [w])
    initializer = {v: model_load.load_refusal(m, v)[1] for v in releases.measured()}
    assert initializer == {"1.20.2": "Invalid tensor data type 99.",
                           "1.24.4": "This is an invalid model. Tensor 'w' does not have valid data type.",
                           "1.31.1": "This is an invalid model. Tensor 'w' does not have valid data type."}
    by, pl = _place(m, version="1.20.2")
    assert by["r"].status == "refused" and by["r"].reason == "model-invalid" and by["r"].ep is None
    assert pl.refused == "initializer 'w' has element type 99, which ONNX Runtime 1.20.2 does not load (onnx " \
                         f"{onnx.__version__} has no element type 99): session creation fails with 'Invalid tensor data type 99.'"
    # the installed onnx names 27 where it knows FLOAT6E2M3 (onnx 1.21, the floor, does not)
    named = "27 (FLOAT6E2M3), which ONNX Runtime {} does not load" if 27 in onnx.TensorProto.DataType.values() \
        else "27, which ONNX Runtime {} does not load (onnx %s has no element type 27)" % onnx.__version__
    for elem, refused in ((27, True), (T.FLOAT, False)):
        m = make_model(nodes, [vi("x", T.FLOAT, [2]), vi("x2", elem, [2])], [vi("y", T.FLOAT, [2])])
        for version in releases.measured():
            got = model_load.refuses_model(m, version)
            assert (got == ("model-invalid", f"graph input 'x2' has element type {named.format(version)}: session creation fails "
                                             "with 'Invalid tensor data type 27.'")
                    if refused else got is None), (elem, version, got)
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    del m.opset_import[:]
    for version in (*releases.measured(), None, "1.13.1"):  # every release, the table's or not
        assert model_load.load_refusal(m, version)[1].startswith("Missing opset in the model. All ModelProtos MUST have")
        assert model_load.refuses_model(m, version)[0] == "model-invalid"


def _with_input(elem: int, read: bool = False) -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r")]
    outputs = [vi("y", T.FLOAT, [2])]
    if read:
        nodes.append(h.make_node("Identity", ["x2"], ["y2"], name="i"))
        outputs.append(vi("y2", elem, [2]))
    return make_model(nodes, [vi("x", T.FLOAT, [2]), vi("x2", elem, [2])], outputs)


def test_element_types_follow_the_release():
    """Each release's row says which element types its session creation refuses (probed on its wheel: tools/
    follow_releases.py). A graph input of FLOAT4E2M1 (23) to INT2 (26): 'Invalid tensor data type 23.' on 1.20.2,
    loaded by 1.24.4 and 1.31.1; a FLOAT6E2M3 (27) initializer: refused up to 1.31.1, loaded by 1.32.0, whose graph
    input of it is refused for want of an MLDataType. A release the table does not have claims no element type."""
    for elem in (23, 24, 25, 26):
        got = model_load.refuses_model(_with_input(elem), "1.20.2")
        assert got is not None and got[1].endswith(f"fails with 'Invalid tensor data type {elem}.'"), (elem, got)
        assert model_load.refuses_model(_with_input(elem), "1.31.1") is None
    assert model_load.refuses_model(_with_input(23), "1.24.4") is None
    w = onnx.TensorProto(name="w", data_type=27, dims=[1], raw_data=b"\0")
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], [w])
    named = "27 (FLOAT6E2M3)" if 27 in onnx.TensorProto.DataType.values() else "27"  # onnx 1.21 has no FLOAT6
    unnamed = "" if 27 in onnx.TensorProto.DataType.values() else f" (onnx {onnx.__version__} has no element type 27)"
    assert model_load.load_refusal(m, "1.31.1") == (
        f"initializer 'w' has element type {named}, which ONNX Runtime 1.31.1 does not load{unnamed}",
        "This is an invalid model. Tensor 'w' does not have valid data type.")
    assert model_load.load_refusal(m, "1.32.0") is None
    if 27 in onnx.TensorProto.DataType.values():  # ORT's words name it as onnx does: not claimed where onnx cannot
        assert model_load.load_refusal(_with_input(27), "1.32.0")[1] == \
            "MLDataType for: tensor(float6e2m3) is not currently registered or supported"
    else:
        assert model_load.load_refusal(_with_input(27), "1.32.0") is None
    for version in ("1.40.0", "1.13.1"):  # no row: nothing measured, nothing claimed
        assert model_load.load_refusal(m, version) is None and model_load.refuses_model(_with_input(99), version) is None


def test_a_complex_main_graph_input_no_node_reads_is_refused():
    """ORT has no MLDataType for complex64 and complex128: session creation fails on a main-graph input of them
    ("MLDataType for: tensor(complex64) is not currently registered or supported", every release probed), an
    unused one included. One a node reads is not claimed (what the node's checks say comes first)."""
    for version in releases.measured():
        for elem, name in ((T.COMPLEX64, "complex64"), (T.COMPLEX128, "complex128")):
            assert model_load.refuses_model(_with_input(elem), version) == (
                "model-invalid", f"graph input 'x2' has element type {elem} ({name.upper()}), which ONNX Runtime "
                f"{version} does not load: session creation fails with 'MLDataType for: tensor({name}) is not currently registered or "
                "supported'"), (version, elem)
            assert model_load.refuses_model(_with_input(elem, read=True), version) is None


def test_element_type_claims_read_the_row(monkeypatch):
    """model_load reads the row's element types, nothing else: a row that says 1.24 loads type 99 as a graph input
    makes the model load."""
    m = _with_input(99)
    assert model_load.refuses_model(m, "1.24.4")[0] == "model-invalid"
    row = releases.RELEASES[(1, 24)]
    monkeypatch.setitem(releases.RELEASES, (1, 24), dataclasses.replace(
        row, elem=dataclasses.replace(row.elem, invalid=row.elem.invalid - {99})))
    assert model_load.refuses_model(m, "1.24.4") is None


def test_a_sparse_initializer_of_a_type_the_release_does_not_make_dense_is_refused():
    """The Graph constructor makes each main-graph sparse initializer dense before anything else: values of element
    type 99 are refused on every release probed, in that release's words ("tensor type 99 is not supported" up to
    1.24, an empty NOT_IMPLEMENTED status from 1.31), even beside a dense initializer of 99; complex64 values are
    refused by 1.24.4 and made dense by 1.31.1."""
    def model(elem: int, dense: bool = False) -> onnx.ModelProto:
        nodes = [h.make_node("Relu", ["x"], ["y"], name="r")]
        inits = [onnx.TensorProto(name="w", data_type=99, dims=[1], raw_data=b"\0")] if dense else []
        m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], inits)
        values = onnx.TensorProto(name="sv", data_type=elem, dims=[1], raw_data=b"\0" * 8)
        m.graph.sparse_initializer.append(h.make_sparse_tensor(values, h.make_tensor("si", T.INT64, [1], [0]), [4]))
        return m

    words = {"1.20.2": "tensor type 99 is not supported", "1.24.4": "tensor type 99 is not supported",
             "1.31.1": "status.IsOK() was false. [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED"}
    for version, said in words.items():
        for dense in (False, True):
            assert model_load.load_refusal(model(99, dense), version) == (
                f"sparse initializer 'sv' has element type 99, which ONNX Runtime {version} does not load (onnx "
                f"{onnx.__version__} has no element type 99)", said), (version, dense)
    assert model_load.load_refusal(model(T.COMPLEX64), "1.24.4")[1] == "tensor type 14 is not supported"
    assert model_load.load_refusal(model(T.COMPLEX64), "1.31.1") is None
    by, _ = _place(model(99), version="1.24.4")
    assert by["r"].status == "refused"


def test_a_constant_s_sparse_value_of_a_type_the_release_does_not_make_dense_is_refused():
    """ORT's Graph constructor makes a Constant's sparse value dense as it makes a sparse initializer dense, and
    before it (measured on 1.23.2, 1.24.4, 1.31.1, 1.32.0: beside a sparse initializer of 0 ORT names the Constant's
    99); from 1.31 its empty NOT_IMPLEMENTED status comes without the initializer's "status.IsOK() was false."."""
    values = onnx.TensorProto(name="v", data_type=99, dims=[1], raw_data=b"\0" * 4)
    sparse = h.make_sparse_tensor(values, h.make_tensor("i", T.INT64, [1], [1]), [4])
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r"), h.make_node("Constant", [], ["c"], sparse_value=sparse)]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    other = onnx.TensorProto(name="sv", data_type=0, dims=[1], raw_data=b"\0" * 4)
    m.graph.sparse_initializer.append(h.make_sparse_tensor(other, h.make_tensor("si", T.INT64, [1], [0]), [4]))
    words = {"1.24.4": "tensor type 99 is not supported", "1.31.1": "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED",
             "1.32.0": "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED"}
    for version, said in words.items():
        assert model_load.load_refusal(m, version) == (
            f"the sparse value of Constant 'c' has element type 99, which ONNX Runtime {version} does not load (onnx "
            f"{onnx.__version__} has no element type 99)", said), version
    by, _ = _place(m, version="1.24.4")
    assert by["r"].status == "refused"
