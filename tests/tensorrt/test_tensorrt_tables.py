"""The support tables (tensorrt/tables.py): how each was made, how versions compare and resolve to a table, and the
verdict vocabulary rule files use (tensorrt/verdicts.py)."""

import json

from packaging.version import Version

from onnxlint.support.resources import data_dir
from onnxlint.tensorrt import tables, versions
from onnxlint.tensorrt import verdicts as trt_verdicts

RTX = "10.1+rtx1.4"
# the newest TensorRT-RTX table shipped, by its release read as a version from the file names
NEWEST_RTX = max((v for v in tables.verified_versions() if "+rtx" in v), key=lambda v: Version(v.split("+rtx")[1]))


def test_tables_say_how_they_were_made():
    assert tables.verified_versions(), "no parser-verified table shipped"
    for v in tables.available():
        assert tables.load(v)["verified"] in ("parser", "docs"), v
    assert set(tables.docs_only_versions()) >= {"10.0", "10.1"}
    for v in tables.verified_versions():
        t = json.loads((data_dir() / "tensorrt" / f"trt-{v}.json").read_text())
        assert t["verified"] == "parser" and "probes" in t["source"], v


def test_versions_compare_as_versions_not_floats():
    vs = tables.available()
    assert vs == sorted(vs, key=versions.sort_key)
    assert all(Version(v) for v in vs)
    assert versions.version_key("10.10") > versions.version_key("10.1")
    ver, note = tables.resolve("10.10")  # newer than every 10.x table: the newest TensorRT-RTX parser's, with a note
    assert ver == NEWEST_RTX and "10.10" in note
    assert tables.resolve("8.6") == ("8.6", None)
    ver, note = tables.resolve("8.6.1")
    assert ver == "8.6" and note
    assert tables.resolve(None)[0] == tables.default_version()


def test_statuses_and_reasons_are_declared():
    assert set(trt_verdicts.STATUSES) == {"supported", "restricted", "unsupported"}
    for r in ("plugin", "not-supported", "dtype", "cast-type", "constant-input", "attribute", "outputs", "op-version"):
        assert r in trt_verdicts.REASONS


def test_the_default_is_the_newest_tensorrt_rtx_table():
    """A run that names no version checks the newest table measured (tools/follow_releases.py adds one per RTX
    release); asking for a table by its label gets that table."""
    assert tables.default_version() == NEWEST_RTX
    assert tables.resolve(None) == (NEWEST_RTX, None)
    for v in tables.verified_versions():
        assert tables.resolve(v) == (v, None)
    ver, note = tables.resolve("11.0")  # a newer line than any table: the newest RTX parser stands in, said so
    assert ver == NEWEST_RTX and "11.0" in note


def test_rtx_tables_sort_by_release_as_versions(tmp_path, monkeypatch):
    labels = ["10.1+rtx1.10", "10.1+rtx1.7", "10.1", "10.1+rtx1.4", "8.6", "10.1+rtx2.0"]
    assert sorted(labels, key=versions.sort_key) == ["8.6", "10.1", "10.1+rtx1.4", "10.1+rtx1.7", "10.1+rtx1.10",
                                                     "10.1+rtx2.0"]
    for label in ("10.1+rtx1.7", "10.1+rtx1.10"):  # the default from the file names: 1.10 is newer than 1.7
        (tmp_path / f"trt-{label}.json").write_text(json.dumps({"verified": "parser", "version": label, "ops": {}}))
    monkeypatch.setattr(tables, "_base", lambda: tmp_path)
    tables.default_version.cache_clear()
    try:
        assert tables.default_version() == "10.1+rtx1.10"
    finally:
        tables.default_version.cache_clear()


def test_an_rtx_release_without_a_table_gets_the_newest_table_not_newer(monkeypatch):
    rtx = [v for v in tables.available() if versions.is_rtx(v)]
    assert len(rtx) >= 2
    monkeypatch.setattr(tables, "available", lambda: ["8.6", "10.1", rtx[0], rtx[-1]])
    first, last = versions.rtx_release(rtx[0]), versions.rtx_release(rtx[-1])
    between = f"10.1+rtx{first.major}.{first.minor}.99"  # after the oldest table's release, before the newest's
    assert versions.rtx_release(between) < last
    ver, note = tables.resolve(between)
    assert ver == rtx[0] and between in note
    ver, note = tables.resolve(f"10.1+rtx{last.major}.{last.minor + 1}")  # newer than every table: the newest
    assert ver == rtx[-1] and note
    ver, note = tables.resolve("10.1+rtx0.9")  # older than every table: the oldest
    assert ver == rtx[0] and note


def test_an_rtx_release_spelled_with_a_separator_names_that_release():
    # packaging reads '10.1+rtx-1.6' and '10.1+rtx_1.6' as '10.1+rtx.1.6': the release is 1.6 still (was: no
    # release read, so the oldest RTX table, 1.4)
    for asked in ("10.1+rtx-1.6", "10.1+rtx_1.6", "10.1+rtx.1.6"):
        assert versions.rtx_release(str(versions.requested(asked))) == versions.rtx_release("10.1+rtx1.6")
        assert tables.resolve(asked)[0] == "10.1+rtx1.6"


def test_the_cli_checks_the_newest_rtx_table_unless_asked(save, lint_json):
    from onnx import TensorProto as T
    from onnx import helper as h

    # Compress: no RTX parser has an importer for it, so every table gives a finding that names what it checked
    m = h.make_model(h.make_graph([h.make_node("Compress", ["x", "keep"], ["y"], name="compress", axis=0)], "g",
                                  [h.make_tensor_value_info("x", T.FLOAT, [4, 3]), h.make_tensor_value_info("keep", T.BOOL, [4])],
                                  [h.make_tensor_value_info("y", T.FLOAT, ["k", 3])]),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = save(m)
    _, found = lint_json(p, "--target", "tensorrt", "--no-cache")
    assert {f["checked_against"] for f in found if f["target"] == "tensorrt"} == {versions.product(NEWEST_RTX)}
    for v in [v for v in tables.verified_versions() if versions.is_rtx(v)]:
        _, found = lint_json(p, "--target", "tensorrt", "--no-cache", "--trt-version", v)
        assert {f["checked_against"] for f in found if f["target"] == "tensorrt"} == {versions.product(v)}, v
