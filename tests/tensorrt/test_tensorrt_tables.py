"""The support tables (tensorrt/tables.py): how each was made, how versions compare and resolve to a table, and the
verdict vocabulary rule files use (tensorrt/verdicts.py)."""

import json

from packaging.version import Version

from onnxlint.support.resources import data_dir
from onnxlint.tensorrt import tables, versions
from onnxlint.tensorrt import verdicts as trt_verdicts

RTX = "10.1+rtx1.4"


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
    ver, note = tables.resolve("10.10")  # newer than every 10.x table: the TensorRT-RTX parser's, with a note
    assert ver == RTX and "10.10" in note
    assert tables.resolve("8.6") == ("8.6", None)
    ver, note = tables.resolve("8.6.1")
    assert ver == "8.6" and note
    assert tables.resolve(None)[0] == tables.default_version()


def test_statuses_and_reasons_are_declared():
    assert set(trt_verdicts.STATUSES) == {"supported", "restricted", "unsupported"}
    for r in ("plugin", "not-supported", "dtype", "cast-type", "constant-input", "attribute", "outputs", "op-version"):
        assert r in trt_verdicts.REASONS
