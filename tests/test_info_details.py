"""A run that shows no info computes no info's details (message, hint, fixability): they are computed for what
is shown, and every output that shows infos (JSON, --show-info, --statistics), fresh or from the result cache,
has them all."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h


def _dynamic_reshapes(n: int = 3) -> onnx.ModelProto:
    """n blocks of Shape -> Gather -> Concat -> Reshape (OLX309, an info fold-shapes can fix) and a Dropout (a
    warning) at the end."""
    nodes, x = [], "x"
    for i in range(n):
        nodes += [h.make_node("Shape", [x], [f"s{i}"], name=f"shape{i}"),
                  h.make_node("Gather", [f"s{i}", "idx0"], [f"b{i}"], name=f"gather{i}", axis=0),
                  h.make_node("Concat", [f"b{i}", "tail"], [f"ns{i}"], name=f"concat{i}", axis=0),
                  h.make_node("Reshape", [x, f"ns{i}"], [f"r{i}"], name=f"reshape{i}")]
        x = f"r{i}"
    nodes.append(h.make_node("Dropout", [x], ["y"], name="drop"))
    return make_model(nodes, [vi("x", T.FLOAT, ["batch", 4])], [vi("y", T.FLOAT, ["batch", 4])],
                      [init("idx0", np.array([0], np.int64)), init("tail", np.array([4], np.int64))])


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_dynamic_reshapes(), p)
    return p


@pytest.fixture
def asked(monkeypatch):
    """The findings whose fixability the lint asked for (fixers.base.fix_for's calls), by rule code."""
    from onnxlint.fixers import base

    calls: list[str] = []
    real = base.fix_for

    def fix_for(rule, node, model=None, lint=None):
        calls.append(rule.id)
        return real(rule, node, model, lint)

    monkeypatch.setattr(base, "fix_for", fix_for)
    return calls


def test_a_text_run_asks_nothing_of_the_infos_it_does_not_show(cli, model, asked):
    rc, out, _ = cli(model, "--no-cache", "--no-progress")
    assert "3 infos not shown" in out and "OLX309" not in out
    assert "OLX309" not in asked


@pytest.mark.parametrize("extra", [["--format", "json"], ["--show-info"], ["--statistics"]])
def test_what_shows_infos_gets_their_details(cli, model, asked, extra):
    cli(model, "--no-cache", "--no-progress", *extra)
    assert asked.count("OLX309") == 3


def test_infos_in_json_have_their_message_hint_and_fixability(lint_json, model):
    _, found = lint_json(model, "--no-cache")
    infos = [f for f in found if f["code"] == "OLX309"]
    assert len(infos) == 3
    for f in infos:
        assert f["message"].startswith("Reshape takes its shape from a run-time computation (ns")
        assert f["fixable"] and f["fix"] == "fold-shapes" and f["hint"] == "fixable with --fix (fold-shapes)"


def test_a_severity_raised_to_warning_is_shown_with_its_details(cli, model, tmp_path, asked):
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint.severity]\nOLX309 = "warning"\n')
    rc, out, _ = cli(model, "--no-cache", "--no-progress")
    assert "OLX309" in out and "Reshape takes its shape from a run-time computation" in out
    assert "hint: fixable with --fix (fold-shapes)" in out and asked.count("OLX309") == 3


def test_a_cached_text_run_does_not_answer_a_json_run(cli, model, tmp_path, monkeypatch):
    """The text run stores reports whose infos have no details; a JSON run over the same cache folder lints again
    (the settings differ in info_details, which the key holds) and prints what a run without the cache prints."""
    monkeypatch.chdir(tmp_path)
    text = cli(model, "--no-progress")
    assert cli(model, "--no-progress") == text  # a hit
    fresh = cli(model, "--no-cache", "--format", "json")
    assert cli(model, "--format", "json") == fresh
    assert cli(model, "--format", "json") == fresh
    assert json.loads(fresh[1]) and cli(model, "--no-progress") == text
