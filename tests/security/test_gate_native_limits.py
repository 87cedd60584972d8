"""Every call into onnx's C++ code runs in a child under a limit of CPU time and of memory (loading.native).

onnx before 1.23 gives an output as many dimensions as its shape input is declared long (onnx#8321): a model of
a few hundred bytes whose shape input is declared [100000000] made inference fill gigabytes, the version
converter too (which the lint ran in its own process), and once per node the optimizer re-infers. The floors'
run (onnx 1.21) meets those paths for real; the limits themselves are tested on every onnx with calls that
allocate or spin. Each run is bounded (tests/security/bounded.py): a regression fails, it never hangs CI."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import onnx
import pytest
from bounded import onnxlint
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnxlint.model.loading import native

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="the limits are a forked child's rlimits (Linux)")

HUGE = 100_000_000  # a shape input's declared length: onnx < 1.23 spells out that many dimensions
V = h.make_tensor_value_info


def _constant_of_shape(opset: int = 17) -> onnx.ModelProto:
    g = h.make_graph([h.make_node("ConstantOfShape", ["s"], ["y"], name="cos")], "g", [V("s", T.INT64, [HUGE])],
                     [V("y", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=7)


def _refolded(k: int) -> onnx.ModelProto:
    """k Expand nodes, each of a folded Add (so the optimizer re-infers it, once per node) and of the shape input."""
    nodes, outs, inits = [], [], [nh.from_array(np.ones([2], np.float32), "one")]
    for i in range(k):
        inits.append(nh.from_array(np.full([2], i, np.float32), f"c{i}"))
        nodes += [h.make_node("Add", ["one", f"c{i}"], [f"a{i}"]), h.make_node("Expand", [f"a{i}", "s"], [f"e{i}"]),
                  h.make_node("Shape", [f"e{i}"], [f"y{i}"])]
        outs.append(V(f"y{i}", T.INT64, None))
    g = h.make_graph(nodes, "g", [V("s", T.INT64, [HUGE])], outs, inits, value_info=[V(f"a{i}", T.FLOAT, [2]) for i in range(k)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _equal_then_huge(name: str = "eq") -> onnx.ModelProto:
    """An Equal of int64 and int32 (strict inference stops there: OLX015, fixable by equal-cast), then the
    ConstantOfShape of a shape input declared huge (lenient inference goes on to it)."""
    nodes = [h.make_node("Equal", ["a", "b"], ["e"], name=name), h.make_node("ConstantOfShape", ["s"], ["y"], name="cos")]
    g = h.make_graph(nodes, "g", [V("a", T.INT64, [2]), V("b", T.INT32, [2]), V("s", T.INT64, [HUGE])],
                     [V("e", T.BOOL, [2]), V("y", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _benign() -> onnx.ModelProto:
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="relu")], "g", [V("x", T.FLOAT, [2])], [V("y", T.FLOAT, [2])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _materialises() -> bool:
    return int(onnx.__version__.split(".")[1]) < 23 and onnx.__version__.startswith("1.")


@pytest.mark.parametrize("model, args", [
    pytest.param(_constant_of_shape(), [], id="inference"),
    pytest.param(_constant_of_shape(opset=9), ["--show-info"], id="converter"),  # tried for OLX006's upgrade-opset
    pytest.param(_refolded(40), [], id="every re-inferred node"),
    pytest.param(_equal_then_huge(), [], id="lenient after strict failed"),
])
def test_a_shape_input_declared_huge_costs_one_limit_at_most(tmp_path, model, args):
    assert len(model.SerializeToString()) < 5000  # tiny: each limit is met by a few hundred bytes
    onnx.save(model, tmp_path / "m.onnx")
    run = onnxlint("m.onnx", "--no-cache", "--no-progress", *args, cwd=tmp_path, timeout=90)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    limited = [line for line in run.stdout.splitlines() if "stopped at its memory limit" in line]
    if _materialises():  # onnx 1.21/1.22 (the floors' run): inference meets the limit, said once by OLX008
        said = [line for line in limited if "OLX008" in line]
        assert len(said) == 1 and "onnx's shape inference stopped at its memory limit" in said[0], run.stdout
        assert all("not run: onnx's shape inference stopped" in line for line in limited if line not in said)
    else:
        assert limited == [] and "OLX008" not in run.stdout, run.stdout
    if "--show-info" in args:
        legacy = [line for line in run.stdout.splitlines() if "OLX006" in line]
        assert len(legacy) == 1


def test_in_a_process_pool_each_model_meets_its_own_limit(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    for i in range(2):
        onnx.save(_constant_of_shape(), folder / f"m{i}.onnx")
    run = onnxlint("m", "--no-cache", "--no-progress", "--jobs", "2", cwd=tmp_path, timeout=90)
    assert run.returncode == 1 and "Traceback" not in run.stderr and "BrokenProcessPool" not in run.stderr, run.stderr
    said = [line for line in run.stdout.splitlines() if "OLX008" in line]
    assert len(said) == (2 if _materialises() else 0), run.stdout
    assert all("onnx's shape inference stopped at its memory limit" in line for line in said)


@pytest.fixture
def fresh_worker():
    native.shutdown()  # the next worker is forked with the test's patches
    yield
    native.shutdown()


def _allocates(size: int):
    real = native._run

    def run(kind, flags, payload):
        if kind == native._INFER_FALLBACK:
            block = bytearray(size)  # touches every page: past the limit, MemoryError
            del block
        return real(kind, flags, payload)
    return run


def test_a_call_past_its_memory_limit_is_one_line_and_the_run_goes_on(tmp_path, monkeypatch, fresh_worker, cli):
    monkeypatch.setattr(native, "CALL_MEMORY", 64 << 20)
    monkeypatch.setattr(native, "_run", _allocates(512 << 20))
    for i in range(2):
        onnx.save(_benign(), tmp_path / f"m{i}.onnx")
    rc, out, err = cli(tmp_path, "--no-cache", "--no-progress")
    assert rc == 1 and "Traceback" not in err
    stopped = [line for line in out.splitlines() if "OLX008" in line]
    assert len(stopped) == 2 and all("onnx's shape inference stopped at its memory limit (0.1 GB) on this model" in s
                                     for s in stopped), out
    assert "ORT refuses" not in out and "OLX002" not in out  # not onnx's verdict on the model, nor ORT's


def test_within_its_limit_the_same_call_answers(tmp_path, monkeypatch, fresh_worker, cli):
    monkeypatch.setattr(native, "CALL_MEMORY", 1 << 30)
    monkeypatch.setattr(native, "_run", _allocates(64 << 20))
    onnx.save(_benign(), tmp_path / "m.onnx")
    rc, out, err = cli(tmp_path / "m.onnx", "--no-cache", "--no-progress")
    assert "OLX008" not in out and "stopped at" not in out, out


def test_a_call_past_its_cpu_time_is_one_line(tmp_path, monkeypatch, fresh_worker, cli):
    monkeypatch.setattr(native, "CALL_CPU_SECONDS", 1)
    real = native._run

    def spins(kind, flags, payload):
        if kind == native._INFER_FALLBACK:
            end = time.monotonic() + 30  # a regression (no limit) ends here and fails below
            while time.monotonic() < end:
                pass
        return real(kind, flags, payload)

    monkeypatch.setattr(native, "_run", spins)
    onnx.save(_benign(), tmp_path / "m.onnx")
    rc, out, err = cli(tmp_path / "m.onnx", "--no-cache", "--no-progress")
    assert "onnx's shape inference stopped at its CPU-time limit (1 s) on this model" in out, out


def test_after_one_limit_the_models_later_calls_are_not_made(monkeypatch, fresh_worker):
    monkeypatch.setattr(native, "CALL_MEMORY", 64 << 20)
    monkeypatch.setattr(native, "_run", _allocates(512 << 20))
    data = _benign().SerializeToString()
    node = h.make_node("Relu", ["x"], ["y"])
    types = {"x": h.make_tensor_type_proto(T.FLOAT, [2])}
    with native.one_model():
        with pytest.raises(native.NativeLimit, match="stopped at its memory limit"):
            native.infer_strict_then_lenient(data)
        workers = native._WORKER
        with pytest.raises(native.NativeLimit, match="^onnx's shape inference not run: onnx's shape inference stopped"):
            native.infer_node_outputs(node, "", 17, types, {})
        assert native._WORKER is workers is None  # not run: no worker was started for it
    assert native.infer_node_outputs(node, "", 17, types, {})["y"].tensor_type.elem_type == T.FLOAT  # next model
    with native.one_model():  # and each model starts with no limit met
        assert native.infer_node_outputs(node, "", 17, types, {})["y"].tensor_type.elem_type == T.FLOAT


def test_outside_a_model_every_call_runs(monkeypatch, fresh_worker):
    monkeypatch.setattr(native, "CALL_MEMORY", 64 << 20)
    monkeypatch.setattr(native, "_run", _allocates(512 << 20))
    data = _benign().SerializeToString()
    for _ in range(2):
        with pytest.raises(native.NativeLimit, match="stopped at its memory limit"):
            native.infer_strict_then_lenient(data)


def test_the_version_converter_answers_in_the_worker_as_onnx_would():
    old = _constant_of_shape(opset=9)
    old.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    native.convert_version(old, 11)
    onnx.version_converter.convert_version(old, 11)
    bad = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [V("x", T.FLOAT, [2])], [V("y", T.FLOAT, [2])]),
                       opset_imports=[h.make_opsetid("", 9), h.make_opsetid("x.y", 1)], ir_version=7)
    bad.graph.node[0].op_type = "NoSuchOp"
    with pytest.raises(Exception) as here:
        onnx.version_converter.convert_version(bad, 11)
    with pytest.raises(native.NativeError) as ours:
        native.convert_version(bad, 11)
    assert type(ours.value).__name__ == type(here.value).__name__


def _every_call_allocates(log, size: int):
    """Each call into onnx's C++ (in its child) first notes itself in log, then allocates size bytes."""
    real = native._run

    def run(kind, flags, payload):
        with open(log, "a") as f:
            f.write(f"{kind}\n")
        block = bytearray(size)
        del block
        return real(kind, flags, payload)
    return run


@pytest.mark.parametrize("entry", ["lint", "predict", "page"])
def test_every_entry_makes_one_call_past_the_limit_per_model(tmp_path, monkeypatch, fresh_worker, cli, entry):
    """The lint, onnxlint.api.predict and a cached run's HTML page each stop calling onnx's C++ for a model once one
    call met its limit; the next model starts afresh."""
    from onnxlint import api
    from onnxlint.formats import html_report

    log = tmp_path / "calls"
    monkeypatch.setattr(native, "CALL_MEMORY", 64 << 20)
    monkeypatch.setattr(native, "_run", _every_call_allocates(log, 512 << 20))
    for i in range(2):
        onnx.save(_refolded(3), tmp_path / f"m{i}.onnx")
    if entry == "lint":
        rc, out, err = cli(tmp_path, "--no-cache", "--no-progress")
        assert rc == 1 and out.count("OLX008") == 2, out
    else:
        for i in range(2):
            if entry == "predict":
                api.predict(tmp_path / f"m{i}.onnx")
            else:
                html_report.model_doc(tmp_path / f"m{i}.onnx", f"m{i}.onnx", [html_report.Release("ort-cuda", None)])
    assert len(log.read_text().split()) == 2  # one call a model: the first met the limit, the rest were not made


def test_what_onnx_prints_in_a_child_stays_out_of_the_report(tmp_path, monkeypatch, fresh_worker, capfd):
    """The children share the parent's stdout: a print of onnx's C++ there would break a JSON or SARIF report."""
    import json

    from onnxlint.cli import main

    real = native._run

    def prints(kind, flags, payload):
        os.write(1, b"Warning: printed by onnx's C++\n")
        return real(kind, flags, payload)

    monkeypatch.setattr(native, "_run", prints)
    onnx.save(_benign(), tmp_path / "m.onnx")
    main([str(tmp_path / "m.onnx"), "--no-cache", "--no-progress", "--format", "json"])
    out = capfd.readouterr().out
    assert "printed by" not in out and isinstance(json.loads(out), list)


def _training_dropout() -> onnx.ModelProto:
    tm = h.make_tensor("tm", T.BOOL, [], [True])
    g = h.make_graph([h.make_node("Dropout", ["x", "", "tm"], ["y"], name="drop")], "g", [V("x", T.FLOAT, [2, 3])],
                     [V("y", T.FLOAT, [2, 3])], [tm])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _fix_a_training_dropout(tmp_path, cli) -> tuple[bool, str, str]:
    """`onnxlint m.onnx --fix` on a training-mode Dropout: (whether the file changed, stdout, stderr)."""
    p = tmp_path / "m.onnx"
    onnx.save(_training_dropout(), p)
    before = p.read_bytes()
    _, out, err = cli(p, "--fix", "--no-cache", "--no-progress")
    return p.read_bytes() != before, out, err


def test_the_fixers_rewrite_runs_under_a_cpu_time_limit(tmp_path, monkeypatch, cli):
    """The fixers' child had no CPU limit (the fixers call onnx's inference themselves, outside the native calls'
    limit): one that spins ends at fixers.FIX_CPU_SECONDS, and the line names that limit, not the native calls'."""
    pytest.importorskip("onnxruntime")
    from onnxlint import fixers

    def spins(*args, **kwargs):
        while True:
            pass

    monkeypatch.setattr(fixers, "FIX_CPU_SECONDS", 1)
    monkeypatch.setattr(fixers, "apply", spins)
    changed, out, err = _fix_a_training_dropout(tmp_path, cli)
    assert not changed and "Traceback" not in err
    assert "fix not written: the fixers' rewrite stopped at its CPU-time limit (1 s) on this model" in out, out


@pytest.mark.parametrize("size, written", [(512 << 20, False), (16 << 20, True)])
def test_the_fixers_rewrite_runs_under_a_memory_limit(tmp_path, monkeypatch, cli, size, written):
    """--fix rewrites in a child whose address space is limited (fixers.FIX_MEMORY): onnx's inference and version
    converter and onnxslim run there. Past the limit the fix is not written, one line says so, the original stays."""
    pytest.importorskip("onnxruntime")
    from onnxlint import fixers

    real = fixers.apply

    def allocates(*args, **kwargs):
        block = bytearray(size)
        del block
        return real(*args, **kwargs)

    monkeypatch.setattr(fixers, "FIX_MEMORY", 128 << 20)
    monkeypatch.setattr(fixers, "FIX_MEMORY_PER_BYTE", 0)
    monkeypatch.setattr(fixers, "apply", allocates)
    changed, out, err = _fix_a_training_dropout(tmp_path, cli)
    assert "Traceback" not in err
    if written:
        assert changed and "stopped at" not in out, out
    else:
        assert not changed, out
        assert "fix not written: the fixers' rewrite stopped at its memory limit (0.1 GB) on this model" in out, out


def test_a_node_named_like_an_allocation_failure_is_not_one(tmp_path, fresh_worker, cli):
    """Only an exception whose whole text is std::bad_alloc's is read as one: a node of that name in onnx's
    message is onnx's verdict, as any other name."""
    m = _equal_then_huge(name="std::bad_alloc")
    del m.graph.node[1]
    del m.graph.output[1]
    del m.graph.input[2]
    onnx.save(m, tmp_path / "m.onnx")
    rc, out, err = cli(tmp_path / "m.onnx", "--no-cache", "--no-progress")
    assert "OLX015" in out and "limit" not in out and "OLX008" not in out, out


def test_fix_of_a_model_whose_inference_exhausts_onnx_is_bounded(tmp_path):
    """equal-cast infers the whole model in the fixers' child: on onnx 1.21/1.22 that spells out the declared
    length, and the child's limit ends it (the fix is not written, one line); on onnx 1.23 the fix is written."""
    pytest.importorskip("onnxruntime")
    p = tmp_path / "m.onnx"
    onnx.save(_equal_then_huge(), p)
    before = p.read_bytes()
    run = onnxlint("m.onnx", "--no-cache", "--no-progress", "--fix", cwd=tmp_path, timeout=120)
    assert "Traceback" not in run.stderr, run.stderr
    if _materialises():
        assert p.read_bytes() == before
        assert "fix not written: the fixers' rewrite stopped at its memory limit" in run.stdout, run.stdout
    else:
        assert "limit" not in run.stdout, run.stdout


def test_where_there_is_no_fork_no_limit_is_put_on_the_process(monkeypatch):
    """Without fork (Windows) run_in_child runs its work in-process: the work runs as it is, unbounded, and the
    process keeps its own limits (a limit there would stay on the whole run)."""
    import resource

    monkeypatch.setattr(native, "_ENABLED", False)
    before = resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_CPU)

    def work() -> bytes:
        return b"done"

    assert native.bounded(work, 1 << 20, 1) is work
    assert native.run_in_child("work", native.bounded(work, 1 << 20, 1), 1 << 20) == b"done"
    assert (resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_CPU)) == before


def _einsum(equation: str, ranks: tuple[int, int] = (2, 2), through_function: bool = False) -> onnx.ModelProto:
    """An Einsum of a [3, 4, ...] and a [4, 5, ...] input; through_function: inside a local function that takes
    the equation from its call's attribute `eq`."""
    a, b = [3, 4, 2, 2][:ranks[0]], [4, 5, 2, 2][:ranks[1]]
    opsets = [h.make_opsetid("", 17)]
    if through_function:
        body = h.make_node("Einsum", ["x", "w"], ["z"])
        body.attribute.append(onnx.AttributeProto(name="equation", ref_attr_name="eq", type=onnx.AttributeProto.STRING))
        functions = [h.make_function("local", "F", ["x", "w"], ["z"], [body], opsets, attributes=["eq"])]
        node = h.make_node("F", ["a", "b"], ["y"], domain="local", name="call", eq=equation)
        opsets = [*opsets, h.make_opsetid("local", 1)]
    else:
        functions, node = [], h.make_node("Einsum", ["a", "b"], ["y"], name="ein", equation=equation)
    g = h.make_graph([node], "g", [V("a", T.FLOAT, a), V("b", T.FLOAT, b)], [V("y", T.FLOAT, None)])
    return h.make_model(g, opset_imports=opsets, functions=functions, ir_version=8)


ENDLESS = [("i_j,jk->ik", (2, 2), False), ("......,...->...", (3, 3), False), ("i1j,jk->ik", (2, 2), True)]


def test_an_equation_onnx_never_ends_on_is_not_given_to_it(tmp_path):
    """onnx 1.23's Einsum inference loops for ever on an input term holding a character that is neither a letter
    nor the term's one '...' (onnx 1.21 steps on): each such model of a few hundred bytes cost the native call's
    60 s of CPU, a folder of them a minute a model. Screened before the call (loading/endless.py), in every call
    that infers: OLX008 names the node or the attribute at once."""
    folder = tmp_path / "m"
    folder.mkdir()
    for k, (equation, ranks, through) in enumerate(ENDLESS):
        onnx.save(_einsum(equation, ranks, through), folder / f"m{k}.onnx")
    try:
        run = onnxlint("m", "--no-cache", "--no-progress", "--target", "ort-cuda", "--target", "tensorrt", cwd=tmp_path,
                       timeout=40)
    except subprocess.TimeoutExpired:
        pytest.fail("three Einsum models onnx's inference loops on ran past 40 s")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    said = sorted(line for line in run.stdout.splitlines() if "OLX008" in line)
    assert len(said) == 3, run.stdout
    assert "m0.onnx: warning: OLX008 onnx's shape inference not run: Einsum node 'ein': the equation's input term " \
           "'i_j' holds '_', neither a letter nor the term's '...'" in said[0]
    assert "input term '......' holds '.'" in said[1]
    assert "attribute 'eq' of 'call', a local function's Einsum equation: the equation's input term 'i1j'" in said[2]
    assert all("onnx 1.23's shape inference never ends on such a term" in line for line in said)


@pytest.mark.parametrize("equation, ranks, through", [
    ("ij,jk->ik", (2, 2), False), ("ij , jk -> ik", (2, 2), False), ("...ij,...jk->...ik", (3, 3), False),
    ("ij...,jk...", (3, 3), False), ("IJ,JK->IK", (2, 2), True), ("ij,jk->i.k", (2, 2), False), ("ij,jk", (2, 2), True),
])
def test_every_equation_the_spec_allows_is_still_inferred(equation, ranks, through):
    """Letters, spaces, one '...' a term and anything on the right of '->' (onnx 1.23 steps over it there) pass
    the screen, and onnx's inference gives the output its shape."""
    from onnxlint.model.loading import endless

    model = _einsum(equation, ranks, through)
    assert endless.screen(model.SerializeToString()) is None
    if not through:
        out = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output[0]
        assert [d.dim_value for d in out.type.tensor_type.shape.dim][-2:] == [3, 5] or "..." in equation


@pytest.mark.parametrize("equation, ranks, through", ENDLESS)
def test_the_screen_names_what_onnx_would_loop_on(equation, ranks, through):
    from onnxlint.model.loading import endless

    why = endless.screen(_einsum(equation, ranks, through).SerializeToString())
    assert why is not None and ("'call'" if through else "Einsum node 'ein'") in why
    assert endless.screen(_benign().SerializeToString()) is None  # no Einsum: not parsed, nothing to say


@pytest.mark.parametrize("how", ["ref_attr_name", "graph type"])
def test_the_screen_reads_the_equation_as_onnx_does(how):
    """onnx's getAttribute reads an attribute's `s` whatever its type or reference says: an Einsum `equation` with a
    ref_attr_name, or typed GRAPH, and an `s` onnx loops on passed the screen (62 s, the CPU limit)."""
    from onnxlint.model.loading import endless

    model = _einsum("ij,jk->ik")
    (attr,) = model.graph.node[0].attribute
    attr.s = b"i_j,jk->ik"
    if how == "ref_attr_name":
        attr.ref_attr_name = "zz"
    else:
        attr.type = onnx.AttributeProto.GRAPH
    why = endless.screen(model.SerializeToString())
    assert why is not None and "Einsum node 'ein'" in why and "'i_j'" in why


def test_a_models_payloads_are_screened_once(monkeypatch, fresh_worker):
    """The screen parses and walks a payload that names Einsum (0.4 s at 200k nodes): within one model, once a
    payload of the whole model passed, its other payloads (the inferred copy, the converter's) are not again."""
    from onnxlint.model.loading import endless

    calls = []
    real = endless.screen
    monkeypatch.setattr(endless, "screen", lambda payload: calls.append(1) or real(payload))
    good = _einsum("ij,jk->ik")
    with native.one_model():
        native.infer_shapes(good)
        native.infer_shapes(good, data_prop=True)
        native.infer_node_outputs(good.graph.node[0], "", 17, {i.name: i.type for i in good.graph.input}, {})
    assert len(calls) == 2  # the model once, the node's box once
    native.infer_shapes(good)
    assert len(calls) == 3  # outside a model: every call


def test_fix_of_a_model_onnx_never_ends_on_says_so_at_once(tmp_path):
    """The fixers call onnx's inference themselves, in a child without a CPU limit: --fix of a model holding an
    Einsum onnx 1.23 loops on, and an Equal of float and double to fix, never ended. The fixes are not run (one
    note), and the fixers' child has a CPU limit besides."""
    model = _einsum("i_j,jk->ik")
    model.graph.node.append(h.make_node("Equal", ["p", "q"], ["e"], name="eq"))
    model.graph.input.extend([V("p", T.FLOAT, [2]), V("q", T.DOUBLE, [2])])
    model.graph.output.append(V("e", T.BOOL, [2]))
    onnx.save(model, tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--fix", "-o", "out.onnx", "--", "m.onnx", cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("--fix of a model onnx's inference never ends on ran past 60 s")
    assert run.returncode == 1 and not (tmp_path / "out.onnx").exists()
    assert "fix not written: onnx's shape inference, which the fixes need, is not run on it: Einsum node 'ein'" \
        in run.stdout, run.stdout
