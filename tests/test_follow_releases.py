"""tools/follow_releases.py without the network: the shipped tables unpack into the generators' raw files and pack
back to the very bytes shipped (so a new release is packed beside every shipped one), which releases count as
newer than a table, the TensorRT-RTX table labels, and the release rows read from ort-releases.json."""

import gzip
import json
import sys
from pathlib import Path

import onnx
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import follow_releases as fr  # noqa: E402
import gen_kernel_tables as kt  # noqa: E402
import gen_ort_schemas as gs  # noqa: E402

from onnxlint.ort import kernel_registry, releases  # noqa: E402


def test_shipped_tables_unpack_and_pack_to_the_same_bytes(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    fr.unpack_kernels(raw)
    kt.pack(raw, out)
    for ep in ("cpu", "cuda"):
        shipped = gzip.decompress((kt.OUT / f"ort-{ep}.json.gz").read_bytes())
        assert gzip.decompress((out / f"ort-{ep}.json.gz").read_bytes()) == shipped, ep
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    fr.unpack_schemas(schemas)
    gs.pack(schemas, out / "ort-schemas.json.gz")
    assert gzip.decompress((out / "ort-schemas.json.gz").read_bytes()) == gzip.decompress(gs.OUT.read_bytes())


def test_newer_means_a_later_release_than_every_table():
    shipped = ["8.6", "10.0", "10.1"]
    found = ["8.6.1", "10.1.0", "10.2.0", "10.2.0.post1", "10.3.0rc1", "11.0.0.114"]
    assert fr._newer(found, shipped) == ["10.2.0", "11.0.0.114"]
    assert fr._newer(["1.31.1", "1.32.0"], ["1.31.1"]) == ["1.32.0"]


def test_rtx_releases_get_a_10x_line_label():
    assert fr.rtx_label("1.7.1.116") == "10.1+rtx1.7"
    assert fr._rtx_of("10.1+rtx1.4") == "1.4"


def test_every_kernel_table_line_has_a_release_row_read_from_its_wheel():
    data = json.loads(releases.LIMITS_FILE.read_text())
    lines = {releases.release(v) for ep in ("cpu", "cuda") for v in kernel_registry.releases(ep)}
    assert lines <= set(releases.limits()) and fr.missing_rows() == []
    for line, row in data["releases"].items():
        assert row["release"].startswith(line + ".") and "session creation" in row["source"], line
    # the newest CPU release, 1.32.0, loads opset 28 and IR 14: its node tests are no longer refused
    assert releases.row("1.32.0").max_opset == 28 and releases.row("1.32.0").max_ir == 14


def test_each_ort_target_defaults_to_its_newest_table():
    assert kernel_registry.default_release(("cpu",)) == kernel_registry.releases("cpu")[-1]
    cuda = kernel_registry.default_release(("cuda", "cpu"))
    assert cuda in kernel_registry.releases("cuda") and cuda == kernel_registry.default_release()


def test_a_new_rtx_table_names_its_wheels_in_sources_md(tmp_path):
    shipped = (ROOT / "data" / "upstream" / "tensorrt" / "SOURCES.md").read_text()
    md = tmp_path / "SOURCES.md"
    md.write_text(shipped)
    for label, version in (("10.1+rtx1.4", "1.4.0.76"), ("10.1+rtx1.5", "1.5.0.114")):  # rows the file has
        assert not fr.record_rtx_source(md, label, version)
    assert md.read_text() == shipped
    assert fr.record_rtx_source(md, "10.1+rtx1.10", "1.10.0.5")  # a new release: its row after every older table's
    assert fr.record_rtx_source(md, "10.1+rtx1.6", "1.6.9.1")  # a rebuilt one: its row replaced
    rows = [ln for ln in md.read_text().splitlines() if ln.startswith("| 8.") or ln.startswith("| 10.")]
    assert [r.split("|")[1].strip() for r in rows][-5:] == ["10.1+rtx1.4", "10.1+rtx1.5", "10.1+rtx1.6", "10.1+rtx1.7",
                                                           "10.1+rtx1.10"]
    assert "`tensorrt-rtx-cu12-libs==1.10.0.5`, `tensorrt-rtx-cu12-bindings==1.10.0.5`" in rows[-1]
    assert "`tensorrt-rtx-cu12-libs==1.6.9.1`" in rows[-3]


def test_a_row_keeps_the_element_types_the_probe_saw_refused_in_orts_words():
    """elem_types sorts each probe's answer by ORT's words; a refusal in other words is in no set (nothing claimed)."""
    invalid = "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: Invalid tensor data type {}."
    checked = "[ONNXRuntimeError] : 1 : FAIL : ... This is an invalid model. Tensor 'e' does not have valid data type."
    unregistered = "Exception during loading: MLDataType for: tensor(complex64) is not currently registered or supported"
    loads = {}
    for n in range(0, 31):
        loads[f"init:{n}"] = True if 1 <= n <= 26 else checked if n else "... Tensor does not have type information."
        loads[f"input:{n}"] = unregistered if n in (14, 15, 24) else True if 1 <= n <= 26 else invalid.format(n)
        loads[f"sparse:{n}"] = (f"Failed to load model with error: tensor type {n} is not supported" if n in (0, 14, 15)
                                else "... status.IsOK() was false. [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : " if n > 26
                                else "Sparse tensor: e FLOAT8E8M0 values are unsupported because the type has no zero "
                                     "representation." if n == 24 else True)
    loads["input:30"] = "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : something else"
    got = fr.elem_types(loads)
    assert got == {"probed": "0-30", "refused_initializer": "0,27-30", "initializer_checked": "27-30",
                   "invalid": "0,27-29", "unregistered": "14-15,24", "sparse_unsupported": "0,14-15",
                   "sparse_not_implemented": "27-30", "sparse_no_zero": "24"}
    assert releases.numbers(got["invalid"]) == {0, 27, 28, 29} and releases.numbers("") == frozenset()
    assert fr.spans([5, 1, 2, 3, 7, 8, 10]) == "1-3,5,7-8,10"
    # the probe models: an unused initializer, graph input and sparse initializer of each number, at the newest IR
    models = fr.elem_models(13)
    assert {"init:0", "input:0", "init:28", "input:63", "input:99", "sparse:99", "input:2147483647"} <= set(models)


def test_a_row_says_whether_a_value_in_an_external_data_file_is_refused_in_orts_words():
    """external_inference sorts the probe's answer by ORT's words; the probe is a Reshape whose shape is in a data file
    it writes beside the model (loaded from its path)."""
    words = ("[ONNXRuntimeError] : 1 : FAIL : Load model from external.onnx failed:Node () Op (Reshape) "
             "[ShapeInferenceError] Cannot parse data from external tensors. Please load external data into raw data "
             "for tensor: shape")
    assert [fr.external_inference({"external:reshape": got}) for got in (words, True, "something else")] == \
        ["refused", "loads", "other"]
    (probe,) = fr.external_models(10).values()
    model = onnx.load_from_string(bytes.fromhex(probe["files"][probe["path"]]))
    (shape,) = model.graph.initializer
    assert shape.data_location == onnx.TensorProto.EXTERNAL and model.ir_version == 10
    assert {e.key: e.value for e in shape.external_data}["location"] in probe["files"]


def test_a_row_says_whether_a_local_function_calling_itself_is_refused_in_orts_words():
    """recursive_functions sorts the probe's answer by ORT's words; the probe holds a local function calling itself
    that the graph does not call (a release that does not check would crash on a call: never probed), and the rows
    say which lines refuse it (what OLX007 claims: load_refusal.recursive_function)."""
    words = ("[ONNXRuntimeError] : 1 : FAIL : Load model from model failed:Model local function definitions must not "
             "be recursive. Cycle detected: loc:F -> loc:F")
    assert [fr.recursive_functions({"recursive:self": got}) for got in (words, True, "Segmentation fault")] == \
        ["refused", "loads", "other"]
    (probe,) = fr.recursive_models(13).values()
    model = onnx.load_from_string(bytes.fromhex(probe))
    (f,) = model.functions
    assert [(n.domain, n.op_type) for n in f.node] == [(f.domain, f.name)]
    assert all(n.domain != f.domain for n in model.graph.node) and model.ir_version == 13
    assert fr.recursive_models(7)["recursive:self"] != probe  # never below IR 8, which brought local functions
    data = json.loads(releases.LIMITS_FILE.read_text())
    refused = {line for line, row in data["releases"].items() if row["recursive_functions"] == "refused"}
    assert {"1.30", "1.31", "1.32"} <= refused and not {"1.20", "1.24", "1.26"} & refused
    assert releases.row("1.31.1").recursive_function_refusal and not releases.row("1.24.4").recursive_function_refusal


def test_a_row_says_whether_two_local_functions_of_one_id_are_refused_in_orts_words():
    """duplicate_functions sorts the probe's answer by ORT's words; the probe holds two unused, non-recursive local
    functions of one id, and the rows say which lines refuse it (1.31 on, measured on 1.31.1 and 1.32.0; 1.30.0
    and older load it: what OLX007 claims, load_refusal.duplicate_function)."""
    words = ("[ONNXRuntimeError] : 1 : FAIL : Load model from model failed:/onnxruntime_src/onnxruntime/core/graph/"
             "model.cc:336 ... inserted was false. Duplicate model-local function identifier: loc:F")
    assert [fr.duplicate_functions({"duplicate:function": got}) for got in (words, True, "Segmentation fault")] == \
        ["refused", "loads", "other"]
    (probe,) = fr.duplicate_models(13).values()
    model = onnx.load_from_string(bytes.fromhex(probe))
    f, g = model.functions
    assert (f.domain, f.name, f.overload) == (g.domain, g.name, g.overload) and model.ir_version == 13
    assert all(n.domain != f.domain for n in list(model.graph.node) + list(f.node))  # neither called nor recursive
    assert onnx.load_from_string(bytes.fromhex(fr.duplicate_models(7)["duplicate:function"])).ir_version == 8
    data = json.loads(releases.LIMITS_FILE.read_text())
    refused = {line for line, row in data["releases"].items() if row["duplicate_functions"] == "refused"}
    assert {"1.31", "1.32"} <= refused and not {"1.20", "1.24", "1.27", "1.30"} & refused
    assert releases.row("1.31.1").duplicate_function_refusal and not releases.row("1.30.0").duplicate_function_refusal


def test_every_release_row_has_its_probed_element_types():
    """Every row was probed (no line left 'not_measured'); 1.20.2 refuses FLOAT4E2M1 to INT2, 1.24.4 and 1.31.1 load
    them, 1.32.0 loads a FLOAT6 initializer (its graph input has no MLDataType)."""
    data = json.loads(releases.LIMITS_FILE.read_text())
    for line, row in data["releases"].items():
        assert "probed" in row["elem_types"], line
        assert row["external_inference"] == "refused", line
    e20, e24, e31, e32 = (releases.row(v).elem for v in ("1.20.2", "1.24.4", "1.31.1", "1.32.0"))
    assert {23, 24, 25, 26} <= e20.invalid and not {23, 25, 26} & (e24.invalid | e31.invalid)
    assert 27 in e31.initializer and 27 not in e32.initializer and 27 in e32.unregistered
    assert all({14, 15} <= e.unregistered for e in (e20, e24, e31, e32))


def test_a_row_says_at_which_since_versions_a_cast_only_shapes_read_is_removed():
    """pre_shape reads the models ORT's basic optimizations left (one Relu -> Cast -> Shape per opset): the opsets
    whose Cast was gone, and the since-versions of Cast and Shape there that no opset where it stayed shares (what
    Release.pre_shape_versions checks); a refused model says nothing."""
    models = fr.pre_shape_models(22, 10)
    assert sorted(models) == [f"pre_shape:{n}" for n in range(11, 23)]

    def optimized(opset: int, gone: bool) -> str:
        m = onnx.load_from_string(bytes.fromhex(models[f"pre_shape:{opset}"]))
        if gone:
            nodes = [n for n in m.graph.node if n.op_type != "Cast"]
            nodes[-1].input[0] = "r"
            del m.graph.node[:]
            m.graph.node.extend(nodes)
        return m.SerializeToString().hex()

    answers = {f"pre_shape:{o}": optimized(o, 13 <= o <= 20) for o in range(11, 23)}
    assert fr.pre_shape(answers) == {"removed_opsets": "13-20", "since_versions": "13,15,19"}
    answers["pre_shape:22"] = None  # refused
    answers["pre_shape:21"] = optimized(21, True)
    assert fr.pre_shape(answers) == {"removed_opsets": "13-21", "since_versions": "13,15,19,21"}
    data = json.loads(releases.LIMITS_FILE.read_text())
    assert all("pre_shape" in row for row in data["releases"].values())  # every row probed


def test_a_row_says_which_reshape_versions_reshape_fusion_fuses():
    """reshape_fusion reads the models ORT's basic optimizations left (a Reshape of its own input's Shape -> Gather ->
    Unsqueeze -> Concat per opset, Unsqueeze with an axes attribute before opset 13): the opsets whose Concat was
    gone, and the Reshape since-versions there that no opset where it stayed shares (Release.reshape_fusion_versions);
    a refused model says nothing."""
    models = fr.reshape_fusion_models(23, 10)
    assert sorted(models, key=lambda k: int(k.split(":")[1])) == [f"reshape_fusion:{n}" for n in range(11, 24)]
    for opset in (11, 23):
        m = onnx.load_from_string(bytes.fromhex(models[f"reshape_fusion:{opset}"]))
        onnx.checker.check_model(m, full_check=True)

    def optimized(opset: int, gone: bool) -> str:
        m = onnx.load_from_string(bytes.fromhex(models[f"reshape_fusion:{opset}"]))
        if gone:
            nodes = [n for n in m.graph.node if n.op_type in ("Reshape", "Relu")]
            del m.graph.node[:]
            m.graph.node.extend(nodes)
        return m.SerializeToString().hex()

    answers = {f"reshape_fusion:{o}": optimized(o, o <= 20) for o in range(11, 24)}
    assert fr.reshape_fusion(answers) == {"fused_opsets": "11-20", "since_versions": "5,13-14,19"}
    answers["reshape_fusion:23"] = None  # refused
    answers["reshape_fusion:21"] = optimized(21, True)  # Reshape-21 here, kept at opset 22
    assert fr.reshape_fusion(answers) == {"fused_opsets": "11-21", "since_versions": "5,13-14,19"}
    answers["reshape_fusion:22"] = optimized(22, True)
    assert fr.reshape_fusion(answers) == {"fused_opsets": "11-22", "since_versions": "5,13-14,19,21"}
    # every model refused: no row (it would read as a release that fuses no Reshape), for pre_shape's too
    for row, prefix in ((fr.reshape_fusion, "reshape_fusion"), (fr.pre_shape, "pre_shape")):
        with pytest.raises(RuntimeError, match="no .* probe model was optimized"):
            row({f"{prefix}:{o}": None for o in range(11, 24)})
    data = json.loads(releases.LIMITS_FILE.read_text())
    assert all("reshape_fusion" in row for row in data["releases"].values())  # every row probed
    assert releases.row("1.24.4").reshape_fusion_versions == (5, 13, 14)
    assert releases.row("1.26.0").reshape_fusion_versions == (5, 13, 14, 19)
    assert releases.row("1.31.1").reshape_fusion_versions == releases.NEWEST.reshape_fusion_versions == (5, 13, 14, 19, 21,
                                                                                                        23, 24, 25)


def test_the_scheduled_job_runs_the_check_and_opens_an_issue_when_a_release_shipped(monkeypatch, capsys, tmp_path):
    """.github/workflows/follow-releases.yml tells the team the day a runtime ships (CONTRIBUTING.md): a daily job
    whose step runs `tools/follow_releases.py --check` and opens an issue on its exit 1. The step's command, run here
    with PyPI's answer replaced: 1 and the release named when one is newer than the tables, 0 when none is."""
    import shlex

    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "follow-releases.yml").read_text())
    assert flow[True]["schedule"][0]["cron"]  # YAML 1.1 reads the key `on` as True
    steps = flow["jobs"]["check"]["steps"]
    check = next(s for s in steps if s.get("id") == "check")
    line = next(x for x in check["run"].splitlines() if "follow_releases.py" in x)
    words = shlex.split(line.split(">")[0])
    assert words[:2] == ["python", "tools/follow_releases.py"] and (ROOT / words[1]).is_file()
    assert any(s.get("if") == "steps.check.outputs.rc == '1'" and "gh issue create" in s["run"] for s in steps)
    monkeypatch.setattr(fr, "pypi", lambda package: ["1.31.1", "1.32.0", "99.0.0"] if package == "onnxruntime" else [])
    assert fr.main([*words[2:], "--work", str(tmp_path)]) == 1
    assert "onnxruntime: 99.0.0" in capsys.readouterr().out
    monkeypatch.setattr(fr, "pypi", lambda package: [])
    assert fr.main([*words[2:], "--work", str(tmp_path)]) == 0
    assert "every table is up to date" in capsys.readouterr().out
