"""The releases checked are the same on every machine: configuration, else the newest shipped tables; the
installed onnxruntime only with `--ort-version installed`."""

from __future__ import annotations

import json

import pytest

from onnxlint.ort import kernel_registry as kernels
from onnxlint.ort.releases import version_key
from onnxlint.tensorrt import tables, versions


@pytest.fixture
def installed(monkeypatch):
    """Pretend a given onnxruntime release is installed (None: none is)."""
    def _set(version):
        monkeypatch.setattr(kernels, "installed_ort_version", lambda: version)
    return _set


def _newest_common():
    cpu, cuda = set(kernels.releases("cpu")), set(kernels.releases("cuda"))
    return max(cpu & cuda, key=version_key)


def test_default_is_the_newest_release_every_table_has():
    v = kernels.default_release()
    assert v == _newest_common()
    assert v in kernels.releases("cpu") and v in kernels.releases("cuda")


def test_same_output_with_and_without_onnxruntime_installed(examples_dir, cli, installed):
    outs = []
    for version in (None, "1.24.4", "1.17.0"):
        installed(version)
        for fmt in ("text", "json"):
            outs.append((fmt, cli(examples_dir, "--no-cache", "--format", fmt)[1]))
    assert outs[0::2] == [outs[0]] * 3 and outs[1::2] == [outs[1]] * 3
    assert f"Checked against ORT {_newest_common()}, {versions.product(tables.default_version())} (" in outs[0][1]


def test_installed_only_when_asked(examples_dir, cli, installed):
    installed("1.24.4")
    _, out, _ = cli(examples_dir, "--no-cache", "--ort-version", "installed")
    assert "Checked against ORT 1.24.4," in out
    installed(None)
    _, out, _ = cli(examples_dir, "--no-cache", "--ort-version", "installed")
    assert f"ORT {_newest_common()} tables used (--ort-version installed, but no onnxruntime is installed)" in out


def test_config_release_is_used_and_named(tmp_path, examples_dir, cli, installed):
    installed("1.24.4")
    (tmp_path / "m.onnx").write_bytes((examples_dir / "equal_string_cuda.onnx").read_bytes())
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint]\nort-version = "1.20.1"\ntrt-version = "8.6"\n')
    _, out, _ = cli(tmp_path / "m.onnx", "--no-cache")
    # 1.20.1 was never an onnxruntime-gpu release: the summary names the CUDA table that answered for it
    assert "Checked against ORT 1.20.2 CUDA and 1.20.1 CPU tables (asked 1.20.1), TensorRT 8.6." in out
    _, out, _ = cli(tmp_path / "m.onnx", "--no-cache", "--format", "sarif")
    assert json.loads(out)["runs"][0]["properties"]["checkedReleases"].startswith(
        "ORT 1.20.2 CUDA and 1.20.1 CPU tables (asked 1.20.1), TensorRT 8.6")


def test_placement_prints_the_tables_release(examples_dir, cli, installed):
    installed("1.24.4")
    _, out, _ = cli("placement", examples_dir / "equal_string_cuda.onnx", "--format", "json")
    (row,) = json.loads(out)
    assert row["ort_version"] == row["kernel_tables"]["CUDAExecutionProvider"] == _newest_common()
    _, out, _ = cli("placement", examples_dir / "equal_string_cuda.onnx")
    assert f"(ORT {_newest_common()})" in out


def test_default_trt_from_file_names_is_the_newest_parser_verified_table():
    """The summary names the TensorRT table from the file names (a cached run reads no table): the same answer as
    the tables' own `verified` field gives, and the table module imports no onnx."""
    import subprocess
    import sys

    from onnxlint.tensorrt import tables

    assert tables.default_version() == tables.verified_versions()[-1]
    for v in ("8.6", "10.1+rtx1.4", "10.0", "9.0", "8.6.1"):
        assert tables.resolve(v)[0] in tables.available()
    code = "import sys; from onnxlint.tensorrt import tables; tables.resolve('9.0'); print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
