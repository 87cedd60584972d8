import json
import os
import subprocess
from pathlib import Path

import jsonschema
import numpy as np
import onnx
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

# the OASIS SARIF 2.1.0 schema (errata 01), shipped with the tests so a clone validates too
SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"


def _sarif(cli, *args):
    rc, out, _ = cli(*args, "--format", "sarif")
    return rc, json.loads(out)


def test_sarif_validates_and_has_github_fields(examples_dir, cli, monkeypatch):
    monkeypatch.chdir(examples_dir)  # outside a repository: URIs are relative to the working folder
    rc, doc = _sarif(cli, examples_dir, "--show-info")
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


def _dropouts(k=3, ignore=None, doc=None):
    """k Dropouts in training mode in a chain between two Relus (one rule, one cause, k nodes: each between two
    nodes, which ORT's optimizations remove, so one message) on a fixed-shape input (an info)."""
    nodes = [h.make_node("Dropout", [f"x{i}", "ratio", "t"], [f"x{i + 1}"], name=f"/block{i}/Dropout") for i in range(k)]
    if doc:
        nodes[0].doc_string = doc
    nodes = [h.make_node("Relu", ["inp"], ["x0"], name="/stem/Relu"), *nodes,
             h.make_node("Relu", [f"x{k}"], ["out"], name="/head/Relu")]
    m = make_model(nodes, [vi("inp", T.FLOAT, [1, 4])], [vi("out", T.FLOAT, [1, 4])],
                   [init("ratio", np.array(0.5, np.float32)), init("t", np.array(True))])
    if ignore:
        h.set_model_props(m, {"onnxlint:ignore": ignore})
    return m


def _text_lines(cli, *args):
    _, out, _ = cli(*args, "--format", "text", "-q")
    return [line for line in out.splitlines() if " OLX" in line]


def test_sarif_and_github_carry_what_the_text_shows(tmp_path, cli):
    """A folder: as many SARIF results and annotations as the text shows lines; the group's every node a
    location, its count in the message; infos only with --show-info; --expand one result per node."""
    onnx.save(_dropouts(), tmp_path / "a.onnx")
    onnx.save(_dropouts(2), tmp_path / "b.onnx")
    lines = _text_lines(cli, tmp_path)
    _, doc = _sarif(cli, tmp_path)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    results = doc["runs"][0]["results"]
    assert len(results) == len(lines) == 2
    assert all(r["level"] != "note" for r in results)
    (a,) = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("a.onnx")]
    assert a["ruleId"] == "OLX010" and "×3" in a["message"]["text"] and a["properties"]["count"] == 3
    names = [loc["fullyQualifiedName"] for loc in a["locations"][0]["logicalLocations"]]
    assert names == [f"/block{i}/Dropout" for i in range(3)]
    assert [r["logicalLocations"][0]["fullyQualifiedName"] for r in a["relatedLocations"]] == names
    _, gh, _ = cli(tmp_path, "--format", "github")
    assert len(gh.splitlines()) == 2 and "×3" in gh and "::notice" not in gh

    infos = len(_text_lines(cli, tmp_path, "--show-info")) - len(lines)
    _, doc = _sarif(cli, tmp_path, "--show-info")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    notes = [r for r in doc["runs"][0]["results"] if r["level"] == "note"]
    assert infos > 0 and len(notes) == infos
    _, gh, _ = cli(tmp_path, "--format", "github", "--show-info")
    assert gh.count("::notice") == infos

    _, doc = _sarif(cli, tmp_path, "--expand")
    expanded = doc["runs"][0]["results"]
    assert len(expanded) == 5 and all(len(r["locations"][0]["logicalLocations"]) == 1 for r in expanded)
    assert len({r["partialFingerprints"]["onnxlintFingerprint/v1"] for r in expanded}) == 5
    _, gh, _ = cli(tmp_path, "--format", "github", "--expand")
    assert len(gh.splitlines()) == 5


def test_group_fingerprint_stays_when_nodes_of_its_cause_come_and_go(tmp_path, cli):
    p = tmp_path / "m.onnx"
    onnx.save(_dropouts(3), p)
    _, a = _sarif(cli, p)
    onnx.save(_dropouts(4), p)
    _, b = _sarif(cli, p)
    fp = lambda d: [r["partialFingerprints"]["onnxlintFingerprint/v1"] for r in d["runs"][0]["results"]]
    assert fp(a) == fp(b) and len(fp(a)) == 1
    assert b["runs"][0]["results"][0]["properties"]["count"] == 4


def test_in_model_suppressions_appear_with_suppressions_and_in_the_summary(tmp_path, cli):
    onnx.save(_dropouts(2, ignore="OLX010"), tmp_path / "meta.onnx")
    onnx.save(_dropouts(1, doc="onnxlint: ignore[OLX010]"), tmp_path / "doc.onnx")
    rc, doc = _sarif(cli, tmp_path)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    run = doc["runs"][0]
    why = sorted(s["justification"] for r in run["results"] if r["ruleId"] == "OLX010" for s in r.get("suppressions", []))
    assert why == ["suppressed by doc_string", "suppressed by metadata"]
    assert all(s["kind"] == "inSource" for r in run["results"] for s in r.get("suppressions", []))
    assert "3 suppressed" in run["properties"]["summary"]
    _, text, _ = cli(tmp_path)
    assert "3 suppressed" in text


def test_uris_are_relative_to_the_repository_root(tmp_path, cli, monkeypatch):
    """Run from a subfolder of a git repository: the URI is relative to the repository's top, %SRCROOT% is
    that top; a model outside the repository gets its absolute file: URI, never `../`."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "tools").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    onnx.save(_dropouts(1), repo / "models" / "m.onnx")
    outside = tmp_path / "elsewhere.onnx"
    onnx.save(_dropouts(1), outside)
    monkeypatch.chdir(repo / "tools")
    _, doc = _sarif(cli, Path("..") / "models" / "m.onnx", outside)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    run = doc["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path(os.path.realpath(repo)).as_uri() + "/"
    arts = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert {"uri": "models/m.onnx", "uriBaseId": "%SRCROOT%"} in arts
    assert {"uri": Path(os.path.realpath(outside)).as_uri()} in arts
    assert not any(a["uri"].startswith("..") for a in arts)


def test_fingerprints_do_not_depend_on_how_the_path_was_typed(tmp_path, cli, monkeypatch):
    """The fingerprint hashed the path as typed: `models/`, `$PWD/models` and `.` run in models/ gave three alerts
    of one finding (and an absolute path a new one on every runner's work folder). It hashes the URI now."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    onnx.save(_dropouts(2), tmp_path / "models" / "m.onnx")
    seen = []
    for cwd, path in ((tmp_path, "models"), (tmp_path, str(tmp_path / "models")), (tmp_path / "models", ".")):
        monkeypatch.chdir(cwd)
        for expand in ((), ("--expand",)):
            rc, out, _ = cli("--no-cache", "--format", "sarif", *expand, path)
            seen.append(sorted(r["partialFingerprints"]["onnxlintFingerprint/v1"] for r in json.loads(out)["runs"][0]["results"]))
    assert seen[0] != seen[1] and seen[0::2] == [seen[0]] * 3 and seen[1::2] == [seen[1]] * 3, seen


def _argmax_int32() -> onnx.ModelProto:
    """One warning: OLX200, ArgMax of int32 has no CUDA kernel."""
    return make_model([h.make_node("ArgMax", ["x"], ["y"], name="am", axis=1)], [vi("x", T.INT32, [2, 4])],
                      [vi("y", T.INT64, [2, 1])])


def test_every_results_rule_is_described_at_the_severity_the_config_gives(tmp_path, cli, monkeypatch):
    """The rule list came from the first model's config: a folder sorting first that ignores OLX200 left another
    folder's OLX200 result without a descriptor (ruleIndex -1). A config's severity override reached the results but
    not the descriptor, and an info rule's problem.severity was `info`, which code scanning does not know."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    for folder in ("a_legacy", "b_strict"):
        (tmp_path / folder).mkdir()
        onnx.save(_argmax_int32(), tmp_path / folder / "x.onnx")
    (tmp_path / "a_legacy" / "pyproject.toml").write_text('[tool.onnxlint]\nignore = ["OLX200"]\n')
    rc, doc = _sarif(cli, "--no-cache", "--show-info", ".")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    run = doc["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    (res,) = [r for r in run["results"] if r["ruleId"] == "OLX200"]
    assert rc == 1 and res["ruleIndex"] == ids.index("OLX200"), ids
    props = {r["id"]: r["properties"]["problem.severity"] for r in run["tool"]["driver"]["rules"]}
    assert props["OLX013"] == "recommendation" and props["OLX200"] == "warning"
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint.severity]\nOLX200 = "error"\n')
    from onnxlint.config import config_file

    config_file.find_for.cache_clear()
    rc, doc = _sarif(cli, "--no-cache", "b_strict")
    (rule,) = [r for r in doc["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "OLX200"]
    (res,) = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "OLX200"]
    assert res["level"] == "error" and rule["defaultConfiguration"]["level"] == "error"
    assert rule["properties"]["problem.severity"] == "error"


def test_a_linked_model_is_named_by_its_link_in_sarif_and_annotations(tmp_path, cli, monkeypatch):
    """A git-annex model is a link into .git/annex/objects: SARIF and the annotations named the object, so an alert
    moved to a new file (a new fingerprint) whenever the model's content changed. The link's own path is used."""
    monkeypatch.chdir(tmp_path)
    objects = tmp_path / ".git" / "annex" / "objects" / "ab"
    objects.mkdir(parents=True)
    onnx.save(_dropouts(1), objects / "SHA256E-s1--x.onnx")
    (tmp_path / "models").mkdir()
    os.symlink("../.git/annex/objects/ab/SHA256E-s1--x.onnx", tmp_path / "models" / "d.onnx")
    rc, doc = _sarif(cli, "--no-cache", "models/d.onnx")
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"] for loc in r["locations"]}
    assert uris == {"models/d.onnx"}
    rc, out, _ = cli("--no-cache", "--format", "github", "models/d.onnx")
    assert "file=models/d.onnx," in out and "annex" not in out, out


def test_a_rule_of_the_repositorys_has_no_onnxlint_help_link_nor_markdown(tmp_path, cli, monkeypatch):
    """A rule file's rule: onnxlint's docs have no page for it (the link was a dead anchor), and its explanation
    comes from the repository under review, so code scanning gets it as text, never as markdown it renders."""
    import onnx
    from conftest import make_model, vi
    from onnx import TensorProto as T
    from onnx import helper as h

    monkeypatch.chdir(tmp_path)
    onnx.save(make_model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])]),
              tmp_path / "m.onnx")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme.yaml").write_text(
        "- id: ACME001\n  name: no-relu\n  severity: error\n  targets: any\n  summary: s\n"
        "  explanation: '![x](https://example.com/pixel.png) [click](https://example.com)'\n"
        "  message: a Relu\n  match: {op: Relu}\n")
    rc, out, _ = cli("m.onnx", "--rules", "rules", "--format", "sarif")
    rules = {r["id"]: r for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]}
    assert "helpUri" not in rules["ACME001"] and "markdown" not in rules["ACME001"]["help"], rules["ACME001"]
    assert "example.com/pixel.png" in rules["ACME001"]["help"]["text"]
    assert rules["OLX013"]["helpUri"].endswith("#olx013") and rules["OLX013"]["help"]["markdown"]


def test_a_group_past_code_scannings_location_limit_keeps_the_file_uploadable(tmp_path, cli):
    """Code scanning rejects a whole file with a result past its 1,000 locations (which arrays count is not
    documented): a group of 1,189 nodes names its first 1,000 in each, its count the rest."""
    onnx.save(_dropouts(1200), tmp_path / "m.onnx")
    _, doc = _sarif(cli, tmp_path / "m.onnx")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    res = max(doc["runs"][0]["results"], key=lambda r: r["properties"]["count"])
    n = res["properties"]["count"]  # the Dropouts ORT's optimizations remove: one cause
    assert n > 1000 and res["properties"]["locationsOmitted"] == n - 1000 and f"×{n}" in res["message"]["text"]
    assert len(res["relatedLocations"]) == len(res["locations"][0]["logicalLocations"]) == 1000
    assert all(len(r.get("relatedLocations", ())) <= 1000 for r in doc["runs"][0]["results"])


def test_results_past_code_scannings_run_limit_keep_the_most_severe_and_say_so(tmp_path, cli, monkeypatch):
    """Past 25,000 results a run code scanning rejects the file: the errors and warnings are kept before the notes,
    in their order, and a notification says how many were left out (the summary still counts every one)."""
    from onnxlint.formats import sarif_format

    onnx.save(_dropouts(3), tmp_path / "m.onnx")
    _, whole = _sarif(cli, tmp_path / "m.onnx", "--expand", "--show-info")
    every = whole["runs"][0]["results"]
    warnings = [r for r in every if r["level"] != "note"]
    assert len(warnings) == 3 and len(every) > 3
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", 3)
    _, doc = _sarif(cli, tmp_path / "m.onnx", "--expand", "--show-info")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    run = doc["runs"][0]
    assert run["results"] == warnings
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith(f"{len(every) - 3:,} of {len(every):,} results left out")
    assert run["properties"]["summary"] == whole["runs"][0]["properties"]["summary"]


def test_a_file_past_code_scannings_size_limit_keeps_the_most_severe_within_it(tmp_path, cli, monkeypatch):
    """Code scanning rejects a file over 10 MB gzip-compressed ("SARIF file is too large"): results are left out,
    the notes first, until the compressed document is within the limit, and a notification says so."""
    import gzip

    from onnxlint.formats import sarif_format

    def sarif(limit=None):
        if limit is not None:
            monkeypatch.setattr(sarif_format, "MAX_GZIP_BYTES", limit)
        rc, out, _ = cli(tmp_path / "m.onnx", "--expand", "--show-info", "--format", "sarif")
        return rc, out, len(gzip.compress(out.encode(), 6)), json.loads(out)

    onnx.save(_dropouts(300), tmp_path / "m.onnx")
    rc, _, whole_size, whole = sarif()
    every = whole["runs"][0]["results"]
    severe = [r for r in every if r["level"] != "note"]
    assert len(severe) == 300 and len(every) > 300
    assert sarif(1)[3]["runs"][0]["results"] == []  # past what even the rules' descriptors take: none kept
    limit = (sarif(1)[2] + whole_size) // 2  # room for about half the results
    rc2, _, size, doc = sarif(limit)
    assert rc2 == rc and size <= limit
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    run = doc["runs"][0]
    kept = run["results"]
    assert 100 < len(kept) < 300 and kept == severe[:len(kept)]
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith(f"{len(every) - len(kept):,} of {len(every):,} results left out")
    assert "gzip-compressed" in note["message"]["text"]
    assert run["properties"]["summary"] == whole["runs"][0]["properties"]["summary"]


def test_a_rule_of_many_tags_keeps_the_file_within_code_scannings_tag_limit(tmp_path, cli, monkeypatch):
    """Code scanning rejects a whole file with a rule of over 20 tags ("more tags per rule than allowed"): a rule
    file's rule may list any number (an organisation's taxonomy), so its descriptor keeps the first 20 of them."""
    monkeypatch.chdir(tmp_path)
    onnx.save(make_model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])]),
              tmp_path / "m.onnx")
    (tmp_path / "tagged").mkdir()  # not `rules`: the process parses a folder once (get_ruleset)
    tags = ", ".join(f"team-{i:02}" for i in range(30))
    (tmp_path / "tagged" / "acme.yaml").write_text(
        "- id: ACME001\n  name: no-relu\n  severity: error\n  targets: any\n  summary: s\n  explanation: e\n"
        f"  tags: [{tags}]\n  message: a Relu\n  match: {{op: Relu}}\n")
    _, doc = _sarif(cli, "m.onnx", "--rules", "tagged")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["ACME001"]["properties"]["tags"] == sorted(["any", *(f"team-{i:02}" for i in range(30))])[:20]
    assert all(len(r["properties"]["tags"]) <= 20 for r in rules.values())
    assert any(r["ruleId"] == "ACME001" for r in doc["runs"][0]["results"])


def test_the_results_kept_past_the_run_limit_are_the_open_and_most_severe_in_their_places(monkeypatch):
    """within_limits keeps the open results before the suppressed ones (code scanning shows those closed), errors
    before warnings before notes, and the kept ones in the order they came (the text's order)."""
    from onnxlint.formats import sarif_format

    def res(k, level, suppressed=False):
        return {"ruleId": f"R{k}", "level": level, **({"suppressions": [{"kind": "external"}]} if suppressed else {})}

    found = [res(0, "note"), res(1, "error", True), res(2, "warning"), res(3, "note"), res(4, "error"),
             res(5, "warning", True), res(6, "warning"), res(7, "note")]
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", 4)
    kept, left_out = sarif_format.within_limits(found)
    assert [r["ruleId"] for r in kept] == ["R0", "R2", "R4", "R6"] and left_out == 4  # R0: the first open note
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", 6)  # every open one, none suppressed
    kept, left_out = sarif_format.within_limits(found)
    assert [r["ruleId"] for r in kept] == ["R0", "R2", "R3", "R4", "R6", "R7"] and left_out == 2
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", 7)  # and the suppressed error before the suppressed warning
    kept, left_out = sarif_format.within_limits(found)
    assert [r["ruleId"] for r in kept] == ["R0", "R1", "R2", "R3", "R4", "R6", "R7"] and left_out == 1
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", 8)
    assert sarif_format.within_limits(found) == (found, 0)
