import json
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest

SCHEMA = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "sarif-schema-2.1.0.json"


def _sarif(cli, *args):
    rc, out, _ = cli(*args, "--format", "sarif")
    return rc, json.loads(out)


@pytest.mark.skipif(not SCHEMA.exists(), reason="shared SARIF schema not present")
def test_sarif_validates_and_has_github_fields(examples_dir, cli):
    rc, doc = _sarif(cli, examples_dir)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "onnxlint" and driver["version"] and driver["informationUri"]
    ids = [r["id"] for r in driver["rules"]]
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert r["help"]["text"] and r["help"]["markdown"] and r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert run["results"]
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["message"]["text"] and res["level"] in ("error", "warning", "note")
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%" and loc["region"]["startLine"] == 1
        assert not loc["artifactLocation"]["uri"].startswith("/")
        assert res["partialFingerprints"]["onnxlintFingerprint/v1"]
        assert res["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]


def test_fingerprints_stable_across_runs_and_weight_changes(tmp_path, examples_dir, cli):
    src = examples_dir / "dropout_training.onnx"
    path = tmp_path / "m.onnx"
    path.write_bytes(src.read_bytes())
    _, a = _sarif(cli, path)
    _, b = _sarif(cli, path)
    m = onnx.load(path)
    m.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(np.array(0.3, np.float32), "ratio"))
    onnx.save(m, path)
    _, c = _sarif(cli, path)
    fp = lambda d: sorted(r["partialFingerprints"]["onnxlintFingerprint/v1"] for r in d["runs"][0]["results"])
    assert fp(a) == fp(b) == fp(c) and fp(a)


def test_suppressed_findings_carry_suppressions(tmp_path, examples_dir, cli):
    m = onnx.load(examples_dir / "dropout_training.onnx")
    onnx.helper.set_model_props(m, {"onnxlint:ignore": "OLX010,OLX300"})  # OLX300: TensorRT rejects training mode
    p = tmp_path / "s.onnx"
    onnx.save(m, p)
    rc, doc = _sarif(cli, p)
    res = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "OLX010"]
    assert res and res[0]["suppressions"][0]["kind"] == "inSource"
    assert rc == 0


def test_github_format(examples_dir, cli):
    rc, out, _ = cli(examples_dir / "equal_mismatch.onnx", "--format", "github")
    assert out.startswith("::error file=") and "title=OLX015 equal-dtype-mismatch::" in out
