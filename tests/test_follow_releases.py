"""tools/follow_releases.py without the network: the shipped tables unpack into the generators' raw files and pack
back to the very bytes shipped (so a new release is packed beside every shipped one), which releases count as
newer than a table, the TensorRT-RTX table labels, and the release rows read from ort-releases.json."""

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import follow_releases as fr  # noqa: E402
import gen_kernel_tables as kt  # noqa: E402
import gen_ort_schemas as gs  # noqa: E402

from onnxlint.ort import kernel_registry, releases  # noqa: E402


def test_shipped_tables_unpack_and_pack_to_the_same_bytes(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    fr.unpack_kernels(raw)
    kt.pack(raw, out)
    for ep in ("cpu", "cuda"):
        shipped = gzip.decompress((kt.OUT / f"ort-{ep}.json.gz").read_bytes())
        assert gzip.decompress((out / f"ort-{ep}.json.gz").read_bytes()) == shipped, ep
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    fr.unpack_schemas(schemas)
    gs.pack(schemas, out / "ort-schemas.json.gz")
    assert gzip.decompress((out / "ort-schemas.json.gz").read_bytes()) == gzip.decompress(gs.OUT.read_bytes())


def test_newer_means_a_later_release_than_every_table():
    shipped = ["8.6", "10.0", "10.1"]
    found = ["8.6.1", "10.1.0", "10.2.0", "10.2.0.post1", "10.3.0rc1", "11.0.0.114"]
    assert fr._newer(found, shipped) == ["10.2.0", "11.0.0.114"]
    assert fr._newer(["1.31.1", "1.32.0"], ["1.31.1"]) == ["1.32.0"]


def test_rtx_releases_get_a_10x_line_label():
    assert fr.rtx_label("1.7.1.116") == "10.1+rtx1.7"
    assert fr._rtx_of("10.1+rtx1.4") == "1.4"


def test_every_kernel_table_line_has_a_release_row_read_from_its_wheel():
    data = json.loads(releases.LIMITS_FILE.read_text())
    lines = {releases.release(v) for ep in ("cpu", "cuda") for v in kernel_registry.releases(ep)}
    assert lines <= set(releases.limits()) and fr.missing_rows() == []
    for line, row in data["releases"].items():
        assert row["release"].startswith(line + ".") and "session creation" in row["source"], line
    # the newest CPU release, 1.32.0, loads opset 28 and IR 14: its node tests are no longer refused
    assert releases.row("1.32.0").max_opset == 28 and releases.row("1.32.0").max_ir == 14


def test_each_ort_target_defaults_to_its_newest_table():
    assert kernel_registry.default_release(("cpu",)) == kernel_registry.releases("cpu")[-1]
    cuda = kernel_registry.default_release(("cuda", "cpu"))
    assert cuda in kernel_registry.releases("cuda") and cuda == kernel_registry.default_release()


def test_a_new_rtx_table_names_its_wheels_in_sources_md(tmp_path):
    shipped = (ROOT / "data" / "upstream" / "tensorrt" / "SOURCES.md").read_text()
    md = tmp_path / "SOURCES.md"
    md.write_text(shipped)
    for label, version in (("10.1+rtx1.4", "1.4.0.76"), ("10.1+rtx1.5", "1.5.0.114")):  # rows the file has
        assert not fr.record_rtx_source(md, label, version)
    assert md.read_text() == shipped
    assert fr.record_rtx_source(md, "10.1+rtx1.10", "1.10.0.5")  # a new release: its row after every older table's
    assert fr.record_rtx_source(md, "10.1+rtx1.6", "1.6.9.1")  # a rebuilt one: its row replaced
    rows = [ln for ln in md.read_text().splitlines() if ln.startswith("| 8.") or ln.startswith("| 10.")]
    assert [r.split("|")[1].strip() for r in rows][-5:] == ["10.1+rtx1.4", "10.1+rtx1.5", "10.1+rtx1.6", "10.1+rtx1.7",
                                                           "10.1+rtx1.10"]
    assert "`tensorrt-rtx-cu12-libs==1.10.0.5`, `tensorrt-rtx-cu12-bindings==1.10.0.5`" in rows[-1]
    assert "`tensorrt-rtx-cu12-libs==1.6.9.1`" in rows[-3]
