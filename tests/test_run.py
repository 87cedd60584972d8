"""The lint run (`onnxlint.commands.lint`) is a service of its own: the CLI only turns arguments into a LintRequest."""

from __future__ import annotations

import json
import pickle

from onnxlint import cli
from onnxlint.commands import lint as run
from onnxlint.config.settings import Settings


def test_a_lint_run_from_python_is_the_cli_run(examples_dir, capsys):
    model = str(examples_dir / "dropout_training.onnx")
    request = run.LintRequest(paths=[model], overrides={"targets": ["ort-cuda"]}, format="json")
    rc = run.execute(request, Settings.from_config(None, targets=["ort-cuda"]))
    out = capsys.readouterr().out
    assert rc == 1 and "OLX010" in {f["code"] for f in json.loads(out)}
    assert cli.main([model, "--target", "ort-cuda", "--format", "json", "--no-cache"]) == rc
    assert capsys.readouterr().out == out


def test_cached_rules_travel_to_a_worker_without_the_rules_they_read(tmp_path):
    """A pool worker gets the rule source with each model: pickled, it is a few bytes (not the RuleSet it
    read), and the copies one run sends share what they read in the worker's process."""
    source = run.CachedRules(tmp_path / "cache")
    rules = source(())
    assert source(()) is rules and len(rules.rules) > 10
    data = pickle.dumps(source)
    assert len(data) < 400, len(data)
    first, second = pickle.loads(data), pickle.loads(data)
    read = first(())
    assert second(()) is read and [r.id for r in read.rules] == [r.id for r in rules.rules]
    assert pickle.loads(pickle.dumps(run.CachedRules(tmp_path / "cache")))(()) is not read  # another run reads again
