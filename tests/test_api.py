"""The public API's arguments as a Python caller gives them (a notebook, a CI script, a service linting uploads):
what the command line's parser or a config file refuses raises at the call, a ValueError (VersionError for a
version) or a TypeError saying which argument; it is never read silently as something else, nor an internal error
deep inside the lint."""

from __future__ import annotations

import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

import onnxlint
from onnxlint.targets import VersionError


def _relu():
    return make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])],
                      opset=10)


@pytest.mark.parametrize(("overrides", "error", "words"), [
    # each lint was "internal error while linting (KeyError: 'mars')"
    ({"targets": ["mars"]}, ValueError, "unknown target 'mars' (known: ort-cpu, ort-cuda, tensorrt, ort-trt)"),
    # read letter by letter: KeyError: 'o'
    ({"targets": "ort-cuda,mars"}, ValueError, "unknown target 'mars'"),
    # predicted with ORT 1.17's tables, "nearest shipped" to a version that is not one
    ({"ort_version": "banana"}, VersionError, "ORT version 'banana' is not a version number"),
    ({"trt_version": "banana"}, VersionError, "TensorRT version 'banana' is not a version number (e.g. 8.6)"),
    ({"ort_version": 1.2}, TypeError, "ort_version must be a string (e.g. '1.20.1')"),
    ({"trt_version": 8.6}, TypeError, "trt_version must be a string (e.g. '8.6')"),  # each runtime's own example
    ({"ort_optimization": "max"}, ValueError, "ort_optimization must be one of disabled, basic, all, not 'max'"),
    ({"fail_on": "bogus"}, ValueError, "fail_on must be one of info, warning, error, not 'bogus'"),  # accepted
    ({"select": [6]}, TypeError, "select must be a string or a list of strings"),  # 'int' has no attribute 'split'
    ({"rule_dirs": [3]}, TypeError, "rule_dirs must be a path or a list of paths"),
])
def test_settings_refuse_what_the_command_line_refuses(overrides, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        onnxlint.Settings.from_config(None, **overrides)


def test_settings_take_one_value_where_a_list_is_meant():
    """`targets="ort-cuda"` as select's "OLX006,OLX013" is taken: a comma list; `rule_dirs="rules"` one folder (as a
    config file's `rules`), not five named by its letters."""
    s = onnxlint.Settings.from_config(None, targets="ort-cuda,ort-cpu", rule_dirs="my_rules", ort_version="installed")
    assert s.targets == ("ort-cuda", "ort-cpu") and [str(p) for p in s.rule_dirs] == ["my_rules"]
    report = onnxlint.lint(_relu(), onnxlint.Settings.from_config(None, targets="ort-cpu"))
    assert report.error is None and {f.target for f in report.findings} <= {"ort-cpu", "any"}, report


def test_a_selection_naming_no_rule_raises_instead_of_linting_with_nothing_selected(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_relu().SerializeToString())
    settings = onnxlint.Settings.from_config(None, select=["OLX0O6"])
    for model in (_relu(), path):
        with pytest.raises(ValueError, match="unknown rule code or prefix 'OLX0O6' \\(did you mean 'OLX006'\\?\\)"):
            onnxlint.lint(model, settings)
    with pytest.raises(ValueError, match="unknown rule code or prefix 'ZZZ'"):
        onnxlint.fix(path, onnxlint.Settings.from_config(None, ignore="ZZZ"))
    assert [f.code for f in onnxlint.lint(path, onnxlint.Settings.from_config(None, select="OLX006")).findings] == ["OLX006"]


def test_arguments_of_the_wrong_kind_say_which(tmp_path):
    with pytest.raises(TypeError, match=r"lint\(\) takes a model file's path or an onnx.ModelProto, not bytes"):
        onnxlint.lint(_relu().SerializeToString())
    with pytest.raises(TypeError, match=r"fix\(\) takes a model file's path, not ModelProto"):
        onnxlint.fix(_relu())
    with pytest.raises(TypeError, match="settings must be onnxlint.Settings"):
        onnxlint.lint(_relu(), {"select": ["OLX006"]})  # was "internal error while linting (AttributeError ...)"


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"target": "mars"}, ValueError, "unknown target 'mars'"),  # was a bare KeyError: 'mars'
    ({"ort_version": "banana"}, VersionError, "ORT version 'banana'"),  # was ORT 1.17's tables
    ({"target": "tensorrt", "trt_version": "banana"}, VersionError, "TensorRT version 'banana'"),
    ({"ort_optimization": "max"}, ValueError, "ort_optimization must be one of"),
])
def test_predict_refuses_what_the_command_line_refuses(kwargs, error, words):
    with pytest.raises(error, match=words):
        onnxlint.predict(_relu(), **kwargs)


def test_predict_takes_an_empty_version_as_none():
    """"" is "not given" to Settings (`ort_version or config's`); predict said "TensorRT  has no table of its own"."""
    pred = onnxlint.predict(_relu(), "tensorrt", trt_version="")
    assert pred.note is None and pred.version == onnxlint.predict(_relu(), "tensorrt").version


def _models(n: int) -> list:
    """n models whose findings differ (each its own node names and opset)."""
    return [make_model([h.make_node("Dropout", ["x"], ["d"], name=f"drop{i}", is_test=0),
                        h.make_node("Relu", ["d"], ["y"], name=f"relu{i}")], [vi("x", T.FLOAT, [4])],
                       [vi("y", T.FLOAT, [4])], opset=6 + i % 3, ir=3) for i in range(n)]


def test_threads_calling_the_api_at_once_get_each_their_own_models_findings(tmp_path):
    """A web service lints uploads from its worker threads: the calls shared the child answering onnx's C++ calls
    down one pipe (and fix() the capture of fds 1 and 2), and two at once read each other's answers ("internal
    error while linting (error: unpack_from requires a buffer of at least 17 bytes ...)", an onnx assertion of
    another model). They take turns now, and each gets what a call alone gets."""
    from concurrent.futures import ThreadPoolExecutor

    models = _models(6)
    paths = []
    for i, m in enumerate(models):
        paths.append(tmp_path / f"m{i}.onnx")
        paths[-1].write_bytes(m.SerializeToString())

    def seen(report):
        return report.error, [(f.code, f.node, f.message) for f in report.findings]

    alone = [seen(onnxlint.lint(p)) for p in paths]
    # each model's own line: those whose Dropout ORT refuses (is_test at opsets 7-8) name their node in ORT's words
    placed_alone = [onnxlint.predict(p).summary_line() for p in paths]
    for _ in range(2):
        with ThreadPoolExecutor(6) as pool:
            files = pool.map(lambda p: seen(onnxlint.lint(p)), paths)
            protos = pool.map(lambda m: seen(onnxlint.lint(m)), models)
            placed = pool.map(lambda p: onnxlint.predict(p).summary_line(), paths)
            assert list(files) == alone and [f for _, f in protos] == [f for _, f in alone]
            assert list(placed) == placed_alone


def test_a_lint_after_the_thread_that_started_onnxs_child_ended_sees_no_crash(tmp_path):
    """The child answering onnx's C++ calls is forked once and kept; the kernel killed it (PR_SET_PDEATHSIG) when
    the thread that forked it ended, not the process, and the next lint said "onnx.checker rejects the model:
    onnx's checker crashed on this model (signal 9)" (OLX001) of a valid model. A fresh interpreter, so that the
    child is forked by the thread."""
    import subprocess
    import sys

    for i, m in enumerate(_models(2)):
        (tmp_path / f"m{i}.onnx").write_bytes(m.SerializeToString())
    script = ("import threading, onnxlint\n"
              "t = threading.Thread(target=lambda: print(onnxlint.lint('m0.onnx')))\n"
              "t.start(); t.join()\n"
              "import time; time.sleep(0.5)\n"  # the kernel's signal reaches the child
              "print(onnxlint.lint('m1.onnx'))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "OLX010" in out.stdout and "OLX001" not in out.stdout, out.stdout + out.stderr
