"""benchmarks/json_identity.py: recordings of the real CLI compare identical with themselves, and compare reports
a changed finding, a changed exit code and a missing model; --same-models lints exactly a recording's models."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import json_identity  # noqa: E402

RUNS = "lint-default,placement-cuda-1.24.4-basic"


def _relu(path: Path) -> None:
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))


def _custom(path: Path) -> None:
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = h.make_graph([h.make_node("FancyNorm", ["x"], ["y"], name="fancy", domain="com.example")], "g", [x], [y])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)]), str(path))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    base = tmp_path_factory.mktemp("ji")
    models = base / "models"
    (models / "sub").mkdir(parents=True)
    _relu(models / "clean.onnx")
    _custom(models / "sub" / "custom.onnx")
    cmd = f"{sys.executable} -m onnxlint"
    assert json_identity.main(["record", str(base / "a"), "--onnxlint", cmd, "--models", f"m={models}",
                               "--runs", RUNS, "-q"]) == 0
    assert json_identity.main(["record", str(base / "b"), "--onnxlint", cmd, "--same-models", str(base / "a"),
                               "--runs", RUNS, "-q"]) == 0
    return base


def test_record_keeps_each_models_output_and_relative_paths(recorded):
    lint = json.loads((recorded / "a" / "lint-default" / "m.json").read_text())
    assert sorted(lint["models"]) == ["clean.onnx", "sub/custom.onnx"]
    assert "OLX014" not in [f["code"] for f in lint["models"]["clean.onnx"]]
    assert "OLX014" in [f["code"] for f in lint["models"]["sub/custom.onnx"]]
    assert all(f["filename"] == "clean.onnx" for f in lint["models"]["clean.onnx"])
    assert all(f["filename"] == "sub/custom.onnx" for f in lint["models"]["sub/custom.onnx"])
    assert [p["rc"] for p in lint["processes"]] == [1]
    place = json.loads((recorded / "a" / "placement-cuda-1.24.4-basic" / "m.json").read_text())
    assert place["models"]["clean.onnx"]["ort_version"] == "1.24.4"
    assert str(recorded) not in (recorded / "a" / "lint-default" / "m.json").read_text()


def test_two_recordings_of_the_same_code_compare_identical(recorded, capsys):
    assert json_identity.main(["compare", str(recorded / "a"), str(recorded / "b")]) == 0
    assert "identical: 2 outputs, 2 models, 2 runs" in capsys.readouterr().out


def test_compare_reports_a_changed_finding_and_exit_code(recorded, tmp_path, capsys):
    new = tmp_path / "new"
    shutil.copytree(recorded / "b", new)
    f = new / "lint-default" / "m.json"
    data = json.loads(f.read_text())
    data["models"]["sub/custom.onnx"][0]["message"] = "something else"
    data["processes"][0]["rc"] = 2
    f.write_text(json.dumps(data))
    assert json_identity.main(["compare", str(recorded / "a"), str(new)]) == 1
    out = capsys.readouterr().out
    assert "[lint-default] m/sub/custom.onnx:" in out
    assert '+     "message": "something else",' in out or '"message": "something else"' in out
    assert "process 0" in out and "2 difference(s)" in out


def test_compare_reports_a_model_only_in_golden(recorded, tmp_path, capsys):
    new = tmp_path / "new"
    shutil.copytree(recorded / "b", new)
    f = new / "placement-cuda-1.24.4-basic" / "m.json"
    data = json.loads(f.read_text())
    del data["models"]["clean.onnx"]
    f.write_text(json.dumps(data))
    assert json_identity.main(["compare", str(recorded / "a"), str(new)]) == 1
    assert "[placement-cuda-1.24.4-basic] m/clean.onnx: only in golden" in capsys.readouterr().out


def test_same_models_refuses_when_a_listed_model_is_gone(recorded, tmp_path, capsys):
    gone = recorded / "models" / "clean.onnx"
    kept = tmp_path / "clean.onnx"
    shutil.move(gone, kept)
    try:
        assert json_identity.main(["record", str(tmp_path / "c"), "--same-models", str(recorded / "a"),
                                   "--onnxlint", f"{sys.executable} -m onnxlint", "--runs", "lint-default",
                                   "-q"]) == 2
    finally:
        shutil.move(kept, gone)
    assert "1 model(s) of the list are missing, e.g. clean.onnx" in capsys.readouterr().err


def test_an_onnxlint_that_cannot_start_is_one_line_and_exit_2(tmp_path, capsys):
    assert json_identity.main(["record", str(tmp_path / "d"), "--onnxlint", str(tmp_path / "no-such-onnxlint"),
                               "--models", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "cannot run onnxlint as" in err and "Traceback" not in err


def test_hard_linked_models_are_named_in_a_warning(tmp_path, capsys):
    _relu(tmp_path / "a.onnx")
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "a.onnx").hardlink_to(tmp_path / "a.onnx")
    assert json_identity.main(["record", str(tmp_path / "out"), "--onnxlint", f"{sys.executable} -m onnxlint",
                               "--models", f"m={tmp_path}", "--runs", "lint-default", "-q"]) == 0
    assert "2 model(s) have hard-linked files" in capsys.readouterr().err
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["roots"]["m"]["hard_linked"] == ["a.onnx", "snap/a.onnx"]
