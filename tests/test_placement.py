"""ORT placement prediction (issue: CUDA kernel not found in registries)."""

import json

import numpy as np
import pytest
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
    # a QOperator op of ORT's quantization tool: the model's one line, OLX207, not OLX200 per op type
    assert not _codes(got["contrib"], "OLX200")
    q = _codes(got["contrib"], "OLX207")
    assert len(q) == 1 and "QOperator quantization runs on CPU under the CUDA EP" in q[0]["message"]
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
    assert infos == {"gather", "unsq", "concat"}
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
    # the text's summary says the bytes in their unit: "~0.00 MB copied per run" read as nothing copied
    rc, out, _ = cli("placement", save(m), "--target", "ort-cuda")
    assert ", 2 boundaries, ~128 B copied per run" in out, out


def test_nodes_inside_if_bodies_are_placed(save, lint_json):
    then_g = h.make_graph([h.make_node("Equal", ["a", "b"], ["o"], name="eq_then")], "then", [], [vi("o", T.BOOL, ["n"])])
    else_g = h.make_graph([h.make_node("Identity", ["c"], ["o2"], name="id_else")], "else", [], [vi("o2", T.BOOL, ["n"])])
    m = make_model([h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                   [vi("cond", T.BOOL, []), vi("a", T.STRING, ["n"]), vi("b", T.STRING, ["n"]), vi("c", T.BOOL, ["n"])],
                   [vi("y", T.BOOL, ["n"])], opset=19)
    _, findings = lint_json(save(m), "--target", "ort-cuda")
    assert [f["node"] for f in findings if f["code"] == "OLX200"] == ["if:then_branch/eq_then"]


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


def test_placement_json_lists_the_nodes_ort_creates(save, cli):
    """An int32 DequantizeLinear read by two Adds: ORT copies it for the second (EnsureUniqueDQForNodeUnit), each
    on CPU with its own Memcpy; the JSON lists the copy under `created` (absent when ORT creates nothing), the text
    output says what ORT adds off CUDA."""
    nodes = [h.make_node("DequantizeLinear", ["b", "bs"], ["bd"], name="dqb"),
             h.make_node("Add", ["x", "bd"], ["a1"], name="a1"), h.make_node("Add", ["a1", "bd"], ["y"], name="a2")]
    m = make_model(nodes, [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, None)],
                   [init("b", np.array([1, 2, 3, 4], np.int32)), init("bs", np.array(0.01, np.float32))])
    path = save(m)
    rc, out, _ = cli("placement", path, "--target", "ort-cuda", "--ort-version", "1.31.1", "--format", "json")
    data = json.loads(out)[0]
    assert data["created"] == [{"node": "dqb/duplicated", "op_type": "DequantizeLinear", "domain": "ai.onnx",
                                "ep": "CPUExecutionProvider", "by": "EnsureUniqueDQForNodeUnit", "from": "graph/dqb",
                                "replaces": False, "detail": data["created"][0]["detail"]}]
    assert data["summary"]["boundaries"] == 2
    rc, out, _ = cli("placement", path, "--target", "ort-cuda", "--ort-version", "1.31.1")
    assert "created by ORT off CUDAExecutionProvider: 1 DequantizeLinear on CPUExecutionProvider (EnsureUniqueDQForNodeUnit)" in out
    plain = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    rc, out, _ = cli("placement", save(plain, "plain.onnx"), "--target", "ort-cuda", "--format", "json")
    assert "created" not in json.loads(out)[0]


def test_placement_json_is_written_node_by_node_and_names_each_unreadable_model(save, cli, tmp_path):
    """`onnxlint placement --format json` writes each model's document as it is made (a million-node model's rows
    are never held): the output is the whole document's JSON text, a model that cannot be read is said on stderr
    between the others (exit 2), and -o writes the same bytes."""
    from onnxlint import api
    from onnxlint.formats import placement_output
    from onnxlint.support import escape

    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Cast", ["r"], ["s"], name="to_str", to=T.STRING),
             h.make_node("Cast", ["s"], ["y"], name="to_float", to=T.FLOAT)]
    first = save(make_model(nodes, [vi("x", T.FLOAT, [2, 8])], [vi("y", T.FLOAT, [2, 8])]), "a.onnx")
    second = save(make_model(nodes[:1], [vi("x", T.FLOAT, [2, 8])], [vi("r", T.FLOAT, [2, 8])]), "c.onnx")
    broken = tmp_path / "b.onnx"
    broken.write_bytes(b"not a model")
    rc, out, err = cli("placement", first, broken, second, "--target", "ort-cuda", "--format", "json")
    assert rc == 2 and "b.onnx" in err and "Traceback" not in err
    whole = [placement_output.as_json(str(p), "ort-cuda", api.predict(p, "ort-cuda", None)) for p in (first, second)]
    assert out == escape.dumps(whole, indent=2) + "\n"
    assert [n["node"] for n in json.loads(out)[0]["nodes"]] == ["graph/relu", "graph/to_str", "graph/to_float"]
    report = tmp_path / "placement.json"
    rc, written, _ = cli("placement", first, broken, second, "--target", "ort-cuda", "--format", "json", "-o", report)
    assert rc == 2 and written == "" and report.read_text(encoding="utf-8") == out


def test_placement_output_makes_a_nodes_row_when_it_writes_it():
    """render() takes the node rows from a generator one at a time: the first node's text is out before the
    second row is asked for."""
    from onnxlint.formats import placement_output

    made = []

    def rows():
        for k in range(3):
            made.append(k)
            yield {"node": f"n{k}", "op_type": "Relu", "domain": "ai.onnx", "ep": "CUDAExecutionProvider",
                   "status": "device", "reason": None, "detail": "", "deliberate": False}

    doc = {"filename": "m.onnx", "target": "ort-cuda", "ort_version": "1.24.4", "kernel_tables": {}, "notes": [],
           "nodes": rows(), "summary": {"line": "3 nodes"}}
    pieces = placement_output.render("json", iter([doc]))
    text = ""
    while '"n0"' not in text:
        text += next(pieces)
    assert made == [0]
    text += "".join(pieces)
    assert made == [0, 1, 2] and [n["node"] for n in json.loads(text)[0]["nodes"]] == ["n0", "n1", "n2"]


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_placement_predicts_each_model_without_the_cyclic_collector_and_turns_it_back_on(fmt, save, cli, tmp_path,
                                                                                         monkeypatch):
    """`onnxlint placement` (JSON, and the HTML page) predicts with the cyclic collector off, as the lint does (a
    collection walks every object of a million-node model: ~4 s of the 1M model's 34 s), and turns it back on
    after each model, one that cannot be read included."""
    import gc

    from onnxlint import api
    from onnxlint.formats import html_report

    module, name = (api, "_predict") if fmt == "json" else (html_report, "model_doc")
    seen = []
    place = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: seen.append(gc.isenabled()) or place(*a, **k))
    model = save(make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]))
    broken = tmp_path / "b.onnx"
    broken.write_bytes(b"not a model")
    assert gc.isenabled()
    rc, out, _ = cli("placement", broken, model, "--target", "ort-cuda", "--format", fmt)
    assert rc == 2 and seen == [False, False] and gc.isenabled()
    if fmt == "json":
        assert [n["node"] for n in json.loads(out)[0]["nodes"]] == ["graph/relu"]
    else:
        assert "relu" in out


def test_a_placement_made_without_shape_inference_says_why(save, cli, tmp_path):
    """The placement command matched kernels on the file's declared types, silently, where onnx's inference did
    not run (past its budget or limit, or an input it never returns on): its notes say so now, as a lint's OLX008
    does, and a lint still says it once."""
    node = h.make_node("Einsum", ["a", "b"], ["y"], name="ein", equation="i_j,jk->ik")
    p = save(make_model([node], [vi("a", T.FLOAT, [3, 4]), vi("b", T.FLOAT, [4, 5])], [vi("y", T.FLOAT, [3, 5])]), "e.onnx")
    rc, out, err = cli("placement", p)
    assert rc == 0 and "  note: onnx's shape inference not run: Einsum node 'ein'" in out, out + err
    rc, out, _ = cli("placement", "--format", "json", p)
    (doc,) = json.loads(out)
    assert [n for n in doc["notes"] if "shape inference not run" in n] and rc == 0
    rc, out, _ = cli("--no-cache", p)
    assert out.count("shape inference not run") == 1 and "OLX008" in out
    html = tmp_path / "p.html"
    assert cli("placement", "--format", "html", "-o", html, p)[0] == 0
    assert "shape inference not run: Einsum node" in html.read_text()
    ok = save(make_model([h.make_node("Einsum", ["a", "b"], ["y"], name="ein", equation="ij,jk->ik")],
                         [vi("a", T.FLOAT, [3, 4]), vi("b", T.FLOAT, [4, 5])], [vi("y", T.FLOAT, [3, 5])]), "ok.onnx")
    assert "note:" not in cli("placement", ok)[1]


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_a_defect_placing_one_model_costs_that_model_not_the_run(tmp_path, monkeypatch, cli, fmt):
    """A model whose placement raised (a RecursionError: review 45's local function whose If branches share a name)
    ended `onnxlint placement` with "internal error ...; please report it" and no output for the others: it is now
    one line naming that model, exit 2, as a model that could not be read, the others placed."""
    import onnx

    import onnxlint.ort.partitioner as partitioner

    for name in ("a", "boom"):
        onnx.save(make_model([h.make_node("Relu", ["x"], ["y"], name=name)], [vi("x", T.FLOAT, [2])],
                             [vi("y", T.FLOAT, [2])]), tmp_path / f"{name}.onnx")
    run = partitioner.Simulator.run

    def flaky(self):
        if any(n.name == "boom" for n in self.index.nodes):
            raise RecursionError("maximum recursion depth exceeded")
        return run(self)

    monkeypatch.setattr(partitioner.Simulator, "run", flaky)
    out_file = tmp_path / "out.html"
    rc, out, err = cli("placement", "--format", fmt, *(["-o", out_file] if fmt == "html" else []), tmp_path)
    assert rc == 2 and "internal error" not in err and "Traceback" not in err
    assert err.count("\n") == 1 and "boom.onnx: graph nesting too deep to analyse" in err
    text = out_file.read_text() if fmt == "html" else out
    assert "a.onnx" in text
    if fmt == "json":
        assert [d["filename"].rsplit("/", 1)[-1] for d in json.loads(out)] == ["a.onnx"]


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_placement_places_a_model_at_its_configs_release_and_level_as_its_lint_does(tmp_path, cli, fmt):
    """`onnxlint placement` read no config: under `ort-version = "1.20.2"` the lint said an int64 Equal-19 falls back
    to CPU (1.20.2's CUDA EP has no Equal-19) while the placement put it on CUDA (the newest tables, at `all`). The
    config in force for the model now gives both defaults; the command line's options still win."""
    import onnx

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[tool.onnxlint]\nort-version = "1.20.2"\nort-optimization = "disabled"\n')
    m = repo / "m.onnx"
    onnx.save(make_model([h.make_node("Equal", ["a", "b"], ["y"], name="eq")],
                         [vi("a", T.INT64, [4]), vi("b", T.INT64, [4])], [vi("y", T.BOOL, [4])], opset=19), m)
    out = tmp_path / f"p.{fmt}"
    rc, _, err = cli("placement", "--format", fmt, "-o", out, m)
    page = out.read_text()
    assert rc == 0 and "1.20.2" in page and "1.31.1" not in page, err
    assert "CPUExecutionProvider" in page and (fmt == "text" or "disabled" in page)  # the text names no level
    if fmt == "json":
        (doc,) = json.loads(page)
        assert doc["ort_version"] == "1.20.2" and doc["summary"]["optimization"] == "disabled"
        assert doc["nodes"][0]["ep"] == "CPUExecutionProvider" and doc["nodes"][0]["reason"] == "opset"
    rc, _, err = cli("placement", "--format", fmt, "-o", out, "--ort-version", "1.31.1", "--ort-optimization", "all", m)
    page = out.read_text()
    assert rc == 0 and "1.31.1" in page and "1.20.2" not in page, err


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_placement_places_for_the_target_its_lint_checks(tmp_path, cli, fmt):
    """`onnxlint placement` placed every model for ort-cuda: under a config's `targets = ["ort-cpu"]` (a CPU
    deployment), or beside a GenAI builder's genai_config.json naming no provider (built for the CPU EP), the lint
    checked ort-cpu and the placement showed the CUDA EP's. ort-cuda where the config names it, else ort-cpu where
    it names that (`tensorrt` has no placement of its own: ort-cuda stands for its fallback); a GenAI model's only
    where the config names none, as the lint does; --target still wins."""
    import onnx

    def placed(folder, *extra):
        out = tmp_path / f"p.{fmt}"
        rc, _, err = cli("placement", "--format", fmt, "-o", out, *extra, folder / "m.onnx")
        assert rc == 0, err
        page = out.read_text()
        if fmt == "json":
            return json.loads(page)[0]["target"]
        got = {t for t in ("ort-cpu", "ort-cuda") if t in page}
        assert len(got) == 1, page[:2000]
        return got.pop()

    model = make_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    cases = {"cpu": ('targets = ["ort-cpu", "tensorrt"]', None, "ort-cpu"),
             "trt": ('targets = ["tensorrt", "ort-cuda"]', None, "ort-cuda"),
             "trt-only": ('targets = ["tensorrt"]', None, "ort-cuda"),
             "both": ('targets = ["ort-cpu", "ort-cuda"]', None, "ort-cuda"),
             "genai": ("", [], "ort-cpu"), "genai-cuda": ("", [{"cuda": {}}], "ort-cuda"),
             "genai-named": ('targets = ["ort-cuda"]', [], "ort-cuda")}
    for name, (config, providers, want) in cases.items():
        folder = tmp_path / name
        (folder / ".git").mkdir(parents=True)
        (folder / "pyproject.toml").write_text(f"[tool.onnxlint]\n{config}\n")
        onnx.save(model, folder / "m.onnx")
        if providers is not None:
            genai = {"model": {"decoder": {"filename": "m.onnx", "session_options": {"provider_options": providers}}}}
            (folder / "genai_config.json").write_text(json.dumps(genai))
        assert placed(folder) == want, name
        assert placed(folder, "--target", "ort-cuda" if want == "ort-cpu" else "ort-cpu") != want, name


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_placement_places_a_classic_ml_model_for_the_cpu_ep_as_its_lint_checks_it(tmp_path, cli, fmt):
    """A classic-ML model (ai.onnx.ml ops) with no target named is checked by its lint as a CPU model (ort-cpu:
    linter._content_targets, "2 nodes on CPU"); `onnxlint placement` placed it for ort-cuda ("1 fall back, 1
    boundary"). It is placed for ort-cpu, a note saying why; --target or a config's targets still win."""
    import onnx

    node = h.make_node("LinearRegressor", ["x"], ["y"], name="lr", domain="ai.onnx.ml", coefficients=[1.0, 2.0],
                       intercepts=[0.5])
    model = make_model([node, h.make_node("Relu", ["y"], ["z"], name="relu")], [vi("x", T.FLOAT, [1, 2])],
                       [vi("z", T.FLOAT, [1, 1])], extra_opsets=[("ai.onnx.ml", 3)])
    (tmp_path / ".git").mkdir()
    m = tmp_path / "m.onnx"
    onnx.save(model, m)

    def placed(*extra):
        out = tmp_path / f"p.{fmt}"
        rc, _, err = cli("placement", "--format", fmt, "-o", out, *extra, m)
        assert rc == 0, err
        page = out.read_text()
        if fmt == "json":
            return json.loads(page)[0]["target"]
        got = {t for t in ("ort-cpu", "ort-cuda") if t in page}
        assert len(got) == 1 or fmt == "text", page[:2000]
        return "ort-cpu" if page.startswith(f"{m}: ort-cpu") or got == {"ort-cpu"} else "ort-cuda"

    assert placed() == "ort-cpu"
    if fmt == "text":
        assert "is placed for ORT's CPU EP (ort-cpu), as its lint checks it" in (tmp_path / "p.text").read_text()
    assert placed("--target", "ort-cuda") == "ort-cuda"
    named = tmp_path / "named"  # a config naming its targets (a folder of its own: configs are read once a run)
    (named / ".git").mkdir(parents=True)
    (named / "pyproject.toml").write_text('[tool.onnxlint]\ntargets = ["ort-cuda"]\n')
    m = named / "m.onnx"
    onnx.save(model, m)
    assert placed() == "ort-cuda"
