"""ORT's own op schemas (ort.schema_registry): read from the binaries, and what a node of such an op resolves to."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import onnx
import pytest
from conftest import ROOT, make_model, vi
from onnx import TensorProto
from onnx import helper as h

import onnxlint
from onnxlint.ort import kernel_registry as kernels
from onnxlint.ort import schema_registry

sys.path.insert(0, str(ROOT / "tools"))
import gen_ort_schemas  # noqa: E402


def _simplified_layernorm(dtype: int = TensorProto.FLOAT16, opset: int = 21) -> onnx.ModelProto:
    """What ORT's GenAI builder and transformer optimizer write: SimplifiedLayerNormalization in the ONNX domain,
    between two ops onnx knows (an RMSNorm whose neighbours run on CUDA)."""
    scale = h.make_tensor("scale", dtype, [8], [1.0] * 8)
    nodes = [h.make_node("Relu", ["x"], ["a"], name="pre"),
             h.make_node("SimplifiedLayerNormalization", ["a", "scale"], ["b"], name="rms", axis=-1, epsilon=1e-5),
             h.make_node("Relu", ["b"], ["y"], name="post")]
    return make_model(nodes, [vi("x", dtype, [1, 4, 8])], [vi("y", dtype, [1, 4, 8])], [scale], opset=opset)


def test_every_kernel_table_release_has_its_schemas_read_from_its_wheel():
    data = json.loads(gzip.decompress((kernels.kernels_dir() / "ort-schemas.json.gz").read_bytes()))
    assert schema_registry.releases() == kernels.releases("cpu")
    assert set(kernels.releases("cuda")) <= set(schema_registry.releases())
    covered = 0
    for text, mask in data["sources"]:
        assert text.endswith("(get_all_operator_schema)") and ".whl" in text
        covered |= mask
    assert covered == (1 << len(data["releases"])) - 1
    # ORT's files only: onnx's own schemas (compiled into ORT) are the installed onnx's to answer
    assert all(row[6].startswith("core/") for row in data["schemas"])


def test_onnx_domain_ops_ort_defines_resolve_to_its_schema():
    assert schema_registry.get_schema("SimplifiedLayerNormalization", 22, "ai.onnx") is None  # onnx has none
    assert schema_registry.since_version("SimplifiedLayerNormalization", 22, "ai.onnx") == 1  # ORT's, open-ended
    assert schema_registry.since_version("SimplifiedLayerNormalization", 7, "ai.onnx") == 1
    # ORT's LayerNormalization-1 before onnx's 17, onnx's from 17 on; ThresholdedRelu-1 before onnx's 10
    assert schema_registry.since_version("LayerNormalization", 15, "ai.onnx") == 1
    assert schema_registry.since_version("LayerNormalization", 18, "ai.onnx") == 17
    assert schema_registry.since_version("ThresholdedRelu", 8, "ai.onnx") == 1
    assert schema_registry.since_version("ThresholdedRelu", 12, "ai.onnx") == 10
    assert schema_registry.since_version("Relu", 14, "ai.onnx") == 14  # onnx's, untouched
    assert schema_registry.since_version("NoSuchOp", 14, "ai.onnx") is None
    ins, outs = schema_registry.formal_params("SimplifiedLayerNormalization", 21, "ai.onnx")
    assert [p[:2] for p in ins] == [("X", "T"), ("scale", "V")] and outs[0][:2] == ("Y", "V")
    # a contrib op's since-version is its schema's, not the domain version the model imports
    assert schema_registry.since_version("GroupQueryAttention", 1, "com.microsoft") == 1
    assert schema_registry.formal_params("MatMulNBits", 1, "com.microsoft")[0][0][:2] == ("A", "T1")
    # deprecated at 10: ORT registers that version to refuse it
    scale = schema_registry.schema("Scale", 12, "ai.onnx")
    assert scale is not None and scale.since_version == 10 and scale.deprecated


def test_ort_only_ops():
    assert schema_registry.ort_only("SimplifiedLayerNormalization", 21, "ai.onnx")
    assert schema_registry.ort_only("LayerNormalization", 15, "ai.onnx")  # only ORT defines it before opset 17
    assert not schema_registry.ort_only("LayerNormalization", 17, "ai.onnx")
    assert schema_registry.ort_only("MatMulNBits", 1, "com.microsoft")
    assert schema_registry.ort_only("ReorderInput", 1, "com.microsoft.nchwc")
    assert not schema_registry.ort_only("Relu", 14, "ai.onnx")
    assert not schema_registry.ort_only("EfficientNMS_TRT", 17, "ai.onnx")  # TensorRT's plugin, registered for its EP
    assert not schema_registry.ort_only("grid_sampler", 1, "mmcv")


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT16, TensorProto.FLOAT])
def test_simplified_layernorm_gets_its_cuda_kernel_and_no_boundary(dtype):
    model = _simplified_layernorm(dtype)
    for opt in ("disabled", "all"):
        pl = onnxlint.predict(model, "ort-cuda", ort_version="1.24.4", ort_optimization=opt)
        by_name = {p.node.name: p for p in pl.nodes.values()}
        assert by_name["rms"].status == "device" and by_name["rms"].ep == "CUDAExecutionProvider", by_name["rms"]
        assert pl.summary()["unsupported"] == 0 and pl.boundaries == []
    cpu = onnxlint.predict(model, "ort-cpu", ort_version="1.24.4")
    assert {p.node.name: p.status for p in cpu.nodes.values()}["rms"] == "device"
    report = onnxlint.lint(model, onnxlint.Settings.from_config(None, targets=["ort-cuda"], ort_version="1.24.4"))
    assert "OLX202" not in {f.code for f in report.findings}


def test_simplified_layernorm_model_is_one_ort_runs():
    ort = pytest.importorskip("onnxruntime")
    model = _simplified_layernorm(TensorProto.FLOAT)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    import numpy as np

    (y,) = sess.run(None, {"x": np.ones((1, 4, 8), np.float32)})
    assert y.shape == (1, 4, 8)


def test_installed_onnxruntime_registers_exactly_its_shipped_schemas():
    """The data is the binary's: the installed onnxruntime's own schemas are the rows of its release."""
    installed = kernels.installed_ort_version()
    if installed is None or installed not in schema_registry.releases():
        pytest.skip("no installed onnxruntime of a release the table covers")
    proc = subprocess.run([sys.executable, "-c", gen_ort_schemas.DUMP_SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    live = {json.dumps(r) for r in json.loads(proc.stdout)["schemas"]}
    data = json.loads(gzip.decompress((kernels.kernels_dir() / "ort-schemas.json.gz").read_bytes()))
    bit = 1 << data["releases"].index(installed)
    shipped = {json.dumps(r[:-1]) for r in data["schemas"] if r[-1] & bit}
    assert live == shipped


def test_pack_shares_rows_and_the_registry_reads_them(tmp_path):
    row = ["ai.onnx", "OnlyOrt", 1, False, [["X", "T", "single"]], [["Y", "T", "single"]], "core/graph/contrib_ops/x.cc"]
    newer = ["ai.onnx", "OnlyOrt", 3, False, [["X", "T", "single"]], [["Y", "T", "single"]], "core/graph/contrib_ops/x.cc"]
    for v, rows in (("1.1.0", [row]), ("1.2.0", [row, newer])):
        (tmp_path / f"{v}-schemas.json").write_text(json.dumps(
            {"ort_version": v, "source": f"w-{v}.whl (get_all_operator_schema)", "read": "2026-12-04", "schemas": rows}))
    out = gen_ort_schemas.pack(tmp_path, tmp_path / "out.json.gz")
    doc = json.loads(gzip.decompress(out.read_bytes()))
    assert doc["releases"] == ["1.1.0", "1.2.0"] and doc["format"] == schema_registry.PACKED_FORMAT
    assert sorted(r[2:3] + r[-1:] for r in doc["schemas"]) == [[1, 0b11], [3, 0b10]]
