"""Reliability: >= 2,000 seeded bad inputs; every one ends in exit 0/1/2 with no traceback or hang."""

import os

import fuzzcases
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h


@pytest.mark.parametrize("name,data", fuzzcases.structural(), ids=[n for n, _ in fuzzcases.structural()])
def test_structural_breakage(tmp_path, name, data):
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    outcome, rc, detail = fuzzcases.run_case(p)
    assert outcome == "ok", detail


def test_two_thousand_mutations(tmp_path):
    n = int(os.environ.get("ONNXLINT_FUZZ_CASES", "2000"))
    counts = fuzzcases.run(n, seed=1234, workdir=tmp_path)
    print({k: v for k, v in counts.items() if k != "failures"})
    assert counts["cases"] == n
    assert counts["traceback"] == 0 and counts["hang"] == 0, counts["failures"]


def test_directory_named_like_a_model(tmp_path, cli):
    d = tmp_path / "x.onnx"
    d.mkdir()
    rc, _, err = cli(d)
    assert rc == 2 and str(d) in err and len(err.strip().splitlines()) == 1


def test_unreadable_file(tmp_path, cli):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    p = tmp_path / "m.onnx"
    p.write_bytes(b"x")
    p.chmod(0)
    rc, _, err = cli(p)
    assert rc == 2 and "permission denied" in err


def test_deep_graphs_do_not_recurse(save, lint_json):
    # a 20,000-node chain: iterative walks, no RecursionError
    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(20000)]
    m = make_model(nodes, [vi("v0", T.FLOAT, ["n"])], [vi("v20000", T.FLOAT, ["n"])])
    rc, findings = lint_json(save(m))
    assert rc == 0 and findings == []
