"""What a run says, as a user meets it in a terminal, a CI log or a pipe (issue 44): each line's severity as a
word, report-only runs (--exit-zero), and the kernel tables a run was checked against named in every output.

Each test runs the `onnxlint` command in a child process, output piped (no colour), as CI runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from onnxlint.tensorrt import tables, versions

ROOT = Path(__file__).resolve().parent.parent


def onnxlint(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "ONNXLINT_CACHE_DIR")}
    return subprocess.run([sys.executable, "-m", "onnxlint", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_finding_line_names_its_severity_without_colour(examples_dir: Path) -> None:
    proc = onnxlint(examples_dir, "--show-info", "--no-cache")
    assert proc.returncode == 1 and "\033[" not in proc.stdout  # a pipe: no colour, the word carries it
    lines = [ln for ln in proc.stdout.splitlines() if re.search(r"\bOLX\d{3}\b", ln) and not ln.startswith(("    ", "Found"))]
    assert lines
    for ln in lines:  # path[:node]: SEVERITY: CODE message (gcc's, clang's and mypy's place for the word)
        assert re.match(r"^\S+\.onnx(:\S+)?: (error|warning|info): OLX\d{3} \S", ln), ln
    text = "\n".join(lines)
    assert f"{examples_dir / 'equal_mismatch.onnx'}:eq: error: OLX015 Equal compares int64 with int32" in text
    assert f"{examples_dir / 'double_input.onnx'}:input:x: warning: OLX012 graph input 'x'" in text
    assert f"{examples_dir / 'double_input.onnx'}:relu: info: OLX307 Relu computes in float64" in text


def test_exit_zero_reports_but_does_not_fail(examples_dir: Path, tmp_path: Path) -> None:
    proc = onnxlint(examples_dir, "--exit-zero", "--no-cache")
    assert proc.returncode == 0 and "error: OLX015" in proc.stdout  # the findings are all still reported
    sarif = tmp_path / "r.sarif"
    assert onnxlint(examples_dir, "--exit-zero", "--format", "sarif", "-o", sarif).returncode == 0
    assert json.loads(sarif.read_text())["runs"][0]["results"]
    # an unreadable model or a usage error is still exit 2: a report-only step never hides what it could not read
    (tmp_path / "broken.onnx").write_bytes(b"\x08\x07garbage")
    proc = onnxlint(tmp_path / "broken.onnx", examples_dir / "double_input.onnx", "--exit-zero", "--no-cache")
    assert proc.returncode == 2 and "broken.onnx" in proc.stderr
    assert onnxlint(examples_dir, "--exit-zero", "--select", "OLX99").returncode == 2


@pytest.mark.parametrize(("asked", "cuda", "cpu"), [
    ("1.32.0", "1.31.1", "1.32.0"),  # newer than every CUDA table: the newest, not 1.31.0
    ("1.33", "1.31.1", "1.32.0"),
    ("2.0", "1.31.1", "1.32.0"),
    ("1.21.5", "1.21.1", "1.21.1"),  # an unpublished patch: its minor line's newest patch below it
])
def test_an_unpublished_ort_version_uses_the_nearest_tables_by_release_order_and_says_so(
        examples_dir: Path, asked: str, cuda: str, cpu: str) -> None:
    from onnxlint.ort import kernel_registry

    assert kernel_registry.nearest("cuda", asked) == (cuda, False) or asked == cuda
    assert kernel_registry.nearest("cpu", asked)[0] == cpu
    model = examples_dir / "equal_string_cuda.onnx"
    used = f"ORT {cuda} tables" if cuda == cpu else f"ORT {cuda} CUDA and {cpu} CPU tables"
    # text: the summary names the tables that answered and what was asked
    proc = onnxlint(model, "--ort-version", asked, "--target", "ort-cuda", "--no-cache")
    assert f"Checked against {used} (asked {asked})." in proc.stdout, proc.stdout
    # JSON: each finding names the tables its target was checked against
    proc = onnxlint(model, "--ort-version", asked, "--format", "json", "--no-cache")
    by_code = {f["code"]: f for f in json.loads(proc.stdout)}
    assert by_code["OLX200"]["checked_against"] == f"{used} (asked {asked})"
    # TensorRT: the newest table, whatever ORT release was asked
    default_trt = versions.product(tables.default_version())
    assert {f["checked_against"] for f in json.loads(proc.stdout) if f["target"] == "tensorrt"} == {default_trt}
    # GitHub annotations: each names its target's tables (an annotation is all a reader of the run sees)
    proc = onnxlint(model, "--ort-version", asked, "--format", "github", "--no-cache")
    ann = next(ln for ln in proc.stdout.splitlines() if "title=OLX200 " in ln)
    assert ann.startswith("::warning ") and ann.endswith(f"; checked against {used} (asked {asked})"), proc.stdout
    # SARIF: the run property
    proc = onnxlint(model, "--ort-version", asked, "--format", "sarif", "--no-cache")
    assert json.loads(proc.stdout)["runs"][0]["properties"]["checkedReleases"].startswith(f"{used} (asked {asked}), ")
    # placement: the tables beside the release asked for
    proc = onnxlint("placement", model, "--ort-version", asked)
    assert f"ort-cuda (ORT {cuda}{' and ' + cpu if cpu != cuda else ''} tables, asked {asked})" in proc.stdout


def test_a_published_version_is_named_as_is(examples_dir: Path) -> None:
    proc = onnxlint(examples_dir / "double_input.onnx", "--ort-version", "1.24.4", "--trt-version", "8.6", "--no-cache")
    assert "Checked against ORT 1.24.4, TensorRT 8.6." in proc.stdout and "asked" not in proc.stdout
    proc = onnxlint(examples_dir / "double_input.onnx", "--trt-version", "8.7", "--format", "json", "--no-cache")
    assert {f["checked_against"] for f in json.loads(proc.stdout) if f["target"] == "tensorrt"} == {"TensorRT 8.6 (asked 8.7)"}


def test_new_table_rows_are_taken_without_code_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41 adds onnxruntime-gpu 1.32.0: resolution reads the shipped releases, so the new row answers."""
    from onnxlint.ort import kernel_registry

    shipped = kernel_registry.releases("cuda")
    monkeypatch.setattr(kernel_registry, "releases", lambda ep: [*shipped, "1.32.0"] if ep == "cuda" else shipped)
    assert kernel_registry.nearest("cuda", "1.32.0") == ("1.32.0", True)
    assert kernel_registry.nearest("cuda", "1.33") == ("1.32.0", False)


def _without_c_encoder(monkeypatch: pytest.MonkeyPatch, how: str) -> list[int]:
    """json's C encoder as the JSON format may meet it: there ("c"), missing ("none"), or refusing the arguments
    the format hands it ("refuses": a changed signature in a later CPython, whose own JSONEncoder is changed
    with it, so JSONEncoder's calls go through). The list counts the refusals."""
    import sys
    from json import encoder

    refused: list[int] = []
    if how == "none":
        monkeypatch.setattr(encoder, "c_make_encoder", None)
    elif how == "refuses":
        real = encoder.c_make_encoder

        def changed(*args: object) -> object:
            if sys._getframe(1).f_globals["__name__"] == "onnxlint.formats.json_format":
                refused.append(len(args))
                raise TypeError(f"make_encoder() takes 10 arguments ({len(args)} given)")
            return real(*args)

        monkeypatch.setattr(encoder, "c_make_encoder", changed)
    return refused


def _dumped(report: Any) -> str:
    """The JSON format's document as json.dumps writes each shown finding (then each unreadable model)."""
    lines = [json.dumps(f.as_json(checked_against=report.checked.get(f.filename, {}).get(f.target)), ensure_ascii=False)
             for f in report.findings if not f.suppressed and not f.fixed]
    lines += [json.dumps({"code": "OLX000", "name": "unreadable-model", "severity": "error", "target": "any",
                          "filename": r.filename, "node": None, "op_type": None, "message": r.error, "hint": "",
                          "fix": None, "suppressed": None, "fixable": False, "checked_against": None},
                         ensure_ascii=False) for r in report.errors]
    return "[\n" + ",\n".join("  " + line for line in lines) + "\n]\n" if lines else "[]\n"


@pytest.mark.parametrize("c_encoder", ["c", "none", "refuses"])
def test_json_findings_are_json_dumps_of_each_finding(monkeypatch: pytest.MonkeyPatch, c_encoder: str) -> None:
    """The JSON format writes every finding as json.dumps(finding, ensure_ascii=False) would (json's C encoder
    made once, or a JSONEncoder where json has none or its C encoder refuses the arguments), the text its
    findings share (rule, file, tables, fix) encoded once: findings of one rule with other fixes, suppressed
    and fixed ones left out, values of other types, a verified provider, a file name that is not UTF-8."""
    from onnxlint.formats import render
    from onnxlint.linting.report import FileReport, Finding, Report

    common = {"code": "OLX201", "name": "n", "severity": "info", "target": "ort-cuda", "filename": "m.onnx"}
    findings = [
        Finding(**common, node="a/Gather", op_type="Gather", message='quote " tab \t and \u00e9\u4e2d', hint="h",
                fix="fold-shapes"),
        Finding(**common, node="b", op_type="Gather", message="m", hint="no automatic fix for this node"),
        Finding(**common, node="c", op_type="Gather", message="m", hint="h", fix="fold-shapes"),
        Finding(**common, node="d", op_type="Gather", message="m", hint="h", suppressed="per-file-ignores"),
        Finding(**common, node="e", op_type="Gather", message="m", hint="h", fixed=True),
        Finding(**common, node="f", op_type=None, message=7, hint=None),  # type: ignore[arg-type]
        Finding(code="OLX100", name="n2", severity="error", target="any", filename="m.onnx", node=None, op_type=None,
                message="x", verified="CPUExecutionProvider"),
        Finding(code="OLX100", name="n2", severity="error", target="any", filename="\udcff.onnx", node="g",
                op_type="Add", message="in \udcff.onnx", fix="f", suppressed=""),
    ]
    report = Report(files=[FileReport("m.onnx", findings=findings), FileReport("bad.onnx", error="not a model")],
                    checked={"m.onnx": {"ort-cuda": "ORT 1.20"}})
    expected = _dumped(report).replace("\udcff", r"\\xff")  # as JSON text: the escaped `\xff` (escape.json_unicode)
    refused = _without_c_encoder(monkeypatch, c_encoder)
    text = render("json", report)
    assert text == expected
    assert refused == ([9] if c_encoder == "refuses" else [])  # the fallback was taken
    got = json.loads(text)
    assert [d["node"] for d in got] == ["a/Gather", "b", "c", "f", None, "g", None]
    assert [d["checked_against"] for d in got] == ["ORT 1.20"] * 4 + [None] * 3
    one = Report(files=[FileReport("m.onnx", findings=findings[:1])], checked=report.checked)
    unreadable = Report(files=[FileReport("bad.onnx", error="x")])
    expected_one, expected_unreadable = _dumped(one), _dumped(unreadable)
    assert render("json", one) == expected_one  # the brackets on the one line there is
    assert render("json", unreadable) == expected_unreadable
    assert render("json", Report(files=[FileReport("m.onnx")])) == "[]\n"
