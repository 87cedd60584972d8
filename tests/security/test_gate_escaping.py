"""Issue 40, class 6: one escaping policy for every command and every format, and messages built from fields.

A model names its nodes, values, op types and domains with control characters, bidi overrides and invisible
characters (zero-width space and joiners, BOM, tag characters, soft hyphen, variation selectors); every human
output shows them escaped, GitHub's and SARIF's message texts alike, no line starts a workflow command, and
every JSON document is valid UTF-8, a file name that is not UTF-8 included."""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata

import onnx
import pytest
from attacks import NASTY, hostile_model
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint.formats import doctor_output
from onnxlint.support import escape
from onnxlint.tensorrt import tables, versions

# what no human output may hold raw: controls (a line break only between lines), format characters, the other
# default-ignorables, lone surrogates
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                 "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
                 "\U000e0000-\U000e0fff\ud800-\udfff]")


def _is_hidden(ch: str) -> bool:
    return bool(RAW.match(ch))


def test_the_policy_covers_every_format_character_and_default_ignorable_of_this_python():
    """Every Cf character of the running Python's Unicode database, and the explicit Default_Ignorable_Code_Point
    list, is escaped (the table in escape.py is of Unicode 15.1; an older database's Cf set is a subset)."""
    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) > 150
    missed = [f"U+{ord(c):04X}" for c in cf if escape.text(c) == c]
    assert not missed, missed
    ignorable = [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x2065, 0x3164, 0xFE00,
                 0xFE0F, 0xFFA0, 0xFFF0, 0xFFF8, 0xE0000, 0xE0002, 0xE001F, 0xE0080, 0xE0100, 0xE01EF, 0xE0FFF]
    assert all(escape.text(chr(c)) != chr(c) for c in ignorable)
    for c in ("\u200b", "\U000e0041", "\u00ad", "\x85"):
        out = escape.text(c)
        assert out.isascii() and out.startswith("\\")
    assert escape.text("\U000e0041") == "\\U000e0041"  # astral: eight digits, never an ambiguous \ue0041
    # visible text is left alone: letters of every script, emoji, a no-break space, combining accents
    for plain in ("résumé", "日本語", "ক্ষ", "a\u00a0b", "e\u0301", "👍", "Ωmega/x:y"):
        assert escape.text(plain) == plain


def test_drop_zwsp_out_never_reads_as_dropout():
    assert escape.text("drop\u200bout") == "drop\\u200bout"
    assert escape.text("\ufeffmodel") == "\\ufeffmodel"


def _assert_human(out: str, github: bool = False) -> None:
    assert "PWNED" in out
    for line in out.splitlines():
        bad = RAW.search(line)
        assert bad is None, (f"U+{ord(bad.group()):04X}", line)
        if github:
            assert re.match(r"::(error|warning|notice) file=", line), line
        else:
            assert not line.lstrip().startswith("::") and "##[" not in line, line


def _assert_json(out: str) -> object:
    out.encode("utf-8")  # strict: no lone surrogate
    return json.loads(out)


@pytest.fixture
def hostile(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(hostile_model(), p)
    return p


@pytest.mark.parametrize("fmt", ["text", "github", "sarif", "json"])
@pytest.mark.parametrize("mode", ["file", "folder", "jobs"])
def test_lint_output_escapes_every_hidden_character(hostile, cli, fmt, mode):
    where = {"file": [hostile], "folder": [hostile.parent], "jobs": [hostile.parent, "--jobs", "2"]}[mode]
    if mode == "jobs":
        onnx.save(hostile_model(), hostile.parent / "second.onnx")
    rc, out, err = cli(*where, "--format", fmt, "--no-progress", "--show-info")
    assert rc == 1, err
    assert "Traceback" not in err and not RAW.search(err.replace("\n", ""))
    if fmt in ("text", "github"):
        _assert_human(out, github=fmt == "github")
        return
    doc = _assert_json(out)
    if fmt == "sarif":  # message texts as the GitHub format has them: nothing hidden, nothing raw
        for r in doc["runs"][0]["results"]:
            assert not RAW.search(r["message"]["text"]), r["message"]["text"]
            for rel in r.get("relatedLocations", []):
                assert not RAW.search(rel["message"]["text"])
        assert any("\\u200b" in r["message"]["text"] for r in doc["runs"][0]["results"])
    else:  # JSON keeps names exactly (JSON escapes controls itself): a reader gets the real name
        assert any(f["node"] and NASTY in f["node"] for f in doc)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_placement_escapes_op_types_domains_and_names(hostile, cli, fmt):
    rc, out, err = cli("placement", hostile, "--format", fmt)
    assert rc == 0, err
    if fmt == "text":
        _assert_human(out)
        assert "\\u202e" in out and "\\u200b" in out
    else:
        doc = _assert_json(out)
        assert any(n["op_type"] == NASTY + "Op" for n in doc[0]["nodes"])


def _non_utf8_copy(hostile) -> str:
    bad = os.fsencode(str(hostile.parent)) + b"/bad\xff\xfe.onnx"
    with open(bad, "wb") as fh:
        fh.write(hostile.read_bytes())
    return os.fsdecode(bad)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
def test_placement_and_verify_json_are_valid_utf8_for_a_file_name_that_is_not(hostile, cli):
    name = _non_utf8_copy(hostile)
    rc, out, err = cli("placement", name, "--format", "json")
    assert rc == 0, err
    assert _assert_json(out)[0]["filename"].endswith("bad\\xff\\xfe.onnx")
    rc, out, err = cli("verify", name, "--format", "json", "--providers", "CPUExecutionProvider", "--timeout", "60")
    assert "Traceback" not in err
    assert _assert_json(out)[0]["filename"].endswith("bad\\xff\\xfe.onnx")
    rc, out, err = cli("verify", name, "--providers", "CPUExecutionProvider", "--timeout", "60")
    _assert_human(out.replace("bad\\xff\\xfe", "PWNED"))


def test_doctor_output_escapes_what_the_environment_says():
    class Check:
        ok = False

        def __str__(self):
            return "✗ onnxruntime says \x1b[2J\u202e" + NASTY

        def as_json(self):
            return {"text": "lib\udcff" + NASTY}

    _assert_human(doctor_output.render("text", [Check()]))
    doc = _assert_json(doctor_output.render("json", [Check()]))
    assert doc["checks"][0]["text"].startswith("lib\\xff")


def test_explain_escapes_a_plugin_fixers_text(cli, tmp_path, monkeypatch):
    from onnxlint.fixers import base
    from onnxlint.rulefiles import rule_schema

    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "r.yaml").write_text("""\
- id: XTR007
  name: plug
  severity: warning
  targets: any
  summary: s
  explanation: e
  match: {op: Cast}
  message: m
  fix: evil-fix
""")
    monkeypatch.setitem(base.REGISTRY, "evil-fix", base.Fixer("evil-fix", base.Applicability.SAFE, "sum\u202e\x1b[2J\n::error::x",
                                                              lambda ctx: ctx.model))
    rule_schema.rule_schema.cache_clear()  # its fixer enum names the registered fixers
    try:
        rc, out, err = cli("--rules", rules, "--explain", "XTR007")
    finally:
        rule_schema.rule_schema.cache_clear()
    assert rc == 0, err
    assert "\x1b" not in out and "\u202e" not in out and "\\u202e" in out
    assert not any(line.startswith("::") for line in out.splitlines())


# ----------------------------------------------------------------------------- messages built from fields


def _dropout(name: str) -> onnx.ModelProto:
    n = h.make_node("Dropout", ["x", "r", "t"], ["y"], name=name)
    return make_model([n], [vi("x", T.FLOAT, [2, 3]), vi("r", T.FLOAT, []), vi("t", T.BOOL, [])],
                      [vi("y", T.FLOAT, [2, 3])], opset=13)


@pytest.mark.parametrize("name", ["a", "Dropout", "in", "t", " "])
def test_a_node_named_like_words_of_its_message_leaves_the_message_whole(tmp_path, cli, name):
    """The line starts with the node's location and the message follows, rendered from the rule's template:
    a node named `a`, `Dropout` (its op type) or ` ` cuts nothing out of it."""
    p = tmp_path / "m.onnx"
    onnx.save(_dropout(name), p)
    rc, out, err = cli(p, "--no-progress", "--select", "OLX010")
    assert rc == 1, err
    line = next(x for x in out.splitlines() if "OLX010" in x)
    assert line.endswith("OLX010 Dropout runs in training mode (training_mode input t); outputs are random where it "
                         "runs"), line
    rc, out, err = cli(p, "--no-progress", "--select", "OLX010", "--format", "github")
    assert "::Dropout runs in training mode (training_mode input t)" in out


def test_a_template_that_names_the_node_is_shown_without_it_after_the_location(tmp_path, cli):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "r.yaml").write_text("""\
- id: XTR008
  name: named
  severity: warning
  targets: any
  summary: s
  explanation: e
  match: {op: Dropout}
  message: "Dropout {node} ({name}) runs in {op_type} mode"
""")
    p = tmp_path / "m.onnx"
    onnx.save(_dropout("a"), p)
    rc, out, err = cli(p, "--rules", rules, "--select", "XTR008", "--no-progress")
    assert f"{p}:a: warning: XTR008 Dropout runs in Dropout mode" in out, out
    rc, out, err = cli(p, "--rules", rules, "--select", "XTR008", "--format", "json")
    assert json.loads(out)[0]["message"] == "Dropout a (a) runs in Dropout mode"


# the issue's cases: a node named `a` cut every `a` out of TensorRT's message ("RegexFullMtch is rejected by ...
# prser"), a node named like its op type cut the op out of the CUDA EP's ("no cuda kernel for ai.onnx.ml::")
RTX = versions.product(tables.default_version())  # the table a run checks when no version is asked: the newest
RUNTIME_MESSAGES = [
    ("Det", "", "a", "tensorrt", "OLX300", f"Det is rejected by {RTX} (not-supported): {RTX}'s "
     "parser (10.x line) has no importer for Det"),
    ("Det", "", "Det", "tensorrt", "OLX300", f"Det is rejected by {RTX} (not-supported): {RTX}'s "
     "parser (10.x line) has no importer for Det"),
    ("Det", "", "a", "ort-cuda", "OLX200", "Det runs on CPU under the CUDA EP (not-registered): no cuda kernel for "
     "ai.onnx::Det"),
    ("Binarizer", "ai.onnx.ml", "Binarizer", "ort-cuda", "OLX200", "Binarizer runs on CPU under the CUDA EP "
     "(not-registered): no cuda kernel for ai.onnx.ml::Binarizer"),
]


SEVERITY = {"OLX200": "warning", "OLX300": "error"}


@pytest.mark.parametrize("op, domain, name, target, code, message", RUNTIME_MESSAGES,
                         ids=[f"{c[4]}-{c[2]}" for c in RUNTIME_MESSAGES])
def test_a_runtime_finding_keeps_its_message_whatever_the_node_is_named(tmp_path, cli, op, domain, name, target,
                                                                         code, message):
    n = h.make_node(op, ["x"], ["y"], name=name, domain=domain)
    m = make_model([n], [vi("x", T.FLOAT, [2, 3, 3])], [vi("y", T.FLOAT, [2] if op == "Det" else [2, 3, 3])],
                   opset=17)
    if domain:
        m.opset_import.append(h.make_opsetid(domain, 1))
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    rc, out, err = cli(p, "--no-progress", "--no-cache", "--target", target, "--select", code)
    assert [x for x in out.splitlines() if code in x] == [f"{p}:{name}: {SEVERITY[code]}: {code} {message}"], out + err
    rc, out, err = cli(p, "--no-cache", "--target", target, "--select", code, "--format", "json")
    assert [(f["node"], f["message"]) for f in json.loads(out) if f["code"] == code] == [(name, message)], out


class _Text(str):
    """A str subclass: written as its text, like a str."""


class _Row(dict):
    """A dict subclass: written as its items, like a dict."""


JSON_VALUES = [[], {}, [{}], {"a": []}, [[[[1], [2, [3, {}]]]]],
               {"names": ["x\u00e9\u200b", "\udcff bad byte", "quote \" and \\ and \n", NASTY],
                "numbers": [0, -7, 10 ** 30, 2.5, -0.0, 1e300, float("nan"), float("inf"), float("-inf")],
                "constants": [None, True, False], "keys": {7: "int", 2.5: "float", True: "true", None: "null"}},
               [{"node": NASTY, "ep": None, "deliberate": False, "nested": {"list": [1, {"b": []}]}}] * 3,
               # rows as the placement writes them, keys repeated: a bad byte, a str subclass, numbers, a nested row
               [{"node": "a\udcffb", "ep": _Text("CUDA\u200b"), "n": 3, "x": 1.5, "sub": {"node": "\u00e9", "k": -2},
                 7: True}] * 2,
               [_Row(node="n\udcff", ep=_Text("x"), sub=_Row(k=[1, _Row()]), n=None), _Row()]]


@pytest.mark.parametrize("value", JSON_VALUES)
def test_json_written_in_pieces_is_the_whole_documents_text(value):
    """The placement JSON is written as it is made (dumps_chunks): byte for byte escape.dumps' text, whatever the
    depth streamed, a generator standing for a list, keys that are not strings, surrogates and hidden characters."""
    for indent in (2, 4):
        whole = escape.dumps(value, indent=indent)
        for depth in range(5):
            assert "".join(escape.dumps_chunks(value, indent, depth)) == whole
    lazy = {"first": (x for x in value) if isinstance(value, list) else value, "empty": (x for x in ())}
    assert "".join(escape.dumps_chunks(lazy, 2, 2)) == escape.dumps({"first": value, "empty": []}, indent=2)


@pytest.mark.parametrize("statistics", [False, True])
def test_the_text_output_escapes_a_rule_code_and_name_whatever_let_them_through(statistics):
    """A rule's code and name come from a rule file: the schema's patterns keep them to letters and digits, and
    the text output escapes them as it does every other repository text, should anything let one through."""
    from onnxlint.formats import text_format
    from onnxlint.linting.report import FileReport, Finding, Report

    f = Finding(code="ACME1\n::error::forged", name="n\x1b[2Jame", severity="error", target="any",
                filename="m.onnx", node="a", op_type="Relu", message="m")
    out = text_format.render(Report(files=[FileReport("m.onnx", [f])]), statistics=statistics)
    assert "\n::error" not in out and "\x1b" not in out, out
    assert "ACME1\\n::error::forged" in out



def test_a_file_reports_string_form_is_escaped(tmp_path):
    """FileReport's str() (the API's one line a finding: `print(onnxlint.lint(path))` in a notebook or a CI step)
    printed the model's text raw: a node name with a line break started a workflow command, an ANSI escape drove
    the terminal. Every piece is escaped as the text output escapes it, whatever the model or the file is called."""
    import onnxlint
    from onnxlint.linting.report import FileReport, Finding

    path = tmp_path / "m\u202e\x1b[2J.onnx"
    onnx.save(hostile_model(), path)
    for report in (onnxlint.lint(hostile_model()), onnxlint.lint(path)):
        text = str(report)
        assert any(f.node and NASTY in f.node for f in report.findings), text  # the name reached a finding raw
        assert not RAW.search(text.replace("\n", "")) and "\n::" not in text, text
        assert len(text.splitlines()) == sum(1 for f in report.findings if not f.suppressed)
    f = Finding(code="OLX100", name="n", severity="error", target="any", filename="m.onnx",
                node="x\n::error file=README.md::pwned", op_type="Relu", message="Relu x\n::warning::also")
    text = str(FileReport("m\u202e.onnx", [f]))
    assert len(text.splitlines()) == 1 and not RAW.search(text), text
    assert str(FileReport("::m.onnx", error="bad\n::error::x")).count("\n") == 0
    assert not str(FileReport("::m.onnx")).startswith("::")
