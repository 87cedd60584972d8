"""Rule tests as data (sqlfluff-style): every rule has failing and passing cases in tests/rule_cases/.

Layout: tests/rule_cases/<rule-file stem>/<rule id>.yaml, one file per rule:

    rule: OLX010
    cases:
      - name: training-dropout            # test id: OLX010-failing-training-dropout
        model: |                          # ONNX textual syntax (onnx.parser.parse_model)
          <ir_version: 8, opset_import: ["" : 17]>
          agraph (float[N,3] x, bool t) => (float[N,3] y) { [drop] y = Dropout(x, , t) }
        settings: {targets: [ort-cpu]}    # -> onnxlint.Settings.from_config(None, **settings)
        expect:                           # the findings of the rule's code, all of them
          - node: drop                    # the node path (main graph: its name); null for a file-level finding
            message: "..."                # exact; or message_contains: "..." / [..., ...]
            # message_excludes: "?"       # text that must not appear (an unrendered placeholder)
      - name: eval-dropout
        model: ...
        expect: []                        # a passing case: no finding of this code

A case is failing when it expects findings and passing when it expects none. Optional keys:
  code       the code compared (default: the file's rule)
  build      data-only steps applied to the parsed model, for what the text syntax cannot express
             (see BUILD_STEPS below); no Python, no eval
  lint       `file`: save the model (and any external data) to a temporary folder and lint the path,
             as the CLI does, instead of the in-memory ModelProto
  file       (file rules, scope: file) the text the model file holds instead of a model (a Git LFS
             pointer), linted by path
  verify     (verification rules, scope: verification) a verification result fed to
             onnxlint.verify.compare.record/attach after linting the model (if any):
             {target, providers, error, checks: [{location, op_type, predicted, ran_on}]}
  xfail      why the rule gets this case wrong today (the case states the correct behaviour)
  heavy      why the case needs GBs of memory or tens of seconds; it runs only with ONNXLINT_HEAVY_CASES=1
  skip       why this case cannot be built (then `model` may be absent); only accepted with a reason
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx
import onnx.parser
import pytest
import yaml
from onnx import numpy_helper

import onnxlint
from onnxlint.rulefiles.ruleset import get_ruleset

CASES_DIR = Path(__file__).resolve().parent / "rule_cases"
CASE_KEYS = {"name", "code", "model", "build", "lint", "settings", "expect", "verify", "xfail", "skip", "heavy", "file"}
HEAVY_ENV = "ONNXLINT_HEAVY_CASES"  # =1 runs the cases marked `heavy` (GBs of memory, tens of seconds)
EXPECT_KEYS = {"code", "node", "message", "message_contains", "message_excludes", "severity", "suppressed"}
MIN_REASON = 20  # characters: a skip or xfail must say why


@dataclass
class Case:
    rule: str
    path: Path
    raw: dict[str, Any]
    code: str = ""
    name: str = ""
    expect: list[dict[str, Any]] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "failing" if self.expect else "passing"

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.kind}-{self.name}"


def _load_file(path: Path) -> list[Case]:
    data = yaml.safe_load(path.read_text())
    where = path.relative_to(CASES_DIR)
    assert isinstance(data, dict) and set(data) <= {"rule", "cases"}, f"{where}: top level is {{rule, cases}}"
    rule = data["rule"]
    assert path.stem == rule, f"{where}: file name must be the rule id {rule}"
    out = []
    for raw in data.get("cases") or []:
        assert isinstance(raw, dict) and raw.get("name"), f"{where}: every case needs a name"
        unknown = set(raw) - CASE_KEYS
        assert not unknown, f"{where}:{raw['name']}: unknown keys {sorted(unknown)}"
        assert "expect" in raw, f"{where}:{raw['name']}: `expect` is required (`[]` for a passing case)"
        for e in raw["expect"] or []:
            assert set(e) <= EXPECT_KEYS and "node" in e, f"{where}:{raw['name']}: expect entries need `node`, keys {EXPECT_KEYS}"
            assert ("message" in e) != ("message_contains" in e), f"{where}:{raw['name']}: message or message_contains"
        for key in ("skip", "xfail", "heavy"):
            if key in raw:
                assert isinstance(raw[key], str) and len(raw[key].strip()) >= MIN_REASON, \
                    f"{where}:{raw['name']}: `{key}` needs a reason"
        if "skip" not in raw:
            assert ("model" in raw) or ("verify" in raw) or ("file" in raw), \
                f"{where}:{raw['name']}: needs `model`, `file` or `verify`"
        out.append(Case(rule, path, raw, code=raw.get("code", rule), name=str(raw["name"]), expect=list(raw["expect"] or [])))
    return out


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES_DIR.glob("*/*.yaml")):
        cases.extend(_load_file(path))
    return cases


CASES = load_cases()


# ------------------------------------------------------------------------------------------ build steps


def _initializer(model: onnx.ModelProto, name: str) -> onnx.TensorProto:
    for t in model.graph.initializer:
        if t.name == name:
            return t
    raise AssertionError(f"build: no initializer {name!r}")


def _external_data(model: onnx.ModelProto, spec: dict[str, Any], files: dict[str, bytes]) -> None:
    """Move an initializer's bytes to external data. spec: {initializer, location, write: all|none|<n bytes>}.
    `write: all` writes the bytes to `location` next to the model, `none` writes nothing (missing file), a
    number writes only that many bytes (a short file)."""
    t = _initializer(model, spec["initializer"])
    data = numpy_helper.to_array(t).tobytes()
    for f in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
        t.ClearField(f)
    t.data_location = onnx.TensorProto.EXTERNAL
    del t.external_data[:]
    for k, v in (("location", spec["location"]), ("offset", "0"), ("length", str(len(data)))):
        t.external_data.add(key=k, value=v)
    write = spec.get("write", "all")
    if write == "all":
        files[spec["location"]] = data
    elif isinstance(write, int):
        files[spec["location"]] = data[:write]
    else:
        assert write == "none", f"build external_data: write is all, none or a byte count, not {write!r}"


def _filler(model: onnx.ModelProto, spec: dict[str, Any], files: dict[str, bytes]) -> None:
    """An unused uint8 initializer of `bytes` zero bytes (real bytes in the protobuf: nothing is faked)."""
    t = model.graph.initializer.add()
    t.name = spec.get("name", "filler")
    t.data_type = onnx.TensorProto.UINT8
    t.dims.append(int(spec["bytes"]))
    t.raw_data = bytes(int(spec["bytes"]))


BUILD_STEPS = {"external_data": _external_data, "filler_initializer": _filler}


def build(case: Case, tmp_path: Path) -> onnx.ModelProto | Path:
    model = onnx.parser.parse_model(case.raw["model"])
    files: dict[str, bytes] = {}
    for step in case.raw.get("build") or []:
        assert isinstance(step, dict) and len(step) == 1, f"{case.id}: a build step is one {{name: spec}}"
        (name, spec), = step.items()
        assert name in BUILD_STEPS, f"{case.id}: unknown build step {name!r}; known: {sorted(BUILD_STEPS)}"
        BUILD_STEPS[name](model, spec, files)
    if case.raw.get("lint") != "file":
        assert not files, f"{case.id}: external data needs `lint: file`"
        return model
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    for location, data in files.items():
        target = (tmp_path / location).resolve()
        assert target.parent == tmp_path.resolve(), f"{case.id}: external data is written next to the model only"
        target.write_bytes(data)
    return path


# ------------------------------------------------------------------------------------------ running


def _verify(case: Case, report: Any) -> None:
    from onnxlint.verify import compare

    spec = case.raw["verify"]
    result = compare.VerifyResult(report.filename, spec.get("target", "ort-cuda"),
                                  list(spec.get("providers", [compare.CUDA, compare.CPU])))
    result.error = spec.get("error")
    for c in spec.get("checks") or []:
        compare.record(result, compare.NodeCheck(c["location"], c["op_type"], c["predicted"], c["ran_on"]))
    compare.attach(report, result, get_ruleset(()))


def run_case(case: Case, tmp_path: Path) -> list[Any]:
    settings = onnxlint.Settings.from_config(None, **(case.raw.get("settings") or {}))
    if "file" in case.raw:  # what the file holds instead of a model
        path = tmp_path / "model.onnx"
        path.write_text(case.raw["file"])
        report = onnxlint.lint(path, settings)
        assert report.error is None, f"{case.id}: the file could not be linted: {report.error}"
    elif "model" in case.raw:
        report = onnxlint.lint(build(case, tmp_path), settings)
        assert report.error is None, f"{case.id}: the model could not be linted: {report.error}"
    else:
        report = onnxlint.FileReport("<model>")
    if "verify" in case.raw:
        _verify(case, report)
    return report.findings


def _matches(e: dict[str, Any], f: Any, code: str) -> bool:
    if f.code != e.get("code", code) or f.node != e["node"]:
        return False
    if "message" in e and f.message != e["message"]:
        return False
    contains, excludes = e.get("message_contains", []), e.get("message_excludes", [])
    if any(part not in f.message for part in ([contains] if isinstance(contains, str) else contains)):
        return False
    if any(part in f.message for part in ([excludes] if isinstance(excludes, str) else excludes)):
        return False
    if "severity" in e and f.severity != e["severity"]:
        return False
    return "suppressed" not in e or f.suppressed == e["suppressed"]


def _show(findings: list[Any]) -> str:
    return "\n".join(f"  - {{code: {f.code}, node: {f.node}, message: {f.message!r}}}" for f in findings) or "  (none)"


def _param(case: Case):
    marks = []
    if "skip" in case.raw:
        marks.append(pytest.mark.skip(reason=case.raw["skip"]))
    if "heavy" in case.raw and os.environ.get(HEAVY_ENV) != "1":
        marks.append(pytest.mark.skip(reason=f"heavy (set {HEAVY_ENV}=1): {case.raw['heavy']}"))
    if "xfail" in case.raw:
        marks.append(pytest.mark.xfail(reason=case.raw["xfail"], strict=True))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_rule_case(case: Case, tmp_path: Path) -> None:
    findings = run_case(case, tmp_path)
    codes = {case.code} | {e["code"] for e in case.expect if "code" in e}
    got = [f for f in findings if f.code in codes]
    left = list(got)
    missing = []
    for e in case.expect:
        hit = next((f for f in left if _matches(e, f, case.code)), None)
        if hit is None:
            missing.append(e)
        else:
            left.remove(hit)
    assert not missing and not left, (
        f"{case.id} ({case.path.relative_to(CASES_DIR)}):\nexpected but not found: {missing}\n"
        f"found but not expected:\n{_show(left)}\nall findings of {sorted(codes)}:\n{_show(got)}")
    rules = get_ruleset(()).by_id()
    for f in got:
        assert f.severity == rules[f.code].severity and f.name == rules[f.code].name, f"{case.id}: {f}"


# ------------------------------------------------------------------------------------------ completeness


def test_every_rule_has_a_failing_and_a_passing_case() -> None:
    rules = get_ruleset(()).rules
    by_rule: dict[str, set[str]] = {}
    for c in CASES:
        if c.code == c.rule:
            by_rule.setdefault(c.rule, set()).add(c.kind)
    problems = []
    for r in rules:
        stem = Path(r.source).stem
        kinds = by_rule.get(r.id, set())
        for kind in ("failing", "passing"):
            if kind not in kinds:
                problems.append(f"{r.id} ({r.name}): no {kind} case in tests/rule_cases/{stem}/{r.id}.yaml")
    assert not problems, "\n".join(problems)


def test_case_files_name_known_rules_and_sit_under_their_rule_file() -> None:
    rules = {r.id: r for r in get_ruleset(()).rules}
    for path in sorted(CASES_DIR.glob("*/*.yaml")):
        rule = path.stem
        assert rule in rules, f"{path.relative_to(CASES_DIR)}: no rule {rule}"
        origin = Path(rules[rule].source).stem
        assert path.parent.name == origin, f"{path.relative_to(CASES_DIR)}: {rule} is defined in rules/{origin}.yaml"
    ids = [c.id for c in CASES]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert not dupes, f"duplicate case ids: {dupes}"
