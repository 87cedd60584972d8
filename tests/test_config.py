
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h


def test_pyproject_config_select_severity_and_per_file_ignores(tmp_path, examples_dir, lint_json, cli):
    proj = tmp_path / "proj"
    (proj / "models").mkdir(parents=True)
    for name in ("dropout_training.onnx", "static_batch.onnx", "equal_mismatch.onnx"):
        (proj / "models" / name).write_bytes((examples_dir / name).read_bytes())
    (proj / "pyproject.toml").write_text(
        '[tool.onnxlint]\nignore = ["OLX3"]\ntargets = ["ort-cuda"]\n'
        '[tool.onnxlint.severity]\nOLX013 = "error"\n'
        '[tool.onnxlint.per-file-ignores]\n"models/equal_*.onnx" = ["OLX015"]\n')
    rc, findings = lint_json(proj / "models")
    codes = {(f["filename"].rsplit("/", 1)[-1], f["code"], f["severity"]) for f in findings}
    assert ("static_batch.onnx", "OLX013", "error") in codes
    assert not any(c == "OLX015" for _, c, _ in codes)  # suppressed, not reported in JSON
    assert not any(c.startswith("OLX3") for _, c, _ in codes)


def test_yaml_config_file(tmp_path, examples_dir, lint_json):
    cfg = tmp_path / ".onnxlint.yaml"
    cfg.write_text("select: [OLX01]\n")
    rc, findings = lint_json(examples_dir, "--config", cfg)
    assert findings and all(f["code"].startswith("OLX01") for f in findings)


def test_bad_config_is_exit_2(tmp_path, examples_dir, cli):
    cfg = tmp_path / ".onnxlint.yaml"
    cfg.write_text("selct: [OLX01]\n")
    rc, _, err = cli(examples_dir / "clean_conv.onnx", "--config", cfg)
    assert rc == 2 and "unknown onnxlint setting 'selct'" in err


def test_node_doc_string_suppression(save, lint_json):
    n = h.make_node("Equal", ["a", "b"], ["y"], name="eq", doc_string="checked by hand; onnxlint: ignore[OLX015]")
    m = make_model([n], [vi("a", T.INT64, ["n"]), vi("b", T.INT32, ["n"])], [vi("y", T.BOOL, ["n"])])
    rc, findings = lint_json(save(m))
    assert not any(f["code"] == "OLX015" for f in findings)
