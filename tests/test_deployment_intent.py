"""Deployment intent (issue 31 item 5): a model prepared for ONNX Runtime (ops only ORT defines) gets one TensorRT
line, an error only when TensorRT was selected; a GenAI model's genai_config.json picks its ORT target."""

import json

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.cache import keys

MS = ("com.microsoft", 1)


def _ort_optimized():
    """What ORT's transformer optimizer leaves in a BERT layer: three com.microsoft contrib ops and ONNX ops."""
    nodes = [h.make_node("SkipLayerNormalization", ["x", "x", "g", "b"], ["a"], name="sln1", domain="com.microsoft"),
             h.make_node("BiasGelu", ["a", "b"], ["c"], name="bg", domain="com.microsoft"),
             h.make_node("SkipLayerNormalization", ["c", "a", "g", "b"], ["d"], name="sln2", domain="com.microsoft"),
             h.make_node("Relu", ["d"], ["y"], name="relu")]
    return make_model(nodes, [vi("x", T.FLOAT, [1, 4, 8])], [vi("y", T.FLOAT, [1, 4, 8])],
                      [init("g", np.ones(8, np.float32)), init("b", np.zeros(8, np.float32))], extra_opsets=[MS])


def _codes(findings, target="tensorrt"):
    return [(f["code"], f["severity"]) for f in findings if f["target"] == target]


def test_default_run_one_info_line_no_per_node_errors(save, lint_json):
    rc, findings = lint_json(save(_ort_optimized()), "--trt-version", "10.1+rtx1.4")
    assert _codes(findings) == [("OLX315", "info")]
    msg = next(f["message"] for f in findings if f["code"] == "OLX315")
    assert "com.microsoft::SkipLayerNormalization ×2, com.microsoft::BiasGelu ×1" in msg and "TensorRT-RTX 1.4" in msg


def test_tensorrt_selected_one_error_line(save, lint_json, cli):
    p = save(_ort_optimized())
    rc, findings = lint_json(p, "--target", "tensorrt", "--trt-version", "8.6")
    assert _codes(findings) == [("OLX314", "error")] and rc == 1
    assert "TensorRT 8.6's parser does not import" in next(f["message"] for f in findings if f["code"] == "OLX314")
    # under ORT's TensorRT EP those ops fall through to CUDA: the same verdicts drive its partition
    rc, out, _ = cli(p, "--target", "ort-trt", "--trt-version", "8.6", "--show-info")
    assert "OLX314" not in out


def test_config_targets_count_as_selected(tmp_path, save, lint_json):
    p = save(_ort_optimized())
    cfg = tmp_path / ".onnxlint.yaml"
    cfg.write_text("targets: [tensorrt]\n")
    _, findings = lint_json(p, "--config", cfg)
    assert _codes(findings) == [("OLX314", "error")]


def _genai_folder(tmp_path, providers):
    """A GenAI-builder-like folder: model.onnx with a Unique (a CPU kernel, no CUDA kernel) and genai_config.json."""
    d = tmp_path / "phi3_int4"
    d.mkdir()
    m = make_model([h.make_node("Unique", ["x"], ["y"], name="uniq")], [vi("x", T.FLOAT, [8])], [vi("y", T.FLOAT, None)])
    onnx.save(m, d / "model.onnx")
    (d / "genai_config.json").write_text(json.dumps({"model": {"decoder": {
        "filename": "model.onnx", "session_options": {"provider_options": providers}}}}))
    return d / "model.onnx"


def test_genai_cpu_build_gets_no_cuda_findings(tmp_path, lint_json, cli):
    cpu = _genai_folder(tmp_path, [])
    _, findings = lint_json(cpu)
    assert not [f for f in findings if f["target"] == "ort-cuda"]
    rc, out, _ = cli(cpu)
    assert "built for ONNX Runtime's CPU EP, checked as ort-cpu" in out
    # the user's own target wins over the file
    _, findings = lint_json(cpu, "--target", "ort-cuda")
    assert any(f["target"] == "ort-cuda" and f["node"] for f in findings)


@pytest.mark.parametrize("providers", [[{"cuda": {"enable_cuda_graph": "0"}}]])
def test_genai_cuda_build_stays_on_cuda(tmp_path, lint_json, providers):
    _, findings = lint_json(_genai_folder(tmp_path, providers))
    assert any(f["target"] == "ort-cuda" and f["node"] for f in findings)


def test_unreadable_genai_config_states_nothing(tmp_path, lint_json):
    p = _genai_folder(tmp_path, [])
    (p.parent / "genai_config.json").write_text("{not json")
    _, findings = lint_json(p)
    assert any(f["target"] == "ort-cuda" and f["node"] for f in findings)


def test_cache_key_follows_genai_config(tmp_path):
    import onnxlint

    p = _genai_folder(tmp_path, [])
    settings = onnxlint.Settings.from_config(None)
    before = keys.key(p, settings)
    (p.parent / "genai_config.json").write_text(json.dumps({"model": {"decoder": {
        "filename": "model.onnx", "session_options": {"provider_options": [{"cuda": {}}]}}}}))
    assert keys.key(p, settings) != before


# ----------------------------------------------------- issue 41: classic ML and ORT's CPU quantization formats


def _sklearn_pipeline():
    """What skl2onnx writes for StandardScaler + LogisticRegression: ai.onnx.ml Scaler, LinearClassifier, ZipMap."""
    ml = ("ai.onnx.ml", 3)
    nodes = [h.make_node("Scaler", ["X"], ["s"], name="scaler", domain="ai.onnx.ml", offset=[0.0, 0.0], scale=[1.0, 1.0]),
             h.make_node("LinearClassifier", ["s"], ["label", "prob"], name="clf", domain="ai.onnx.ml",
                         classlabels_ints=[0, 1], coefficients=[1.0, -1.0, -1.0, 1.0], intercepts=[0.0, 0.0])]
    m = make_model(nodes, [vi("X", T.FLOAT, ["N", 2])], [vi("label", T.INT64, ["N"]), vi("prob", T.FLOAT, ["N", 2])],
                   extra_opsets=[ml])
    m.producer_name = "skl2onnx"
    return m


def test_classic_ml_model_is_checked_as_a_cpu_model_with_one_line(save, lint_json, cli):
    p = save(_sklearn_pipeline())
    rc, findings = lint_json(p)
    assert findings == [] and rc == 0  # ORT's CPU EP runs every ai.onnx.ml op: nothing to say
    rc, out, _ = cli(p)
    notes = [ln for ln in out.splitlines() if ": note: " in ln]
    assert len(notes) == 1 and "a classic-ML model (ai.onnx.ml ops Scaler, LinearClassifier)" in notes[0]
    assert "checked as a CPU model (ort-cpu)" in notes[0] and "OLX200" not in out and "OLX300" not in out


def test_classic_ml_on_a_named_gpu_target_is_checked_there(save, lint_json):
    p = save(_sklearn_pipeline())
    _, findings = lint_json(p, "--target", "ort-cuda")
    assert {f["code"] for f in findings} == {"OLX200"}  # no CUDA kernel for the ai.onnx.ml ops
    _, findings = lint_json(p, "--target", "tensorrt")
    assert {f["code"] for f in findings} == {"OLX300"}


def _qoperator():
    """ORT's quantize_static with QuantFormat.QOperator: a QLinearConv and com.microsoft's QLinearAdd."""
    w = init("w", np.zeros((4, 3, 3, 3), np.uint8))
    scalars = [init("s", np.array(0.1, np.float32)), init("z", np.array(0, np.uint8))]
    nodes = [h.make_node("QLinearConv", ["x", "s", "z", "w", "s", "z", "s", "z"], ["c"], name="conv"),
             h.make_node("QLinearAdd", ["c", "s", "z", "c", "s", "z", "s", "z"], ["y"], name="add", domain="com.microsoft")]
    return make_model(nodes, [vi("x", T.UINT8, ["N", 3, 8, 8])], [vi("y", T.UINT8, ["N", 4, 6, 6])], [w, *scalars],
                      extra_opsets=[MS])


def test_qoperator_model_on_cuda_is_one_line_with_its_cost(save, lint_json):
    rc, findings = lint_json(save(_qoperator()))
    shown = [f for f in findings if f["severity"] != "info"]
    assert [f["code"] for f in shown] == ["OLX207"]  # not OLX200 per op type, no TensorRT line by default
    msg = shown[0]["message"]
    assert msg.startswith("QOperator quantization runs on CPU under the CUDA EP: 2 of the model's 2 nodes")
    assert "quantize in QDQ format" in msg
    # TensorRT named: its verdicts on the model are shown
    _, findings = lint_json(save(_qoperator()), "--target", "tensorrt", "--target", "ort-cuda")
    assert {"OLX207"} < {f["code"] for f in findings if f["severity"] != "info"}


def test_genai_note_survives_a_model_whose_strings_are_not_utf8(tmp_path, cli):
    """A node name whose bytes are not UTF-8 makes the linter lint the model again with its strings repaired; the
    genai_config.json line, said before that lint began, stays."""
    p = _genai_folder(tmp_path, [])
    p.write_bytes(p.read_bytes().replace(b"uniq", b"\xff\xfe\xc3\x28"))
    rc, out, err = cli(p, "--no-cache", "--no-progress")
    assert "internal error" not in out + err and "Traceback" not in err
    assert "built for ONNX Runtime's CPU EP, checked as ort-cpu" in out


def test_the_summary_names_the_release_a_cpu_model_was_checked_against(save, cli, tmp_path):
    """A classic-ML model is checked as ort-cpu, against the CPU build's newest release: the summary and SARIF's
    checkedReleases said the configured targets' (the CUDA build's release and TensorRT's), fresh and cached alike;
    a run with a GPU model beside it names both."""
    from onnxlint.ort import kernel_registry

    cpu, cuda = kernel_registry.checked(None, ("cpu",)), kernel_registry.checked(None, ("cuda", "cpu"))
    p = save(_sklearn_pipeline())
    for _ in range(2):  # the second run reads the result cache
        rc, out, _ = cli(p)
        assert out.rstrip().endswith(f"Checked against {cpu}."), out
    rc, out, _ = cli(p, "--format", "sarif")
    assert json.loads(out)["runs"][0]["properties"]["checkedReleases"] == cpu
    gpu = tmp_path / "gpu.onnx"
    onnx.save(make_model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])]), gpu)
    rc, out, _ = cli(p, gpu)
    line = out.rstrip().splitlines()[-1]
    assert f"Checked against {cpu}; {cuda}, TensorRT" in line or f"Checked against {cuda}, TensorRT" in line, line
    assert cpu in line, line
