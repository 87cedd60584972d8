"""What `--fix`, `--diff`, `verify --fix` and the words around them do, as a user meets them (issue 44): a fix
fixes what the run shows, a diff is a unified diff of the model's text form, no library talks to the user, the
summary after a fix describes the written model, unsafe fixes say so everywhere, `verify --fix` writes only what
a session verified; and the words: ORT's TensorRT EP, disabled optimizations, `--verify` without a GPU, SARIF's
node, install hints, TensorRT 8.6's Shape start/end, and the first onnxruntime-gpu release with a CUDA kernel.

Each test runs the `onnxlint` command in a child process, output piped, as CI or a terminal runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.tensorrt import tables, versions

ROOT = Path(__file__).resolve().parent.parent


def onnxlint(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "ONNXLINT_CACHE_DIR")}
    return subprocess.run([sys.executable, "-m", "onnxlint", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _shape_chain(path: Path, external: bool = False) -> Path:
    """A MatMul whose output is reshaped by a shape computed at run time from a static input: only infos
    (OLX309, fixable by fold-shapes; OLX013), nothing a default run shows. external: the weight in a data file."""
    nodes = [h.make_node("MatMul", ["x", "w"], ["m"], name="mm"), h.make_node("Shape", ["m"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["g"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["g", "ax"], ["u"], name="unsq"),
             h.make_node("Concat", ["u", "neg"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["m", "shp"], ["y"], name="reshape")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 64])], [vi("y", T.FLOAT, [2, 64])],
                   [init("w", np.random.default_rng(0).random((64, 64), np.float32)), init("i0", np.array(0, np.int64)),
                    init("ax", np.array([0], np.int64)), init("neg", np.array([-1], np.int64))])
    path.parent.mkdir(parents=True, exist_ok=True)
    if external:
        onnx.save_model(m, path, save_as_external_data=True, location=path.name + ".data", size_threshold=1024)
    else:
        onnx.save(m, path)
    return path


# ---------------------------------------------------------------------------------------------- item 4


def test_fix_fixes_what_the_run_shows_and_says_what_it_left(tmp_path: Path) -> None:
    model = _shape_chain(tmp_path / "m.onnx")
    before = model.read_bytes()
    proc = onnxlint(model, "--fix", "--no-cache")
    assert proc.returncode == 0 and model.read_bytes() == before, proc.stdout + proc.stderr  # nothing shown: nothing fixed
    # and it says so first: the model stays as it was, then what was left and how to fix it
    assert ("note: nothing written: no finding shown has a fix; left alone: 1 info finding not shown (fold-shapes); "
            "--show-info shows and fixes it") in proc.stdout, proc.stdout
    proc = onnxlint(model, "--diff", "--no-cache")  # the same for --diff: no diff, and why
    assert proc.returncode == 0 and model.read_bytes() == before and "--- a/" not in proc.stdout, proc.stdout
    assert "note: no diff: no finding shown has a fix; not in this diff: 1 info finding not shown (fold-shapes)" \
        in proc.stdout, proc.stdout
    proc = onnxlint(model, "--fix", "--select", "OLX309", "--no-cache")  # asked for by its code: fixed
    assert model.read_bytes() != before and "1 fixed" in proc.stdout, proc.stdout
    model.write_bytes(before)
    proc = onnxlint(model, "--fix", "--show-info", "--no-cache")  # shown: fixed
    assert model.read_bytes() != before and "wrote" in proc.stdout, proc.stdout


def test_a_hidden_info_the_fix_of_a_shown_finding_clears_is_not_said_to_be_left(tmp_path: Path, examples_dir: Path) -> None:
    """upgrade-opset fixes the shown Resize warning (OLX020) and clears the hidden old-opset info (OLX006) with it:
    the note said that info was left alone, then "2 fixed, 0 remaining"."""
    model = tmp_path / "m.onnx"
    model.write_bytes((examples_dir / "resize_opset10.onnx").read_bytes())
    proc = onnxlint(model, "--diff", "--no-cache")
    assert "would write" in proc.stdout and "not in this diff" not in proc.stdout, proc.stdout
    proc = onnxlint(model, "--fix", "--no-cache")
    assert "2 fixed, 0 remaining" in proc.stdout and "left alone" not in proc.stdout, proc.stdout


def test_the_api_fixes_what_a_run_shows_and_says_it_in_its_own_words(tmp_path: Path) -> None:
    """onnxlint.fix() from a user's script: the model whose run shows nothing stays as it was, the note says so in
    the API's words (show_info=True, not the command line's --show-info), and show_info=True fixes it."""
    model = _shape_chain(tmp_path / "m.onnx")
    before = model.read_bytes()
    script = tmp_path / "fix_it.py"
    script.write_text("import onnxlint\n"
                      "print(onnxlint.fix('m.onnx').notes)\n"
                      "print(onnxlint.fix('m.onnx', show_info=True).notes)\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "ONNXLINT_CACHE_DIR"})
    first, second = proc.stdout.splitlines()
    assert first == ("['nothing written: no finding shown has a fix; left alone: 1 info finding not shown "
                     "(fold-shapes); show_info=True shows and fixes it']"), proc.stdout + proc.stderr
    assert "wrote m.onnx (fold-shapes)" in second and model.read_bytes() != before, second


def test_the_apis_output_is_checked_as_the_command_lines_o(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fix(output=...) skipped `-o`'s checks: a report's name (`results.json`, a CI step's) was overwritten with the
    fixed model, `out/` (a folder to the command line) became a file named `out`, the model's own weights file
    would have been refused only after the fix ran. Each is a ValueError before anything is read, in the API's
    words; a folder named with a trailing `/` is made and the model is written into it."""
    import onnxlint

    monkeypatch.chdir(tmp_path)
    g = h.make_graph([h.make_node("Dropout", ["x"], ["d"], name="drop", is_test=0), h.make_node("Relu", ["d"], ["y"])],
                     "g", [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    model = tmp_path / "m.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 6)], ir_version=3), model)
    before = model.read_bytes()
    (tmp_path / "results.json").write_text("{}")
    (tmp_path / "plain").write_text("x")
    os.mkfifo(tmp_path / "fifo")
    for output, why in (("results.json", "output results.json: output is where the fixed model is written, not the "
                                         "report (fix() returns it)"),
                        ("new.sarif", "not the report"), ("nowhere/m.onnx", "folder nowhere does not exist"),
                        ("fifo", "is not a regular file"), (f"plain{os.sep}", "plain is a file, not a folder")):
        with pytest.raises(ValueError, match=re.escape(why)):
            onnxlint.fix("m.onnx", output=output)
    assert (tmp_path / "results.json").read_text() == "{}" and not (tmp_path / "new.sarif").exists()
    assert model.read_bytes() == before
    diff = onnxlint.fix("m.onnx", output="later/", diff=True)
    assert diff.notes[-1] == "would write later/m.onnx (dropout-inference)" and not (tmp_path / "later").exists()
    res = onnxlint.fix("m.onnx", output="out/")
    assert res.written == "out/m.onnx" and (tmp_path / "out" / "m.onnx").is_file(), res.notes
    assert model.read_bytes() == before


def test_diff_is_a_unified_diff_of_the_changed_nodes(tmp_path: Path) -> None:
    model = _shape_chain(tmp_path / "m.onnx")
    before = model.read_bytes()
    proc = onnxlint(model, "--diff", "--show-info", "--no-cache")
    assert model.read_bytes() == before, "--diff writes nothing"
    out = proc.stdout
    name = str(model).lstrip("/")  # as git writes a path: a/ and b/ before it
    assert f"--- a/{name}\n+++ b/{name}\n@@ " in out, out
    diff = [ln for ln in out.splitlines() if ln[:1] in "+- @" and not ln.startswith(("+++", "---", "@@"))]
    assert "-      [shape] s = Shape (m)" in diff and "-      [concat] shp = Concat <axis: int = 0> (u, neg)" in diff
    assert "+      [mm] y = MatMul (x, w)" in diff  # the Reshape to the shape it already has is gone
    assert "-   <float[64,64] w" not in out and "   <float[64,64] w = blake2b:" in out  # a weight: a digest, no values
    assert len(diff) < 20 and "would change:" not in out  # the changed nodes with context, not the whole model
    assert f"note: would write {model} (fold-shapes)" in out


def test_no_library_message_reaches_the_user_and_the_summary_describes_the_written_model(tmp_path: Path) -> None:
    """A model with external data, fixed from another folder (onnxslim read weights relative to the current
    folder and onnx's checker said 'should be stored in m.onnx.data, but it is not regular file')."""
    model = _shape_chain(tmp_path / "models" / "m.onnx", external=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = onnxlint(model, "--show-info", "--no-cache", cwd=elsewhere)
    assert "4 folded and 0 eliminated by ORT's graph optimizations" in proc.stdout  # the original's placement
    proc = onnxlint(model, "--fix", "--show-info", cwd=elsewhere)
    text = proc.stdout + proc.stderr
    for raw in ("not regular file", "should be stored in", "onnxslim", "Traceback", "Warning", "WARNING"):
        assert raw not in text, text
    assert "1 fixed" in proc.stdout and "wrote" in proc.stdout, text
    summary = next(ln for ln in proc.stdout.splitlines() if ": ort-cuda: " in ln)
    assert "folded" not in summary and summary.endswith("2 nodes on CUDA, 0 fall back, 0 boundaries, ~0 B copied per run")
    proc = onnxlint(model, "--fix", "--show-info", "--format", "json", cwd=elsewhere)
    json.loads(proc.stdout)  # nothing but JSON on stdout


def test_unsafe_fixes_are_worded_as_such_everywhere(examples_dir: Path, tmp_path: Path) -> None:
    model = tmp_path / "double_input.onnx"
    model.write_bytes((examples_dir / "double_input.onnx").read_bytes())
    proc = onnxlint(model, "--no-cache")
    assert "hint: fixable with --fix --unsafe-fixes (double-inputs-to-float; unsafe: it changes the interface or " \
           "numerics)" in proc.stdout
    proc = onnxlint(model, "--statistics", "--no-cache")
    assert "OLX012  [!] double-graph-input" in proc.stdout
    assert "[!] 1 finding fixable with --fix --unsafe-fixes (unsafe fixes)" in proc.stdout
    assert "fixable with --fix\n" not in proc.stdout  # no safe fix to count
    f = json.loads(onnxlint(model, "--format", "json", "--no-cache").stdout)[0]
    assert "--unsafe-fixes" in f["hint"]
    proc = onnxlint(model, "--fix")
    assert "1 finding(s) need --unsafe-fixes (double-inputs-to-float)" in proc.stdout
    assert "1 fixed" in onnxlint(model, "--fix", "--unsafe-fixes").stdout


def _training_dropout(path: Path) -> Path:
    nodes = [h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Dropout", ["a", "r", "t"], ["d"], name="drop"),
             h.make_node("Relu", ["d"], ["y"], name="relu2")]
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 4])],
                         [init("r", np.array(0.5, np.float32)), init("t", np.array(True))]), path)
    return path


def _has_cuda() -> bool:
    import onnxruntime

    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


def test_verify_fix_writes_only_what_a_session_verified(tmp_path: Path) -> None:
    model = _training_dropout(tmp_path / "m.onnx")
    before = model.read_bytes()
    if not _has_cuda():  # the CUDA EP asked for cannot run here: the fixed model is not verified, not written
        proc = onnxlint("verify", model, "--fix", "--format", "json")
        r = json.loads(proc.stdout)[0]
        assert model.read_bytes() == before and r["after"]["verified"] is False, proc.stdout
        assert any(n.startswith("fix not written: no session could verify the fixed model") for n in r["fix"]), r["fix"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]  # no temporary copy left behind
        text = onnxlint("verify", model, "--fix").stdout  # the reason once, not once per line
        assert text.count("was requested but not exercised") == 1 and "after fix:  the model as above (nothing written)" in text
        out = tmp_path / "fixed.onnx"  # -o writes it whatever the session says, and leaves the model alone
        proc = onnxlint("verify", model, "--fix", "-o", out)
        assert out.is_file() and model.read_bytes() == before, proc.stdout + proc.stderr
        assert "without a verified session" in proc.stdout
    proc = onnxlint("verify", model, "--fix", "--providers", "CPUExecutionProvider", "--format", "json")
    r = json.loads(proc.stdout)[0]
    assert r["after"]["verified"] is True and model.read_bytes() != before, proc.stdout  # verified: written
    assert any("1 fixed" in n for n in r["fix"])


# ---------------------------------------------------------------------------------------------- item 7


def test_under_the_tensorrt_ep_a_rejection_says_where_the_node_runs(tmp_path: Path) -> None:
    """Compress: TensorRT's parser has no importer, CUDA has a kernel: ORT's TensorRT EP hands it to CUDA."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("Compress", ["r", "keep"], ["y"], name="compress", axis=0)]
    model = tmp_path / "m.onnx"
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [4, 3]), vi("keep", T.BOOL, [4])], [vi("y", T.FLOAT, ["k", 3])]),
              model)
    rtx = versions.product(tables.default_version())  # the newest table: every RTX parser has no Compress importer
    proc = onnxlint(model, "--target", "tensorrt", "--no-cache")  # TensorRT itself: the parser rejects it
    assert f"compress: error: OLX300 Compress is rejected by {rtx}" in proc.stdout, proc.stdout
    proc = onnxlint(model, "--target", "ort-trt", "--no-cache")
    assert proc.returncode == 1 and ": error:" not in proc.stdout, proc.stdout
    assert (f"compress: warning: OLX300 Compress is rejected by {rtx} (not-supported): " in proc.stdout
            and "; ORT's TensorRT EP hands it to CUDA: the TensorRT engine is split around it" in proc.stdout)
    assert "ort-trt: 1 node in 1 TensorRT subgraph, 1 fall through to CUDA, 0 to CPU" in proc.stdout
    f = json.loads(onnxlint(model, "--target", "ort-trt", "--format", "json", "--no-cache").stdout)
    assert [(x["code"], x["severity"], x["target"]) for x in f if x["code"] == "OLX300"] == [("OLX300", "warning", "ort-trt")]
    # a model ORT refuses to load (IR version past the release) is refused under its TensorRT EP too
    m = onnx.load(model)
    m.ir_version = 14
    onnx.save(m, model)
    proc = onnxlint(model, "--target", "ort-trt", "--ort-version", "1.31.1", "--no-cache")
    assert "error: OLX203 IR version 14 is newer than onnxruntime 1.31.1 loads" in proc.stdout, proc.stdout
    assert "ort-trt: ORT refuses this model: IR version 14 is newer than onnxruntime 1.31.1 loads" in proc.stdout


def test_under_the_tensorrt_ep_a_model_rejection_says_where_its_nodes_run(examples_dir: Path, tmp_path: Path) -> None:
    """OLX318 (the parser rejects the model's asymmetric Q/DQ) and OLX319 (a string network input it cannot
    import) are said once per model; under ORT's TensorRT EP those nodes run on CUDA or CPU and the session runs:
    a warning saying where, as for one rejected node (the newcomer run of issue 44 found them errors)."""
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="q"),
             h.make_node("DequantizeLinear", ["q", "s", "zp"], ["dq"], name="dq"),
             h.make_node("Relu", ["dq"], ["y"], name="relu")]
    qdq = tmp_path / "qdq.onnx"
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [1, 4])], [vi("y", T.FLOAT, [1, 4])],
                         [init("s", np.array(0.1, np.float32)), init("zp", np.array(128, np.uint8))]), qdq)
    strings = examples_dir / "equal_string_cuda.onnx"
    proc = onnxlint(qdq, strings, "--target", "tensorrt", "--no-cache")  # TensorRT itself: the parse fails
    assert f"{qdq}: error: OLX318 " in proc.stdout and f"{strings}: error: OLX319 " in proc.stdout, proc.stdout
    proc = onnxlint(qdq, strings, "--target", "ort-trt", "--no-cache")
    assert proc.returncode == 1 and ": error:" not in proc.stdout, proc.stdout
    assert f"{qdq}: ort-trt: 1 node in 1 TensorRT subgraph, 2 fall through to CUDA, 0 to CPU" in proc.stdout
    line = next(ln for ln in proc.stdout.splitlines() if "OLX318" in ln)
    assert line.startswith(f"{qdq}: warning: OLX318 ") and line.endswith(
        "; ORT's TensorRT EP hands them to CUDA: the TensorRT engine is split around them"), line
    line = next(ln for ln in proc.stdout.splitlines() if "OLX319" in ln)
    assert line.startswith(f"{strings}: warning: OLX319 ") and line.endswith(
        "(read by 1 node); ORT's TensorRT EP hands it to CPU (OLX200 says why CUDA does not take it)"), line
    f = json.loads(onnxlint(qdq, strings, "--target", "ort-trt", "--format", "json", "--no-cache").stdout)
    assert sorted((x["code"], x["severity"], x["target"]) for x in f if x["code"] in ("OLX318", "OLX319")) == \
        [("OLX318", "warning", "ort-trt"), ("OLX319", "warning", "ort-trt")]


def test_verify_without_a_gpu_says_so_once_for_the_run(examples_dir: Path, tmp_path: Path) -> None:
    if _has_cuda():
        pytest.skip("a CUDA EP runs here: --verify verifies")
    for name in ("dropout_training.onnx", "clean_conv.onnx", "equal_string_cuda.onnx"):
        (tmp_path / name).write_bytes((examples_dir / name).read_bytes())
    proc = onnxlint(tmp_path, "--verify", "--no-progress")
    lines = [ln for ln in proc.stdout.splitlines() if "CUDAExecutionProvider was requested but not exercised" in ln]
    assert len(lines) == 1 and lines[0].startswith("note: --verify did not run: "), proc.stdout
    assert "OLX903" not in proc.stdout and "verify failed" not in proc.stdout
    proc = onnxlint(tmp_path, "--verify", "--format", "json", "--no-progress")
    assert "OLX903" not in proc.stdout and proc.stderr.count("--verify did not run") == 1


def test_sarif_results_name_the_node(examples_dir: Path) -> None:
    proc = onnxlint(examples_dir / "equal_mismatch.onnx", "--format", "sarif", "--no-cache")
    texts = [r["message"]["text"] for r in json.loads(proc.stdout)["runs"][0]["results"] if r["ruleId"] == "OLX015"]
    assert texts and texts[0].startswith("Equal compares int64 with int32; both inputs must share one dtype (eq)")


def test_install_hints_name_what_pip_can_install_today() -> None:
    """No extra of a package no index serves (`onnxlint[fix]`): what a user can pip install, from where."""
    texts = [p.read_text() for p in (ROOT / "onnxlint").rglob("*.py")]
    texts += [(ROOT / name).read_text() for name in ("README.md", ".pre-commit-hooks.yaml", "action.yml")]
    texts += [p.read_text() for p in (ROOT / "docs").glob("*") if p.suffix in (".md", ".yml", ".yaml")]
    assert not [t for t in texts if "onnxlint[" in t]
    from onnxlint.linting.fixing import NEEDS_ORT

    assert "pip install onnxruntime " in NEEDS_ORT


def test_tensorrt_8_6_shape_start_end_says_what_happens(tmp_path: Path) -> None:
    """The 8.6 parser accepts Shape(start, end) and ignores start/end (measured): other shapes, not a rejection."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape", start=1, end=2),
             h.make_node("Squeeze", ["s"], ["n"], name="sq"), h.make_node("Range", ["zero", "n", "one"], ["r"], name="range")]
    model = tmp_path / "m.onnx"
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [1, "seq"])], [vi("r", T.INT64, ["seq"])],
                         [init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64))], opset=18), model)
    proc = onnxlint(model, "--target", "tensorrt", "--trt-version", "8.6", "--no-cache")
    assert "shape: error: OLX317 Shape is accepted by TensorRT 8.6 with other shapes than the model's: TensorRT 8.6 " \
           "ignores Shape's start/end" in proc.stdout, proc.stdout
    assert "rejected by TensorRT 8.6" not in proc.stdout


# ---------------------------------------------------------------------------------------------- item 8


def test_a_fallback_names_the_first_onnxruntime_gpu_release_with_its_cuda_kernel(tmp_path: Path) -> None:
    from onnxlint.ort import kernel_registry as kernels

    model = tmp_path / "m.onnx"
    onnx.save(make_model([h.make_node("Equal", ["a", "b"], ["e"], name="/cmp/Equal")],
                         [vi("a", T.INT64, [4]), vi("b", T.INT64, [4])], [vi("e", T.BOOL, [4])], opset=19, ir=9), model)
    proc = onnxlint(model, "--target", "ort-cuda", "--ort-version", "1.20.2", "--no-cache")
    m = re.search(r"hint: CUDA kernel from onnxruntime-gpu (\S+) \(upgrade, or check with --ort-version \1\); or cast",
                  proc.stdout)
    assert m, proc.stdout
    first = m.group(1)

    def has_kernel(v: str) -> bool:
        return kernels.load("cuda", v).lookup("ai.onnx", "Equal", 19, lambda ps: {"T": "tensor(int64)", "T1": "tensor(bool)"}).ok

    # the shipped tables say so: no CUDA release between 1.20.2 and it has the kernel, that one has
    later = [v for v in kernels.releases("cuda") if kernels.version_key(v) > kernels.version_key("1.20.2")]
    assert has_kernel(first) and not any(has_kernel(v) for v in later[:later.index(first)])
    # checked against that release (or the newest, the default), the node runs on CUDA: no finding, no hint
    assert "OLX200" not in onnxlint(model, "--target", "ort-cuda", "--ort-version", first, "--no-cache").stdout
    proc = onnxlint(model, "--target", "ort-cuda", "--ort-version", "1.20.2", "--format", "json", "--no-cache")
    (fallback,) = [f for f in json.loads(proc.stdout) if f["code"] == "OLX200"]
    assert f"CUDA kernel from onnxruntime-gpu {first}" in fallback["hint"]


def test_a_fix_o_folder_it_made_and_wrote_nothing_in_is_not_left(tmp_path: Path, examples_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`--fix -o new/` makes new/; a fix refused, or nothing to fix, left it empty: a run leaves nothing it made and
    did not use (a folder that was there before stays, and one a model was written in)."""
    import onnxlint as api

    (tmp_path / "c.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())  # nothing to fix
    nodes = [h.make_node("Dropout", ["x"], ["d"], name="drop", is_test=0),  # fixable (OLX010)
             h.make_node("Equal", ["d", "x"], ["y"], name="eq")]  # Equal-1 takes no float: the fix is refused
    m = h.make_model(h.make_graph(nodes, "g", [vi("x", T.FLOAT, [4])], [vi("y", T.BOOL, [4])]),
                     opset_imports=[h.make_opsetid("", 6)], ir_version=3)
    onnx.save(m, tmp_path / "r.onnx")
    refused = onnxlint("r.onnx", "--fix", "-o", "new1/", "--no-cache", cwd=tmp_path)
    assert "r.onnx: note: fix not written" in refused.stdout, refused.stdout + refused.stderr
    onnxlint("c.onnx", "--fix", "-o", "new2/", "--no-cache", cwd=tmp_path)
    (tmp_path / "there").mkdir()
    onnxlint("c.onnx", "--fix", "-o", "there/", "--no-cache", cwd=tmp_path)
    run = onnxlint("verify", "c.onnx", "--fix", "-o", "new3/", "--providers", "CPUExecutionProvider", cwd=tmp_path)
    assert "nothing to fix" in run.stdout, run.stdout + run.stderr
    monkeypatch.chdir(tmp_path)
    assert api.fix("c.onnx", output="new4/").written is None
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["there"]
