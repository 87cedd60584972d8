"""The verification pass on the CPU provider (works on any machine) and the environment doctor."""

import json

import pytest

from onnxlint import verify

ort = pytest.importorskip("onnxruntime")


def test_verify_cpu_agrees_with_prediction(examples_dir, cli):
    rc, out, _ = cli("verify", examples_dir / "clean_conv.onnx", "--providers", "CPUExecutionProvider", "--format", "json")
    data = json.loads(out)[0]
    assert rc == 0 and "error" not in data
    assert data["providers_used"] == ["CPUExecutionProvider"]
    assert data["nodes_observed"] == 2 and sorted(data["confirmed"]) == ["conv", "relu"]
    assert data["missed"] == [] and data["false_alarms"] == []


def test_profile_and_log_parsing_on_real_ort_output(examples_dir):
    res = verify.run_session(examples_dir / "clean_conv.onnx", ["CPUExecutionProvider"], {})
    assert res["nodes"] == {"conv": "CPUExecutionProvider", "relu": "CPUExecutionProvider"}


def test_verbose_log_parser():
    log = ("2026-01-01 [V:onnxruntime:, session_state.cc:1280 VerifyEachNodeIsAssignedToAnEp] Node placements\n"
           "2026-01-01 [V:onnxruntime:, session_state.cc:1283 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [CUDAExecutionProvider]. Number of nodes: 2\n"
           "2026-01-01 [V:onnxruntime:, session_state.cc:1285 VerifyEachNodeIsAssignedToAnEp]   Conv (conv)\n"
           "2026-01-01 [V:onnxruntime:, session_state.cc:1285 VerifyEachNodeIsAssignedToAnEp]   Relu (relu)\n"
           "2026-01-01 [V:onnxruntime:, session_state.cc:1283 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [CPUExecutionProvider]. Number of nodes: 1\n"
           "2026-01-01 [V:onnxruntime:, session_state.cc:1285 VerifyEachNodeIsAssignedToAnEp]   Equal (eq)\n")
    assert verify.parse_verbose_log(log) == {"conv": "CUDAExecutionProvider", "relu": "CUDAExecutionProvider", "eq": "CPUExecutionProvider"}


def test_compare_table():
    r = verify.compare({"a": "cpu", "b": "gpu", "c": "cpu", "d": "gpu"}, {"a": "cpu", "b": "cpu", "c": "gpu", "d": "gpu"})
    assert r == {"confirmed": ["a"], "missed": ["b"], "false_alarms": ["c"], "agree_on_device": 1}


def test_doctor_never_crashes(cli):
    rc, out, _ = cli("doctor")
    assert rc == 0 and "available providers" in out and "CUDA EP library" in out
