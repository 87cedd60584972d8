"""Issue 40, class 7: a plain lint never imports a fixer plug-in; a broken plug-in costs --fix one clear line.

A package on the path declares a fixer in the `onnxlint.fixers` entry-point group whose module raises when
imported (and writes a marker file, so an import in a worker process or a child is seen too); a user rule names
the fixer. Linting (cache on and off, one file, a folder, --jobs, every format) neither imports it nor fails;
--explain says it cannot be loaded; --fix prints one line naming it and writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import onnx
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

RULE = """\
- id: XPL001
  name: broken-plugin-fix
  severity: warning
  targets: any
  summary: an Identity the plug-in would remove
  explanation: the plug-in's fixer removes it
  match: {op: Identity}
  message: an Identity
  fix: broken-fix
"""


@pytest.fixture
def broken_plugin(tmp_path, monkeypatch):
    """A broken plug-in on sys.path (and on PYTHONPATH, for pool workers and child processes)."""
    from onnxlint.fixers import base
    from onnxlint.rulefiles import rule_schema

    site = tmp_path / "site"
    dist = site / "broken_fix-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-fix\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[onnxlint.fixers]\nbroken-fix = broken_fix_module:fix\n")
    marker = tmp_path / "imported"
    (site / "broken_fix_module.py").write_text(
        f"open({str(marker)!r}, 'a').write('imported\\n')\nraise RuntimeError('the plug-in is broken')\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    rule_schema.rule_schema.cache_clear()
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "plug.yaml").write_text(RULE)
    models = tmp_path / "models"
    models.mkdir()
    for k in range(2):
        m = make_model([h.make_node("Identity", ["x"], ["a"], name="id"), h.make_node("Relu", ["a"], ["y"], name="r")],
                       [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
        onnx.save(m, models / f"m{k}.onnx")
    yield rules, models, marker
    sys.modules.pop("broken_fix_module", None)
    if "broken-fix" in base.REGISTRY.names() and base.REGISTRY.loaded("broken-fix") is not None:
        del base.REGISTRY["broken-fix"]
    rule_schema.rule_schema.cache_clear()


@pytest.mark.parametrize("extra", [[], ["--no-cache"], ["--jobs", "2"], ["--format", "sarif"], ["--format", "json"]])
def test_a_plain_lint_never_imports_a_plugin(broken_plugin, cli, extra):
    rules, models, marker = broken_plugin
    for target in (models / "m0.onnx", models):
        rc, out, err = cli(target, "--rules", rules, "--no-progress", *extra)
        assert rc == 1, err
        assert "XPL001" in out and not err
    rc, out, err = cli(models, "--rules", rules, "--no-progress", *extra)  # again: from the cache, where on
    assert rc == 1 and "XPL001" in out
    assert not marker.exists() and "broken_fix_module" not in sys.modules
    if "json" in extra:
        assert all(f["fix"] == "broken-fix" and f["fixable"] for f in json.loads(out) if f["code"] == "XPL001")


def test_a_lint_in_a_fresh_process_does_not_import_it_either(broken_plugin, tmp_path):
    rules, models, marker = broken_plugin
    run = subprocess.run([sys.executable, "-m", "onnxlint", str(models), "--rules", str(rules), "--no-progress"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1 and "XPL001" in run.stdout and not run.stderr, run.stderr
    assert not marker.exists()


def test_a_broken_plugin_costs_fix_one_clear_line(broken_plugin, cli):
    rules, models, marker = broken_plugin
    before = (models / "m0.onnx").read_bytes()
    rc, out, err = cli(models / "m0.onnx", "--rules", rules, "--fix", "--no-progress")
    assert rc == 1, err
    said = [line for line in (out + err).splitlines() if "broken-fix" in line and "cannot be loaded" in line]
    assert len(said) == 1, out + err
    assert "RuntimeError: the plug-in is broken" in said[0] and "Traceback" not in out + err
    assert (models / "m0.onnx").read_bytes() == before
    rc, out, err = cli("--rules", rules, "--explain", "XPL001")
    assert rc == 0 and "Fix: broken-fix (not available: plug-in fixer 'broken-fix'" in out, out + err
