"""Kernel tables: read from ORT's own binaries per release, packed across releases, resolved per release."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from onnxlint.ort import kernel_registry as kernels
from onnxlint.ort import partitioner as placement

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "data" / "upstream" / "ort"
KDIR = ROOT / "onnxlint" / "data" / "kernels"
END = kernels.OPEN_END

# Every release on PyPI from the first line read (pip index versions, December 2026).
CPU_RELEASES = ["1.16.0", "1.16.1", "1.16.2", "1.16.3", "1.17.0", "1.17.1", "1.17.3", "1.18.0", "1.18.1", "1.19.0",
                "1.19.2", "1.20.0", "1.20.1", "1.20.2", "1.21.0", "1.21.1", "1.22.0", "1.22.1", "1.23.0", "1.23.1",
                "1.23.2", "1.24.1", "1.24.2", "1.24.3", "1.24.4", "1.25.0", "1.25.1", "1.26.0", "1.27.0", "1.28.0",
                "1.29.0", "1.30.0", "1.31.0", "1.31.1", "1.32.0"]
CUDA_RELEASES = ["1.17.0", "1.17.1", "1.18.0", "1.18.1", "1.19.0", "1.19.2", "1.20.0", "1.20.2", "1.21.0", "1.21.1",
                 "1.22.0", "1.23.0", "1.23.2", "1.24.1", "1.24.4", "1.25.0", "1.25.1", "1.26.0", "1.27.0", "1.28.0",
                 "1.29.0", "1.30.0", "1.31.0", "1.31.1"]


def ranges(table, op, domain="ai.onnx"):
    return list(dict.fromkeys((r[0], r[1]) for r in table.rows(domain, op) or ()))


def union_view(ops: dict) -> dict:
    """Rows of one version range merged into one (the OperatorKernels.md view)."""
    out = {}
    for domain, by_op in ops.items():
        for op, rows in by_op.items():
            merged = {}
            for lo, hi, cons in rows:
                slot = merged.setdefault((lo, hi), {})
                for k, v in cons.items():
                    slot.setdefault(k, set()).update(v)
            out.setdefault(domain, {})[op] = [[lo, hi, {k: sorted(v) for k, v in sorted(c.items())}]
                                              for (lo, hi), c in sorted(merged.items(), reverse=True)]
    return out


# --------------------------------------------------------------------------- coverage and format


def test_every_published_release_is_shipped_and_exact():
    assert kernels.releases("cpu") == CPU_RELEASES
    assert kernels.releases("cuda") == CUDA_RELEASES
    for ep, versions in kernels.available().items():
        for v in versions:
            assert kernels.nearest(ep, v) == (v, True)
            t = kernels.load(ep, v)
            assert t.ort_version == v and t.ep == kernels.EPS_LONG[ep] and t.ops


def test_old_per_version_files_are_gone_and_tables_are_small():
    assert not list(KDIR.glob("ort-*-*.json")), "per-release JSON files are replaced by ort-<ep>.json.gz"
    total = sum(p.stat().st_size for p in KDIR.iterdir())
    assert total < 2_000_000


def test_sources_name_the_wheel_each_release_was_read_from():
    t = kernels.load("cuda", "1.24.4")
    assert "onnxruntime_gpu-1.24.4-" in t.source and "CUDA 12 build" in t.source and "stubbed" in t.source
    assert "onnxruntime-1.24.4-" in kernels.load("cpu", "1.24.4").source
    assert "CUDA 11 build" in kernels.load("cuda", "1.17.1").source  # PyPI's 1.17/1.18 GPU wheels are CUDA 11.8
    # 1.20.2 was published as onnxruntime-gpu only: its CPU table is the GPU wheel's CPU provider
    assert "onnxruntime_gpu-1.20.2-" in kernels.load("cpu", "1.20.2").source


def test_each_packed_table_is_read_and_decompressed_once(monkeypatch):
    """What keeps loading cheap (about 10 ms, measured in benchmarks, not here: a CPU-time bound of 20 times that
    failed under a loaded CI): one packed file an EP, read and decompressed once a process, whatever the releases
    asked for."""
    kernels._packed.cache_clear()
    kernels.load.cache_clear()
    inflated = []
    real = kernels.zlib.decompress
    monkeypatch.setattr(kernels.zlib, "decompress", lambda data, *a, **k: inflated.append(len(data)) or real(data, *a, **k))
    for ep in ("cpu", "cuda"):
        for release in kernels.releases(ep)[-3:]:
            assert kernels.load(ep, release).ops
    assert len(inflated) == 2, inflated


def test_packed_file_shares_rows_across_releases():
    data = json.loads(gzip.decompress((KDIR / "ort-cuda.json.gz").read_bytes()))
    assert data["format"] == kernels.PACKED_FORMAT and data["releases"] == CUDA_RELEASES
    every = (1 << len(CUDA_RELEASES)) - 1
    shared = [r for by_op in data["ops"].values() for rows in by_op.values() for r in rows if r[3] == every]
    assert len(shared) > 200


# --------------------------------------------------------------------------- facts read from the binaries


def _gpu_build_installed() -> bool:
    from importlib import metadata

    try:
        metadata.version("onnxruntime-gpu")
    except metadata.PackageNotFoundError:
        return False
    return True


def test_installed_onnxruntime_equals_its_shipped_table():
    """The test extra pins onnxruntime==1.24.4; whichever is installed, its live registry is its table."""
    installed = kernels.installed_ort_version()
    if installed is None:
        pytest.skip("onnxruntime not installed")
    try:
        version, live = kernels.live_registry()
    except RuntimeError as e:
        if not _gpu_build_installed():
            raise
        # the GPU build builds its CUDA registry too, which dies without CUDA libraries (signal 11 measured)
        pytest.skip(f"onnxruntime-gpu's registry cannot be read on this machine: {e}")
    if version not in kernels.releases("cpu"):
        pytest.skip(f"onnxruntime {version} is newer than the shipped tables")
    assert kernels.load("cpu", version).ops == live["CPUExecutionProvider"]["ops"]


def test_cuda_argmax_ranges_differ_between_releases():
    assert ranges(kernels.load("cuda", "1.20.0"), "ArgMax") == [(1, 11)]
    assert ranges(kernels.load("cuda", "1.20.2"), "ArgMax") == [(1, 11)]
    assert ranges(kernels.load("cuda", "1.24.4"), "ArgMax") == [(13, END), (12, 12), (1, 11)]


def test_cuda_1_24_4_resize_and_gridsample_as_registered():
    t = kernels.load("cuda", "1.24.4")
    assert ranges(t, "Resize") == [(18, END), (13, 17), (11, 12), (10, 10)]  # docs say 19+: not in the binary
    assert t.lookup("ai.onnx", "Resize", 18, lambda p: {"T1": "tensor(float)"}).ok
    assert t.lookup("ai.onnx", "Resize", 19, lambda p: {}).reason == "opset"
    assert ranges(t, "GridSample") == [(16, END)]  # docs list 22+ and 20-21 too
    assert t.lookup("ai.onnx", "GridSample", 20, lambda p: {}).reason == "opset"


def test_no_type_constraints_means_any_type():
    t = kernels.load("cuda", "1.24.4")
    assert t.rows("ai.onnx", "NonMaxSuppression") == [[11, END, {}], [10, 10, {}]]
    assert t.lookup("ai.onnx", "NonMaxSuppression", 11, lambda p: {"T": "tensor(double)"}).ok
    assert t.lookup("ai.onnx", "NonMaxSuppression", 10, lambda p: {}).ok


def test_kernel_defs_that_do_not_merge_exactly_stay_apart():
    """CPU BatchNormalization-15 is registered for (T, T1, T2) = all float or all double, never mixed."""
    t = kernels.load("cpu", "1.24.4")
    rows = [r for r in t.rows("ai.onnx", "BatchNormalization") if r[0] == 15]
    assert len(rows) == 2
    same = {"T": "tensor(float)", "T1": "tensor(float)", "T2": "tensor(float)"}
    mixed = {"T": "tensor(float)", "T1": "tensor(double)", "T2": "tensor(double)"}
    assert t.lookup("ai.onnx", "BatchNormalization", 15, lambda p: same).ok
    m = t.lookup("ai.onnx", "BatchNormalization", 15, lambda p: mixed)
    # each type alone is a kernel's: the combination is what none takes (it read "T1=double not supported
    # (supported: double, float)")
    assert m.reason == "dtype" and m.detail == "T1=double not supported with T=float (supported with it: float)"


def test_a_dtype_miss_names_the_type_no_kernel_takes():
    """CUDA OneHot registers (indices, depth) int32/int32 and int64/int64: int64 indices with a float depth missed
    the first kernel on T1=int32 and read "T1=int64 not supported (supported: int32, int64)", a type the message
    itself lists; it is the depth's float that no kernel takes."""
    t = kernels.load("cuda", "1.31.1")
    bound = {"T1": "tensor(int64)", "T2": "tensor(float)", "T3": "tensor(float)"}
    m = t.lookup("ai.onnx", "OneHot", 11, lambda p: bound)
    assert m.reason == "dtype" and m.detail == "T2=float not supported (supported: int32, int64)"
    m = t.lookup("ai.onnx", "OneHot", 11, lambda p: dict(bound, T2="tensor(int32)"))
    assert m.detail == "T2=int32 not supported with T1=int64 (supported with it: int64)"
    assert t.lookup("ai.onnx", "OneHot", 11, lambda p: dict(bound, T2="tensor(int64)")).ok


def test_a_dtype_miss_no_one_type_answers_for_is_the_combination():
    """Kernels (a, a, a) and (a, b, b) and a node (a, a, b): each type is a kernel's beside T1=a, yet none takes
    the three together; no one type is named as the miss."""
    a, b = "tensor(float)", "tensor(int64)"
    rows = [[1, 1, {"T1": [a], "T2": [a], "T3": [a]}], [1, 1, {"T1": [a], "T2": [b], "T3": [b]}]]
    t = kernels.KernelTable("cuda", "0", "test", {"ai.onnx": {"Op": rows}})
    m = t.lookup("ai.onnx", "Op", 1, lambda p: {"T1": a, "T2": a, "T3": b})
    assert m.reason == "dtype" and m.detail == "T1=float, T2=float, T3=int64 not supported together (each alone is)"


def test_merge_defs():
    f, d = "tensor(float)", "tensor(double)"
    got = kernels.merge_defs([["ai.onnx", "A", 1, END, {"T": [f]}], ["ai.onnx", "A", 1, END, {"T": [d]}],
                              ["ai.onnx", "B", 1, 5, {"T": [f]}], ["ai.onnx", "B", 1, 5, {}],
                              ["ai.onnx", "C", 7, END, {"T": [f], "U": [f]}], ["ai.onnx", "C", 7, END, {"T": [d], "U": [d]}],
                              ["ai.onnx", "C", 1, 6, {"T": [f], "U": [f, d]}], ["ai.onnx", "C", 1, 6, {"T": [d], "U": [f, d]}]])
    assert got["ai.onnx"]["A"] == [[1, END, {"T": [d, f]}]]
    assert got["ai.onnx"]["B"] == [[1, 5, {}]]
    assert got["ai.onnx"]["C"] == [[7, END, {"T": [d], "U": [d]}], [7, END, {"T": [f], "U": [f]}],
                                   [1, 6, {"T": [d, f], "U": [d, f]}]]


def test_contrib_ops_carry_formal_parameters():
    t = kernels.load("cuda", "1.24.4")
    p = t.params["com.microsoft"]["FusedMatMul"]
    assert p["inputs"][0] == ["A", "T"] and p["outputs"] == [["Y", "T"]]


def test_lookup_reasons():
    t = kernels.load("cuda", "1.24.4")
    assert t.lookup("ai.onnx", "Equal", 13, lambda p: {"T": "tensor(string)"}).reason == "dtype"
    assert t.lookup("ai.onnx", "Equal", 13, lambda p: {"T": "tensor(float)"}).ok
    assert t.lookup("ai.onnx", "GridSample", 13, lambda p: {}).reason == "opset"
    assert t.lookup("ai.onnx", "StringSplit", 20, lambda p: {}).reason == "not-registered"


# --------------------------------------------------------------------------- resolution


def test_patch_releases_resolve_exactly():
    assert kernels.nearest("cuda", "1.20.2") == ("1.20.2", True)
    assert kernels.nearest("cuda", "1.20.0") == ("1.20.0", True)
    assert kernels.nearest("cpu", "1.20.1") == ("1.20.1", True)
    assert kernels.nearest("cpu", "1.20.2") == ("1.20.2", True)


def test_unpublished_version_gets_nearest_with_one_note():
    assert kernels.nearest("cuda", "1.20.1") == ("1.20.2", False)  # 1.20.1 was never an onnxruntime-gpu release
    assert kernels.nearest("cuda", "1.24.5") == ("1.24.4", False)
    assert kernels.nearest("cpu", "1.99.0") == (CPU_RELEASES[-1], False)
    tables, requested, notes = placement.resolve_tables("ort-cpu", "1.24.5")
    assert requested == "1.24.5" and tables["CPUExecutionProvider"].ort_version == "1.24.4"
    assert len(notes) == 1 and "1.24.4" in notes[0] and "1.24.5" in notes[0]
    tables, _, notes = placement.resolve_tables("ort-cuda", "1.24.4")
    assert notes == [] and {t.ort_version for t in tables.values()} == {"1.24.4"}


def test_resolve_gives_one_note_for_all_providers():
    assert kernels.resolve(["cuda", "cpu"], "1.24.4") == ({"cuda": "1.24.4", "cpu": "1.24.4"}, None)
    versions, note = kernels.resolve(["cuda", "cpu"], "1.24.5")
    assert versions == {"cuda": "1.24.4", "cpu": "1.24.4"}
    assert note == "CUDA and CPU kernel tables of ORT 1.24.4 used (requested 1.24.5, not a release with a shipped table; nearest shipped)"
    versions, note = kernels.resolve(["cuda", "cpu"], "1.17.3")  # a CPU-only patch release
    assert versions == {"cuda": "1.17.1", "cpu": "1.17.3"} and "not published for CUDA" in note


def test_unknown_release_refused_by_load():
    with pytest.raises(LookupError):
        kernels.load("cuda", "1.16.3")


# --------------------------------------------------------------------------- OperatorKernels.md fallback parser


def test_upstream_cpu_markdown_equals_live_registry():
    """The verbatim CPU excerpt of OperatorKernels.md@001d12d2 is the 1.24 line: equal to the 1.24.4 binary's table
    (rows of one range merged, as the markdown shows them)."""
    parsed = kernels.parse_operator_kernels_md((UPSTREAM / "OperatorKernels@001d12d2.cpu-excerpt.md").read_text())
    md = parsed["CPUExecutionProvider"]["ops"]["ai.onnx"]
    binary = union_view(kernels.load("cpu", "1.24.4").ops)["ai.onnx"]
    assert len(md) >= 30
    for op, rows in md.items():
        assert rows == binary[op], op


def test_cuda_markdown_differs_from_the_binary():
    """Why CUDA tables come from the binaries: the docs of the same commit list kernels 1.24.4 does not register."""
    parsed = kernels.parse_operator_kernels_md((UPSTREAM / "OperatorKernels@001d12d2.cuda.md").read_text())["CUDAExecutionProvider"]
    rows = parsed["ops"]["ai.onnx"]["GridSample"]
    assert [(r[0], r[1]) for r in rows] == [(22, END), (20, 21), (16, 19)]
    assert rows[0][2] == {"T1": ["tensor(float)"], "T2": ["tensor(float)"]}
    assert ranges(kernels.load("cuda", "1.24.4"), "GridSample") == [(16, END)]


def test_markdown_round_trip():
    table = {"ops": union_view(kernels.load("cpu", "1.20.1").ops)}
    again = kernels.parse_operator_kernels_md(kernels.to_markdown({"CPUExecutionProvider": table}))
    assert again["CPUExecutionProvider"]["ops"] == table["ops"]


def test_generator_packs_raw_files(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_kernel_tables as gen
    finally:
        sys.path.pop(0)
    f = "tensor(float)"
    raw = tmp_path / "raw"
    for v, defs in (("1.0.0", [["ai.onnx", "A", 1, END, {"T": [f]}]]),
                    ("1.0.1", [["ai.onnx", "A", 1, END, {"T": [f]}], ["ai.onnx", "B", 3, END, {}]])):
        gen.write_raw(raw, "cuda", {"ep": "CUDAExecutionProvider", "ort_version": v, "source": f"test {v}", "defs": defs, "params": {}})
    (out,) = gen.pack(raw, tmp_path / "out")
    data = json.loads(gzip.decompress(out.read_bytes()))
    assert data["releases"] == ["1.0.0", "1.0.1"]
    assert data["ops"]["ai.onnx"] == {"A": [[1, END, 0, 3]], "B": [[3, END, 1, 2]]}


def test_generator_script_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "tools/gen_kernel_tables.py"), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "OperatorKernels.md" in proc.stdout
