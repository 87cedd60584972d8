"""Review 28: a local function's calls are inlined by ORT at every call, so the TensorRT EP's partition
(`--target ort-trt`, ort/tensorrt_ep.py) copies a body once per call. Functions that call the next one twice,
30 deep (2 KB), make 2^29 copies: the partition took 13 GB and minutes before it was killed (21 deep: 55 s,
900 MB). The copies past the model's own nodes are now bounded; one note says where counting stopped."""

from __future__ import annotations

import json
import subprocess

import onnx
import pytest
from bounded import modes, onnxlint
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.ort import tensorrt_ep


def doubling_functions(depth: int, last: str = "Relu") -> onnx.ModelProto:
    """f0 calls f1 twice, f1 calls f2 twice, ..., the last one a Relu: 2^(depth-1) Relus once inlined (or Constants,
    which ORT's graph holds as initializers: no node of it, all the same walked at every call)."""
    ops = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    leaf = h.make_node("Relu", ["a"], ["b"]) if last == "Relu" else \
        h.make_node("Constant", [], ["b"], value=h.make_tensor("v", T.FLOAT, [2], [1.0, 2.0]))
    fs = []
    for i in range(depth):
        body = [leaf] if i == depth - 1 else \
            [h.make_node(f"f{i + 1}", ["a"], ["t"], domain="local"), h.make_node(f"f{i + 1}", ["t"], ["b"], domain="local")]
        fs.append(h.make_function("local", f"f{i}", ["a"], ["b"], body, ops))
    g = h.make_graph([h.make_node("f0", ["x"], ["y"], domain="local", name="call")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    return h.make_model(g, opset_imports=ops, functions=fs, ir_version=8)


@pytest.mark.parametrize("last", ["Relu", "Constant"])
@pytest.mark.parametrize("mode", modes("file", "sarif"))
def test_functions_calling_each_other_twice_cost_the_ort_trt_partition_bounded_work(tmp_path, mode, last):
    onnx.save(doubling_functions(30, last), tmp_path / "m.onnx")
    fmt = ["--format", "sarif"] if mode == "sarif" else []
    try:
        run = onnxlint("--no-cache", "--target", "ort-trt", *fmt, "--", "m.onnx", cwd=tmp_path, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the ort-trt partition of 30 levels of doubling calls ran past 90 s")
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, (run.returncode, run.stderr[-500:])
    if mode == "sarif":  # the Action's format: a document, notes are the text's
        assert json.loads(run.stdout)["runs"][0]["tool"]["driver"]["name"] == "onnxlint"
        return
    said = [n for n in run.stdout.splitlines() if "counted at its first call only" in n]
    assert len(said) == 1 and f"{tensorrt_ep.EXPANSION_LIMIT:,}" in said[0], run.stdout[-2000:]


def test_below_the_limit_every_call_is_still_counted():
    from onnxlint import api

    part = api.predict(doubling_functions(6), target="ort-trt")
    assert (part.trt_nodes, part.subgraphs, part.notes) == (32, 1, [])
