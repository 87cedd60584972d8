"""The result cache as the command line uses it: a second run over an unchanged model prints the same and exits
the same without importing onnx, numpy or yaml; anything that can change the report lints again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from conftest import CAST_RULE, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint import cache
from onnxlint.linting import linter

HEAVY = ("onnx", "numpy", "yaml", "onnxruntime")


def _model(node_name: str = "eq") -> onnx.ModelProto:
    """Equal on float vs int32 (OLX015, an error) and a Dropout (findings of several rules)."""
    nodes = [h.make_node("Dropout", ["x"], ["d"], name="drop"), h.make_node("Equal", ["x", "k"], ["e"], name=node_name),
             h.make_node("Cast", ["e"], ["y"], name="cast", to=T.FLOAT)]
    return make_model(nodes, [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])], [vi("y", T.FLOAT, [4])])


@pytest.fixture
def model(tmp_path) -> Path:
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    return p


def _env() -> dict:
    env = dict(os.environ)
    env.pop(cache.ENV_DIR, None)
    env["NO_COLOR"] = "1"
    return env


def _process(cwd: Path, *args: str) -> tuple[int, str, set[str]]:
    """`python -X importtime -m onnxlint ARGS` in cwd: exit code, stdout, top-level packages it imported."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "onnxlint", *args], cwd=cwd, env=_env(),
                       capture_output=True, text=True, timeout=300)
    imported = {line.split("|")[-1].strip().split(".")[0] for line in p.stderr.splitlines() if line.startswith("import time:")}
    return p.returncode, p.stdout, imported


@pytest.mark.parametrize("fmt", [[], ["--format", "json"]])
def test_second_run_is_the_same_output_without_onnx_numpy_or_yaml(tmp_path, model, fmt):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # in a work tree: .onnxlint_cache, here
    rc1, out1, imported1 = _process(tmp_path, "m.onnx", *fmt)
    assert "onnx" in imported1  # the probe sees a miss import it (the built-in rules come parsed: no yaml)
    assert rc1 == 1 and "OLX015" in out1
    rc2, out2, imported2 = _process(tmp_path, "m.onnx", *fmt)
    assert (rc2, out2) == (rc1, out1)
    assert not imported2 & set(HEAVY), sorted(imported2 & set(HEAVY))
    assert (tmp_path / ".onnxlint_cache" / "CACHEDIR.TAG").is_file()


def test_version_and_help_import_no_onnx(tmp_path):
    rc, out, imported = _process(tmp_path, "--version")
    assert rc == 0 and out.startswith("onnxlint ") and not imported & set(HEAVY)
    rc, out, imported = _process(tmp_path, "--help")
    assert rc == 0 and "onnxlint clean" in out and "--no-cache" in out and not imported & set(HEAVY)


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--format", "sarif"], ["--format", "github"],
                                   ["--statistics"], ["--show-info", "--expand"], ["-q"], ["--fail-on", "error"],
                                   ["--select", "OLX015"]])
def test_hit_prints_and_exits_as_the_miss(cli, spy, model, extra):
    first = cli(model, "--no-progress", *extra)
    second = cli(model, "--no-progress", *extra)
    assert spy.linted == ["m.onnx"]  # the second run was a hit
    assert second == first and first[1]


def test_hit_with_a_baseline_is_the_same(cli, spy, model, tmp_path):
    base = tmp_path / "baseline.json"
    rc, _, err = cli(model, "--baseline", base, "--update-baseline")
    assert rc == 0 and "recorded" in err and base.is_file()
    first = cli(model, "--baseline", base)
    second = cli(model, "--baseline", base)
    assert spy.linted == ["m.onnx"] and first == second and first[0] == 0
    onnx.save(_model("eq2"), model)  # a finding on a node the baseline does not know
    rc, out, _ = cli(model, "--baseline", base)
    assert rc == 1 and "eq2" in out and spy.linted == ["m.onnx", "m.onnx"]


def test_no_cache_neither_reads_nor_writes(cli, spy, model, tmp_path):
    a = cli(model, "--no-cache")
    b = cli(model, "--no-cache")
    assert a == b and spy.linted == ["m.onnx", "m.onnx"]
    assert not (tmp_path / ".onnxlint_cache").exists()
    cli(model)
    cli(model, "--no-cache")
    assert spy.linted == ["m.onnx"] * 4


def test_cache_dir_option_and_environment(cli, spy, model, tmp_path, monkeypatch):
    cli(model, "--cache-dir", tmp_path / "c1")
    assert (tmp_path / "c1" / "CACHEDIR.TAG").is_file() and not (tmp_path / ".onnxlint_cache").exists()
    cli(model, "--cache-dir", tmp_path / "c1")
    assert spy.linted == ["m.onnx"]
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "c2"))
    cli(model)  # another folder: a miss
    assert (tmp_path / "c2" / "CACHEDIR.TAG").is_file() and spy.linted == ["m.onnx"] * 2
    cli(model)
    cli(model, "--cache-dir", tmp_path / "c1")  # the option wins over the environment
    assert spy.linted == ["m.onnx"] * 2


def test_the_default_cache_is_in_the_current_folder_as_the_readme_says(cli, spy, tmp_path, monkeypatch):
    """The README said the cache is `.onnxlint_cache/` "of a git work tree" (read: at its root); it is made in the
    current folder, as --help says: a run from a subfolder of the repository makes its own there."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "models").mkdir()
    onnx.save(_model(), repo / "models" / "m.onnx")
    monkeypatch.chdir(repo / "models")
    cli("m.onnx")
    assert (repo / "models" / ".onnxlint_cache" / "CACHEDIR.TAG").is_file() and not (repo / ".onnxlint_cache").exists()
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8").split())
    assert "a result cache like ruff's in `.onnxlint_cache/` of the current folder, when that lies in a git work tree" \
        in readme


def test_clean_removes_the_folder_and_says_so(cli, spy, model, tmp_path, monkeypatch):
    cli(model)
    d = tmp_path / ".onnxlint_cache"
    assert d.is_dir()
    rc, out, _ = cli("clean")
    assert rc == 0 and ".onnxlint_cache" in out and "removed" in out and not d.exists()
    rc, out, _ = cli("clean")
    assert rc == 0 and "nothing to remove" in out
    cli(model)
    assert spy.linted == ["m.onnx"] * 2  # linted again after clean
    cli(model, "--cache-dir", tmp_path / "other")
    rc, out, _ = cli("clean", "--cache-dir", tmp_path / "other")
    assert rc == 0 and "other" in out and not (tmp_path / "other").exists() and d.is_dir()
    monkeypatch.setenv(cache.ENV_DIR, str(d))
    rc, out, _ = cli("clean")
    assert rc == 0 and not d.exists()


def test_clean_leaves_a_folder_that_is_not_a_cache(cli, spy, tmp_path):
    mine = tmp_path / "precious"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    rc, out, err = cli("clean", "--cache-dir", mine)
    assert rc == 2 and "not an onnxlint cache" in err and "Traceback" not in err
    assert (mine / "notes.txt").read_text() == "keep"
    rc, _, err = cli("clean", "stray")
    assert rc == 2 and "unrecognized arguments" in err


def test_changed_model_bytes_lint_again(cli, spy, model):
    _, out1, _ = cli(model, "--format", "json")
    onnx.save(_model("renamed"), model)
    _, out2, _ = cli(model, "--format", "json")
    assert spy.linted == ["m.onnx"] * 2
    assert "renamed" in out2 and "renamed" not in out1
    assert json.loads(out1) != json.loads(out2)


def test_changed_config_lints_again(cli, spy, model, tmp_path):
    from onnxlint.config import config_file as config

    def run():  # each run a fresh process would be: the config search is remembered per process
        config.find_for.cache_clear()
        return cli(model)

    rc1, out1, _ = run()
    assert rc1 == 1 and "OLX015" in out1
    cfg = tmp_path / ".onnxlint.yaml"
    cfg.write_text("ignore: [OLX015, OLX007]\n")
    _, out2, _ = run()
    assert "OLX015" not in out2 and spy.linted == ["m.onnx"] * 2
    cfg.write_text("ignore: [OLX007]\n")
    _, out3, _ = run()
    assert "OLX015" in out3 and spy.linted == ["m.onnx"] * 3
    run()
    assert spy.linted == ["m.onnx"] * 3
    cfg.write_text("ignore: [OLX007]\nseverity: {OLX015: warning}\n")
    _, out4, _ = run()
    assert "OLX015 [warning]" in out4 or "1 warning" in out4, out4
    assert spy.linted == ["m.onnx"] * 4


def test_changed_rule_file_lints_again(cli, spy, model, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    rule = CAST_RULE
    from onnxlint.rulefiles import ruleset

    def run():  # each run a fresh process would be: rule files are parsed once per process
        ruleset._CACHE.clear()
        return cli(model, "--rules", rules)

    (rules / "mine.yaml").write_text(rule)
    _, out1, _ = run()
    assert "a Cast here" in out1
    _, again, _ = run()
    assert again == out1 and spy.linted == ["m.onnx"]
    (rules / "mine.yaml").write_text(rule.replace("a Cast here", "a Cast node here"))
    _, out2, _ = run()
    assert "a Cast node here" in out2 and spy.linted == ["m.onnx"] * 2
    (rules / "mine.yaml").write_text(rule.replace("id: XTR001", "id: XTR001\n  bogus: 1"))
    rc, out3, err = run()  # a malformed rule file is still an error, cached or not
    assert rc == 2 and "bogus" in err and out3 == ""


def test_unknown_select_code_is_an_error_on_a_hit_too(cli, spy, model):
    cli(model)
    rc, out, err = cli(model, "--select", "OLX9999")
    assert rc == 2 and "unknown rule code or prefix" in err and out == ""


def test_unreadable_model_is_not_cached(cli, spy, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage that is not a model")
    first = cli(bad)
    second = cli(bad)
    assert first == second and first[0] == 2 and "bad.onnx" in first[2]
    assert spy.linted == ["bad.onnx"] * 2


def test_fix_and_verify_bypass_the_cache(cli, spy, model, tmp_path, monkeypatch):
    cli(model)
    assert spy.linted == ["m.onnx"]

    def no_cache(*a, **k):
        raise AssertionError("the cache was consulted")

    monkeypatch.setattr(cache, "lint_with_cache", no_cache)
    monkeypatch.setattr(cache, "CachedRun", no_cache)
    rc, out, err = cli(model, "--fix", "-o", tmp_path / "fixed.onnx")
    assert (tmp_path / "fixed.onnx").is_file() and rc in (0, 1), err
    rc, out, err = cli(model, "--diff")
    assert "Traceback" not in err
    assert spy.linted == ["m.onnx"] * 3
    pytest.importorskip("onnxruntime")
    rc, out, err = cli(model, "--verify", "--providers", "CPUExecutionProvider")
    assert spy.linted == ["m.onnx"] * 4 and "Traceback" not in err


def test_a_miss_lints_with_the_stored_rules_not_the_yaml(cli, spy, model, monkeypatch):
    """With the cache on, a model that changed is linted again with the cache's copy of the parsed rules
    (no YAML parsed or validated); the findings are those of a run with the cache off."""
    from onnxlint.rulefiles import ruleset

    cli(model)  # stores the report and the rule set
    onnx.save(_model("eq2"), model)
    ruleset._CACHE.clear()  # a fresh process parses nothing yet
    parsed: list = []
    real = ruleset.load_ruleset

    def load_ruleset(*a, **k):
        parsed.append(a)
        return real(*a, **k)

    monkeypatch.setattr(ruleset, "load_ruleset", load_ruleset)
    rc, out, _ = cli(model, "--format", "json")
    assert parsed == [] and spy.linted == ["m.onnx"] * 2 and "eq2" in out

    assert not hasattr(linter, "RULESET_SOURCE")  # no module-global switch: the run passes its rule source in
    ruleset._CACHE.clear()
    assert cli(model, "--format", "json", "--no-cache") == (rc, out, "")
    assert parsed  # the run without the cache parsed the rule files


def test_a_miss_with_cached_rules_imports_no_yaml(tmp_path):
    """Pre-commit's usual run: a changed model, the parsed rules already in the cache folder. Parsing no YAML,
    the process does not import yaml at all (its import and regexes cost ~25 ms of a ~0.4 s run). Nor does the
    first run, on an empty cache folder: it reads the bundled parsed copy of the built-in rules."""
    import subprocess
    import sys

    import onnx
    from conftest import make_model, vi
    from onnx import TensorProto as T
    from onnx import helper as h

    for k in range(2):
        m = make_model([h.make_node("Relu", ["x"], ["y"], name=f"r{k}")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
        onnx.save(m, tmp_path / f"m{k}.onnx")
    code = ("import sys; from onnxlint.cli import main; rc = main(sys.argv[1:]); "
            "print('yaml' in sys.modules); sys.exit(rc)")
    run = [sys.executable, "-c", code, "--cache-dir", str(tmp_path / "c")]
    first = subprocess.run(run + [str(tmp_path / "m0.onnx")], capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 0 and first.stdout.strip().splitlines()[-1] == "False", first.stdout + first.stderr
    second = subprocess.run(run + [str(tmp_path / "m1.onnx")], capture_output=True, text=True, cwd=tmp_path)
    assert second.returncode == 0 and second.stdout.strip().splitlines()[-1] == "False", second.stdout + second.stderr


def _env_without_blas_threads() -> dict:
    from onnxlint import cli

    return {k: v for k, v in _env().items() if k not in cli._BLAS_THREADS}


def _threads_after_lint(tmp_path: Path, env: dict, call: str = "main()") -> list[str]:
    """Run the CLI in a fresh process on a model (numpy loads during the run), as the onnxlint script does
    (main() reading sys.argv) or as a library caller does (main([...])), and report the process's threads
    (Linux /proc) and the BLAS variable as the process sees it after main() returned."""
    onnx.save(_model(), tmp_path / "m.onnx")
    code = ("import os, sys; from onnxlint.cli import main; sys.argv[1:] = ['--no-cache', sys.argv[1]]; "
            f"rc = {call}; "
            # OpenBLAS stops its threads before a fork (the native worker's, loading.native) and starts them again
            # on its next product: one, so that the count is of the threads numpy would use from now on
            "import numpy as np; a = np.ones((256, 256)); a @ a; "
            "assert 'numpy' in sys.modules; print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.onnx")], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()[-2:]


# compared with the count before main(): some Pythons (3.12.1) start with objects frozen already
_FROZEN_AFTER = ("import gc, sys; frozen = gc.get_freeze_count(); from onnxlint.cli import main; "
                 "sys.argv[1:] = ['--no-cache', '--format', 'json', sys.argv[1]]; "
                 "rc = {call}; print(gc.get_freeze_count() > frozen, gc.isenabled(), file=sys.stderr); sys.exit(rc)")


@pytest.mark.parametrize("call, frozen", [("main()", "True"), ("main(sys.argv[1:])", "False")])
def test_the_cli_process_leaves_its_objects_to_the_os_and_a_library_caller_keeps_its_collector(tmp_path, call, frozen):
    """As the onnxlint script (main() reading sys.argv), the process ends right after: its objects are frozen so
    that Python's shutdown does not walk them all with the cyclic collector; the output is complete all the
    same. A program calling main(argv) keeps its collector as it was."""
    onnx.save(_model(), tmp_path / "m.onnx")
    p = subprocess.run([sys.executable, "-c", _FROZEN_AFTER.format(call=call), str(tmp_path / "m.onnx")],
                       capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300)
    assert p.returncode == 1 and json.loads(p.stdout), p.stderr
    assert p.stderr.split()[-2:] == [frozen, "True"]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through Linux /proc")
def test_cli_runs_numpy_with_one_blas_thread_and_restores_the_environment(tmp_path):
    """OpenBLAS starts a spinning thread per core when numpy loads (~80 ms of CPU per process on 2 cores) and
    onnxlint multiplies no large matrices: the CLI asks for one thread, then leaves os.environ as it found it."""
    env = _env_without_blas_threads()
    threads, blas = _threads_after_lint(tmp_path, env)
    assert (threads, blas) == ("1", "None")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2, reason="needs Linux /proc, 2 cores")
def test_a_blas_thread_count_the_user_set_is_kept(tmp_path):
    env = {**_env(), "OPENBLAS_NUM_THREADS": "2"}
    threads, blas = _threads_after_lint(tmp_path, env)
    assert (int(threads), blas) == (2, "2")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2, reason="needs Linux /proc, 2 cores")
def test_a_library_caller_of_main_keeps_numpys_threads(tmp_path):
    """main(argv) called from a program (not the onnxlint script) must not leave that program's numpy on one
    BLAS thread for the rest of its life."""
    env = _env_without_blas_threads()
    threads, blas = _threads_after_lint(tmp_path, env, call="main(sys.argv[1:])")
    assert int(threads) >= 2 and blas == "None"


def test_commands_that_run_a_model_keep_numpys_blas_threads():
    """--fix checks its rewrite by running both models (onnx.reference multiplies real weights when onnxruntime
    is absent) and verify runs sessions: those keep numpy's default threads."""
    from onnxlint import cli

    for argv in (["--fix", "m.onnx"], ["m.onnx", "--diff"], ["--fi", "m.onnx"], ["--verify=CPUExecutionProvider", "m"],
                 ["verify", "m.onnx"], ["m.onnx", "--unsafe-fixes", "--fix"]):
        assert cli._runs_models(argv), argv
    for argv in (["m.onnx"], ["--format", "json", "m.onnx"], ["--", "--fix"], ["--no-cache", "models/"]):
        assert not cli._runs_models(argv), argv


@pytest.mark.parametrize("fmt, reads_rules", [("text", False), ("json", False), ("sarif", True)])
def test_a_run_of_hits_reads_the_rules_only_when_the_output_lists_them(cli, spy, model, monkeypatch, fmt, reads_rules):
    """The keys of a hit already hold every rule file's bytes: text and JSON output need no rule set, SARIF lists
    the rules (tool.driver.rules)."""
    first = cli(model, "--format", fmt)
    reads: list[str] = []
    real = cache.rulesets._read_ruleset

    def spy_read(k, path):
        reads.append(k)
        return real(k, path)

    monkeypatch.setattr(cache.rulesets, "_read_ruleset", spy_read)
    assert cli(model, "--format", fmt) == first and spy.linted == ["m.onnx"]
    assert bool(reads) == reads_rules


def test_a_broken_rule_folder_of_the_config_in_force_is_an_error_on_a_hit_too(cli, spy, tmp_path):
    """The cwd config names a rule folder; the model's own (subfolder) config does not. A malformed rule file
    there is exit 2 whether the model is a cache hit or not."""
    from onnxlint.rulefiles import ruleset

    (tmp_path / ".git").mkdir()
    (tmp_path / "myrules").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint]\nrules = ["myrules"]\n')
    (tmp_path / "myrules" / "r.yaml").write_text("rules: []\n")
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.onnxlint]\nfail-on = "error"\n')
    onnx.save(_model(), tmp_path / "sub" / "m.onnx")
    assert cli("sub/m.onnx")[0] == 1
    (tmp_path / "myrules" / "r.yaml").write_text("rules: [ {id: BROKEN\n")
    ruleset._CACHE.clear()
    rc, out, err = cli("sub/m.onnx")
    assert rc == 2 and "r.yaml" in err and out == ""


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--format", "github"], ["--statistics"], ["-q"]])
def test_an_unchanged_repeat_renders_the_stored_reports_again(cli, spy, model, tmp_path, monkeypatch, extra):
    """A hit's reports are data rendered by the output format like fresh ones: what a run printed is never
    kept and printed again (the cache folder's writer would decide the output and the exit code)."""
    from onnxlint import formats

    other = tmp_path / "other.onnx"
    onnx.save(_model("eq_other"), other)
    first = cli(model, other, "--no-progress", *extra)
    rendered: list = []
    real = formats.render

    def spy_render(*a, **k):
        rendered.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(formats, "render", spy_render)
    assert cli(model, other, "--no-progress", *extra) == first and first[0] == 1
    assert len(rendered) == 1 and spy.linted == ["m.onnx", "other.onnx"]
    assert not list(cache.default_dir().rglob("shown"))


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_per_file_ignores_follow_a_model_link_to_its_new_target(cli, spy, tmp_path):
    """per-file-ignores match the model's resolved path: a link pointed at a byte-identical copy in a folder
    the ignores do not cover lints again."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.onnxlint.per-file-ignores]\n"a/*" = ["OLX015", "OLX007"]\n')
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        onnx.save(_model(), tmp_path / d / "m.onnx")
    os.symlink(os.path.join("a", "m.onnx"), tmp_path / "link.onnx")
    rc, out, _ = cli("link.onnx")
    assert "OLX015" not in out
    os.unlink(tmp_path / "link.onnx")
    os.symlink(os.path.join("b", "m.onnx"), tmp_path / "link.onnx")
    rc, out, _ = cli("link.onnx")
    assert rc == 1 and "OLX015" in out and spy.linted == ["link.onnx", "link.onnx"]


def test_each_view_of_one_run_is_kept_apart(cli, spy, model, tmp_path, monkeypatch):
    """One cache folder, one pair of models, the output options changed run after run: every run prints what
    a run without the cache prints (a view that shared another's stored text would not)."""
    other = tmp_path / "other.onnx"
    onnx.save(_model("eq_other"), other)
    views = [[], ["--statistics"], ["-q"], ["--format", "json"], ["--format", "github"], ["--show-info"],
             ["--show-info", "--expand"], ["--fail-on", "error"], ["--statistics", "-q"], []]
    for extra in views:
        fresh = cli(model, other, "--no-progress", "--no-cache", *extra)
        assert cli(model, other, "--no-progress", *extra) == fresh, extra
        assert cli(model, other, "--no-progress", *extra) == fresh, extra
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # a terminal: colour
    coloured = cli(model, other, "--no-progress")
    assert "\033[" in coloured[1] and coloured == cli(model, other, "--no-progress", "--no-cache")


def test_a_changed_baseline_is_read_on_a_cached_run(cli, spy, model, tmp_path):
    base = tmp_path / "baseline.json"
    assert cli(model, "--baseline", base, "--update-baseline")[0] == 0  # records the findings
    assert cli(model, "--baseline", base)[0] == 0
    base.write_text(json.dumps(json.loads(base.read_text()) | {"fingerprints": []}))  # forget every finding
    rc, out, _ = cli(model, "--baseline", base)
    assert rc == 1 and "OLX015" in out and spy.linted == ["m.onnx"]


def test_a_miss_is_parsed_from_the_bytes_its_key_hashed(cli, spy, model, tmp_path, monkeypatch):
    """A cache miss is read and hashed once: the linter parses the bytes the key was computed from (the report
    then carries their digest and is stored under that key); past the run's prefetch budget a model is read
    again by the loader, with the same result."""
    from onnxlint.commands import lint as lint_cmd
    from onnxlint.model.loading import opening

    reads: list = []
    real = opening._read

    def counting(path, display):
        reads.append(Path(path).name)
        return real(path, display)

    monkeypatch.setattr(opening, "_read", counting)
    first = cli(model, "--no-progress", "--format", "json")
    assert reads == [] and spy.linted == ["m.onnx"]
    assert cli(model, "--no-progress", "--format", "json") == first and spy.linted == ["m.onnx"]  # stored: a hit
    other = tmp_path / "other.onnx"
    onnx.save(_model("eq2"), other)
    monkeypatch.setattr(lint_cmd, "PREFETCH_BYTES", 0)
    rc, out, _ = cli(other, "--no-progress", "--format", "json")
    assert reads == ["other.onnx"] and rc == 1 and "OLX015" in out
    assert cli(other, "--no-progress", "--format", "json")[1] == out and spy.linted == ["m.onnx", "other.onnx"]
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    monkeypatch.setattr(lint_cmd, "PREFETCH_BYTES", 1 << 20)
    rc, out, err = cli(empty, "--no-progress")
    assert rc == 2 and "empty file" in (out + err)
