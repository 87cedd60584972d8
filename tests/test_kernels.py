"""Kernel tables: the markdown parser against ORT's own live registry."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from onnxlint import kernels

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "data" / "upstream" / "ort"


def test_upstream_cpu_markdown_equals_live_registry():
    """The verbatim CPU excerpt of OperatorKernels.md@001d12d2 is the 1.24 line; compare with onnxruntime 1.24.4."""
    parsed = kernels.parse_operator_kernels_md((UPSTREAM / "OperatorKernels@001d12d2.cpu-excerpt.md").read_text())
    md = parsed["CPUExecutionProvider"]["ops"]["ai.onnx"]
    installed = kernels.installed_ort_version()
    if installed == "1.24.4":
        version, live = kernels.live_registry()
        live_ops = live["CPUExecutionProvider"]["ops"]["ai.onnx"]
    else:  # not the markdown's version: compare with the table generated from 1.24.4's live registry
        live_ops = json.loads((ROOT / "onnxlint/data/kernels/ort-1.24.4-cpu.json").read_text())["ops"]["ai.onnx"]
        print(f"installed onnxruntime {installed} != 1.24.4: compared with the shipped 1.24.4 live-registry table")
    assert len(md) >= 30
    for op, rows in md.items():
        assert rows == live_ops[op], op


def test_shipped_table_of_installed_version_matches_live_registry():
    installed = kernels.installed_ort_version()
    path = ROOT / f"onnxlint/data/kernels/ort-{installed}-cpu.json"
    if not path.exists():
        pytest.skip(f"no shipped table for onnxruntime {installed}")
    _, live = kernels.live_registry()
    assert json.loads(path.read_text())["ops"] == live["CPUExecutionProvider"]["ops"]


def test_cuda_table_is_generated_from_the_verbatim_markdown():
    parsed = kernels.parse_operator_kernels_md((UPSTREAM / "OperatorKernels@001d12d2.cuda.md").read_text())["CUDAExecutionProvider"]
    shipped = json.loads((ROOT / "onnxlint/data/kernels/ort-1.24.4-cuda.json").read_text())
    assert parsed["ops"] == shipped["ops"]
    rows = parsed["ops"]["ai.onnx"]["GridSample"]
    assert [(r[0], r[1]) for r in rows] == [(22, kernels.OPEN_END), (20, 21), (16, 19)]
    assert rows[0][2] == {"T1": ["tensor(float)"], "T2": ["tensor(float)"]}


def test_markdown_round_trip():
    table = json.loads((ROOT / "onnxlint/data/kernels/ort-1.20.1-cpu.json").read_text())
    again = kernels.parse_operator_kernels_md(kernels.to_markdown({"CPUExecutionProvider": table}))
    assert again["CPUExecutionProvider"]["ops"] == table["ops"]


def test_lookup_reasons():
    t = kernels.load("cuda", "1.24.4")
    assert t.lookup("ai.onnx", "Equal", 13, lambda p: {"T": "tensor(string)"}).reason == "dtype"
    assert t.lookup("ai.onnx", "Equal", 13, lambda p: {"T": "tensor(float)"}).ok
    assert t.lookup("ai.onnx", "GridSample", 13, lambda p: {}).reason == "opset"
    assert t.lookup("ai.onnx", "StringSplit", 20, lambda p: {}).reason == "not-registered"


def test_nearest_version_mapping():
    assert kernels.nearest("cpu", "1.20.1") == ("1.20.1", True)
    assert kernels.nearest("cuda", "1.20.1") == ("1.24.4", False)


def test_generator_script_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "tools/gen_kernel_tables.py"), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "OperatorKernels.md" in proc.stdout
