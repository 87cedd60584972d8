"""Issue 40, classes 5, 8 and 9: workers bounded by the work and the machine; environment failures (the working
folder deleted, standard output full or closed) are one line and exit 2; `verify` fails, with the reason, for
every requested provider it could not exercise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

TIMEOUT = 120


def _models(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        m = make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name=f"d{k}")],
                       [vi("x", T.FLOAT, [2]), vi("r", T.FLOAT, []), vi("t", T.BOOL, [])], [vi("y", T.FLOAT, [2])], opset=13)
        onnx.save(m, folder / f"m{k:02d}.onnx")
    return folder


# ----------------------------------------------------------------------------- 5. workers


def test_jobs_120_on_16_models_starts_at_most_min_of_jobs_models_and_cpus(tmp_path, monkeypatch):
    import concurrent.futures

    from onnxlint.config.settings import Settings
    from onnxlint.linting import linter

    started: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, max_workers=None, **kw):
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counting)
    folder = _models(tmp_path / "m", 16)
    settings = Settings.from_config(None)
    report = linter.lint_paths([folder], lambda p: settings, jobs=120)
    assert len(report.files) == 16 and not report.errors
    assert started and started[0] <= min(16, linter.usable_cpus())
    monkeypatch.setattr(linter, "usable_cpus", lambda: 64)  # a large machine: the models bound it
    assert linter.pool_size(120, 16) == 16 and linter.pool_size(0, 16) == 16 and linter.pool_size(3, 16) == 3
    monkeypatch.setattr(linter, "usable_cpus", lambda: 2)  # a small one: its CPUs do
    assert linter.pool_size(120, 16) == 2 and linter.pool_size(0, 300) == 2 and linter.pool_size(5, 1) == 1


def test_jobs_says_its_rule_and_refuses_a_negative_count(cli):
    from onnxlint.cli import build_parser

    assert "min(N, the models, the usable CPUs)" in " ".join(build_parser().format_help().split())
    rc, out, err = cli("x.onnx", "--jobs", "-3")
    assert rc == 2 and "--jobs" in err and "0 (one worker per CPU) or more" in err


# ----------------------------------------------------------------------------- 8. environment failures


def _run(shell: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`python -m onnxlint ARGS` under a shell redirection (`>&-`, `>/dev/full`) or set-up (`cd` and delete)."""
    cmd = ["bash", "-c", shell + ' "$@"', "_", sys.executable, "-m", "onnxlint", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd,
                          env={**os.environ, "ONNXLINT_CACHE_DIR": str(cwd / "cache")})


MODES = {"file": ["m/m00.onnx"], "folder": ["m"], "jobs": ["m", "--jobs", "2"], "json": ["m", "--format", "json"],
         "placement": ["placement", "m/m00.onnx"]}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("mode", MODES)
def test_stdout_on_a_full_disk_is_one_line_and_exit_2(tmp_path, mode):
    _models(tmp_path / "m", 16 if mode == "jobs" else 2)
    run = _run("exec >/dev/full; exec", *MODES[mode], "--no-progress" if mode != "placement" else "--format=text",
               cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr == "onnxlint: error: cannot write to standard output: No space left on device\n", run.stderr


@pytest.mark.parametrize("mode", MODES)
def test_stdout_closed_is_one_line_and_exit_2(tmp_path, mode):
    _models(tmp_path / "m", 16 if mode == "jobs" else 2)
    run = _run("exec >&-; exec", *MODES[mode], cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr == "onnxlint: error: cannot write to standard output: it is closed\n", run.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_stdout_full_and_stderr_closed_still_exits_2(tmp_path):
    _models(tmp_path / "m", 1)
    run = _run("exec >/dev/full 2>&-; exec", "m", cwd=tmp_path)
    assert run.returncode == 2 and not run.stdout


def test_a_report_to_stdout_that_is_closed_is_no_error_when_it_goes_to_a_file(tmp_path):
    _models(tmp_path / "m", 1)
    run = _run("exec >&-; exec", "m", "--format", "json", "-o", "report.json", cwd=tmp_path)
    assert run.returncode == 1 and not run.stderr, run.stderr
    assert json.loads((tmp_path / "report.json").read_text())


@pytest.mark.parametrize("mode", ["file", "folder", "placement"])
def test_the_working_folder_deleted_is_one_line_and_exit_2(tmp_path, mode):
    models = _models(tmp_path / "m", 2)
    args = {"file": [str(models / "m00.onnx")], "folder": [str(models)], "placement": ["placement", str(models / "m00.onnx")]}
    gone = tmp_path / "gone"
    gone.mkdir()
    run = _run(f'cd "{gone}" && rmdir "{gone}" && exec', *args[mode], cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == "", run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and "the current folder cannot be used" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


# ----------------------------------------------------------------------------- 9. verify's providers


@pytest.mark.skipif("TensorrtExecutionProvider" in ort.get_available_providers(), reason="this onnxruntime has TensorRT")
def test_verify_fails_with_the_reason_for_a_requested_provider_it_could_not_exercise(tmp_path, cli, lint_json):
    p = _models(tmp_path / "m", 1) / "m00.onnx"
    providers = "TensorrtExecutionProvider,CPUExecutionProvider"
    rc, out, err = cli("verify", p, "--providers", providers, "--format", "json")
    r = json.loads(out)[0]
    assert rc == 1 and r["verified"] is False, out + err
    why = r["providers_unavailable"]["TensorrtExecutionProvider"]
    assert "this onnxruntime build has no TensorrtExecutionProvider" in why and "fix: pip install onnxruntime-gpu" in why
    assert r["ran_on"] == {}  # nothing compared against a session that is not what was asked
    rc, out, err = cli("verify", p, "--providers", providers)
    assert rc == 1 and "not verified: TensorrtExecutionProvider was requested but not exercised: this onnxruntime" in out
    rc, findings = lint_json(p, "--verify", "--providers", providers, "--target", "ort-cpu")
    olx903 = [f for f in findings if f["code"] == "OLX903"]
    assert rc == 1 and olx903 and "TensorrtExecutionProvider was requested but not exercised" in olx903[0]["message"]
    rc, out, err = cli("verify", p, "--providers", "CPUExecutionProvider", "--format", "json")
    assert rc == 0 and json.loads(out)[0]["verified"] is True  # what it has, it exercises
