"""The command-line contract: what a user sees by default, exit codes, selection checks, baseline."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _many_equal_fallbacks(save, n=6):
    """n Equal-19 nodes on int32: ORT 1.24's CUDA registers Equal only up to 13, so each falls back (one cause)."""
    nodes = [h.make_node("Equal", ["a", "b"], [f"e{i}"], name=f"/block{i}/Equal") for i in range(n)]
    outs = [vi(f"e{i}", T.BOOL, [4]) for i in range(n)]
    return save(make_model(nodes, [vi("a", T.INT32, [4]), vi("b", T.INT32, [4])], outs, opset=19, ir=9))


def test_select_unknown_code_or_prefix_is_a_usage_error(cli, examples_dir):
    for bad in ("OLX9999", "OLX2OO", "XYZ"):
        rc, out, err = cli(examples_dir / "clean_conv.onnx", "--select", bad)
        assert rc == 2 and "unknown rule code or prefix" in err and out == "", (bad, err)
    rc, _, err = cli(examples_dir / "clean_conv.onnx", "--ignore", "OLX2OO")
    assert rc == 2 and "did you mean 'OLX200'" in err


def test_help_lists_the_subcommands(cli, capsys):
    import pytest

    from onnxlint.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(f"onnxlint {s}" in out for s in ("placement", "verify", "doctor"))


def test_a_file_that_cannot_be_read_is_reported_once(cli, tmp_path, examples_dir):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    rc, out, err = cli(bad, examples_dir / "clean_conv.onnx")
    assert rc == 2
    assert (out + err).count("bad.onnx") == 1, (out, err)
    assert "1 file(s) could not be linted" in out


def test_repeated_findings_of_one_cause_print_once_with_count(cli, save):
    p = _many_equal_fallbacks(save)
    rc, out, _ = cli(p, "--target", "ort-cuda", "--select", "OLX200", "--ort-version", "1.24.4")
    lines = [ln for ln in out.splitlines() if "OLX200" in ln]
    assert rc == 1 and len(lines) == 1, out
    assert "(×6; also /block1/Equal, /block2/Equal and 3 more" in lines[0]
    assert out.count("hint:") == 1
    rc, out, _ = cli(p, "--target", "ort-cuda", "--select", "OLX200", "--ort-version", "1.24.4", "--expand")
    assert len([ln for ln in out.splitlines() if "OLX200" in ln]) == 6
    rc, out, _ = cli(p, "--target", "ort-cuda", "--select", "OLX200", "--ort-version", "1.24.4", "--format", "json")
    assert len(json.loads(out)) == 6  # JSON stays one result per node
    # GitHub annotations: a runner shows only the first few of a step, so one per cause too
    rc, out, _ = cli(p, "--target", "ort-cuda", "--select", "OLX200", "--ort-version", "1.24.4", "--format", "github")
    assert len(out.splitlines()) == 1 and "×6" in out, out
    rc, out, _ = cli(p, "--target", "ort-cuda", "--select", "OLX200", "--ort-version", "1.24.4", "--format", "github", "--expand")
    assert len(out.splitlines()) == 6, out


def test_location_is_readable_once(cli, save):
    p = _many_equal_fallbacks(save, 1)
    rc, out, _ = cli(p, "--target", "ort-cuda", "--select", "OLX200", "--ort-version", "1.24.4")
    line = next(ln for ln in out.splitlines() if "OLX200" in ln)
    assert f"{p}:/block0/Equal: warning: OLX200 " in line and "graph//" not in line


def test_infos_are_counted_not_shown_by_default(cli, save):
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Gather", ["s", "zero"], ["n"], name="gather"),
             h.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
             h.make_node("Concat", ["n1", "minus1"], ["shape2"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shape2"], ["y"], name="reshape")]
    inits = [nh.from_array(np.array(0, np.int64), "zero"), nh.from_array(np.array([0], np.int64), "axes"),
             nh.from_array(np.array([-1], np.int64), "minus1")]
    p = save(make_model(nodes, [vi("x", T.FLOAT, ["N", 3])], [vi("y", T.FLOAT, None)], inits))
    args = (p, "--target", "ort-cuda", "--ort-optimization", "disabled", "--select", "OLX201")
    rc, out, _ = cli(*args)
    assert "OLX201" not in out.replace("--show-info", "") and "infos not shown (--show-info)" in out
    assert rc == 0  # infos never fail the default --fail-on warning
    rc, out, _ = cli(*args, "--show-info")
    assert "OLX201" in out
    rc, out, _ = cli(*args, "--format", "json")
    assert {f["code"] for f in json.loads(out)} == {"OLX201"}  # JSON keeps every finding


def test_statistics_prints_only_its_table(cli, examples_dir):
    rc, out, _ = cli(examples_dir, "--statistics")
    rows = out.strip().splitlines()
    # the fixable counts close it: --fix's (the infos it leaves counted apart), then --fix --unsafe-fixes'
    assert rows[-2] == "[*] 6 findings fixable with --fix (1 info more with --show-info)", out
    assert rows[-1] == "[!] 1 finding fixable with --fix --unsafe-fixes (unsafe fixes)", out
    assert rc == 1 and rows[:-2] and all(r.split()[0].isdigit() and r.split()[1].startswith("OLX") for r in rows[:-2]), out


def test_baseline_fails_only_on_new_findings(cli, tmp_path, examples_dir):
    models = tmp_path / "models"
    models.mkdir()
    (models / "d.onnx").write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    base = tmp_path / "onnxlint-baseline.json"
    rc, out, err = cli(models, "--baseline", base)  # none yet: one line, never recorded in passing (a pull
    assert rc == 2 and not out and "no such file" in err and not base.exists()  # request deleting it passed)
    rc, _, err = cli(models, "--baseline", base, "--update-baseline")
    assert rc == 0 and base.exists() and "recorded" in err
    rc, out, _ = cli(models, "--baseline", base)
    assert rc == 0 and "suppressed" in out
    (models / "e.onnx").write_bytes((examples_dir / "equal_mismatch.onnx").read_bytes())
    rc, out, _ = cli(models, "--baseline", base)
    assert rc == 1 and "OLX015" in out and "OLX010" not in out
    rc, out, _ = cli(models, "--baseline", base, "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert any(r.get("suppressions") for r in results if r["ruleId"] == "OLX010")


def test_a_baseline_follows_a_linked_model_by_its_name_not_its_content(cli, tmp_path, examples_dir):
    """git-annex, DVC's link cache, the Hugging Face cache: the model is a link to a blob named by its content. The
    fingerprint was of the blob's path, so a new version of the model (a doc string changed) made its recorded
    findings new ones."""
    import onnx

    (tmp_path / "blobs").mkdir()
    (tmp_path / "models").mkdir()
    model = onnx.load(examples_dir / "dropout_training.onnx")
    onnx.save(model, tmp_path / "blobs" / "aaaa")
    model.doc_string = "v2"
    onnx.save(model, tmp_path / "blobs" / "bbbb")
    link, base = tmp_path / "models" / "m.onnx", tmp_path / "b.json"
    link.symlink_to(os.path.join("..", "blobs", "aaaa"))
    assert cli(tmp_path / "models", "--baseline", base, "--update-baseline", "--no-cache")[0] == 0
    link.unlink()
    link.symlink_to(os.path.join("..", "blobs", "bbbb"))
    rc, out, _ = cli(tmp_path / "models", "--baseline", base, "--no-cache")
    assert rc == 0 and "1 suppressed" in out and "OLX010" not in out, out


def test_a_malformed_baseline_fails_the_run_before_any_model_is_linted(cli, tmp_path, examples_dir, monkeypatch):
    """It was read after the lint: a pull request breaking the baseline cost the whole lint, then exit 2."""
    from onnxlint.commands import lint

    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    base = tmp_path / "b.json"
    base.write_text('{"version": 1, "fingerprints": "all"}')

    def linted(*args, **kwargs):
        raise AssertionError("a model was linted")

    monkeypatch.setattr(lint, "_lint", linted)
    rc, out, err = cli(m, "--baseline", base, "--no-cache")
    assert rc == 2 and not out and err.strip().endswith("b.json: not an onnxlint baseline (version 1)"), err


def test_a_baseline_with_a_bom_is_read_and_one_of_version_true_is_refused(cli, tmp_path, examples_dir):
    """An editor on Windows writes a UTF-8 BOM first: the baseline was refused ("Unexpected UTF-8 BOM"). And
    `"version": true` was taken for version 1 (True == 1 in Python)."""
    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    base = tmp_path / "b.json"
    assert cli(m, "--baseline", base, "--update-baseline", "--no-cache")[0] == 0
    text = base.read_text()
    base.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    rc, out, err = cli(m, "--baseline", base, "--no-cache")
    assert rc == 0 and "1 suppressed" in out and not err, (out, err)
    base.write_text(text.replace('"version": 1', '"version": true'))
    assert '"version": true' in base.read_text()
    rc, out, err = cli(m, "--baseline", base, "--no-cache")
    assert rc == 2 and not out and err.strip().endswith("b.json: not an onnxlint baseline (version 1)"), err


def test_a_baseline_resolves_each_models_path_once_not_once_a_finding(tmp_path, monkeypatch):
    """Recording and applying a baseline resolved the model's and the baseline's paths for every finding: a
    model's tens of thousands of findings cost more there than in their fingerprints."""
    from pathlib import Path

    from onnxlint.linting import baseline
    from onnxlint.linting.report import FileReport, Finding, Report

    report = Report()
    report.files.append(FileReport(str(tmp_path / "m.onnx"), findings=[
        Finding("OLX010", "dropout-training", "error", "any", str(tmp_path / "m.onnx"), f"d{i}", "Dropout", "x")
        for i in range(1000)]))
    calls = []
    resolve = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda self, *a, **k: calls.append(self) or resolve(self, *a, **k))
    base = tmp_path / "b.json"
    assert baseline.write(base, report) == 1000 and len(calls) <= 4
    assert baseline.apply(report, base, baseline.load(base)) == 1000 and len(calls) <= 8


def test_update_baseline_and_a_report_keep_the_replaced_files_mode(cli, tmp_path, examples_dir):
    """They replace the file with a renamed temporary one: a baseline committed 0600 (or a report kept private)
    came back 0644, where open() keeps the mode."""
    import stat

    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    base, report = tmp_path / "b.json", tmp_path / "r.sarif"
    for path in (base, report):
        path.write_text("{}")
        path.chmod(0o600)
    assert cli(m, "--baseline", base, "--update-baseline")[0] == 0 and "fingerprints" in base.read_text()
    assert cli(m, "--format", "sarif", "-o", report)[0] == 1 and "2.1.0" in report.read_text()
    assert [stat.S_IMODE(p.stat().st_mode) for p in (base, report)] == [0o600, 0o600]


def test_default_targets_are_cuda_and_tensorrt(lint_json, examples_dir):
    _, findings = lint_json(examples_dir)
    assert {f["target"] for f in findings} <= {"ort-cuda", "tensorrt", "any"}


def test_bad_arguments_are_one_line_and_exit_2(cli, tmp_path, examples_dir):
    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    before = m.read_bytes()
    cases = [
        ((m, "-o", m), "is one of the models being linted"),
        ((m, "-o", tmp_path), "is a folder"),
        ((m, "-o", tmp_path / "no" / "r.txt"), "does not exist"),
        ((m, examples_dir / "clean_conv.onnx", "--fix", "-o", tmp_path / "x.onnx"),
         f"an existing one or {tmp_path / 'x.onnx'}{os.sep} to make it"),
        (("verify", m, "--providers", "CPUExecutionProvider", "--shape", "x=1xa"), "positive integers"),
        (("verify", m, "--providers", "CPUExecutionProvider", "--shape", "x=1x2x"), "positive integers"),
        (("verify", m, "--providers", "CPUExecutionProvider", "--shape", "nope=1x2"), "no model input has this name"),
        (("verify", m, "--providers", "CUDAExecutionprovider"), "did you mean 'CUDAExecutionProvider'"),
        (("verify", m, "--timeout", "nan"), "positive number"),
        # each with an example of its own runtime (--trt-version's said "e.g. 1.20.1", an ORT release)
        ((m, "--trt-version", "abc"), "not a version number (e.g. 8.6)"),
        ((m, "--ort-version", "1.x"), "not a version number (e.g. 1.20.1)"),
        # an option serving another, alone, did nothing (--update-baseline recorded nothing and passed)
        ((m, "--update-baseline"), "--update-baseline needs --baseline"),
        ((m, "--providers", "CPUExecutionProvider"), "add --verify"),
        ((m, "--shape", "x=1x2"), "add one of them"),
        # --unsafe-fixes alone fixed nothing, and its -o got the text report under a model's name
        ((m, "--unsafe-fixes"), "add --fix"),
        ((m, "--unsafe-fixes", "-o", tmp_path / "fixed.onnx"), "add --fix"),
        # --fix forgotten: the text report under a model's name, which the next folder walk read as a corrupt model
        ((m, "-o", tmp_path / "fixed.onnx"), "a report under a model's name"),
        # placement has no --fix to add: its advice was one more usage error (unrecognized arguments: --fix)
        (("placement", m, "-o", tmp_path / "fixed.ONNX"), "name the report otherwise (report.txt)"),
        # the name it gives is of the report asked for, not a JSON one for an HTML page
        (("placement", m, "--format", "html", "-o", tmp_path / "fixed.onnx"), "name the report otherwise (report.html)"),
    ]
    for args, words in cases:
        rc, out, err = cli(*args)
        assert rc == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (args, err)
    assert m.read_bytes() == before  # -o pointing at the model never wrote over it
    assert not (tmp_path / "fixed.onnx").exists() and not (tmp_path / "fixed.ONNX").exists()


def test_show_config_names_the_file_in_force(cli, tmp_path, examples_dir):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".onnxlint.yaml").write_text("ignore: [OLX010]\n")
    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, out, err = cli(m, "--show-config", "--target", "ort-cuda")
    assert f"config in force: {tmp_path / '.onnxlint.yaml'}" in err and "OLX010" not in out


@pytest.mark.parametrize("fmt", ["text", "github", "sarif"])
def test_fail_on_info_shows_the_infos_it_fails_on(cli, tmp_path, examples_dir, fmt):
    """`--fail-on info` without --show-info exited 1 while text, annotations and SARIF showed nothing: what fails
    the gate is shown."""
    m = tmp_path / "s.onnx"
    m.write_bytes((examples_dir / "static_batch.onnx").read_bytes())
    def shown(out: str) -> bool:
        if fmt == "sarif":
            return any(r["ruleId"] == "OLX013" for r in json.loads(out)["runs"][0]["results"])
        return "OLX013" in out

    rc, out, _ = cli("--no-cache", "--select", "OLX013", "--format", fmt, m)
    assert rc == 0 and not shown(out)  # an info: counted, not shown
    rc, out, _ = cli("--no-cache", "--select", "OLX013", "--fail-on", "info", "--format", fmt, m)
    assert rc == 1 and shown(out), out


def test_annotations_name_the_file_from_the_repository_root(cli, tmp_path, examples_dir, monkeypatch):
    """A step with its own working-directory gave `file=d.onnx` for `models/d.onnx`: the runner places an
    annotation by its path from the repository root, as SARIF's URI is."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "d.onnx").write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    monkeypatch.chdir(tmp_path / "models")
    rc, out, _ = cli("--no-cache", "--format", "github", "d.onnx")
    assert rc == 1 and out.startswith("::error file=models/d.onnx,line=1,title=OLX010"), out
    rc, out, _ = cli("--no-cache", "--format", "sarif", "d.onnx")
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(out)["runs"][0]["results"]
            for loc in r["locations"]}
    assert uris == {"models/d.onnx"}


def test_statistics_in_json_are_the_tables_counts(cli, tmp_path, examples_dir):
    """--statistics --format json printed every finding, ignoring --statistics; ruff gives the table as JSON."""
    for name in ("dropout_training.onnx", "equal_mismatch.onnx"):
        (tmp_path / name).write_bytes((examples_dir / name).read_bytes())
    rc, table, _ = cli("--no-cache", "--statistics", tmp_path)
    rc2, out, _ = cli("--no-cache", "--statistics", "--format", "json", tmp_path)
    rows = json.loads(out)
    assert rc == rc2 == 1 and rows and all(set(r) == {"code", "name", "severity", "count", "fixable", "unsafe_fixable"}
                                           for r in rows)
    for r in rows:
        assert f"{r['count']:5d}  {r['code']}  " in table and f"{r['name']} [{r['severity']}]" in table
    (drop,) = [r for r in rows if r["code"] == "OLX010"]
    assert drop["fixable"] == drop["count"] == 1


def test_the_progress_bar_clears_itself_at_the_end(capsys):
    """On a terminal the bar's last state stayed above the report; it is cleared now, and names stay escaped."""
    from onnxlint.commands.lint import _progress

    show = _progress(True)
    for i in range(1, 4):
        show(i, 3, f"m{i}\x1b[31m.onnx")
    err = capsys.readouterr().err
    assert err.startswith("\r[") and "\x1b" not in err and "\n" not in err
    assert err.endswith("\r") and err.rsplit("\r", 2)[-2].strip() == ""


def test_fail_on_info_shows_a_deferred_infos_message(cli, tmp_path):
    """Infos a run does not show get no message (info_details): `fail-on info` showed OLX307 with an empty one, as
    the settings were made before it turned --show-info on."""
    import onnx
    from conftest import make_model, vi
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [h.make_node("Cast", ["x"], ["c"], name="cast", to=T.DOUBLE), h.make_node("Equal", ["c", "c"], ["y"], name="eq")]
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.BOOL, [2])]), tmp_path / "m.onnx")
    rc, out, _ = cli("--no-cache", "--show-info", "--format", "json", tmp_path / "m.onnx")
    shown = {f["code"]: f["message"] for f in json.loads(out)}
    assert shown.get("OLX307"), shown
    rc, out, _ = cli("--no-cache", "--fail-on", "info", "--format", "github", tmp_path / "m.onnx")
    (line,) = [ln for ln in out.splitlines() if "OLX307" in ln]
    assert rc == 1 and line.split("::", 2)[2].startswith(shown["OLX307"][:20]), line


def test_a_finding_fix_cleared_is_neither_recorded_nor_suppressed_by_the_baseline(cli, tmp_path, examples_dir):
    """`--fix --update-baseline` recorded the findings the fix had just cleared (the written model holds none of
    them), so the same finding coming back later (a new export's training-mode Dropout) passed as baselined; and
    `--fix --baseline` counted a cleared finding both suppressed and fixed."""
    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    base = tmp_path / "b.json"
    rc, _, err = cli(m, "--baseline", base, "--update-baseline", "--fix")
    assert rc == 0 and json.loads(base.read_text())["fingerprints"] == [], err
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())  # it comes back: a new finding
    rc, out, _ = cli(m, "--baseline", base)
    assert rc == 1 and "OLX010" in out, out


def test_fix_leaves_alone_what_the_baseline_records(cli, tmp_path, examples_dir):
    """--fix fixes what the run shows: a finding the baseline records is not shown, and --fix rewrote the model for
    it all the same (a legacy finding fixed in any model a pre-commit hook touched). It is left alone, a note
    says so; a finding the baseline does not record is fixed."""
    m = tmp_path / "d.onnx"
    m.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    base = tmp_path / "b.json"
    assert cli(m, "--baseline", base, "--update-baseline")[0] == 0
    before = m.read_bytes()
    rc, out, _ = cli(m, "--baseline", base, "--fix")
    assert rc == 0 and m.read_bytes() == before, out
    assert "nothing written: no finding shown has a fix; left alone: 1 finding the baseline records (dropout-inference)" in out
    base.write_text(json.dumps({"version": 1, "tool": "onnxlint", "fingerprints": []}))  # not recorded: shown, fixed
    rc, out, _ = cli(m, "--baseline", base, "--fix")
    assert rc == 0 and "1 fixed" in out and m.read_bytes() != before, out


def test_help_says_what_each_option_needs_as_the_command_line_does(cli, examples_dir):
    """`onnxlint --help` against the README: an option whose help says "with --X:" is refused without --X (one
    line, exit 2); --diff says it implies --fix (it runs alone, as the README's usage line does), and --shape
    says what --fix does without it (tries sizes), not "1" (that is --verify's)."""
    from onnxlint.cli import _verify_parser, build_parser

    actions = {a.option_strings[-1]: a for a in build_parser()._actions if a.option_strings}
    helps = {opt: a.help or "" for opt, a in actions.items()}
    assert "implies --fix" in helps["--diff"] and not helps["--diff"].startswith("with --fix")
    assert "tries sizes" in helps["--shape"]
    needs = [opt for opt, text in helps.items() if text.startswith("with --")]
    assert set(needs) == {"--update-baseline", "--providers", "--shape"}, needs
    for opt in needs:  # alone: one line naming what it needs, exit 2
        value = ["x=1"] if actions[opt].nargs != 0 else []
        rc, out, err = cli(examples_dir / "clean_conv.onnx", opt, *value)
        said = helps[opt].split(":")[0].removeprefix("with ").replace(" or ", " ").split()
        assert rc == 2 and len(err.strip().splitlines()) == 1 and all(w in err for w in said), (opt, err)
    verify = {a.option_strings[-1]: a.help for a in _verify_parser()._actions if a.option_strings}
    assert verify["--providers"] and verify["--timeout"], verify
