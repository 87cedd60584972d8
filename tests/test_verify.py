"""The verification pass on the CPU provider (works on any machine) and the environment doctor."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.commands import doctor
from onnxlint.verify import compare, cuda_status, logs, naming, session

ort = pytest.importorskip("onnxruntime")


def test_verify_cpu_agrees_with_prediction(examples_dir, cli):
    rc, out, _ = cli("verify", examples_dir / "clean_conv.onnx", "--providers", "CPUExecutionProvider", "--format", "json")
    data = json.loads(out)[0]
    assert rc == 0 and "error" not in data
    assert data["providers_used"] == ["CPUExecutionProvider"]
    assert data["nodes_observed"] == 2 and sorted(data["confirmed"]) == ["graph/conv", "graph/relu"]
    assert data["missed"] == [] and data["false_alarms"] == []


def test_profile_and_log_parsing_on_real_ort_output(examples_dir):
    res = session.run_session(examples_dir / "clean_conv.onnx", ["CPUExecutionProvider"], {}, level="disabled")
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
    assert "available providers" in out and "one-node" in out and "Traceback" not in out
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


def test_verify_fix_text_says_a_node_the_fix_removed_is_no_longer_in_the_session(tmp_path, cli):
    """The training-mode Dropout on the CPU provider: the fix makes it an Identity, which ORT removes. It left the
    CPU by leaving the session, not "back on the device" (the text said so, with no device in the session)."""
    nodes = [h.make_node("Dropout", ["x", "ratio", "t"], ["d"], name="drop"), h.make_node("Relu", ["d"], ["y"], name="relu")]
    p = tmp_path / "d.onnx"
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])],
                         [init("ratio", np.array(0.5, np.float32)), init("t", np.array(True))]), p)
    rc, out, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix")
    (line,) = [ln for ln in out.splitlines() if "CPU nodes" in ln]
    assert rc == 0 and line.endswith("CPU nodes 2 -> 1; no longer in the session: graph/drop"), out


def test_verify_fix_writes_only_the_version_whose_fix_a_session_ran(examples_dir, tmp_path, monkeypatch, cli):
    """verify --fix runs the fixed copy, then fixes the model in place with a second read: a model edited
    between the two (here while the session ran the copy) was written fixed, its fix never verified."""
    from onnxlint.verify import command

    p = tmp_path / "eq.onnx"
    p.write_bytes((examples_dir / "equal_mismatch.onnx").read_bytes())
    edited = (examples_dir / "dropout_training.onnx").read_bytes()  # another fixable model (OLX010)
    real = command.verify_file

    def verify_file(path, *args, **kwargs):
        got = real(path, *args, **kwargs)
        if Path(path) != p:  # the session on the fixed copy: the user saves meanwhile
            p.write_bytes(edited)
        return got

    monkeypatch.setattr(command, "verify_file", verify_file)
    rc, out, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "--format", "json")
    r = json.loads(out)[0]
    assert p.read_bytes() == edited, "a version no session ran was written fixed"
    assert any("changed since its fix was verified" in n for n in r["fix"]), r["fix"]
    assert r["after"] == r["before"]  # nothing written: no "after fix" of a copy the model no longer is
    assert not list(tmp_path.glob(".onnxlint-*"))


def test_verify_fix_rewrites_and_checks_the_model_once(examples_dir, tmp_path, monkeypatch, cli):
    """verify --fix fixes the model into a copy a session runs, then in place: the second fix of the same version
    made the rewrite (a child) and the numeric check (ORT on both models) again; it writes the first's now."""
    from onnxlint import fixers

    calls = {"apply_in_child": 0, "verify": 0}
    for name in calls:
        real = getattr(fixers, name)

        def counted(*a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(*a, **k)

        monkeypatch.setattr(fixers, name, counted)
    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, out, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "--format", "json")
    r = json.loads(out)[0]
    assert r["fix"][0].startswith("numeric check: an intended change (dropout-inference") and len(r["fix"]) == 2
    assert r["fix"][1] == f"1 fixed, 0 remaining (0 need --unsafe-fixes); wrote {p} (dropout-inference)"
    assert r["after"]["verified"] and rc == 0 and calls == {"apply_in_child": 1, "verify": 1}, calls
    assert not list(tmp_path.glob(".onnxlint-*"))


def test_verify_fix_o_never_verifies_a_file_it_did_not_write(examples_dir, tmp_path, cli):
    """`verify --fix -o out.onnx` with nothing to fix ran the session on whatever an earlier run had left at
    out.onnx and reported it as the model after the fix ("CPU nodes 2 -> 1"), with "written to out.onnx" when
    nothing was written. The model stands as verified before now."""
    p = tmp_path / "c.onnx"
    p.write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    out = tmp_path / "out.onnx"
    out.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())  # an earlier run's, another model
    stale = out.read_bytes()
    rc, text, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "-o", out, "--format", "json")
    r = json.loads(text)[0]
    assert r["fix"] == ["nothing to fix"] and r["after"] == r["before"], r
    assert out.read_bytes() == stale and rc == 0


def test_verify_fix_o_takes_no_note_of_the_models_for_a_written_fix(examples_dir, tmp_path, cli):
    """Whether the fix was written was read from the notes' text ("; wrote "), which quotes ORT's refusal and so
    the model's node names: a node named "eq; wrote it" made a fix not written pass for one, and the file an
    earlier run left at out.onnx was verified as the model after the fix (exit 0 for a model ORT refuses)."""
    nodes = [h.make_node("Dropout", ["x"], ["d"], name="drop", is_test=0),  # fixable (OLX010)
             h.make_node("Equal", ["d", "x"], ["y"], name="eq; wrote it")]  # Equal-1 takes no float: ORT refuses
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [4])],
                                  [h.make_tensor_value_info("y", T.BOOL, [4])]),
                     opset_imports=[h.make_opsetid("", 6)])
    m.ir_version = 3
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString())
    out = tmp_path / "out.onnx"
    out.write_bytes((examples_dir / "clean_conv.onnx").read_bytes())  # an earlier run's, another model
    rc, text, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "-o", out, "--format", "json")
    r = json.loads(text)[0]
    assert any(n.startswith("fix not written") for n in r["fix"]) and r["after"] == r["before"], r
    assert rc == 1


@pytest.mark.parametrize("exists", [True, False])
def test_verify_fix_o_folder_writes_the_fixed_model_in_it(examples_dir, tmp_path, cli, exists):
    """`verify --fix -o out/` (the folder -o takes as the lint's --fix does, made when missing) wrote nothing: the
    folder joined with the model's name stayed a folder path, "fix not written to out/d.onnx/d.onnx"."""
    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    if exists:
        (tmp_path / "out").mkdir()
    rc, text, _ = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "-o", f"{tmp_path / 'out'}/",
                      "--format", "json")
    r = json.loads(text)[0]
    assert any(n.endswith(f"wrote {tmp_path / 'out' / 'd.onnx'} (dropout-inference)") for n in r["fix"]), r["fix"]
    assert r["after"]["verified"] and rc == 0
    assert [f.name for f in (tmp_path / "out").iterdir()] == ["d.onnx"]


@pytest.mark.parametrize("named", ["itself", "a link to it", "a hard link of it", "its folder"])
def test_verify_fix_o_naming_the_model_itself_writes_only_what_a_session_verified(examples_dir, tmp_path, monkeypatch,
                                                                                  cli, named):
    """`verify --fix -o m.onnx m.onnx` is the model fixed in place, which verify --fix writes only once a session
    ran the fix: it was written whatever the session said (-o's rule for another file), the model replaced by a
    fix no session ran. The same through a link to it, another hard link of it, or -o its own folder."""
    import os

    from onnxlint.verify import command

    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    before = p.read_bytes()
    dest = {"itself": p, "a link to it": tmp_path / "link.onnx", "a hard link of it": tmp_path / "hard.onnx",
            "its folder": tmp_path}[named]
    if named == "a link to it":
        os.symlink("d.onnx", dest)
    elif named == "a hard link of it":
        os.link(p, dest)
    out = f"{dest}{os.sep}" if named == "its folder" else dest
    monkeypatch.setattr(command, "_verified", lambda result: False)  # as where the CUDA EP asked for cannot run
    rc, text, err = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "-o", out, "--format", "json")
    r = json.loads(text)[0]
    assert p.read_bytes() == before and Path(dest if named != "its folder" else p).read_bytes() == before, r["fix"]
    assert any(n.startswith("fix not written: no session could verify the fixed model") for n in r["fix"]), r["fix"]
    monkeypatch.undo()  # verified: written, under the name -o gives
    rc, text, err = cli("verify", p, "--providers", "CPUExecutionProvider", "--fix", "-o", out, "--format", "json")
    r = json.loads(text)[0]
    written = p if named == "its folder" else dest
    assert r["after"]["verified"] and rc == 0 and Path(written).read_bytes() != before, r["fix"]
    assert not any(n.startswith("written to") for n in r["fix"]), r["fix"]


def test_lint_verify_marks_findings_with_the_provider_they_ran_on(examples_dir, tmp_path, lint_json, cli):
    p = tmp_path / "d.onnx"
    p.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, findings = lint_json(p, "--verify", "--providers", "CPUExecutionProvider", "--target", "ort-cpu")
    drop = next(f for f in findings if f["code"] == "OLX010")
    assert drop["verified_provider"] == "CPUExecutionProvider"
    rc, out, _ = cli(p, "--verify", "--providers", "CPUExecutionProvider", "--target", "ort-cpu")
    assert "verify (CPUExecutionProvider, optimization all): 1 node in the session, 1 on CPU; 1 agree" in out


def test_lint_verify_runs_no_session_on_a_git_lfs_pointer(examples_dir, tmp_path, cli, monkeypatch):
    """A pointer is OLX009 (the model never looked at): --verify gave it an OLX903 too, which `--ignore OLX009`
    (pointers expected) did not silence, and --update-baseline recorded."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    (tmp_path / "big.onnx").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "4" * 64 +
                                       "\nsize 94316544\n")
    cpu = ("--providers", "CPUExecutionProvider", "--target", "ort-cpu")
    rc, out, _ = cli("d.onnx", "big.onnx", "--verify", *cpu)
    assert rc == 1 and "big.onnx: error: OLX009" in out and "OLX903" not in out and "d.onnx: note: verify (" in out
    rc, out, _ = cli("d.onnx", "big.onnx", "--verify", *cpu, "--ignore", "OLX009")
    assert rc == 0 and "big.onnx" not in out, out
    rc, _, _ = cli("d.onnx", "big.onnx", "--verify", *cpu, "--baseline", "b.json", "--update-baseline")
    assert rc == 0 and json.loads((tmp_path / "b.json").read_text())["fingerprints"] == []


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


def test_a_session_lint_verify_cannot_create_is_said_once_naming_the_model(tmp_path, cli, monkeypatch):
    """`onnxlint m.onnx --verify` on a model ORT refuses: one OLX903 line (it was followed by a note of the same
    words), naming the model where ORT named the renamed copy it loaded from a temporary folder."""
    import onnx

    m = make_model([h.make_node("Foo", ["x"], ["y"], domain="my.dom")], [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])])
    m.opset_import.append(h.make_opsetid("my.dom", 1))
    onnx.save(m, tmp_path / "custom.onnx")  # an unnamed node: the session loads a renamed copy
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli("custom.onnx", "--verify", "--providers", "CPUExecutionProvider", "--target", "ort-cpu")
    said = [line for line in out.splitlines() if "not a registered function/op" in line]
    assert rc == 1 and len(said) == 1 and "error: OLX903" in said[0], out + err
    assert "Load model from custom.onnx failed" in said[0] and "onnxlint-verify" not in out + err


def test_missed_and_false_alarm_findings_name_node_and_provider():
    from onnxlint.linting.report import FileReport, Finding
    from onnxlint.rulefiles.ruleset import get_ruleset

    entry = compare.VerifyResult("m.onnx", "ort-cuda", ["CUDAExecutionProvider", "CPUExecutionProvider"])
    compare.record(entry, compare.NodeCheck("graph/a", "Gather", "CUDAExecutionProvider", "CPUExecutionProvider"))
    compare.record(entry, compare.NodeCheck("graph/b", "Equal", "CPUExecutionProvider", "CUDAExecutionProvider"))
    res = FileReport("m.onnx")
    res.findings.append(Finding("OLX200", "cuda-kernel-missing", "warning", "ort-cuda", "m.onnx", "b", "Equal", "x"))
    compare.attach(res, entry, get_ruleset(()))
    by_code = {f.code: f for f in res.findings}
    assert by_code["OLX901"].message == "Gather ran on CPUExecutionProvider, but onnxlint predicted CUDAExecutionProvider"
    assert by_code["OLX902"].message == "Equal was predicted on CPU but ran on CUDAExecutionProvider"
    assert by_code["OLX200"].verified == "CUDAExecutionProvider"


@pytest.mark.skipif("CUDAExecutionProvider" in ort.get_available_providers(), reason="machine has a CUDA EP")
def test_cuda_requested_and_not_exercised_fails_with_why_and_claims_nothing(examples_dir, tmp_path, cli, lint_json):
    rc, out, _ = cli("verify", examples_dir / "clean_conv.onnx", "--format", "json")  # default: CUDA, CPU
    r = json.loads(out)[0]
    assert rc == 1 and r["verified"] is False
    assert "no CUDA EP" in r["cuda_unavailable"] and "pip " in r["cuda_unavailable"]
    assert r["confirmed"] == [] and r["ran_on"] == {}  # nothing compared against a session that is not CUDA's
    p = tmp_path / "e.onnx"
    p.write_bytes((examples_dir / "equal_string_cuda.onnx").read_bytes())
    rc, out, err = cli(p, "--verify", "--target", "ort-cuda", "--format", "json")
    findings = json.loads(out)
    # the environment's, not the model's: one note for the run on stderr, no OLX903 per model; the lint's exit code
    assert rc == 1 and "OLX903" not in {f["code"] for f in findings} and {f["code"] for f in findings} == {"OLX200"}
    assert err.count("--verify did not run: CUDAExecutionProvider was requested but not exercised") == 1, err
    assert all("verified_provider" not in f for f in findings)  # no provider claimed that was not verified


@pytest.mark.skipif("CUDAExecutionProvider" in ort.get_available_providers(), reason="machine has a CUDA EP")
def test_verify_tries_no_other_model_once_the_cuda_ep_cannot_run_here(examples_dir, tmp_path, cli, monkeypatch):
    """`onnxlint verify models/` without a CUDA EP started a session child for every model and printed the same
    long "not verified" line for each: the environment's, found on the first model. The others say so, untried."""
    from onnxlint.verify import command

    for i in range(3):
        (tmp_path / f"m{i}.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    tried = []
    real = command.verify_file
    monkeypatch.setattr(command, "verify_file", lambda path, *a, **k: tried.append(path) or real(path, *a, **k))
    rc, out, _ = cli("verify", tmp_path, "--format", "json")
    results = json.loads(out)
    assert rc == 1 and len(tried) == 1 and [r["verified"] for r in results] == [False] * 3
    first = str(tried[0])
    assert "no CUDA EP" in next(r for r in results if r["filename"] == first)["cuda_unavailable"]
    assert all(r["cuda_unavailable"] == f"not tried: as for {first}" for r in results if r["filename"] != first)


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
    why, fix = cuda_status.cuda_ep_failed(stderr, None)
    assert why == "the CUDA EP library cannot load: missing libcublasLt.so.12 (ORT requires cuDNN 9.* and CUDA 12.*)"
    assert ("nvidia-cublas-cu12" in fix or "'onnxruntime-gpu[cuda,cudnn]==" in fix) and "LD_LIBRARY_PATH" in fix
    # the install command for the build installed, each wheel pip-installable today (pip index versions,
    # 2026-12-05): onnxruntime-gpu's own extras from 1.21.0 (CUDA 13's wheels have no -cu13 suffix, and
    # `nvidia-cublas-cu13` is a placeholder that refuses to install), before that the -cu<major> wheels
    fix = cuda_status.install_cuda_libraries(["libcublasLt.so.13", "libcudnn.so.9"], "1.31.1", None)
    assert fix.startswith("pip install 'onnxruntime-gpu[cuda,cudnn]==1.31.1' ") and "-cu13" not in fix
    fix = cuda_status.install_cuda_libraries(["libcublasLt.so.12", "libcudnn.so.9"], "1.20.2", None)
    assert fix.startswith("pip install 'nvidia-cublas-cu12' 'nvidia-cudnn-cu12==9.*', then add their lib folders")
    fix = cuda_status.install_cuda_libraries(["libcudart.so.11", "libcudnn.so.8", "libcufft.so.10"], "1.17.1", None)
    assert fix.startswith("pip install 'nvidia-cuda-runtime-cu11' 'nvidia-cudnn-cu11==8.*' 'nvidia-cufft-cu11', ")
    why, fix = cuda_status.no_cuda_ep(["CPUExecutionProvider"], {"onnxruntime": "1.24.4"})
    assert "no CUDA EP" in why and fix == "pip uninstall -y onnxruntime && pip install onnxruntime-gpu"
    why, fix = cuda_status.no_cuda_ep(["CPUExecutionProvider"], {"onnxruntime": "1.24.4", "onnxruntime-gpu": "1.24.4"})
    assert "both onnxruntime 1.24.4 and onnxruntime-gpu 1.24.4" in why and fix.startswith("uninstall one:")
    why, _ = cuda_status.cuda_ep_failed("[E:onnxruntime:Default, x.cc:1 F] CUDA failure 100: no CUDA-capable device", None)
    assert why == "failed to create the CUDA EP: CUDA failure 100: no CUDA-capable device"


def test_doctor_without_onnxruntime_is_one_line_with_the_fix(monkeypatch):
    monkeypatch.setattr(cuda_status, "installed_wheels", lambda: {})
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    lines = doctor.checks()
    assert [str(c) for c in lines] == [
        "✗ onnxruntime is not installed — fix: pip install onnxruntime-gpu (from PyPI)",
        "✗ no NVIDIA driver tools: nvidia-smi not found — fix: run on a machine with an NVIDIA GPU and its driver"]


def test_doctor_bounds_a_hanging_nvidia_smi(tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nexec sleep 30\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{__import__('os').environ['PATH']}")
    check = doctor._gpu_check(False, timeout=0.5)
    assert check is not None and not check.ok and "did not answer within 0.5 s" in check.text and check.fix


def test_doctor_reports_an_onnxruntime_that_does_not_import(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "onnxruntime").mkdir()
    (tmp_path / "onnxruntime" / "__init__.py").write_text("raise ImportError('libonnxruntime.so.1: cannot open shared object file')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "onnxlint", "doctor", "--format", "json"], capture_output=True, text=True,
                          env=env, timeout=120)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    bad = [c for c in doc["checks"] if not c["ok"]]
    assert any("does not import" in c["text"] and "cannot open shared object" in c["text"] and c["fix"] for c in bad)


def test_verify_without_onnxruntime_is_a_usage_error(monkeypatch, examples_dir, cli):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    rc, out, err = cli("verify", examples_dir / "clean_conv.onnx")
    assert rc == 2 and "needs onnxruntime" in err and "pip install" in err and "Traceback" not in err


@pytest.mark.parametrize("bad", ["x=0x8", "x=1x-3", "x=", "=1x2", "x=axb"])
def test_shape_must_be_positive_integers(bad, examples_dir, cli):
    rc, _, err = cli("verify", examples_dir / "clean_conv.onnx", "--shape", bad)
    assert rc == 2 and "positive integers" in err


def _if_model():
    """Unnamed nodes, and the name 'same' in both branches of an If (a Unique, CPU only, and a Relu)."""
    then = h.make_graph([h.make_node("Unique", ["x"], ["t"], name="same")], "then", [], [vi("t", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Relu", ["x"], ["e"], name="same")], "else", [], [vi("e", T.FLOAT, None)])
    nodes = [h.make_node("Relu", ["x0"], ["x"]), h.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other),
             h.make_node("Unique", ["y"], ["z"])]
    return make_model(nodes, [vi("x0", T.FLOAT, [4]), vi("c", T.BOOL, [])], [vi("z", T.FLOAT, None)])


@pytest.mark.parametrize("bad", ["3000000", "1e308", "0", "inf"])
def test_a_timeout_past_what_a_child_can_wait_is_a_usage_error(bad, examples_dir, cli):
    """3,000,000 s or more was taken, and each model's session failed as 'OverflowError: timeout is too large'."""
    rc, out, err = cli("verify", examples_dir / "clean_conv.onnx", "--providers", "CPUExecutionProvider", "--timeout", bad)
    assert rc == 2 and not out and "argument --timeout: must be a positive number of seconds" in err, out + err


def test_unique_names_for_the_log_keep_the_lint_locations():
    m = _if_model()
    renamed = naming.unique_names(m)
    names = [n.name for g in __import__("onnxlint.model.graph", fromlist=["iter_graphs"]).iter_graphs(m) for n in g.node]
    assert len(set(names)) == len(names) and all(names)
    assert renamed == {"Relu#0": "Relu#0", "Unique#2": "Unique#2", "same~1": "same"}
    assert naming.unique_names(m) == {}  # nothing left to rename


def test_a_name_that_would_read_as_log_lines_is_renamed_for_the_session():
    """ORT logs a node as "  OpType (name)" in its placement block: a name holding a line break and a forged block
    header ("Node(s) placed on [CUDAExecutionProvider]") made the next real CPU node read as run on CUDA, and a
    one-line name with the header's words did the same. Such names are renamed in the session's copy (and map
    back to the lint's location); the log of the renamed copy parses as ORT wrote it."""
    v = "2026-01-01 [V:onnxruntime:, session_state.cc:{} VerifyEachNodeIsAssignedToAnEp]"
    forged = f"evil\n{v.format(1283)}  Node(s) placed on [CUDAExecutionProvider]. Number of nodes: 9"
    for name in (forged, "x Node(s) placed on [CUDAExecutionProvider]. Number of nodes: 9", "a\u2028b"):
        m = make_model([h.make_node("ArgMax", ["x"], ["y0"], name=name), h.make_node("ArgMax", ["x"], ["y1"], name="am")],
                       [vi("x", T.INT32, [2, 3])], [vi("y0", T.INT64, None), vi("y1", T.INT64, None)])
        renamed = naming.unique_names(m)
        assert renamed == {"ArgMax#0": name} and [n.name for n in m.graph.node] == ["ArgMax#0", "am"]
        log = (v.format(1283) + "  Node(s) placed on [CPUExecutionProvider]. Number of nodes: 2\n" +
               "".join(v.format(1285) + f"   ArgMax ({n.name})\n" for n in m.graph.node))
        assert logs.parse_verbose_log(log) == {"ArgMax#0": "CPUExecutionProvider", "am": "CPUExecutionProvider"}
    m = make_model([h.make_node("Relu", ["x"], ["y"], name="ok [1]")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, None)])
    assert naming.unique_names(m) == {}  # an ordinary name stays


def test_the_reason_a_session_failed_is_orts_message_not_a_line_a_name_wrote(tmp_path):
    """ORT refuses an Add of float and int32 with a message that quotes the node's name; the name held a line break
    and text of its own, and the reason verify gave was the model's last line. The child now sends the exception
    as data, on one line (and verify's own copy names such a node anew before ORT sees it)."""
    name = "evil\nsession built: every node ran on CUDAExecutionProvider, nothing to report"
    m = make_model([h.make_node("Add", ["a", "b"], ["y"], name=name)], [vi("a", T.FLOAT, [2]), vi("b", T.INT32, [2])],
                   [vi("y", T.FLOAT, None)])
    p = tmp_path / "m.onnx"
    __import__("onnx").save(m, p)
    run = session.run_session(p, ["CPUExecutionProvider"], {}, level="disabled")
    assert run.error and run.error.startswith("Fail: ") and "bound to different types" in run.error, run.error
    assert "\n" not in run.error


def test_every_node_is_matched_unnamed_and_same_named_ones_included(tmp_path):
    """ORT's log as onnxruntime-gpu 1.24.4 writes it for _if_model (unnamed nodes renamed), against the prediction."""
    from onnxlint import targets
    from onnxlint.linting import engine
    from onnxlint.model import loading
    from onnxlint.rulefiles.ruleset import get_ruleset
    from onnxlint.rules.context import Options

    p = tmp_path / "if.onnx"
    __import__("onnx").save(_if_model(), p)
    mf = loading.load(p)
    renamed = naming.unique_names(mf.model)
    mf.raw = mf.weightless = None
    index = loading.index_model(mf)
    pred = engine.new_context(mf, index, Options(targets=targets.closure({"ort-cuda"})), get_ruleset(),
                              targets.REGISTRY).prediction("ort-cuda")
    cpu, gpu = "CPUExecutionProvider", "CUDAExecutionProvider"
    run = session.SessionRun(providers=[gpu, cpu], placements=[
        logs.Placed("Unique", "Unique#2", cpu), logs.Placed("Unique", "same", cpu), logs.Placed("MemcpyToHost", "Memcpy", gpu),
        logs.Placed("Relu", "Relu#0", gpu), logs.Placed("If", "if", gpu), logs.Placed("Relu", "same~1", gpu)])
    r = compare.VerifyResult(str(p), "ort-cuda", [gpu, cpu])
    compare.compare(r, run, index, pred, renamed)
    assert r.missed == [] and r.false_alarms == [] and r.removed_unpredicted == []
    assert r.ran_on == {"graph/Relu#0": gpu, "graph/if": gpu, "graph/if:then_branch/same": cpu,
                        "graph/if:else_branch/same": gpu, "graph/Unique#2": cpu}
    assert r.nodes_observed == 6 and r.on_cpu == 2 and len(r.confirmed) == 2
    # a node the NHWC layout transformer rewrites in place logs as `<name>_token_<n>` with its own op type
    run.placements[0] = logs.Placed("Unique", "Unique#2_token_7", cpu)
    again = compare.VerifyResult(str(p), "ort-cuda", [gpu, cpu])
    compare.compare(again, run, index, pred, renamed)
    assert again.ran_on == r.ran_on and again.ort_created == {} and again.removed_unpredicted == []
    run.placements[0] = logs.Placed("Transpose", "Unique#2_token_7", cpu)  # another op: a node ORT made
    again = compare.VerifyResult(str(p), "ort-cuda", [gpu, cpu])
    compare.compare(again, run, index, pred, renamed)
    assert again.ort_created == {cpu: 1} and [c.location for c in again.removed_unpredicted] == ["graph/Unique#2"]


def test_removed_nodes_are_their_own_outcome_never_predicted_cpu():
    cpu, gpu = "CPUExecutionProvider", "CUDAExecutionProvider"
    r = compare.VerifyResult("m.onnx", "ort-cuda", [gpu, cpu])
    compare.record(r, compare.NodeCheck("a", "Shape", compare.REMOVED, gpu))
    compare.record(r, compare.NodeCheck("b", "Shape", compare.REMOVED, cpu))
    assert [c.location for c in r.kept_unpredicted] == ["a"] and [c.location for c in r.missed] == ["b"]
    assert r.false_alarms == [] and r.confirmed == []


def test_placement_log_parser_reads_only_the_placement_block():
    """A real ORT 1.24.4 log: the block among other lines, ANSI-coloured warnings, an unnamed node, Memcpy."""
    log = ("2026-12-04 19:30:33.2 [I:onnxruntime:, transformer_memcpy.cc:393 AddCopyNode] Add MemcpyToHost before y\n"
           "\x1b[0;93m2026-12-04 19:30:33.2 [W:onnxruntime:, transformer_memcpy.cc:111 ApplyImpl] 1 Memcpy nodes\x1b[m\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:1307 VerifyEachNodeIsAssignedToAnEp] Node placements\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:1313 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on "
           "[CPUExecutionProvider]. Number of nodes: 1\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:1315 VerifyEachNodeIsAssignedToAnEp]   Unique ()\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:1313 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on "
           "[CUDAExecutionProvider]. Number of nodes: 2\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:1315 VerifyEachNodeIsAssignedToAnEp]   Relu (a (b))\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:1315 VerifyEachNodeIsAssignedToAnEp]   MemcpyToHost (Memcpy)\n"
           "2026-12-04 19:30:33.2 [V:onnxruntime:, session_state.cc:175 CreateGraphInfo] SaveMLValueNameIndexMapping\n")
    assert logs.parse_placements(log) == [logs.Placed("Unique", "", "CPUExecutionProvider"),
                                          logs.Placed("Relu", "a (b)", "CUDAExecutionProvider"),
                                          logs.Placed("MemcpyToHost", "Memcpy", "CUDAExecutionProvider")]
    assert logs.all_placed_on(log) is None
    one = ("x [V:onnxruntime:, session_state.cc:1310 VerifyEachNodeIsAssignedToAnEp]  All nodes placed on "
           "[CPUExecutionProvider]. Number of nodes: 7")
    assert logs.all_placed_on(one) == ("CPUExecutionProvider", 7) and logs.parse_placements(one) == []


def test_a_crash_after_session_creation_keeps_the_logged_placement(examples_dir, monkeypatch, cli):
    from onnxlint.verify.session_child import CRASH_ENV

    monkeypatch.setenv(CRASH_ENV, "SIGSEGV")
    rc, out, err = cli("verify", examples_dir / "clean_conv.onnx", "--providers", "CPUExecutionProvider", "--format", "json")
    r = json.loads(out)[0]
    assert "error" not in r and "crashed during the run (SIGSEGV)" in r["run_error"]
    assert r["nodes_observed"] == 2 and sorted(r["confirmed"]) == ["graph/conv", "graph/relu"] and rc == 0


def test_a_node_name_that_is_not_utf8_is_verified_under_the_name_the_lint_shows(examples_dir, tmp_path, cli):
    """protobuf hands a node name that is not UTF-8 over as bytes: the session's naming asked it isprintable() and
    the result was "verify failed: AttributeError: 'bytes' object has no attribute 'isprintable'". Such a node is
    renamed for the session and named as the lint names it (`\\xNN`)."""
    m = onnx.load(examples_dir / "clean_conv.onnx")
    m.graph.node[0].name = "QQQQ"
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString().replace(b"QQQQ", b"c\xc3nv"))
    rc, out, err = cli("verify", tmp_path / "m.onnx", "--providers", "CPUExecutionProvider", "--format", "json")
    r = json.loads(out)[0]
    assert rc == 0 and r["verified"] is True and "error" not in r, r
    assert "graph/c\\xc3nv" in r["confirmed"], r


def test_an_ort_refusal_quoting_bytes_that_are_not_utf8_is_said_in_orts_words(tmp_path, cli):
    """ORT's Python binding cannot decode a refusal that quotes a string of the model that is not UTF-8 (a custom
    domain ORT has no op for): verify said "verify failed: UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff
    in position 81: invalid start byte", which names neither the model's problem nor ORT. ORT's words are said,
    each bad byte as `\\xNN`, as the lint shows that domain."""
    nodes = [h.make_node("Foo", ["x"], ["y"], name="foo", domain="QQQQ")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], extra_opsets=[("QQQQ", 1)])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString().replace(b"QQQQ", b"z\xffom"))
    for fmt in ("json", "text"):
        rc, out, err = cli("verify", tmp_path / "m.onnx", "--providers", "CPUExecutionProvider", "--format", fmt)
        said = json.loads(out)[0]["error"] if fmt == "json" else out
        assert rc == 1 and "UnicodeDecodeError" not in said and "Traceback" not in err, out + err
        if sys.version_info >= (3, 11):
            assert "[ONNXRuntimeError]" in said and "z\\xffom:Foo" in said, said
        else:  # ORT 1.23.2's binding under Python 3.10 raises Fail with no message: said so, not "Fail: "
            assert "Fail with no message" in said, said


def test_one_bad_file_in_a_folder_keeps_the_other_results(examples_dir, tmp_path, cli):
    """A file that is no model is bad input: exit 2, as the lint and `placement` give (verify gave 1, the code of
    a prediction a session contradicts); the other models keep their results, and JSON says which was unreadable."""
    for name in ("clean_conv.onnx", "static_batch.onnx"):
        (tmp_path / name).write_bytes((examples_dir / name).read_bytes())
    (tmp_path / "corrupt.onnx").write_bytes(b"\x08\x07garbage" * 10)
    rc, out, err = cli("verify", tmp_path, "--providers", "CPUExecutionProvider", "--format", "json")
    by_name = {Path(r["filename"]).name: r for r in json.loads(out)}
    assert rc == 2 and "Traceback" not in err and set(by_name) == {"clean_conv.onnx", "static_batch.onnx", "corrupt.onnx"}
    assert by_name["corrupt.onnx"]["error"].startswith("not a valid ONNX")  # the file named once, by filename
    assert by_name["corrupt.onnx"]["unreadable"] is True and "unreadable" not in by_name["static_batch.onnx"]
    assert by_name["clean_conv.onnx"]["nodes_observed"] == 2 and by_name["static_batch.onnx"]["verified"] is True
    (tmp_path / "corrupt.onnx").unlink()
    rc, out, err = cli("verify", tmp_path, "--providers", "CPUExecutionProvider")
    assert rc == 0, out + err
    (tmp_path / "empty.onnx").write_bytes(b"")
    rc, out, err = cli("verify", tmp_path / "empty.onnx", "--providers", "CPUExecutionProvider", "--fix")
    assert rc == 2 and "empty file (0 bytes)" in out, out + err


def test_fix_over_a_folder_survives_a_crashing_numeric_check(examples_dir, tmp_path, monkeypatch, cli):
    import onnx

    from onnxlint.fixers.equivalence_child import CRASH_ENV

    for name in ("dropout_training.onnx", "resize_opset10.onnx", "batchnorm_training.onnx"):
        m = onnx.load(examples_dir / name)
        m.graph.name = "crash" if name == "resize_opset10.onnx" else "ok"
        onnx.save(m, tmp_path / name)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setenv(CRASH_ENV, "crash")
    rc, out, err = cli(tmp_path, "--fix", "--no-cache")
    assert "Traceback" not in out + err
    assert ("resize_opset10.onnx: note: fix not written: onnxruntime crashed (SIGSEGV) creating a session for the fixed "
            "model") in out
    assert (tmp_path / "resize_opset10.onnx").read_bytes() == before["resize_opset10.onnx"]
    for name in ("dropout_training.onnx", "batchnorm_training.onnx"):
        # both fixes change outputs on purpose: the note says so (an intended change, checked against a reference)
        assert f"{name}: note: numeric check: an intended change (" in out and (tmp_path / name).read_bytes() != before[name]


def test_renamed_copy_of_a_model_with_external_data_loads_its_weights_from_the_models_folder(tmp_path, cli):
    """Unnamed nodes make verify write a renamed copy; with external data the session reads the weights from the
    model's folder (whose folder the data paths are relative to), and nothing of verify's stays there."""
    import numpy as np
    import onnx

    w = onnx.numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    m = make_model([h.make_node("MatMul", ["x", "w"], ["y"]), h.make_node("Relu", ["y"], ["z"])],
                   [vi("x", T.FLOAT, [1, 64])], [vi("z", T.FLOAT, [1, 64])], inits=[w])
    d = tmp_path / "m"
    d.mkdir()
    onnx.save(m, d / "model.onnx", save_as_external_data=True, location="weights.bin", size_threshold=0)
    rc, out, err = cli("verify", d / "model.onnx", "--providers", "CPUExecutionProvider", "--format", "json",
                       "--ort-optimization", "disabled")
    r = json.loads(out)[0]
    assert rc == 0 and "error" not in r and "run_error" not in r
    assert sorted(r["ran_on"]) == ["graph/MatMul#0", "graph/Relu#1"] and r["missed"] == []
    assert sorted(p.name for p in d.iterdir()) == ["model.onnx", "weights.bin"]


def _duplicate_names_with_external_data(folder: Path, location: str = "weights.bin") -> Path:
    """A MatMul and a Relu of one name (renamed for the session), the MatMul's weight in a data file."""
    import numpy as np
    import onnx

    w = onnx.numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64) / 64, "w")
    m = make_model([h.make_node("MatMul", ["x", "w"], ["y"], name="n"), h.make_node("Relu", ["y"], ["z"], name="n")],
                   [vi("x", T.FLOAT, [1, 64])], [vi("z", T.FLOAT, [1, 64])], inits=[w])
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(m, folder / "model.onnx", save_as_external_data=True, location=location, size_threshold=0)
    return folder / "model.onnx"


def _created_in(folder: Path):
    """The names created or moved into folder from now on, read by calling the returned function (Linux's
    inotify: a file made and removed again is seen too); None where there is no inotify."""
    import ctypes
    import os
    import struct

    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    if fd < 0 or libc.inotify_add_watch(fd, str(folder).encode(), 0x100 | 0x80) < 0:  # IN_CREATE | IN_MOVED_TO
        return None

    def created() -> list[str]:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            data = b""
        finally:
            os.close(fd)
        names, i = [], 0
        while i < len(data):
            size = struct.unpack_from("iIII", data, i)[3]
            names.append(data[i + 16:i + 16 + size].rstrip(b"\0").decode())
            i += 16 + size
        return names

    return created


@pytest.mark.skipif(tuple(int(p) for p in ort.__version__.split(".")[:2]) < (1, 21),
                    reason="ORT 1.20 reads external data beside the model file only: verify writes its copy there")
def test_verify_writes_nothing_in_the_folder_of_a_renamed_model_with_external_data(tmp_path, cli):
    """Nodes sharing a name are renamed in the copy the session loads; with external data that copy was written
    beside the model (`.onnxlint-verify.XXXXXXXX.onnx`), where its data paths resolve: a write into the
    repository under review, left there by a verify killed meanwhile, and a read-only folder failed the session.
    The copy is in a temporary folder; ORT (1.21 and later) reads the weights from the model's folder."""
    import os

    model = _duplicate_names_with_external_data(tmp_path / "repo")
    before = sorted(os.listdir(model.parent))
    created = _created_in(model.parent)
    os.chmod(model.parent, 0o555)  # read-only (root writes anyway: the watch sees it)
    try:
        rc, out, err = cli("verify", model, "--providers", "CPUExecutionProvider", "--format", "json",
                           "--ort-optimization", "disabled")
    finally:
        os.chmod(model.parent, 0o755)
    assert (created() if created else []) == [] and sorted(os.listdir(model.parent)) == before
    r = json.loads(out)[0]
    assert rc == 0 and r["verified"] and "error" not in r and "run_error" not in r, out + err
    assert r["nodes_observed"] == 2 and r["on_cpu"] == 2 and r["missed"] == []
    assert [(d["op_type"], d["ran_on"]) for d in r["details"]] == [("MatMul", "CPUExecutionProvider"),
                                                                   ("Relu", "CPUExecutionProvider")]


def test_the_session_child_reads_the_renamed_copys_weights_from_the_models_folder(tmp_path):
    """What the child builds its session from: the renamed copy (in a temporary folder) as bytes, ORT told the
    model's folder as the folder of its external data; the weights it reads are the model's, and nothing is
    written there. ORT 1.20 ignores that option: there the copy is written beside the model while ORT reads it
    (as before), named as verify's own and removed once the session is built."""
    import contextlib
    import os

    import numpy as np
    import onnx

    from onnxlint.verify.session_child import model_source

    model = _duplicate_names_with_external_data(tmp_path / "repo")
    m = onnx.load(model, load_external_data=False)
    naming.unique_names(m)
    (tmp_path / "tmp").mkdir()
    copy = tmp_path / "tmp" / "renamed.onnx"
    onnx.save(m, copy)
    folder = str(model.parent)
    so = ort.SessionOptions()
    with model_source(ort, str(copy), so, folder) as source:
        if tuple(int(p) for p in ort.__version__.split(".")[:2]) >= (1, 21):
            assert isinstance(source, bytes) and sorted(os.listdir(folder)) == ["model.onnx", "weights.bin"]
        sess = ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64)
    want = np.maximum(x @ (np.arange(4096, dtype=np.float32).reshape(64, 64) / 64), 0)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-4)
    old = type("OldOrt", (), {"__version__": "1.20.1"})  # ORT 1.20's way, whatever ORT is installed
    with contextlib.redirect_stdout(None), model_source(old, str(copy), so, folder) as source:
        assert isinstance(source, str) and Path(source).read_bytes() == copy.read_bytes()
        beside = Path(source).parent / "weights.bin"  # a link to the model's data file, in a temporary folder
        assert Path(source).parent != model.parent and beside.is_symlink()
        assert beside.resolve() == (model.parent / "weights.bin").resolve()
        assert sorted(os.listdir(folder)) == ["model.onnx", "weights.bin"]
    assert sorted(os.listdir(folder)) == ["model.onnx", "weights.bin"] and not beside.parent.exists()


def test_on_ort_1_20_the_session_file_is_beside_links_to_the_data_not_beside_the_data(tmp_path, monkeypatch):
    """ORT 1.20 reads a model's external data relative to the model file it loads (it ignores the data-folder
    option): the numeric check's and verify's copies were written into the model's folder while ORT read them
    (`.onnxlint-check.XXXXXXXX.s.XXXXXXXX.onnx`, `.onnxlint-verify.XXXXXXXX.onnx`: a write into the repository
    under review, left there by a run killed meanwhile). The copy is in a temporary folder beside a link to each
    data file (ORT 1.20.1 follows them: measured); only where no link can be made is it beside the data, as
    before, said first."""
    import os

    from onnxlint.fixers import data_links

    folder = tmp_path / "repo"
    (folder / "sub").mkdir(parents=True)
    for name in ("w.bin", "sub/v.bin"):
        (folder / name).write_bytes(b"weights")
    with data_links.session_file(b"model", ["w.bin", "./w.bin", "sub/v.bin"], str(folder), ".x.") as path:
        here = Path(path).parent
        assert Path(path).read_bytes() == b"model" and here != folder and not str(here).startswith(str(folder))
        assert (here / "w.bin").resolve() == folder / "w.bin" and (here / "sub" / "v.bin").resolve() == folder / "sub" / "v.bin"
        assert sorted(os.listdir(folder)) == ["sub", "w.bin"]
    assert not here.exists() and sorted(os.listdir(folder)) == ["sub", "w.bin"]

    def no_links(*args):
        raise OSError("symbolic link privilege not held")

    monkeypatch.setattr(os, "symlink", no_links)
    said = []
    with data_links.session_file(b"model", ["w.bin"], str(folder), ".onnxlint-check.", said.append) as path:
        assert os.path.dirname(path) == str(folder) and os.path.basename(path).startswith(".onnxlint-check.")
        assert said == [path] and Path(path).read_bytes() == b"model"
    assert sorted(os.listdir(folder)) == ["sub", "w.bin"]


def test_verify_runs_a_renamed_model_linked_into_a_hugging_face_cache(tmp_path, cli):
    """The Hugging Face cache: snapshots/<rev>/model.onnx and its data file are links to one blobs folder, named by
    content. The lint reads the data there (the real folder of the file the model links to, as ORT's path check
    allows); verify of a model whose nodes it renames failed: its copy was given to ORT (1.24.4) with the snapshot
    folder as the data folder, and the data escaped it ("External data path validation failed ... escapes both
    model directory ... and real model directory"). The copy names the blobs its locations lead to, that folder
    given as its data folder; nothing is written in the cache."""
    import hashlib
    import os

    built = _duplicate_names_with_external_data(tmp_path / "export")
    cache = tmp_path / "hub" / "models--org--name"
    (cache / "blobs").mkdir(parents=True)
    (cache / "snapshots" / "abc123").mkdir(parents=True)
    for name in ("model.onnx", "weights.bin"):
        data = (built.parent / name).read_bytes()
        blob = hashlib.sha256(data).hexdigest()
        (cache / "blobs" / blob).write_bytes(data)
        os.symlink(f"../../blobs/{blob}", cache / "snapshots" / "abc123" / name)
    model = cache / "snapshots" / "abc123" / "model.onnx"
    listing = {d: sorted(os.listdir(cache / d)) for d in ("blobs", "snapshots/abc123")}
    rc, out, err = cli("verify", model, "--providers", "CPUExecutionProvider", "--format", "json")
    r = json.loads(out)[0]
    assert rc == 0 and r["verified"] and "error" not in r, out + err
    assert r["nodes_observed"] == 2 and r["on_cpu"] == 2 and r["missed"] == []
    assert {d: sorted(os.listdir(cache / d)) for d in ("blobs", "snapshots/abc123")} == listing


def test_a_copy_a_killed_session_child_left_beside_the_model_is_removed(tmp_path):
    """ORT 1.20: the child's copy beside the model, when the child was killed (its time limit) while ORT read it;
    the parent removes it, and nothing else of that folder, whatever the child said."""
    left = tmp_path / ".onnxlint-verify.abcd1234.onnx"
    other = tmp_path / "model.onnx"
    for p in (left, other):
        p.write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    elsewhere = tmp_path / "sub" / ".onnxlint-verify.abcd1234.onnx"
    elsewhere.write_bytes(b"x")
    for said in (str(other), str(elsewhere), ["x"], None, str(left)):
        session._remove_copy(str(tmp_path), said)
    assert not left.exists() and other.exists() and elsewhere.exists()


@pytest.mark.parametrize("where", ["dotdot", "absolute", "symlink"])
def test_a_renamed_models_data_outside_its_folder_is_refused_before_any_session(tmp_path, cli, monkeypatch, where):
    """The session is given the model's folder as the folder of its data: ORT (1.23.2 at least) follows `..`, an
    absolute path or a link out of it. onnxlint's own check refuses each before a child runs."""
    import os

    import numpy as np

    secret = tmp_path / "secret.bin"
    secret.write_bytes((np.arange(4096, dtype=np.float32) / 64).tobytes())
    location = {"dotdot": "../secret.bin", "absolute": str(secret), "symlink": "weights.bin"}[where]
    (tmp_path / "repo").mkdir()
    if where == "symlink":
        os.symlink("../secret.bin", tmp_path / "repo" / "weights.bin")
    model = _duplicate_names_with_external_data(tmp_path / "repo", "w.tmp")
    m = __import__("onnx").load(model, load_external_data=False)
    for e in m.graph.initializer[0].external_data:
        if e.key == "location":
            e.value = location
    __import__("onnx").save(m, model)
    (tmp_path / "repo" / "w.tmp").unlink()
    monkeypatch.setattr(session, "run_session", lambda *a, **k: pytest.fail("a session ran"))
    rc, out, err = cli("verify", model, "--providers", "CPUExecutionProvider")
    assert rc == 1 and "verify failed: not run: tensor 'w': location" in out and "outside the model's folder" in out, out


@pytest.mark.parametrize("server", [True, False])
def test_numeric_check_child_with_and_without_the_check_server(server, monkeypatch):
    """The check's child forks from onnxlint's warm check server where there is one, else is `python -m
    equivalence_child`; either way a crash is a FixError naming the model being built, a check past its time
    limit says so, and a normal check answers."""
    from onnxlint.fixers import FixError, equivalence

    if not server:
        monkeypatch.setattr(equivalence, "_SERVER", [None])
    elif equivalence._server() is None:
        pytest.skip("no check server on this platform (no fork)")
    m = make_model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])])
    assert equivalence.check_equivalent(m, m) == "outputs equal at fixed shapes"
    monkeypatch.setenv(equivalence.CRASH_ENV, "g")  # make_model's graph name
    with pytest.raises(FixError, match=r"onnxruntime crashed \(SIGSEGV\) creating a session for the fixed model"):
        equivalence.check_equivalent(m, m)
    monkeypatch.delenv(equivalence.CRASH_ENV)
    monkeypatch.setenv(equivalence.TIMEOUT_ENV, "0.001")
    with pytest.raises(FixError, match="did not finish within 0.001 s"):
        equivalence.check_equivalent(m, m)
    monkeypatch.delenv(equivalence.TIMEOUT_ENV)  # a server stuck past a time limit is replaced: checks go on
    assert equivalence.check_equivalent(m, m) == "outputs equal at fixed shapes"
    assert (equivalence._SERVER[0] is not None) == server


def test_the_sessions_address_space_is_limited_only_where_it_can_have_only_the_cpu_ep():
    """A GPU provider's driver maps address space by the device's memory: a session that may have one is not
    limited; one whose other providers this ORT build lacks (the CPU wheel asked for CUDA) runs on CPU, limited."""
    from onnxlint.verify.session_child import cpu_only

    both = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert cpu_only(["CPUExecutionProvider"], both)
    assert cpu_only(both, ["CPUExecutionProvider"])
    assert not cpu_only(both, both)
    assert not cpu_only(["TensorrtExecutionProvider", "CPUExecutionProvider"], ["TensorrtExecutionProvider", *both])
