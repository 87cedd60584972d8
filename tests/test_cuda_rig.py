"""End to end against onnxruntime-gpu's real CUDA execution provider on the fake CUDA libraries of
tests/cuda_rig (session creation and placement are ORT's own; a Run computes nothing). Skipped unless the rig
is built: `python tests/cuda_rig/build.py` (or ONNXLINT_CUDA_RIG=DIR for one built elsewhere)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import onnx
import pytest
from conftest import CORPUS, ROOT, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

RIG = Path(os.environ.get("ONNXLINT_CUDA_RIG") or ROOT / ".cuda-rig")
pytestmark = [pytest.mark.once,
              pytest.mark.skipif(not (RIG / "ready").exists(), reason="CUDA rig not built (python tests/cuda_rig/build.py)")]
CPU, CUDA = "CPUExecutionProvider", "CUDAExecutionProvider"


def rig(*args: object, libs: bool = True, venv: str = "venv", env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """onnxlint ARGS in the rig's environment (with the fake CUDA libraries on the library path, or without)."""
    e = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    if libs:
        e["LD_LIBRARY_PATH"] = str(RIG / "libs")
    e.update(env or {})
    proc = subprocess.run([str(RIG / venv / "bin" / "python"), "-m", "onnxlint", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def verify_json(*args: object, **kw: object) -> tuple[int, list[dict]]:
    rc, out, _ = rig("verify", *args, "--format", "json", **kw)  # type: ignore[arg-type]
    return rc, json.loads(out)


@pytest.fixture
def relu_add(tmp_path):
    m = make_model([h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Add", ["r", "x"], ["y"], name="add")],
                   [vi("x", T.FLOAT, [2, 8])], [vi("y", T.FLOAT, [2, 8])])
    onnx.save(m, tmp_path / "relu_add.onnx")
    return tmp_path / "relu_add.onnx"


def test_a_model_fully_on_cuda(relu_add):
    rc, [r] = verify_json(relu_add)
    assert rc == 0 and r["verified"] and r["providers_used"] == [CUDA, CPU]
    assert r["nodes_observed"] == 2 and r["on_cpu"] == 0 and r["agree_on_device"] == 2
    assert r["missed"] == r["false_alarms"] == r["confirmed"] == [] and "run_error" not in r


def test_real_fallbacks_are_confirmed(tmp_path):
    m = make_model([h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Unique", ["r"], ["u"], name="uniq"),
                    h.make_node("Equal", ["s", "s"], ["e"], name="streq")],
                   [vi("x", T.FLOAT, [8]), vi("s", T.STRING, [3])], [vi("u", T.FLOAT, None), vi("e", T.BOOL, [3])], opset=19)
    onnx.save(m, tmp_path / "fb.onnx")
    rc, [r] = verify_json(tmp_path / "fb.onnx")
    assert rc == 0 and sorted(r["confirmed"]) == ["graph/streq", "graph/uniq"] and r["ran_on"]["graph/relu"] == CUDA
    assert r["missed"] == [] and r["false_alarms"] == []


def test_a_model_ort_refuses_is_a_failed_session(examples_dir):
    rc, [r] = verify_json(examples_dir / "custom_op.onnx")
    assert rc == 1 and "FancyNorm" in r["error"] and not r["verified"]


def test_unnamed_and_same_named_nodes_are_all_matched(tmp_path):
    then = h.make_graph([h.make_node("Unique", ["x"], ["t"], name="same")], "then", [], [vi("t", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Relu", ["x"], ["e"], name="same")], "else", [], [vi("e", T.FLOAT, None)])
    m = make_model([h.make_node("Relu", ["x0"], ["x"]), h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other),
                    h.make_node("Unique", ["y"], ["z"])], [vi("x0", T.FLOAT, [4]), vi("c", T.BOOL, [])], [vi("z", T.FLOAT, None)])
    onnx.save(m, tmp_path / "if.onnx")
    rc, [r] = verify_json(tmp_path / "if.onnx")
    assert rc == 0 and r["ran_on"] == {"graph/Relu#0": CUDA, "graph/if": CUDA, "graph/Unique#2": CPU,
                                       "graph/if:then_branch/same": CPU, "graph/if:else_branch/same": CUDA}
    assert sorted(r["confirmed"]) == ["graph/Unique#2", "graph/if:then_branch/same"] and r["missed"] == r["false_alarms"] == []
    assert list(tmp_path.iterdir()) == [tmp_path / "if.onnx"]  # the renamed copy is gone


def test_a_run_failure_is_reported_and_orts_fallback_does_not_replace_the_placement(relu_add):
    rc, out, _ = rig("verify", relu_add, "--format", "json", env={"CUDA_RIG_FAIL_RUN": "1"})
    [r] = json.loads(out)
    assert "run failed" in r["run_error"] and "Falling back" not in out
    assert r["providers_used"] == [CUDA, CPU] and r["agree_on_device"] == 2 and r["on_cpu"] == 0 and r["missed"] == []
    assert rc == 0


def test_missing_cuda_libraries_fail_and_name_every_one(relu_add, tmp_path):
    rc, [r] = verify_json(relu_add, libs=False)
    assert rc == 1 and not r["verified"] and r["ran_on"] == {}
    for lib in ("libcudart.so.12", "libcublasLt.so.12", "libcudnn.so.9"):
        assert lib in r["cuda_unavailable"]
    # the fix installs the CUDA and cuDNN wheels of this build (onnxruntime-gpu's own extras, found by preload_dlls)
    assert "fix: pip install 'onnxruntime-gpu[cuda,cudnn]==1.24.4'" in r["cuda_unavailable"]
    # lint --verify: the static prediction stands (its exit status), and one run-wide note says verify did not run
    rc, out, err = rig(relu_add, "--verify", "--target", "ort-cuda", "--format", "json", libs=False)
    assert rc == 0 and "OLX903" not in out and "verified_provider" not in out, out
    assert err.count("--verify did not run: CUDAExecutionProvider was requested but not exercised") == 1, err
    assert "libcudnn.so.9" in err


def test_cuda_libraries_installed_from_pypi_are_found(relu_add, tmp_path):
    """What the fix above installs lands in site-packages/nvidia/*/lib, where the loader does not look: a verify
    session (and doctor's) loads them first, as ORT's preload_dlls() does. The layout of the NVIDIA wheels is
    made beside a link to the rig's onnxruntime (preload_dlls looks next to the package), with the fake
    libraries in it, and only the driver (libcuda.so.1, the system's) on the library path."""
    site, driver = tmp_path / "site", tmp_path / "driver"
    driver.mkdir()
    (driver / "libcuda.so.1").symlink_to(RIG / "libs" / "libcuda.so.1")
    ort = next((RIG / "venv" / "lib").glob("python3*/site-packages/onnxruntime"))
    site.mkdir()
    (site / "onnxruntime").symlink_to(ort, target_is_directory=True)
    for wheel, libs in (("cublas", ("libcublas.so.12", "libcublasLt.so.12")), ("cuda_runtime", ("libcudart.so.12",)),
                        ("cufft", ("libcufft.so.11",)), ("curand", ("libcurand.so.10",)), ("cudnn", ("libcudnn.so.9",))):
        (site / "nvidia" / wheel / "lib").mkdir(parents=True)
        for lib in libs:
            (site / "nvidia" / wheel / "lib" / lib).symlink_to(RIG / "libs" / lib)
    env = {"PYTHONPATH": str(site), "LD_LIBRARY_PATH": str(driver)}
    rc, [r] = verify_json(relu_add, libs=False, env=env)
    assert rc == 0 and r["verified"] and r["providers_used"] == [CUDA, CPU] and r["agree_on_device"] == 2, r
    rc, out, _ = rig("doctor", libs=False, env=env)
    assert rc == 0 and "✓ a one-node session runs on CUDAExecutionProvider" in out, out


def test_both_wheels_installed_fail_with_uninstall_one(relu_add):
    rc, [r] = verify_json(relu_add, venv="both")
    assert rc == 1 and "both onnxruntime 1.24.4 and onnxruntime-gpu 1.24.4" in r["cuda_unavailable"]
    assert "uninstall one" in r["cuda_unavailable"]


def test_doctor_healthy_and_broken():
    rc, out, _ = rig("doctor")
    assert rc == 0 and "✓ a one-node session runs on CUDAExecutionProvider" in out and "✗" not in out
    rc, out, _ = rig("doctor", "--format", "json", libs=False)
    doc = json.loads(out)
    bad = [c for c in doc["checks"] if not c["ok"]]
    assert rc == 1 and not doc["ok"] and all(c["fix"] and "\n" not in c["text"] for c in bad)
    assert any("missing libcublas.so.12" in c["text"] for c in bad)
    rc, out, _ = rig("doctor", venv="both")
    assert rc == 1 and "uninstall one" in out


MODELS = sorted((ROOT / "examples").glob("*.onnx")) + sorted(CORPUS.glob("*.onnx") if CORPUS.exists() else [])


def test_verify_agrees_with_orts_placement_log_on_the_examples_and_corpus():
    """Every model whose session ORT builds: 0 missed, 0 false alarms against ORT's own log."""
    rc, results = verify_json(*MODELS)
    built = [r for r in results if "error" not in r]
    assert len(built) >= 8 and all(r["verified"] for r in built)
    assert [(r["filename"], r["missed"], r["false_alarms"]) for r in built if r["missed"] or r["false_alarms"]] == []


def test_a_crash_after_session_creation_keeps_the_cuda_placement(tmp_path):
    m = make_model([h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Unique", ["r"], ["u"], name="uniq")],
                   [vi("x", T.FLOAT, [8])], [vi("u", T.FLOAT, None)])
    onnx.save(m, tmp_path / "m.onnx")
    rc, out, _ = rig("verify", tmp_path / "m.onnx", "--format", "json", env={"ONNXLINT_TEST_CRASH_AFTER_SESSION": "SIGSEGV"})
    [r] = json.loads(out)
    assert "crashed during the run (SIGSEGV)" in r["run_error"] and r["ran_on"] == {"graph/relu": CUDA, "graph/uniq": CPU}
    assert r["confirmed"] == ["graph/uniq"] and rc == 0
