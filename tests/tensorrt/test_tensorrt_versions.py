"""The version table (tensorrt/versions.py): which line's row a version reads, how labels sort and are named."""

from packaging.version import Version

from onnxlint.tensorrt import tables, versions

RTX = "10.1+rtx1.4"


def test_a_version_reads_the_row_of_its_line_or_the_nearest_older_one():
    assert versions.line(Version("8.6")) is versions.LINES[8]
    assert versions.line(Version("9.0")) is versions.LINES[8]  # between two rows: the older row
    assert versions.line(Version("7.1")) is versions.LINES[min(versions.LINES)]  # older than the table: the oldest
    assert versions.line(Version("10.3")) is versions.LINES[10]
    assert versions.line(Version("11.0")) is versions.LINES[max(versions.LINES)]  # newer: the newest
    assert versions.line_of(RTX) is versions.LINES[10]


def test_the_rows_hold_the_measured_line_differences():
    assert versions.LINES[8].if_branch_ranks_must_match and not versions.LINES[10].if_branch_ranks_must_match
    assert versions.LINES[10].rtx_stands_in and not versions.LINES[8].rtx_stands_in


def test_labels_sort_by_line_and_name_their_product():
    assert sorted(["10.1", RTX, "8.6", "10.0", "8.4"], key=versions.sort_key) == ["8.4", "8.6", "10.0", "10.1", RTX]
    assert versions.product("8.6") == "TensorRT 8.6" and versions.product(RTX) == "TensorRT-RTX 1.4"
    assert versions.describe(RTX) == "TensorRT-RTX 1.4's parser (10.x line)" and versions.describe("8.6") == "TensorRT 8.6"
    assert versions.checked("8.6") == "TensorRT 8.6"
    assert versions.checked(RTX).startswith("TensorRT-RTX 1.4 (its 10.x-line parser stands in for TensorRT 10:")


def test_a_new_line_changes_resolution_by_its_row_alone(monkeypatch):
    """A line whose RTX parser does not stand in: a version newer than every table resolves to the nearest numbered
    table, not to RTX's; nothing but the row changed (the shipped tables pinned, so a new table does not move it)."""
    monkeypatch.setattr(tables, "available", lambda: ["8.6", "10.1", RTX])
    assert tables.resolve("10.10")[0] == RTX
    monkeypatch.setitem(versions.LINES, 10, versions.Line("10.x", if_branch_ranks_must_match=False, rtx_stands_in=False))
    assert tables.resolve("10.10")[0] == "10.1"
