import json

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


def test_a_defect_in_onnxlint_is_one_line_and_exit_2_never_the_findings_code(examples_dir):
    """An exception onnxlint does not expect (here: in the config search, where Python 3.10 once lacked tomllib)
    must not read as "findings" (exit 1) to a CI script: the process prints one line naming it and exits 2.
    A caller of main(argv) gets the exception itself."""
    import subprocess
    import sys

    code = ("import sys; from onnxlint.config import config_file as config\n"
            "def broken(*a, **k): raise ModuleNotFoundError(\"No module named 'tomllib'\")\n"
            "config.find_for = broken\n"
            "from onnxlint.cli import main\n"
            "in_process = len(sys.argv) > 2\n"
            "sys.argv[1:] = ['--no-cache', sys.argv[1]]\n"
            "sys.exit(main(sys.argv[1:]) if in_process else main())\n")
    model = str(examples_dir / "dropout_training.onnx")
    p = subprocess.run([sys.executable, "-c", code, model], capture_output=True, text=True, timeout=300)
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert p.stderr == "onnxlint: internal error (ModuleNotFoundError: No module named 'tomllib'); please report it\n"
    p = subprocess.run([sys.executable, "-c", code, model, "argv"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "Traceback" in p.stderr and p.stderr.endswith("No module named 'tomllib'\n")


def test_pyproject_config_is_read_by_the_installed_command(tmp_path, examples_dir):
    """The onnxlint process (not main() in-process) on the Python running the tests, 3.10 included (tomli there),
    reads a [tool.onnxlint] table: the selection is applied, the exit code is the findings code."""
    import json
    import subprocess
    import sys

    (tmp_path / "m.onnx").write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint]\nselect = ["OLX010"]\n')
    p = subprocess.run([sys.executable, "-m", "onnxlint", "--no-cache", "--format", "json", "m.onnx"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 1, p.stderr
    assert [f["code"] for f in json.loads(p.stdout)] == ["OLX010"]


def _argmax_int32(path):
    """A model whose one finding is a warning (OLX200: ArgMax of int32 has no CUDA kernel)."""
    import onnx

    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(make_model([h.make_node("ArgMax", ["x"], ["y"], name="am", axis=1)], [vi("x", T.INT32, [2, 4])],
                         [vi("y", T.INT64, [2, 1])]), path)


def test_each_models_fail_on_is_its_own_configs(tmp_path, cli, monkeypatch):
    """The exit code judged every model by the first model's config: a folder's `fail-on: error`, sorting first,
    let a warning anywhere else pass the gate, and a default config sorting first cancelled the root's."""
    monkeypatch.chdir(tmp_path)
    _argmax_int32(tmp_path / "models" / "w.onnx")
    _argmax_int32(tmp_path / "aaa" / "a.onnx")
    (tmp_path / "aaa" / ".onnxlint.yaml").write_text("fail-on: error\n")
    rc, out, err = cli("--no-cache", ".")
    assert out.count("OLX200") == 2 and rc == 1, (out, err)  # models/w.onnx fails on its warning
    rc, out, _ = cli("--no-cache", "aaa")
    assert out.count("OLX200") == 1 and rc == 0  # aaa's own warning is below its fail-on
    (tmp_path / "models" / ".onnxlint.yaml").write_text("fail-on: error\n")
    from onnxlint.config import config_file

    config_file.find_for.cache_clear()  # a process finds a folder's config once
    assert cli("--no-cache", ".")[0] == 0
    rc = cli("--no-cache", "--fail-on", "warning", ".")[0]
    assert rc == 1  # the command line's fail-on is every config's


def test_an_empty_code_is_refused_not_a_prefix_of_every_rule(tmp_path, cli, monkeypatch):
    """`ignore = ["OLX013", ""]` passed the unknown-code check (blank entries were skipped) and, "" being a prefix
    of every code, silenced every rule: 0 findings, exit 0. Refused now, in each list of codes."""
    monkeypatch.chdir(tmp_path)
    _argmax_int32(tmp_path / "m.onnx")
    from onnxlint.config import config_file

    for body in ('ignore = ["OLX013", ""]', 'extend-select = [" "]', '[tool.onnxlint.per-file-ignores]\n"*" = [""]'):
        (tmp_path / "pyproject.toml").write_text(f"[tool.onnxlint]\n{body}\n")
        config_file.find_for.cache_clear()
        rc, out, err = cli("--no-cache", "m.onnx")
        assert rc == 2 and "holds an empty entry" in err and not out, (body, out, err)
    from onnxlint.rules.codes import matches

    assert not matches("OLX200", [""]) and matches("OLX200", ["", "OLX2"])


def test_a_folder_with_both_config_files_is_an_error_naming_them(tmp_path, cli, monkeypatch):
    """A hidden `.onnxlint.yaml` replaced the team's `[tool.onnxlint]` beside it unseen (`fail-on: error` beside
    `fail-on = "warning"` let a warning pass); a pyproject.toml without the section is no conflict."""
    monkeypatch.chdir(tmp_path)
    _argmax_int32(tmp_path / "m.onnx")
    from onnxlint.config import config_file

    (tmp_path / ".onnxlint.yaml").write_text("fail-on: error\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config_file.find_for.cache_clear()
    assert cli("--no-cache", "m.onnx")[0] == 0
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint]\nfail-on = "warning"\n')
    config_file.find_for.cache_clear()
    rc, out, err = cli("--no-cache", "m.onnx")
    assert rc == 2 and not out and ".onnxlint.yaml: a [tool.onnxlint] in pyproject.toml beside it" in err, err


def test_the_command_lines_selection_layers_over_the_configs_as_ruffs_does(tmp_path, cli, monkeypatch):
    """`--select OLX200` kept the config's extend-select and ignore (OLX010 shown, OLX200 never), and
    `--extend-select OLX200` lost to the config's ignore. As ruff's: a command-line select replaces the config's
    selection, and the command line's extend-select and ignore apply after it."""
    import onnx

    monkeypatch.chdir(tmp_path)
    _argmax_int32(tmp_path / "w.onnx")
    drop = make_model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")],
                      [vi("x", T.FLOAT, [2]), vi("r", T.FLOAT, []), vi("t", T.BOOL, [])], [vi("y", T.FLOAT, [2])], opset=13)
    onnx.save(drop, tmp_path / "d.onnx")
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint]\nignore = ["OLX200"]\nextend-select = ["OLX010"]\n')
    from onnxlint.config import config_file

    config_file.find_for.cache_clear()

    def codes(*args):
        rc, out, err = cli("--no-cache", "--format", "json", *args, "w.onnx", "d.onnx")
        assert rc in (0, 1), err
        return sorted({f["code"] for f in json.loads(out)})

    assert "OLX200" not in codes() and "OLX010" in codes()
    assert codes("--select", "OLX200") == ["OLX200"]
    assert "OLX200" in codes("--extend-select", "OLX200")
    assert "OLX010" not in codes("--ignore", "OLX010")
    assert codes("--select", "OLX2", "--ignore", "OLX200") == []


def test_a_broken_pyproject_beside_the_yaml_in_force_is_not_this_runs_error(tmp_path, cli, monkeypatch):
    """The check for settings in both files read the pyproject.toml beside `.onnxlint.yaml`: a broken one, not in
    force, ended the run (exit 2), as did one linked out of the repository. The yaml is used, as before."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    _argmax_int32(tmp_path / "m.onnx")
    (tmp_path / ".onnxlint.yaml").write_text("fail-on: error\n")
    (tmp_path / "pyproject.toml").write_text("[project\n")
    from onnxlint.config import config_file

    config_file.find_for.cache_clear()
    rc, out, err = cli("--no-cache", "m.onnx")
    assert rc == 0 and "OLX200" in out and not err, err


def test_a_config_version_that_is_no_version_is_a_config_error(tmp_path, examples_dir, cli):
    """ort-version/trt-version in a config are checked as --ort-version/--trt-version are: a typo is one line
    naming the file, exit 2 (it checked against the oldest shipped tables, "asked banana"); "installed" and a
    table label stay valid."""
    model = tmp_path / "m.onnx"
    model.write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
    for body, said in (('ort-version = "banana"', "ort-version: ORT version 'banana' is not a version number"),
                       ('trt-version = "8.6x"', "trt-version: TensorRT version '8.6x' is not a version number")):
        (tmp_path / "pyproject.toml").write_text(f"[tool.onnxlint]\n{body}\n")
        rc, out, err = cli(model, "--no-cache")
        assert rc == 2 and not out and "pyproject.toml: " + said in err, (body, out, err)
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint]\nort-version = "installed"\ntrt-version = "10.1+rtx1.5"\n')
    rc, out, err = cli(model, "--no-cache")
    assert rc == 0 and "TensorRT-RTX 1.5" in out, (out, err)


def test_a_severity_override_of_no_rule_is_an_error_with_a_did_you_mean(tmp_path, examples_dir, cli, monkeypatch):
    """[tool.onnxlint.severity] names rule codes, checked as select/ignore's are (the config of the folder onnxlint
    runs in): a misspelt one changed nothing, silently (OLX2O1 for OLX201); a prefix is refused too (the table
    applies to whole codes only)."""
    for code, hint in (("OLX2O1", "did you mean 'OLX201'?"), ("OLX2", "a prefix: name each rule's code"), ("OLX201", None)):
        folder = tmp_path / code  # a folder each: a config file is read once a process
        folder.mkdir()
        monkeypatch.chdir(folder)
        (folder / "m.onnx").write_bytes((examples_dir / "clean_conv.onnx").read_bytes())
        (folder / "pyproject.toml").write_text(f'[tool.onnxlint.severity]\n{code} = "warning"\n')
        for cache in (("--no-cache",), ("--cache-dir", folder / "cache")):  # with the result cache on too
            rc, out, err = cli("m.onnx", *cache)
            if hint is None:
                assert rc == 0 and not err, (code, out, err)
            else:
                assert rc == 2 and not out and f"severity: unknown rule code '{code}' ({hint})" in err, (code, out, err)


def test_a_nested_configs_unknown_code_is_an_error_naming_it(tmp_path, examples_dir, cli, monkeypatch):
    """The codes of a config found beside a model (not in the folder onnxlint runs in: a monorepo's sub-project,
    linted from the root as pre-commit and CI do) are checked as the current folder's are: a misspelt ignore there
    was silently no ignore at all."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.onnx").write_bytes((examples_dir / "double_input.onnx").read_bytes())
    (tmp_path / "sub" / ".onnxlint.yaml").write_text("ignore: [OLX12]\n")
    for cache in (("--no-cache",), ("--cache-dir", tmp_path / "cache")):
        rc, out, err = cli(".", *cache)
        assert rc == 2 and not out, (cache, out, err)
        assert "sub/.onnxlint.yaml: unknown rule code or prefix 'OLX12' (did you mean 'OLX312'?)" in err, err
    (tmp_path / "sub2").mkdir()  # a config read once a process: a good one in a folder of its own
    (tmp_path / "sub2" / "m.onnx").write_bytes((examples_dir / "double_input.onnx").read_bytes())
    (tmp_path / "sub2" / ".onnxlint.yaml").write_text("ignore: [OLX012]\n")
    rc, out, err = cli("sub2", "--no-cache")
    assert rc == 0 and "OLX012" not in out, (out, err)


def test_config_named_with_option_is_read_once_per_run(tmp_path, monkeypatch, cli):
    """`--config FILE` was read and parsed again for every folder a walk entered and every model's folder (and its
    patterns compiled again each time): 1,500 folders took 3.3 s where the nearest-config search takes 0.9 s, and a
    config holding one 5 MB exclude pattern ran past 10 minutes. Now once by the command line, once by the run."""
    import onnx

    from onnxlint.config import config_file

    relu = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    for i in range(20):
        (tmp_path / f"d{i}").mkdir()
        onnx.save(relu, tmp_path / f"d{i}" / "m.onnx")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("select: [OLX]\nextend-exclude: [skipped]\n")
    reads = []
    real = config_file.load_file
    monkeypatch.setattr(config_file, "load_file", lambda path: reads.append(path) or real(path))
    rc, out, err = cli(tmp_path, "--config", cfg, "--no-cache", "--format", "json")
    assert rc == 0 and {f["filename"] for f in json.loads(out)} and "Traceback" not in err
    assert len(reads) <= 2, len(reads)


def test_a_config_entry_of_megabytes_is_refused_naming_the_file(tmp_path, monkeypatch, cli):
    """One string of a committed config is bounded (config_file.MAX_CHARS): a 2 MB exclude pattern took 6 s and
    490 MB to compile, a 5 MB per-file-ignores pattern 10 s and 800 MB, and a 5 MB select code was quoted whole in
    an error line that did not name the file. Each is now one short line naming the file and the setting, exit 2."""
    import onnx

    relu = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    onnx.save(relu, tmp_path / "m.onnx")
    monkeypatch.chdir(tmp_path)
    long = "x" * 100_000
    for key, text in (("extend-exclude", f'extend-exclude: ["{long}"]\n'), ("exclude", f'exclude: "{long}"\n'),
                      ("per-file-ignores", f'per-file-ignores:\n  ? "{long}"\n  : [OLX]\n'),
                      ("select", f'select: ["OLX{long}"]\n'), ("rules", f'rules: "{long}"\n')):
        (tmp_path / ".onnxlint.yaml").write_text(text)
        rc, out, err = cli("--no-cache", ".")
        assert rc == 2 and ".onnxlint.yaml" in err and f"{key} holds an entry of" in err, (key, err[:300])
        assert len(err) < 400 and "Traceback" not in err


def test_a_configs_patterns_are_bounded_in_all_naming_the_file(tmp_path, monkeypatch, cli):
    """Each pattern within 4,096 characters, 1,000 of them (config_file.MAX_ENTRIES) were 4 MB to compile: 10 s for
    exclude patterns of `?`, 17 s for per-file-ignores patterns of `*a*a...`, then 0.24 s a model matching them. The
    patterns of one config hold MAX_PATTERN_CHARS in all (1,000 of 131 characters pass): one line naming the file,
    exit 2."""
    import onnx

    from onnxlint.config import config_file

    relu = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    onnx.save(relu, tmp_path / "m.onnx")
    monkeypatch.chdir(tmp_path)
    fits = [f"{i:03d}" + "x" * 128 for i in range(1000)]
    half = ["?" * 4000] * 17
    for text, refused in ((f"exclude: {json.dumps(fits)}\n", False),
                          (f"exclude: {json.dumps(half)}\nextend-exclude: {json.dumps(half)}\n", True),
                          ("per-file-ignores:\n" + "".join(f'  ? "{i}{"*a" * 2000}"\n  : [OLX]\n' for i in range(33)), True)):
        (tmp_path / ".onnxlint.yaml").write_text(text)
        config_file.find_for.cache_clear()  # a config is read once a process
        rc, out, err = cli("--no-cache", ".")
        if not refused:
            assert rc == 0 and "1 file" in out and not err, err[:300]
            continue
        assert rc == 2 and not out and len(err.splitlines()) == 1 and len(err) < 400, err[:400]
        assert f"{tmp_path / '.onnxlint.yaml'}: exclude, extend-exclude and per-file-ignores hold " in err, err
        assert "more than the 131,072 a config's patterns may hold in all" in err, err


def test_an_unknown_code_in_the_current_folders_config_names_the_file(tmp_path, examples_dir, cli, monkeypatch):
    """A nested config's unknown code named its file; the current folder's config's (the one a pre-commit hook or
    CI step meets first) did not: `unknown rule code or prefix 'OLX99'` with no file to look in. A code typed on the
    command line still names none."""
    from onnxlint.config import config_file

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.onnx").write_bytes((examples_dir / "double_input.onnx").read_bytes())
    cfg = tmp_path / ".onnxlint.yaml"
    for text, said in (("select: [OLX99]\n", "unknown rule code or prefix 'OLX99'"),
                       ("per-file-ignores: {'*.onnx': [XYZ]}\n", "unknown rule code or prefix 'XYZ'"),
                       ("severity: {OLX999: error}\n", "severity: unknown rule code 'OLX999'")):
        cfg.write_text(text)
        config_file.find_for.cache_clear()  # a config is read once a process
        for cache in (("--no-cache",), ("--cache-dir", tmp_path / "cache")):
            rc, out, err = cli("m.onnx", *cache)
            assert rc == 2 and not out and f"error: {cfg}: {said}" in err, (text, err)
    cfg.write_text("select: [OLX0]\n")
    config_file.find_for.cache_clear()
    rc, out, err = cli("m.onnx", "--no-cache", "--ignore", "OLX98")
    assert rc == 2 and "error: unknown rule code or prefix 'OLX98'" in err and str(cfg) not in err, err
