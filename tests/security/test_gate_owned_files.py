"""--fix and -o remove or replace only what onnxlint wrote, and leave none of their own files behind: a data file an
exporter wrote beside the model -o replaces is the user's; a run killed (SIGKILL: the OOM killer, a CI runner's
last resort) leaves nothing half-written under a final name, and its temporary file is removed by the next write."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from bounded import onnxlint
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _export(folder: Path, name: str = "model.onnx", dropout: bool = True) -> Path:
    """A model whose weights are in a data file beside it, as torch.onnx.export writes one (`model.onnx` and
    `model.onnx.data`); with dropout, a training-mode Dropout --fix removes."""
    folder.mkdir(parents=True, exist_ok=True)
    first = (h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop") if dropout
             else h.make_node("Identity", ["x"], ["d"], name="drop"))
    inits = [nh.from_array(np.arange(1024, dtype=np.float32), "w"), nh.from_array(np.full(1024, 3.0, np.float32), "b")]
    if dropout:
        inits += [nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "tm")]
    g = h.make_graph([first, h.make_node("Add", ["d", "w"], ["s"], name="add"), h.make_node("Mul", ["s", "b"], ["y"],
                     name="mul")], "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 1024])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 1024])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, folder / name, save_as_external_data=True, location=f"{name}.data", size_threshold=1024)
    return folder / name


def _runs(path: Path) -> np.ndarray:
    x = np.ones((2, 1024), np.float32)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _fix(tmp_path: Path, source: Path, dest: Path) -> subprocess.CompletedProcess:
    run = onnxlint("--no-cache", "--no-progress", "--fix", "-o", dest, "--", source, cwd=tmp_path)
    assert run.returncode == 0 and "wrote" in run.stdout, run.stdout + run.stderr
    return run


def test_o_over_an_exported_model_keeps_the_exporters_data_file(tmp_path):
    """`--fix -o out/model.onnx` over a model torch exported there: its `model.onnx.data` (onnxlint's name for a
    data file) was removed once the new model was in place, as no `*.onnx` in out/ named it any more; a model
    beside out/ that reads it (`location: out/model.onnx.data`) then failed to load. Only a data file onnxlint
    wrote is replaced by the next run; a run again keeps one copy of the fixed weights."""
    source = _export(tmp_path / "src", "in.onnx")
    out = tmp_path / "out"
    _export(out, dropout=False)
    users = (out / "model.onnx.data").read_bytes()
    reader = onnx.load(out / "model.onnx", load_external_data=False)  # beside out/, naming the exporter's file
    for t in reader.graph.initializer:
        for e in t.external_data:
            e.value = "out/model.onnx.data" if e.key == "location" else e.value
    onnx.save(reader, tmp_path / "reader.onnx")
    expected = _runs(tmp_path / "reader.onnx")
    for data in ("model.onnx.1.data", "model.onnx.2.data", "model.onnx.1.data"):
        _fix(tmp_path, source, out / "model.onnx")
        assert sorted(os.listdir(out)) == ["model.onnx", data, "model.onnx.data"]
        assert (out / "model.onnx.data").read_bytes() == users
        np.testing.assert_array_equal(_runs(tmp_path / "reader.onnx"), expected)
        _runs(out / "model.onnx")


def test_the_data_file_onnxlint_writes_says_so_and_loads(tmp_path):
    """What lets a later run tell its own data file from an exporter's: its first bytes; the tensors follow at
    DATA_ALIGN-aligned offsets, as ORT, onnx and the lint read them."""
    from onnxlint.fixers import write

    source = _export(tmp_path / "src", "in.onnx")
    (tmp_path / "out").mkdir()
    _fix(tmp_path, source, tmp_path / "out" / "m.onnx")
    data = (tmp_path / "out" / "m.onnx.data").read_bytes()
    assert data.startswith(write.DATA_HEADER)
    offsets = [int(e.value) for t in onnx.load(tmp_path / "out" / "m.onnx", load_external_data=False).graph.initializer
               for e in t.external_data if e.key == "offset"]
    assert offsets and min(offsets) >= len(write.DATA_HEADER) and all(o % write.DATA_ALIGN == 0 for o in offsets)
    np.testing.assert_allclose(_runs(tmp_path / "out" / "m.onnx")[0], (1.0 + np.arange(1024)) * 3.0)
    run = onnxlint("--no-cache", "--", tmp_path / "out" / "m.onnx", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
