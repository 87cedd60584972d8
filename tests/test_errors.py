"""Bad input: one line naming the file and the problem, exit 2, never a traceback."""

import faulthandler
import json
import os
import signal
import subprocess
import sys

import numpy as np
import onnx
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h


def _one_line_error(err, path):
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1, lines
    assert str(path) in lines[0] and "Traceback" not in err
    return lines[0]


def test_truncated_random_empty_missing(tmp_path, examples_dir, cli):
    data = (examples_dir / "clean_conv.onnx").read_bytes()
    cases = {"truncated.onnx": data[: len(data) // 2], "random.onnx": os.urandom(4096), "empty.onnx": b""}
    for name, content in cases.items():
        p = tmp_path / name
        p.write_bytes(content)
        rc, out, err = cli(p)
        assert rc == 2, name
        _one_line_error(err, p)
    rc, out, err = cli(tmp_path / "nope.onnx")
    assert rc == 2
    line = _one_line_error(err, tmp_path / "nope.onnx")
    assert "no such file" in line


def test_one_bad_file_does_not_stop_the_others(tmp_path, examples_dir, lint_json):
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage" * 10)
    (tmp_path / "good.onnx").write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    rc, findings = lint_json(tmp_path)
    assert rc == 2
    codes = {(os.path.basename(f["filename"]), f["code"]) for f in findings}
    assert ("good.onnx", "OLX010") in codes and ("bad.onnx", "OLX000") in codes


def test_malformed_rule_file_names_file_and_line(tmp_path, examples_dir, cli):
    rules = tmp_path / "myrules"
    rules.mkdir()
    (rules / "x.yaml").write_text(
        "rules:\n  - id: ACME001\n    name: my-rule\n    severity: warning\n    targets: [any]\n"
        "    summary: s\n    explanation: e\n    message: m\n    match:\n      op: Relu\n      opst: {lt: 11}\n")
    rc, out, err = cli(examples_dir / "clean_conv.onnx", "--rules", rules)
    assert rc == 2
    assert f"{rules / 'x.yaml'}:11: unknown predicate 'opst'" in err and "ACME001" in err and "did you mean 'opset'" in err


def test_rule_yaml_syntax_error(tmp_path, examples_dir, cli):
    (tmp_path / "bad.yaml").write_text("rules:\n  - id: [unclosed\n")
    rc, _, err = cli(examples_dir / "clean_conv.onnx", "--rules", tmp_path / "bad.yaml")
    assert rc == 2 and "bad.yaml:" in err and "YAML syntax error" in err


def test_user_rules_directory_adds_rules(tmp_path, examples_dir, lint_json):
    rules = tmp_path / "r"
    rules.mkdir()
    (rules / "acme.yaml").write_text(
        "- id: ACME001\n  name: no-relu\n  severity: warning\n  targets: [any]\n  summary: no Relu\n"
        "  explanation: we ban Relu\n  message: 'Relu {node} is banned (opset {opset})'\n  match: {op: Relu, opset: {ge: 13}}\n")
    rc, findings = lint_json(examples_dir / "clean_conv.onnx", "--rules", rules)
    assert rc == 1
    assert [(f["code"], f["node"], f["message"]) for f in findings] == [("ACME001", "relu", "Relu relu is banned (opset 17)")]


def test_usage_errors_exit_2(cli):
    rc, _, err = cli("--format", "xml", "x.onnx")
    assert rc == 2 and "invalid choice" in err
    rc, _, err = cli()
    assert rc == 2


def test_external_data_sparse_file_is_never_read(tmp_path, lint_json, monkeypatch):
    big = 2 * 2**30
    w = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[big // 4])
    w.data_location = onnx.TensorProto.EXTERNAL
    for k, v in (("location", "weights.data"), ("offset", "0"), ("length", str(big))):
        e = w.external_data.add()
        e.key, e.value = k, v
    m = make_model([h.make_node("Add", ["x", "w"], ["y"], name="add")],
                   [vi("x", T.FLOAT, [big // 4])], [vi("y", T.FLOAT, [big // 4])], [w])
    path = tmp_path / "big.onnx"
    onnx.save(m, path)
    with open(tmp_path / "weights.data", "wb") as fh:
        fh.truncate(big)  # sparse: 2 GiB of zeros that take no disk
    real_open = open
    opened = []

    def spy(file, *a, **k):
        opened.append(str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    rc, findings = lint_json(path)
    monkeypatch.undo()
    assert not any(p.endswith("weights.data") for p in opened)
    assert not any(f["code"] == "OLX003" for f in findings)
    # the checker resolves external data against the model's folder, not the working directory
    assert os.getcwd() != str(tmp_path)
    assert not any(f["code"] == "OLX001" for f in findings), findings
    os.remove(tmp_path / "weights.data")
    rc, findings = lint_json(path)
    assert any(f["code"] == "OLX003" and "missing" in f["message"] for f in findings)
    assert not any(f["code"] == "OLX001" for f in findings)  # one finding for one problem


def test_checker_failure_is_a_finding(save, lint_json):
    """A value nothing defines: the checker's complaint, which ORT makes too (one finding, the refusal, in ORT's
    words: "Invalid model. Node input 'undefined_value' is not a graph input, ...")."""
    m = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    m.graph.node[0].input[0] = "undefined_value"
    rc, findings = lint_json(save(m))
    assert rc == 1 and [f["code"] for f in findings if f["code"] in ("OLX001", "OLX007")] == ["OLX007"]
    assert "Node input 'undefined_value' is not a graph input, initializer, or output of a previous node" in next(
        f["message"] for f in findings if f["code"] == "OLX007")


def test_ort_messages_lose_their_cpp_frames():
    from onnxlint.support.errors import strip_cpp_frames

    raw = ("[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:/onnxruntime_src/onnxruntime/core/graph/model.cc:181 "
           "onnxruntime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&, const onnxruntime::logging::Logger&) "
           "Unsupported model IR version: 14, max supported IR version: 13")
    assert strip_cpp_frames(raw) == ("[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:Unsupported model IR "
                                      "version: 14, max supported IR version: 13")


def test_the_checker_runs_before_the_parse_and_only_when_a_selected_rule_asks(save, tmp_path, monkeypatch):
    """The checker's own copy of the model is made from the file's bytes before they are parsed (the two are
    not in memory together, nor with the index and the inferred copy), the bytes are dropped once inference
    has cut its weight-less copy out of them (before onnx's inference and the index), and with no rule reading
    the checker's verdict it does not run at all. A file naming external data is parsed first (the checker
    would look for the data from the current folder) and checked from its path, before the index."""
    import numpy as np
    from conftest import init

    from onnxlint.config.settings import Settings
    from onnxlint.linting import linter
    from onnxlint.model import loading

    m = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    m.graph.node[0].input[0] = "undefined_value"
    path = save(m)
    seen: list = []
    from onnxlint.model.loading import checker, inference, opening

    real_index, real_check, real_infer = loading.index_model, loading.checker_message, inference._infer
    real_external = loading.external_tensors

    def index_model(mf):
        seen.append(("index", mf.raw is None, mf.checked))
        return real_index(mf)

    def check(target):
        seen.append(("check", type(target).__name__))
        return real_check(target)

    def infer(mf, data):
        seen.append(("infer", mf.raw is None))
        return real_infer(mf, data)

    def external(model, base, *walked):
        seen.append(("parsed",))
        return real_external(model, base, *walked)

    monkeypatch.setattr(loading, "index_model", index_model)
    monkeypatch.setattr(opening, "checker_message", check)
    monkeypatch.setattr(checker, "checker_message", check)
    monkeypatch.setattr(inference, "_infer", infer)
    monkeypatch.setattr(opening, "external_tensors", external)
    res = linter.lint_file(path, Settings.from_config(None))
    assert [s[0] for s in seen] == ["check", "parsed", "index", "infer"] and seen[0] == ("check", "bytes")
    assert not seen[2][1] and "undefined_value" in seen[2][2] and seen[3] == ("infer", True)
    assert [f.code for f in res.findings if f.code in ("OLX001", "OLX007")] == ["OLX007"]  # a complaint ORT shares
    seen.clear()
    res = linter.lint_file(path, Settings.from_config(None, select=["OLX015"]))
    assert seen == [("parsed",), ("index", False, False), ("infer", True)] and not res.findings
    m.graph.initializer.append(init("w", np.ones(2, np.float32)))
    onnx.external_data_helper.convert_model_to_external_data(m, size_threshold=0, location="w.bin")
    onnx.save(m, tmp_path / "ext.onnx")
    seen.clear()
    res = linter.lint_file(tmp_path / "ext.onnx", Settings.from_config(None))
    assert [s[0] for s in seen] == ["parsed", "check", "index", "infer"] and seen[1] == ("check", "str")
    assert [f.code for f in res.findings if f.code in ("OLX001", "OLX007")] == ["OLX007"]


# ----------------------------------------------------------------------------- native crashes


def _crasher() -> onnx.ModelProto:
    """RegexFullMatch on an input with no type: onnx 1.23's C++ shape inference dereferences the missing type
    (signal 11; found by benchmarks/fuzz_native.py)."""
    vi_x = onnx.ValueInfoProto()
    vi_x.name = "x"
    vi_y = onnx.ValueInfoProto()
    vi_y.name = "y"
    g = h.make_graph([h.make_node("RegexFullMatch", ["x"], ["y"], name="re", pattern="a")], "g", [vi_x], [vi_y])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
    m.ir_version = 9
    return m


def _crashes_onnx(data: bytes) -> bool:
    pid = os.fork()
    if pid == 0:
        try:
            faulthandler.disable()  # pytest's: the crash is expected
            onnx.shape_inference.infer_shapes(data)
        finally:
            os._exit(0)
    return os.WIFSIGNALED(os.waitpid(pid, 0)[1])


def _good(i: int) -> onnx.ModelProto:
    return make_model([h.make_node("Dropout", ["x"], ["y"], name=f"drop{i}")], [vi("x", T.FLOAT, [2])],
                      [vi("y", T.FLOAT, [2])])


@pytest.fixture
def crasher(tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("no fork: native calls run in-process")
    data = _crasher().SerializeToString()
    if not _crashes_onnx(data):
        pytest.skip(f"onnx {onnx.__version__} no longer crashes on this model")
    p = tmp_path / "crash.onnx"
    p.write_bytes(data)
    return p


def test_a_native_crash_costs_one_model_in_process(crasher, cli):
    from onnxlint.model.loading import native

    native.shutdown()
    rc, out, err = cli(crasher, "--no-cache", "--no-progress")
    assert rc == 1 and "Traceback" not in err
    assert "onnx's shape inference crashed on this model (signal 11)" in out
    rc, out, err = cli(crasher, "--no-cache", "--no-progress")  # a new worker after the crash
    assert "crashed on this model (signal 11)" in out


@pytest.mark.parametrize("mode", [[], ["--jobs", "2"], ["--no-cache"], ["--format", "json"]])
def test_a_native_crash_costs_one_model_in_every_mode(crasher, tmp_path, mode):
    """A folder of 20 models, one of which makes onnx segfault: 19 reports and one line about it, in a
    subprocess (the way pre-commit and CI run it), serially and with a process pool."""
    folder = crasher.parent
    for i in range(19):
        onnx.save(_good(i), folder / f"m{i:02d}.onnx")
    env = {**os.environ, "ONNXLINT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "onnxlint", str(folder), "--no-progress", *mode], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "BrokenProcessPool" not in proc.stderr, proc.stderr
    if "json" in mode:
        found = json.loads(proc.stdout)
        assert {f["filename"].rsplit("/", 1)[-1] for f in found} >= {f"m{i:02d}.onnx" for i in range(19)}
        assert any("crashed on this model (signal 11)" in f["message"] for f in found)
    else:
        assert proc.stdout.count("crashed on this model (signal 11)") == 1
        assert " in 20 files" in proc.stdout and "could not be linted" not in proc.stdout


def test_a_crash_of_the_checker_is_its_complaint(tmp_path, monkeypatch, cli):
    """Whatever C++ call dies, and however: the checker's crash is OLX001's text, and the run goes on."""
    from onnxlint.model.loading import native

    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    real = native._run

    def dies(kind, flags, payload):
        if kind != native._INFER:
            os.kill(os.getpid(), signal.SIGABRT)
        return real(kind, flags, payload)

    native.shutdown()  # the next worker is forked with the patch
    monkeypatch.setattr(native, "_run", dies)
    onnx.save(_good(0), tmp_path / "m.onnx")
    try:
        rc, out, err = cli(tmp_path / "m.onnx", "--no-cache", "--no-progress")
    finally:
        native.shutdown()
    assert "OLX001" in out and "onnx's checker crashed on this model (signal 6)" in out and "Traceback" not in err


def test_the_native_worker_answers_as_onnx_would(tmp_path):
    """Results and exceptions come back as onnx gives them in-process: the inferred model, the exception's
    class name and text; a large input goes to a child forked for the call."""
    from onnxlint.model.loading import native

    m = _good(0)
    assert native.infer_shapes(m) == onnx.shape_inference.infer_shapes(m)
    bad = _good(0)
    bad.graph.node[0].input[0] = "nowhere"
    with pytest.raises(Exception) as got:
        onnx.checker.check_model(bad)
    with pytest.raises(native.NativeError) as ours:
        native.check_model(bad)
    assert type(ours.value).__name__ == type(got.value).__name__ and str(ours.value) == str(got.value)
    big = _good(0)
    big.graph.initializer.append(onnx.numpy_helper.from_array(np.zeros(native.FORK_BYTES // 4 + 16, np.float32), "w"))
    assert native.infer_shapes(big).graph.node[0].op_type == "Dropout"


def test_what_a_child_raised_is_told_by_its_class_name():
    """native.raised: onnx's exception class stays in the child; its stand-in (a NativeError of the same name) and
    the class itself (in-process, no fork) both count, another error of either kind does not."""
    from onnxlint.model.loading import native

    bad = _good(0)
    bad.graph.node[0].input[0] = "nowhere"
    with pytest.raises(native.NativeError) as got:
        native.check_model(bad)
    with pytest.raises(onnx.checker.ValidationError) as here:
        onnx.checker.check_model(bad)
    assert native.raised(got.value, onnx.checker.ValidationError) and native.raised(here.value, onnx.checker.ValidationError)
    assert not native.raised(type("KeyError", (native.NativeError,), {})("x"), onnx.checker.ValidationError)
    assert not native.raised(native.NativeCrash("onnx's checker crashed"), onnx.checker.ValidationError)
    assert not native.raised(ValueError("x"), onnx.checker.ValidationError)


def test_the_native_worker_infers_nodes_and_builds_function_bodies_as_onnx_would():
    """The C++ calls the ORT model makes on the model's nodes (an op's inference given folded input data, a
    context-dependent function body, inlining and inference of the expanded body) answer in the worker what onnx
    answers in-process, exceptions included."""
    from onnx import inliner

    from onnxlint.model.loading import native

    node = h.make_node("Reshape", ["x", "s"], ["y"])
    types = {"x": h.make_tensor_type_proto(T.FLOAT, ["n", 6]), "s": h.make_tensor_type_proto(T.INT64, [2])}
    data = {"s": onnx.numpy_helper.from_array(np.array([2, 3], np.int64), "s")}
    want = onnx.shape_inference.infer_node_outputs(onnx.defs.get_schema("Reshape", 14, ""), node, types, data)
    got = native.infer_node_outputs(node, "", 14, types, data)
    assert got == want and list(got["y"].tensor_type.shape.dim) == list(want["y"].tensor_type.shape.dim)
    assert [d.dim_value for d in got["y"].tensor_type.shape.dim] == [2, 3]  # learnt from the data
    bad = {"s": onnx.numpy_helper.from_array(np.array([-1, -1], np.int64), "s")}  # two -1s: onnx refuses it
    with pytest.raises(Exception) as onnx_says:
        onnx.shape_inference.infer_node_outputs(onnx.defs.get_schema("Reshape", 14, ""), node, types, bad)
    with pytest.raises(native.NativeError) as ours:
        native.infer_node_outputs(node, "", 14, types, bad)
    assert type(ours.value).__name__ == type(onnx_says.value).__name__ and str(ours.value) == str(onnx_says.value)

    ln = h.make_node("LayerNormalization", ["x", "g"], ["y"], axis=-1)  # a context-dependent body (opset 17)
    ln_types = [h.make_tensor_type_proto(T.FLOAT, [2, 6]), h.make_tensor_type_proto(T.FLOAT, [6])]
    schema = onnx.defs.get_schema("LayerNormalization", 18, "")
    raw = native.function_body(ln, "", 18, schema.since_version, ln_types)
    assert raw == schema.get_context_dependent_function_with_opset_version(
        18, ln.SerializeToString(), [t.SerializeToString() for t in ln_types])
    fn = onnx.FunctionProto.FromString(raw)
    assert fn.node

    fn.name, fn.domain = "LayerNormalization", "local"
    call = h.make_node("LayerNormalization", ["x", "g"], ["y"], domain="local")
    model = h.make_model(h.make_graph([call], "g", [h.make_value_info("x", ln_types[0]), h.make_value_info("g", ln_types[1])],
                                      [h.make_empty_tensor_value_info("y")]),
                         opset_imports=[h.make_opsetid("", 18), h.make_opsetid("local", 1)], functions=[fn], ir_version=10)
    expanded = native.inline_and_infer(model)
    assert expanded == onnx.shape_inference.infer_shapes(inliner.inline_local_functions(model))
    assert not expanded.functions and len(expanded.graph.node) == len(fn.node)


def test_a_crash_expanding_a_function_costs_that_body_not_the_run(tmp_path, monkeypatch, cli):
    """ORT expands a node no provider has a kernel for into its ONNX function body, which onnx's C++ builds from
    the model's node: in the native worker, whose crash is one placement note (the node is then placed from the
    body's ops alone), not the end of the run."""
    from onnxlint.model.loading import native

    if not native._ENABLED:
        pytest.skip("no fork: native calls run in-process")
    # no provider has a Bernoulli-22 kernel: ORT expands it into a body onnx builds for its dtype
    m = make_model([h.make_node("Bernoulli", ["x"], ["y"], name="n")], [vi("x", T.DOUBLE, [10])], [vi("y", T.DOUBLE, [10])],
                   opset=22, ir=10)
    onnx.save(m, tmp_path / "m.onnx")
    real = native._run

    def dies(kind, flags, payload):
        if kind in (native._FUNCTION_BODY, native._INLINE_INFER):
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(kind, flags, payload)

    native.shutdown()
    monkeypatch.setattr(native, "_run", dies)
    try:
        rc, out, err = cli("placement", tmp_path / "m.onnx", "--target", "ort-cuda", "--format", "json")
    finally:
        native.shutdown()
    assert "Traceback" not in err, err
    assert "crashed on this model (signal 11) (expanding" in out


def test_one_native_worker_serves_a_whole_run(tmp_path, monkeypatch, cli):
    """onnx's exceptions (a strict inference that fails) are answers, not the end of the worker: a run forks it
    once, not once a model (that cost ~10 ms of CPU a model)."""
    from onnxlint.model.loading import native

    if not native._ENABLED:
        pytest.skip("no fork")
    native.shutdown()
    started: list = []
    real = native._Worker.__init__

    def counting(self, first=None):
        started.append(1)
        real(self, first)

    monkeypatch.setattr(native._Worker, "__init__", counting)
    for i in range(5):  # Equal on float and int32: strict inference raises on each
        m = make_model([h.make_node("Equal", ["x", "k"], ["y"], name="eq")], [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])],
                       [vi("y", T.BOOL, [4])])
        onnx.save(m, tmp_path / f"m{i}.onnx")
    rc, out, err = cli(tmp_path, "--no-cache", "--no-progress")
    assert rc == 1 and out.count("OLX015") == 5 and started == [1]


@pytest.mark.parametrize("option", [["-o", "{long}.sarif"], ["--fix", "-o", "{long}/"], ["--baseline", "{long}.json"],
                                    ["--rules", "{long}"]])
def test_a_path_option_past_the_file_name_limit_is_one_line(tmp_path, examples_dir, option):
    """`-o`, `--baseline` or `--rules` naming a file past the file system's 255 bytes was "internal error
    (OSError: [Errno 36] File name too long ...); please report it". It is the user's input: one line, exit 2."""
    model = tmp_path / "d.onnx"
    model.write_bytes((examples_dir / "dropout_training.onnx").read_bytes())
    long = str(tmp_path / ("z" * 300))
    proc = subprocess.run([sys.executable, "-m", "onnxlint", str(model), *(a.format(long=long) for a in option)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2 and "internal error" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().endswith("File name too long") and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
