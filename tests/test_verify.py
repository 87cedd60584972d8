"""The verification pass on the CPU provider (works on any machine) and the environment doctor."""

import json
import re

import pytest

from onnxlint import doctor
from onnxlint.verify import compare, logs, session

ort = pytest.importorskip("onnxruntime")


def test_verify_cpu_agrees_with_prediction(examples_dir, cli):
    rc, out, _ = cli("verify", examples_dir / "clean_conv.onnx", "--providers", "CPUExecutionProvider", "--format", "json")
    data = json.loads(out)[0]
    assert rc == 0 and "error" not in data
    assert data["providers_used"] == ["CPUExecutionProvider"]
    assert data["nodes_observed"] == 2 and sorted(data["confirmed"]) == ["graph/conv", "graph/relu"]
    assert data["missed"] == [] and data["false_alarms"] == []


def test_profile_and_log_parsing_on_real_ort_output(examples_dir):
    res = session.run_session(examples_dir / "clean_conv.onnx", ["CPUExecutionProvider"], {})
    assert res.profile_nodes == {"conv": "CPUExecutionProvider", "relu": "CPUExecutionProvider"}


def test_verbose_log_parser():
    v = "2026-01-01 [V:onnxruntime:, session_state.cc:{} VerifyEachNodeIsAssignedToAnEp]"
    log = (v.format(1280) + " Node placements\n" +
           v.format(1283) + "  Node(s) placed on [CUDAExecutionProvider]. Number of nodes: 2\n" +
           v.format(1285) + "   Conv (conv)\n" +
           v.format(1285) + "   Relu (relu)\n" +
           v.format(1283) + "  Node(s) placed on [CPUExecutionProvider]. Number of nodes: 1\n" +
           v.format(1285) + "   Equal (eq)\n")
    assert logs.parse_verbose_log(log) == {"conv": "CUDAExecutionProvider", "relu": "CUDAExecutionProvider", "eq": "CPUExecutionProvider"}


def test_compare_table():
    cpu, gpu = "CPUExecutionProvider", "CUDAExecutionProvider"
    r = compare.VerifyResult("m.onnx", "ort-cuda", [gpu, cpu])
    for loc, predicted, ran in (("a", cpu, cpu), ("b", gpu, cpu), ("c", cpu, gpu), ("d", gpu, gpu)):
        compare.record(r, compare.NodeCheck(loc, "Op", predicted, ran))
    assert [c.location for c in r.confirmed] == ["a"] and [c.location for c in r.missed] == ["b"]
    assert [c.location for c in r.false_alarms] == ["c"] and r.agree_on_device == 1 and r.agree == 2


def test_doctor_never_crashes(cli):
    rc, out, _ = cli("doctor")
    assert "available providers" in out and "CUDA EP library" in out
    assert rc == (1 if "✗" in out else 0)  # a failed check fails the command
    rc, out, _ = cli("doctor", "--format", "json")
    doc = json.loads(out)
    assert rc == (0 if doc["ok"] else 1) and all({"ok", "text", "fix"} <= set(c) for c in doc["checks"])


def test_verify_fix_shows_before_and_after(examples_dir, tmp_path, cli):
    p = tmp_path / "eq.onnx"
    p.write_bytes((examples_dir / "equal_mismatch.onnx").read_bytes())
    rc, out, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "--format", "json")
    r = json.loads(out)[0]
    assert "Type parameter (T)" in r["before"]["error"]  # ORT refuses int64 == int32
    assert any(re.search(r"\d+ fixed, 0 remaining", n) for n in r["fix"])
    assert "error" not in r["after"] and r["after"]["nodes_observed"] == 2 and r["after"]["missed"] == []
    assert rc == 0


def test_lint_verify_marks_findings_with_the_provider_they_ran_on(examples_dir, tmp_path, lint_json, cli):
    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, findings = lint_json(p, "--verify", "--providers", "CPUExecutionProvider", "--target", "ort-cpu")
    drop = next(f for f in findings if f["code"] == "OLX010")
    assert drop["verified_provider"] == "CPUExecutionProvider"
    rc, out, _ = cli(p, "--verify", "--providers", "CPUExecutionProvider", "--target", "ort-cpu")
    assert "verify (CPUExecutionProvider): 1 nodes observed, 1 on CPU; 1/1 agree" in out


def test_failed_session_is_a_finding_and_sarif_carries_it(examples_dir, cli):
    from test_sarif import SCHEMA

    rc, out, _ = cli("verify", examples_dir / "custom_op.onnx", "--providers", "CPUExecutionProvider", "--format", "sarif")
    doc = json.loads(out)
    assert rc == 1
    results = doc["runs"][0]["results"]
    failed = [r for r in results if r["ruleId"] == "OLX903"]
    assert failed and "FancyNorm" in failed[0]["message"]["text"]
    assert "OLX903" in [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    if SCHEMA.exists():
        import jsonschema

        jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


def test_missed_and_false_alarm_findings_name_node_and_provider():
    from onnxlint.report import FileReport, Finding
    from onnxlint.ruleset import get_ruleset

    entry = compare.VerifyResult("m.onnx", "ort-cuda", ["CUDAExecutionProvider", "CPUExecutionProvider"])
    compare.record(entry, compare.NodeCheck("graph/a", "Gather", "CUDAExecutionProvider", "CPUExecutionProvider"))
    compare.record(entry, compare.NodeCheck("graph/b", "Equal", "CPUExecutionProvider", "CUDAExecutionProvider"))
    res = FileReport("m.onnx")
    res.findings.append(Finding("OLX200", "cuda-kernel-missing", "warning", "ort-cuda", "m.onnx", "graph/b", "Equal", "x"))
    compare.attach(res, entry, get_ruleset(()))
    by_code = {f.code: f for f in res.findings}
    assert by_code["OLX901"].message == "Gather graph/a ran on CPUExecutionProvider, but onnxlint predicted CUDAExecutionProvider"
    assert by_code["OLX902"].message == "Equal graph/b was predicted on CPU but ran on CUDAExecutionProvider"
    assert by_code["OLX200"].verified == "CUDAExecutionProvider"


@pytest.mark.skipif("CUDAExecutionProvider" in ort.get_available_providers(), reason="machine has a CUDA EP")
def test_without_cuda_ep_says_why_and_verifies_on_cpu(examples_dir, cli):
    rc, out, _ = cli("verify", examples_dir / "clean_conv.onnx", "--format", "json")  # default: CUDA, CPU
    r = json.loads(out)[0]
    assert "CUDAExecutionProvider was requested" in r["cuda_unavailable"]
    assert "no CUDA EP (install onnxruntime-gpu)" in r["cuda_unavailable"] or "failed to create" in r["cuda_unavailable"]
    assert r["target"] == "ort-cpu" and r["missed"] == [] and r["nodes_observed"] == 2
    assert rc == 0


def test_failed_run_still_compares_the_logged_placement(tmp_path, cli):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    # Reshape to a fixed 6 elements: fine to create, fails to run with the default dim of 1
    g = h.make_graph([h.make_node("Reshape", ["x", "s"], ["y"], name="rs"), h.make_node("Relu", ["y"], ["z"], name="relu")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n"])], [h.make_tensor_value_info("z", T.FLOAT, [2, 3])],
                     [onnx.numpy_helper.from_array(__import__("numpy").array([2, 3], "int64"), "s")])
    p = tmp_path / "r.onnx"
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8  # onnxruntime 1.24 (the test pin) reads IR <= 13
    onnx.save(m, p)
    rc, out, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--format", "json")
    r = json.loads(out)[0]
    assert "run failed" in r["run_error"] and "--shape" in r["run_error"]
    assert r["nodes_observed"] == 2 and r["missed"] == []
    rc, out, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--shape", "x=6", "--format", "json")
    assert "run_error" not in json.loads(out)[0]


def test_cuda_problem_from_ort_messages():
    """onnxruntime-gpu 1.24.4 on a machine without CUDA libraries prints these two lines (ANSI colours kept)."""
    stderr = ("\x1b[1;31m2026-12-02 15:55:10.9 [E:onnxruntime:Default, provider_bridge_ort.cc:2359 TryGetProviderInfo_CUDA] "
              "... FAIL : Failed to load library /x/capi/libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: "
              "cannot open shared object file: No such file or directory\x1b[m\n"
              "\x1b[0;93m2026-12-02 15:55:10.9 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:992 "
              "CreateExecutionProviderFactoryInstance] Failed to create CUDAExecutionProvider. Require cuDNN 9.* and "
              "CUDA 12.*. Please install all dependencies\x1b[m\n")
    assert logs.cuda_problem(stderr) == ("failed to create CUDAExecutionProvider (missing libcublasLt.so.12; "
                                           "ORT requires cuDNN 9.* and CUDA 12.*)")
    assert "install onnxruntime-gpu" in logs.cuda_problem(
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.")
    assert logs.cuda_problem("all good") is None


def test_doctor_compares_expected_cuda_and_cudnn_with_found_libraries(tmp_path, monkeypatch):
    from onnxruntime.capi import build_and_package_info as info

    for name in ("libcudart.so.13", "libcudnn.so.8"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    assert str(tmp_path) in doctor._library_dirs(None)
    monkeypatch.setattr(doctor, "_library_dirs", lambda capi: [str(tmp_path)])  # not the machine's own CUDA
    monkeypatch.setattr(info, "cuda_version", "12.8", raising=False)
    lines = [str(c) for c in doctor._cuda_library_checks(None)]
    assert lines[0].startswith("✗") and "built for CUDA 12.8" in lines[0] and "libcudart.so.13" in lines[0]
    assert lines[1].startswith("✗") and "cuDNN 9 expected" in lines[1] and "libcudnn.so.8" in lines[1]
    (tmp_path / "libcudart.so.12").write_bytes(b"")
    (tmp_path / "libcudnn.so.9").write_bytes(b"")
    assert all(c.ok for c in doctor._cuda_library_checks(None))
