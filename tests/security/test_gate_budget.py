"""Issue 40, class 2: every evaluation onnxlint performs runs under a budget of work, not only of output size.

Tiny models whose evaluation is superlinear: a RegexFullMatch of a catastrophic pattern (each character doubles
the time: 40 of them take hours), a RoiAlign with a huge sampling_ratio (gigabytes and seconds for one output
element), a ConstantOfShape of a computed [20000, 20000] under --fix --diff (3.2 GB while writing nothing). Each
runs as a bounded child (tests/security/bounded.py): a regression fails within a minute and a few GB, never hangs.
The models still lint; one line says what was not evaluated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.defs
import pytest
from attacks import constant_of_shape_model, dropout, regex_model, roi_model
from bounded import limits, modes, onnxlint
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

from onnxlint.model import evaluation
from onnxlint.model.evaluation import Meta, Refused


def _folder(tmp_path: Path, model: onnx.ModelProto, n: int = 1) -> Path:
    d = tmp_path / "m"
    d.mkdir()
    for k in range(n):
        onnx.save(model, d / f"m{k:02d}.onnx")
    return d


def _notes(text: str, what: str) -> list[str]:
    return [line for line in text.splitlines() if "not evaluated" in line and what in line]


@pytest.mark.parametrize("mode", modes("file", "folder", "jobs", "placement", "placement-json", "json"))
@pytest.mark.parametrize("model", ["regex", "roi"])
def test_a_tiny_model_cannot_buy_unbounded_work(tmp_path, mode, model):
    m = regex_model() if model == "regex" else roi_model()
    assert len(m.SerializeToString()) < 800
    _folder(tmp_path, m, 16 if mode == "jobs" else 2)
    args = {"file": ["m/m00.onnx"], "folder": ["m"], "jobs": ["m", "--jobs", "2"], "placement": ["placement", "m/m00.onnx"],
            "placement-json": ["placement", "m/m00.onnx", "--format", "json"], "json": ["m", "--format", "json"]}[mode]
    run = onnxlint(*args, "--no-cache" if not mode.startswith("placement") else "--ort-optimization=all",
                   cwd=tmp_path, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    op = "RegexFullMatch" if model == "regex" else "RoiAlign"
    if mode == "json":  # lint JSON holds findings only; its stderr says nothing either
        assert not run.stderr
        return
    if mode == "placement-json":
        notes = [n for n in json.loads(run.stdout)[0]["notes"] if "not evaluated" in n]
        assert len(notes) == 1 and op in notes[0]
        return
    per_model = _notes(run.stdout, op)
    assert len(per_model) == (16 if mode == "jobs" else 2 if mode == "folder" else 1), run.stdout  # once per model
    assert "past the budget" in per_model[0] or "regular expression" in per_model[0]


@pytest.mark.parametrize("shape", ["itself", "through-a-node"])
@pytest.mark.parametrize("mode", modes("json", "fix", every_run=("json", "fix")))
def test_a_node_reading_its_own_output_costs_no_unbounded_work(tmp_path, shape, mode):
    """A Reshape whose shape is its own output (or a Neg of it): a cycle only a malformed model has. Whether the
    shape folds (fold-shapes' fixability, asked for the findings JSON lists and for --fix) pushed the value again
    for ever: a 68-byte model took gigabytes within seconds, never returning."""
    shape_input = "y" if shape == "itself" else "a"
    nodes = [h.make_node("Reshape", ["x", shape_input], ["y"], name="r")]
    if shape != "itself":
        nodes.insert(0, h.make_node("Neg", ["y"], ["a"], name="n"))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    assert len(m.SerializeToString()) < 100
    d = _folder(tmp_path, m)
    args = ["--format", "json"] if mode == "json" else ["--fix", "-o", "out/"]
    # 10 s of CPU: the loop fills the bounded child's 3 GB in about 17 s, and the MemoryError that ends it is taken
    # for "not fixable" (a run without a limit grows until the machine's memory is gone); the lint takes 1 s
    run = subprocess.run([sys.executable, "-m", "onnxlint", str(d / "m00.onnx"), "--no-cache", *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                         env={**os.environ, "ONNXLINT_CACHE_DIR": str(tmp_path / ".cache")}, preexec_fn=limits(cpu=10))
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stdout + run.stderr


@pytest.mark.parametrize("mode", modes("json", "placement", every_run=("json", "placement")))
def test_a_long_chain_only_a_folded_shape_reads_is_linted(tmp_path, mode):
    """3,000 Relus in a row that only a Shape of a static shape reads (a valid model, 70 KB): ORT's constant folding
    folds the Shape and removes the chain bottom up (RemoveNodesWithOneOutputBottomUp). Its model recursed once a
    node: the lint said "graph nesting too deep to analyse" (exit 2), placement "internal error"."""
    nodes = [h.make_node("Relu", [f"c{k}" if k else "x"], [f"c{k + 1}"], name=f"relu{k}") for k in range(3000)]
    nodes += [h.make_node("Shape", ["c3000"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["y"], name="r")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(m)
    _folder(tmp_path, m)
    args = ["m/m00.onnx", "--no-cache", "--format", "json"] if mode == "json" else ["placement", "m/m00.onnx"]
    run = onnxlint(*args, cwd=tmp_path, timeout=120)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    if mode == "json":
        assert [f["code"] for f in json.loads(run.stdout) if f["code"] == "OLX000"] == []
    else:
        assert "3001 folded" in run.stdout, run.stdout  # the Relus and the Shape


def test_the_line_is_said_once_however_many_nodes():
    """Refusals gather per op type: one line, each op once, with how many more of it."""
    b = evaluation.Budget()
    text = [np.array("a" * 40, dtype=object)]
    for name in ("re0", "re1", "re2"):
        assert not b.allow("RegexFullMatch", "", 20, {"pattern": "(a+)+b"}, text, name=name)
    roi = roi_model()
    ins = [nh.to_array(t) for t in roi.graph.initializer]
    assert not b.allow("RoiAlign", "", 16, {"output_height": 1, "output_width": 1, "sampling_ratio": 100_000}, ins, "roi")
    line = b.summary("here")
    assert line is not None and "\n" not in line
    assert line.startswith("here: not evaluated: RegexFullMatch 're0' and 2 more (a regular expression")
    assert "; RoiAlign 'roi' (2,560,000,000,016 units of work, past the budget of 4,194,304 for one node)" in line, line


def test_within_the_budget_the_same_model_is_still_evaluated():
    """The budget refuses work, not ops: a short string, a small sampling ratio fold as ORT folds them."""
    from onnxlint import api

    for m in (roi_model(sampling_ratio=2),):
        pl = api.predict(m)
        assert not [n for n in pl.notes if "not evaluated" in n]
        assert pl.nodes and any(p.status == "folded" and p.node.op_type == "RoiAlign" for p in pl.nodes.values())


def test_fix_diff_on_a_constant_of_shape_of_a_computed_size_is_bounded(tmp_path):
    """fold-shapes' own folder knows the 400M-element output before allocating it, and onnxslim's folding (ORT over
    the constant subgraph) is not run on a model holding it: a few hundred MB, not 3.2 GB."""
    script = ("import onnx, sys\nfrom onnxlint.fixers import fold_shapes\nnotes = []\n"
              "out = fold_shapes.fold(onnx.load(sys.argv[1]), notes=notes)\nprint('\\n'.join(notes))\n")
    p = tmp_path / "cos.onnx"
    onnx.save(constant_of_shape_model(), p)
    run = subprocess.run([sys.executable, "-c", script, str(p)], capture_output=True, text=True, timeout=120,
                         preexec_fn=limits(memory=2 << 30))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "onnxslim's folding not run (ConstantOfShape 'cos' of constant inputs would make 400,000,000 elements" in run.stdout


def test_fix_diff_through_the_cli_says_so_once(tmp_path):
    onnx.save(constant_of_shape_model(side=5000), tmp_path / "m.onnx")  # 25M elements: the numeric check may run it
    run = onnxlint("m.onnx", "--fix", "--diff", "--show-info", cwd=tmp_path, timeout=180)  # OLX309 is an info
    assert run.returncode in (0, 1), run.stderr
    said = [line for line in run.stdout.splitlines() if "onnxslim's folding not run" in line]
    assert len(said) == 1 and "would make 25,000,000 elements from 2" in said[0], run.stdout


def test_fix_on_a_constant_of_shape_of_400m_elements_is_bounded_by_the_numeric_checks_limit(tmp_path):
    """The issue's size through the CLI: onnxlint's side folds within its budget; the numeric check runs ORT, whose
    session creation folds the 1.6 GB constant, in a child under its address-space limit (8 GB by default): past
    it, one line naming the limit (not 'neither model runs'), and the model is left as it was."""
    p = tmp_path / "m.onnx"
    onnx.save(constant_of_shape_model(side=20000), p)
    before = p.read_bytes()
    run = onnxlint("m.onnx", "--fix", "--show-info", "--no-cache", cwd=tmp_path, timeout=120,
                   env={"ONNXLINT_CHECK_MEMORY_MB": "1200"})
    assert run.returncode in (0, 1), run.stderr
    said = [line for line in run.stdout.splitlines() if "numeric check" in line]
    assert said == ["m.onnx: note: fix not written: the numeric check ran out of memory (1200 MB address space, "
                    "ONNXLINT_CHECK_MEMORY_MB sets it) running both models"], run.stdout
    assert p.read_bytes() == before


# ----------------------------------------------------------------------------- the cost table


def test_every_onnx_op_has_a_cost_or_a_reason_not_to_evaluate_it():
    """An op onnx adds is not evaluated until someone says what bounds its work (a test failure here says which)."""
    ops = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain in ("", "ai.onnx")}
    missing = sorted(ops - set(evaluation.COSTS))
    assert not missing, f"classify these ops in onnxlint/model/evaluation.py: {missing}"


def _reference(op: str, opset: int, inputs: list, **attrs) -> list[np.ndarray]:
    names = [f"i{k}" if x is not None else "" for k, x in enumerate(inputs)]
    node = h.make_node(op, names, ["o0", "o1", "o2", "o3"][:attrs.pop("_outputs", 1)], **attrs)
    g = h.make_graph([node], "g", [h.make_tensor_value_info(n, 0, None) for n in names if n],
                     [h.make_tensor_value_info(o, 0, None) for o in node.output])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, {n: x for n, x in zip(names, inputs) if n})


I64 = np.int64
F32 = np.float32
CASES = [
    ("ConstantOfShape", 17, [np.array([3, 4], I64)], {}),
    ("Expand", 17, [np.ones((3, 1), F32), np.array([2, 3, 5], I64)], {}),
    ("Tile", 17, [np.ones((2, 3), F32), np.array([4, 2], I64)], {}),
    ("Range", 17, [np.array(2, I64), np.array(40, I64), np.array(3, I64)], {}),
    ("Pad", 18, [np.ones((2, 3), F32), np.array([1, 2, 3, 4], I64)], {}),
    ("Gather", 17, [np.ones((5, 4, 3), F32), np.array([[0, 1], [2, 4]], I64)], {"axis": 0}),
    ("GatherND", 17, [np.ones((5, 4, 3), F32), np.array([[0, 1], [2, 3]], I64)], {}),
    ("MatMul", 17, [np.ones((2, 3, 4), F32), np.ones((4, 6), F32)], {}),
    ("Gemm", 17, [np.ones((4, 3), F32), np.ones((5, 4), F32)], {"transA": 1, "transB": 1}),
    ("Einsum", 17, [np.ones((3, 4), F32), np.ones((4, 5), F32)], {"equation": "ij,jk->ik"}),
    ("Einsum", 17, [np.ones((3,), F32), np.ones((5,), F32)], {"equation": "i,j"}),
    ("Conv", 17, [np.ones((1, 2, 9, 9), F32), np.ones((4, 2, 3, 3), F32)], {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ("ConvTranspose", 17, [np.ones((1, 2, 4, 4), F32), np.ones((2, 3, 3, 3), F32)], {"strides": [2, 2]}),
    ("MaxPool", 17, [np.ones((1, 2, 9, 9), F32)], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("AveragePool", 17, [np.ones((1, 2, 8, 8), F32)], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
    ("Resize", 17, [np.ones((1, 1, 3, 4), F32), None, np.array([1, 1, 2, 3], F32)], {"mode": "linear"}),
    ("Resize", 17, [np.ones((1, 1, 3, 4), F32), None, None, np.array([1, 1, 5, 7], I64)], {}),
    ("TopK", 17, [np.arange(20, dtype=F32).reshape(4, 5), np.array([3], I64)], {"_outputs": 2}),
    ("OneHot", 17, [np.array([0, 2, 1], I64), np.array(4, I64), np.array([0, 1], F32)], {}),
    ("Concat", 17, [np.ones((2, 3), F32), np.ones((4, 3), F32)], {"axis": 0}),
    ("Slice", 17, [np.ones((6, 5), F32), np.array([1], I64), np.array([5], I64)], {}),
    ("CenterCropPad", 18, [np.ones((5, 7), F32), np.array([8, 3], I64)], {}),
    ("NonZero", 17, [np.array([[1, 0], [1, 1]], I64)], {}),
    ("Unique", 17, [np.array([3, 1, 3, 2], I64)], {"_outputs": 4}),
    ("RoiAlign", 16, [np.ones((1, 2, 6, 6), F32), np.array([[0, 0, 4, 5]], F32), np.array([0], I64)],
     {"output_height": 2, "output_width": 3, "sampling_ratio": 0}),
    ("HannWindow", 17, [np.array(10, I64)], {}),
    ("DFT", 17, [np.ones((1, 8, 1), F32)], {}),
    ("StringSplit", 20, [np.array(["a b", "c"], dtype=object)], {"_outputs": 2}),
]


@pytest.mark.parametrize("op, opset, inputs, attrs", CASES, ids=[c[0] for c in CASES])
def test_a_cost_bounds_what_the_op_makes(op, opset, inputs, attrs):
    got = _reference(op, opset, inputs, **dict(attrs))
    cost = evaluation.cost(op, "", opset, {k: v for k, v in attrs.items() if not k.startswith("_")}, inputs)
    made = sum(np.asarray(x).size for x in got)
    assert made <= cost.elements, (made, cost)
    assert cost.work >= 1


def test_a_value_that_sizes_the_output_must_be_known():
    with pytest.raises(Refused, match="shape is not a known value"):
        evaluation.cost("ConstantOfShape", "", 17, {}, [Meta((2,))])
    with pytest.raises(Refused, match="regular expression"):
        evaluation.cost("RegexFullMatch", "", 20, {"pattern": "a"}, [np.array(["a"], dtype=object)])
    with pytest.raises(Refused, match="domain com.example"):
        evaluation.cost("Anything", "com.example", 1, {}, [np.ones(2)])
    assert evaluation.cost("MatMul", "", 17, {}, [Meta((64, 128)), Meta((128, 32))]).work >= 64 * 128 * 32


def test_the_budget_refuses_past_a_node_and_past_a_model():
    b = evaluation.Budget(node=1000, model=1500)
    small = [np.ones(100, F32), np.ones(100, F32)]
    assert b.allow("Add", "", 17, {}, small, name="a")
    assert not b.allow("Add", "", 17, {}, [np.ones(1000, F32), np.ones(1000, F32)], name="big")
    assert b.allow("Add", "", 17, {}, small) and b.allow("Add", "", 17, {}, small) is False or b.spent <= 1500
    assert not b.allow("ConstantOfShape", "", 17, {}, [np.array([10], I64)], max_elements=5)  # a cap: no note
    line = b.summary("here")
    assert line is not None and line.startswith("here: not evaluated: Add 'big'") and "ConstantOfShape" not in line


def test_a_shape_of_thousands_of_huge_dims_is_counted_in_one_word(tmp_path):
    """A ConstantOfShape of a 65,536-long shape of 2^62s: its element count saturates instead of growing an
    integer of millions of bits (quadratic work before the budget could refuse it); the model lints in a bounded
    child, the count is refused as too many."""
    shape = np.full(65536, 2**62, np.int64)
    assert evaluation.cost("ConstantOfShape", "", 17, {}, [shape]).elements == evaluation.SATURATED
    k = nh.from_array(shape, "k")
    g = h.make_graph([h.make_node("ConstantOfShape", ["k"], ["z"], name="cos"),
                      h.make_node("Shape", ["z"], ["zs"], name="shape"), h.make_node("Reshape", ["x", "zs"], ["y"], name="r")],
                     "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, None)],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], [k])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), tmp_path / "m.onnx")
    run = onnxlint("m.onnx", "--no-cache", cwd=tmp_path, timeout=120)
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr


# an exclude pattern from a contributor's config file (or --exclude) against a long file name: as a regex, each
# `*a` multiplies the backtracking by the name's length (12 of them against 35 letters took 13 s; 200 letters never end)
CATASTROPHIC_GLOB = "*a" * 12 + "b"


@pytest.mark.parametrize("how", modes("config", "option", "anchored"))
def test_an_exclude_pattern_cannot_buy_unbounded_matching(tmp_path, how):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "models").mkdir()
    onnx.save(dropout(), repo / "models" / ("a" * 200 + ".onnx"))
    onnx.save(dropout(), repo / "models" / ("a" * 30 + "b.onnx"))  # the pattern still matches what it says
    pattern = ("models/" if how == "anchored" else "") + CATASTROPHIC_GLOB + ".onnx"
    if how == "option":
        args = ["--exclude", pattern]
    else:
        (repo / ".onnxlint.yaml").write_text(json.dumps({"exclude": [pattern]}))
        args = []
    try:
        run = onnxlint(*args, "--no-cache", "--format", "json", "--", "models", cwd=repo, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"matching {pattern!r} against a 200-letter name ran past 60 s")
    assert run.returncode == 1, run.stderr
    linted = {f["filename"] for f in json.loads(run.stdout) if f["code"] == "OLX010"}
    assert linted == {"models/" + "a" * 200 + ".onnx"}


def test_config_patterns_as_long_as_allowed_cost_a_walk_little_a_name(tmp_path):
    """Review 28: the set-of-positions matcher is linear, but it stepped every live position in Python: a
    4,095-character `*a*a...b` has all of them live against a name of `a`s, milliseconds a name, and a
    `**/a**/a...b` a second a path of 12 names of 200 letters (a folder's path is matched at every depth). Twenty
    such patterns (80 KB, within the config's limits) over a folder 20 names of 150 letters deep took minutes. Positions are the
    bits of an int now: a few operations a character."""
    repo = tmp_path / "repo"
    deep = repo.joinpath("models", *["a" * 150] * 20)  # 3,027 characters: well within PATH_MAX (4,096)
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    raw = dropout().SerializeToString()
    for k in range(10):
        (repo / "models" / ("a" * 200 + f"{k:03d}.onnx")).write_bytes(raw)
    (deep / "m.onnx").write_bytes(raw)
    (repo / ".onnxlint.yaml").write_text(json.dumps({"extend-exclude": ["*a" * 2047 + "b"] * 4 + ["**/a" * 1023 + "b"] * 16}))
    try:
        run = onnxlint("--no-cache", "--format", "json", "--", ".", cwd=repo, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("20 patterns of 4,095 characters against a folder 20 names of 150 letters deep ran past 90 s")
    assert run.returncode == 1 and len({f["filename"] for f in json.loads(run.stdout)}) == 11, run.stderr


def test_a_pattern_of_many_stars_matches_as_its_regex_would():
    """The linear matcher agrees with the regex on every pattern and path of a seeded sample (the regex is
    exact, only slow)."""
    import random
    import re

    from onnxlint.model import excludes

    rnd = random.Random(40)
    atoms = ["a", "b", "/", "*", "**", "**/", "?", "[ab]", "[!a]", ".", "[z-a]"]
    for _ in range(3000):
        glob = "".join(rnd.choice(atoms) for _ in range(rnd.randint(2, 7)))
        rx = re.compile(excludes._translate(glob) + r"\Z", re.S)
        nfa = excludes._Glob(excludes._tokens(glob))
        for _ in range(10):
            text = "".join(rnd.choice("ab/.x") for _ in range(rnd.randint(0, 9)))
            assert bool(nfa.match(text)) == bool(rx.match(text)), (glob, text)


def test_an_empty_character_range_in_an_exclude_pattern_matches_nothing(tmp_path):
    """`[z-a]` is no regex: it matches nothing (as in git), never an internal error."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    onnx.save(regex_model(), repo / "z.onnx")
    (repo / ".onnxlint.yaml").write_text('exclude: ["[z-a].onnx"]\n')
    run = onnxlint("--no-cache", "--format", "json", "--", ".", cwd=repo)
    assert run.returncode in (0, 1) and "internal error" not in run.stderr, run.stderr


def test_a_class_holding_a_bracket_in_an_exclude_pattern_prints_no_warning(tmp_path):
    """`[[a]x.onnx` made Python print "FutureWarning: Possible nested set" (two raw lines) on stderr; the class
    still holds `[` and `a`, as git reads it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("[x.onnx", "ax.onnx", "bx.onnx"):
        onnx.save(regex_model(), repo / name)
    (repo / ".onnxlint.yaml").write_text('extend-exclude: ["[[a]x.onnx", "[a--c]y.onnx", "[a&&b]z.onnx"]\n')
    run = onnxlint("--no-cache", "--format", "json", "--", ".", cwd=repo)  # FutureWarning shows by default
    assert run.returncode in (0, 1) and not run.stderr, run.stderr
    assert {f["filename"] for f in json.loads(run.stdout)} == {"bx.onnx"}


@pytest.mark.parametrize("fmt", modes("text", "github", "sarif", every_run=("text",)))
def test_a_long_value_name_in_repeated_findings_is_grouped_in_linear_time(tmp_path, fmt):
    """Findings of one rule are grouped by their message with value paths as `·`: a regex that asked for a `/`
    after a run of name characters backtracked over every start in a 200,000-letter value name (over a minute
    a finding); runs are now matched once."""
    t = "a" * 200_000
    nodes = [h.make_node("Dropout", ["x", "r", t], [f"y{k}"], name=f"d{k}") for k in range(2)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2]),
                                  h.make_tensor_value_info("r", onnx.TensorProto.FLOAT, []),
                                  h.make_tensor_value_info(t, onnx.TensorProto.BOOL, [])],
                     [h.make_tensor_value_info(f"y{k}", onnx.TensorProto.FLOAT, [2]) for k in range(2)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8), tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--format", fmt, "--", "m.onnx", cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("grouping two findings that quote a 200,000-letter name ran past 60 s")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert t in run.stdout  # the name is shown, escaped like any other (it has nothing to escape)


def test_grouping_by_cause_still_hides_value_paths_only():
    from types import SimpleNamespace

    from onnxlint.formats import text_format

    f = SimpleNamespace(code="OLX1", op_type="Cast", node=None,
                        message="Cast of /enc/layer.3/x:0 to [1, 64] feeds a-b (from /dec/y) and z_9")
    assert text_format.cause(f)[2] == "Cast of · to [1, 64] feeds a-b (from ·) and z_9"


def test_a_doc_string_of_unclosed_suppressions_is_read_in_linear_time(tmp_path):
    """A node's doc_string may say `onnxlint: ignore[CODE]`; 100,000 unclosed `onnxlint: ignore[` (1.7 MB) made the
    regex scan to the end from each of them (minutes a finding). The finding is still reported."""
    m = dropout()
    m.graph.node[0].doc_string = "onnxlint: ignore[" * 100_000
    onnx.save(m, tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--", "m.onnx", cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a 1.7 MB doc_string of unclosed suppressions ran past 60 s")
    assert run.returncode == 1 and "OLX010" in run.stdout, run.stderr


def test_a_models_metadata_ignoring_many_codes_is_matched_in_linear_time(tmp_path):
    """Review 28: a model's `onnxlint:ignore` metadata is the repository's text; 200,000 codes (2 MB) beside 5,000
    training-mode Dropouts were compared with every finding and every `reported_by` check (2e9 prefix tests:
    minutes). A set of prefixes now: a code is looked up by its own prefixes. The codes it names still apply."""
    from onnx import TensorProto as T

    n = 5000
    g = h.make_graph([h.make_node("Dropout", ["x", "r", "t"], [f"y{i}"], name=f"d{i}") for i in range(n)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("r", T.FLOAT, []),
                      h.make_tensor_value_info("t", T.BOOL, [])], [h.make_tensor_value_info(f"y{i}", T.FLOAT, [2]) for i in range(n)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8)
    h.set_model_props(m, {"onnxlint:ignore": ",".join(f"ACME{k}" for k in range(200_000)) + ",OLX01"})
    onnx.save(m, tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--target", "tensorrt", "--", "m.onnx", cwd=tmp_path, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("a model's metadata ignoring 200,000 codes ran past 90 s")
    assert run.returncode == 1 and "OLX010" not in run.stdout and f"{n + 1} suppressed" in run.stdout, run.stdout[-800:]
    assert "OLX300" in run.stdout, run.stdout[-800:]  # TensorRT's finding stands for the suppressed one


def test_a_rule_message_of_unclosed_optional_segments_is_refused_in_linear_time(tmp_path):
    """A rule file of the repository's (a config's `rules:`) whose message opens 200,000 `[[` segments (400 KB):
    the optional-segment regex scanned to the end from each (minutes); now one line, exit 2 (a message's length
    limit refuses it before the regex reads it; the regex stays linear, tested below)."""
    (tmp_path / "rules").mkdir()
    rule = {"id": "XTR001", "name": "no-cast", "severity": "warning", "targets": "any", "summary": "no Cast",
            "explanation": "a Cast node", "match": {"op": "Cast"}, "message": "a Cast" + "[[" * 200_000}
    (tmp_path / "rules" / "r.yaml").write_text(json.dumps([rule]))
    onnx.save(dropout(), tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--rules", "rules", "--", "m.onnx", cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a rule message of 200,000 unclosed '[[' ran past 60 s")
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "at most 1,000" in run.stderr, run.stderr


def test_optional_segments_and_suppressions_still_parse_as_before():
    from onnxlint.rules import messages
    from onnxlint.rules.codes import doc_string_suppresses

    assert messages.OPTIONAL.findall("a [[b {node} ]] c [[d]e]] f]]]") == ["b {node} ", "d]e"]
    assert messages.check("x [[a [[b]] y", "node", {}) is not None  # a `[[` inside a segment: not closed
    assert doc_string_suppresses("exported; onnxlint: ignore[OLX010, OLX2] by hand", "OLX010")
    assert not doc_string_suppresses("onnxlint: ignore[OLX011]", "OLX010")


def _deep(folder: Path, depth: int = 1200) -> Path:
    d = str(folder)
    for _ in range(depth):  # os.makedirs recurses per level itself
        d = os.path.join(d, "a")
        os.mkdir(d)
    return Path(d)


def _remove_deep(folder: Path) -> None:
    """Remove a tree of _deep's bottom up: shutil.rmtree (pytest's clean-up of old temporary folders) recurses per
    level and fails on it."""
    d = str(folder)
    while os.path.isdir(os.path.join(d, "a")):
        d = os.path.join(d, "a")
    while d != str(folder):
        for name in os.listdir(d):
            os.unlink(os.path.join(d, name))
        os.rmdir(d)
        d = os.path.dirname(d)


@pytest.mark.parametrize("how", modes("walk", "glob", "rules"))
def test_a_committed_tree_thousands_of_folders_deep_is_walked_in_bounded_time(tmp_path, how):
    """A repository holding one model 1,200 folders down (2,400 characters of path, one file for git to keep):
    the walk asked each folder's config and repository root of every ancestor, each a system call on a deep path
    (cubic: over 100 s); a rules folder as deep was a RecursionError. Each folder is now answered from its parent."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "models").mkdir()
    onnx.save(dropout(), _deep(repo / "models") / "m.onnx")
    args = {"walk": ["models"], "glob": ["models/**/*.onnx"], "rules": ["models"]}[how]
    if how == "rules":
        (repo / "rules").mkdir()
        (_deep(repo / "rules") / "r.yaml").write_text("[]\n")
        (repo / ".onnxlint.yaml").write_text('rules: ["rules"]\n')
    try:
        run = onnxlint("--no-cache", "--", *args, cwd=repo, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("linting one model 1,200 folders deep ran past 60 s")
    finally:
        for tree in (repo / "models", repo / "rules"):
            _remove_deep(tree)
    assert run.returncode == 1 and "OLX010" in run.stdout and "internal error" not in run.stderr, run.stderr


@pytest.mark.parametrize("setting", modes("extend-exclude", "per-file-ignores"))
def test_a_config_of_100000_patterns_is_refused_before_any_path_is_matched(tmp_path, setting):
    """Every path of a walk is matched against every exclude pattern (every file against every per-file-ignores
    pattern): 100,000 of them in a 1.4 MB .onnxlint.yaml and 2,000 files took 112 s. A list setting holds at most
    1,000 entries: past that, one line naming the file, exit 2."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "models").mkdir()
    onnx.save(dropout(), repo / "models" / "m.onnx")
    for k in range(2000):
        (repo / "models" / f"e{k}.onnx").write_bytes(b"")
    patterns = [f"zz{k}*q*" for k in range(100_000)]
    value = patterns if setting == "extend-exclude" else {p: ["OLX010"] for p in patterns}
    (repo / ".onnxlint.yaml").write_text(json.dumps({setting: value}))
    try:
        run = onnxlint("--no-cache", "--", "models", cwd=repo, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("100,000 patterns against 2,000 files ran past 60 s")
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "more than the 1,000" in run.stderr, run.stderr


def _many_functions(n: int) -> onnx.ModelProto:
    """One Relu, and n model-local functions nobody calls (each one Relu): 1 MB at 12,000."""
    from onnx import TensorProto as T

    fs = [h.make_function("loc", f"f{i}", ["a"], ["b"], [h.make_node("Relu", ["a"], ["b"])], [h.make_opsetid("", 17)])
          for i in range(n)]
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="r")], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("loc", 1)], functions=fs)
    m.ir_version = 8
    return m


def _many_outputs(n: int) -> onnx.ModelProto:
    """n identical Relu(x) nodes, each a graph output (which ORT's CSE keeps): 2 MB at 100,000."""
    from onnx import TensorProto as T

    g = h.make_graph([h.make_node("Relu", ["x"], [f"o{i}"]) for i in range(n)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                     [h.make_tensor_value_info(f"o{i}", T.FLOAT, [1, 4]) for i in range(n)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("shape", ["functions", "outputs"])
def test_a_model_of_many_functions_or_graph_outputs_lints_in_linear_time(tmp_path, shape):
    """12,000 local functions nobody calls: which ones run paired every function with every scope (30 s at 6,000,
    quadratic). 100,000 duplicate nodes that are graph outputs: ORT's CSE model asked `output in a list` per node
    (14 s at 40,000, quadratic). Both are linear now: a second or a few, far inside the child's 60 s of CPU."""
    m = _many_functions(12000) if shape == "functions" else _many_outputs(100000)
    onnx.save(m, tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--", "m.onnx", cwd=tmp_path, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a model of many {shape} ran past 120 s")
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, (run.returncode, run.stderr[-500:])


def test_fix_of_many_fixable_findings_is_linear(tmp_path):
    """--fix split the fixable findings into shown and hidden with `f not in shown`, a field-by-field comparison of
    every pair: a chain of 16,000 training-mode Dropouts (634 KB) took 57 s, its lint 3 s. One pass now."""
    n = 16000
    inits = [nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "train")]
    nodes = [h.make_node("Dropout", ["x" if i == 0 else f"d{i - 1}", "ratio", "train"], [f"d{i}" if i < n - 1 else "y"])
             for i in range(n)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])], initializer=inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--fix", "-o", "out.onnx", "--", "m.onnx", cwd=tmp_path, timeout=40)
    except subprocess.TimeoutExpired:
        pytest.fail("--fix of 16,000 fixable findings ran past 40 s")
    assert run.returncode == 0 and (tmp_path / "out.onnx").is_file(), run.stderr[-500:]


def test_one_reader_of_many_duplicate_nodes_costs_linear_memory(tmp_path):
    """10,000 copies of Relu(x) read by one Sum (248 KB): ORT's CSE removes all but one, and the check that the
    order before it still held (graph_viewer._left_in_time) spread every (Sum, copy) edge over all the Sum's inputs,
    10,000 x 10,000: 4.2 GB (20,000 copies ended in MemoryError). The order is computed instead."""
    n = 10000
    nodes = [h.make_node("Relu", ["x"], [f"a{i}"]) for i in range(n)]
    nodes.append(h.make_node("Sum", [f"a{i}" for i in range(n)], ["y"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), tmp_path / "m.onnx")
    run = onnxlint("--no-cache", "--", "m.onnx", cwd=tmp_path, timeout=60)  # under 3 GB of address space
    assert run.returncode == 0 and not run.stderr, run.stderr[-500:]
    run = onnxlint("placement", "--format", "json", "--", "m.onnx", cwd=tmp_path, timeout=60)
    (doc,) = json.loads(run.stdout)
    assert run.returncode == 0 and doc["summary"]["eliminated"] == n - 1, doc["summary"]


def test_many_dequantize_nodes_of_one_wide_reader_lint_in_linear_time(tmp_path):
    """20,000 DequantizeLinear of one int8 weight read by one Concat (878 KB): EnsureUniqueDQForNodeUnit's model
    scanned the Concat's 20,000 inputs once per DQ, and the QDQ-unit check listed them again (25 s, quadratic).
    A wide reader's slots are looked up now."""
    n = 20000
    inits = [nh.from_array(np.array(0.1, np.float32), "s"), nh.from_array(np.array(0, np.int8), "z"),
             nh.from_array(np.array([[1]], np.int8), "w")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"], [f"d{i}"]) for i in range(n)]
    nodes += [h.make_node("Concat", [f"d{i}" for i in range(n)], ["c"], axis=1), h.make_node("MatMul", ["x", "c"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, n])], initializer=inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), tmp_path / "m.onnx")
    try:
        run = onnxlint("--no-cache", "--", "m.onnx", cwd=tmp_path, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("20,000 DequantizeLinear nodes of one Concat ran past 15 s")
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr[-500:]


def _long_named_if(k: int, name_length: int, dropout: bool = False) -> onnx.ModelProto:
    """An If named with name_length characters whose then_branch holds k custom-domain nodes (a finding each),
    or, with dropout, a training-mode Dropout (a fixable error)."""
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    if dropout:
        then_nodes = [h.make_node("Dropout", ["x", "r", "t"], ["f0"], name="drop")]
        inits = [nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")]
    else:
        then_nodes = [h.make_node("Foo", ["x"], [f"f{j}"], domain="com.x") for j in range(k)]
        inits = []
    then = h.make_graph(then_nodes, "then", [], [h.make_tensor_value_info("f0", onnx.TensorProto.FLOAT, [2])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e0"])], "else",
                         [], [h.make_tensor_value_info("e0", onnx.TensorProto.FLOAT, [2])])
    node = h.make_node("If", ["c"], ["y"], name="I" * name_length, then_branch=then, else_branch=other)
    g = h.make_graph([node], "g", [x, h.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])], initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.x", 1)], ir_version=8)


@pytest.mark.parametrize("fmt", modes("sarif", "json", "html", "placement", every_run=("sarif",)))
def test_a_long_owner_name_is_not_repeated_for_every_node_in_its_body(tmp_path, fmt):
    """Every node of a body repeats its owner's location in its own: an If named with 200,000 characters over
    1,600 body nodes (238 KB) made 962 MB of SARIF in 25 s (HTML 642 MB, placement 1.3 GB). A name in a scope's
    path is capped now (locations.capped: its first 200 characters and a hash)."""
    onnx.save(_long_named_if(1600, 200_000), tmp_path / "m.onnx")
    args = ["placement", "--format", "json"] if fmt == "placement" else ["--no-cache", "--format", fmt]
    if fmt == "html":
        args += ["-o", "m.html"]
    try:
        run = onnxlint(*args, "--", "m.onnx", cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{fmt} of a 200,000-character If over 1,600 body nodes ran past 60 s")
    size = len(run.stdout) + ((tmp_path / "m.html").stat().st_size if fmt == "html" else 0)
    assert run.returncode in (0, 1) and size < 20_000_000, (run.returncode, size, run.stderr[-300:])


def test_a_fix_finds_its_node_in_the_body_of_a_long_named_owner(tmp_path):
    """--fix finds a finding's node by the location the lint gave it (fixers.base.gs_locations makes them the
    same way): a training-mode Dropout in the body of an If named with 1,000 characters is fixed."""
    onnx.save(_long_named_if(1, 1000, dropout=True), tmp_path / "m.onnx")
    run = onnxlint("--no-cache", "--fix", "-o", "out.onnx", "--", "m.onnx", cwd=tmp_path, timeout=120)
    assert run.returncode in (0, 1) and "1 fixed" in run.stdout, run.stdout + run.stderr
    fixed = onnx.load(tmp_path / "out.onnx")
    then = next(a.g for a in fixed.graph.node[0].attribute if a.name == "then_branch")
    assert [n.op_type for n in then.node] == ["Identity"]


@pytest.mark.parametrize("shape", ["chain", "wide"])
def test_inferring_many_calls_of_a_local_function_is_within_the_budget(tmp_path, shape):
    """onnx infers a local function's body at every call, at 2.5 us a node-call: a function of 2,000 chained Relu
    called 2,000 times (88 KB) took 10 s, of 4,500 51 s with no note; a Sum of 20,000 references called 2,000 times
    (106 KB) 13 s, counted as 2,000 units. A body node now costs FUNCTION_NODE_UNITS a call and one per name it
    reads or writes: past the budget, OLX008 says inference was skipped."""
    n, k = (2000, 1) if shape == "chain" else (2000, 20000)
    if shape == "chain":
        body = [h.make_node("Relu", ["a" if i == 0 else f"t{i - 1}"], [f"t{i}" if i < n - 1 else "b"]) for i in range(n)]
    else:
        body = [h.make_node("Sum", ["a"] * k, ["b"])]
    f = h.make_function("loc", "F", ["a"], ["b"], body, [h.make_opsetid("", 17)])
    nodes = [h.make_node("F", ["x" if j == 0 else f"c{j - 1}"], [f"c{j}" if j < n - 1 else "y"], domain="loc")
             for j in range(n)]
    vi = [h.make_tensor_value_info(v, onnx.TensorProto.FLOAT, [1, 4]) for v in ("x", "y")]
    m = h.make_model(h.make_graph(nodes, "g", vi[:1], vi[1:]), functions=[f], ir_version=8,
                     opset_imports=[h.make_opsetid("", 17), h.make_opsetid("loc", 1)])
    onnx.save(m, tmp_path / "m.onnx")
    run = onnxlint("--no-cache", "--", "m.onnx", cwd=tmp_path, timeout=60)
    skipped = [line for line in run.stdout.splitlines() if "OLX008" in line]
    assert run.returncode == 1 and len(skipped) == 1 and "shape inference skipped" in skipped[0], run.stdout


def test_rule_files_past_the_budget_are_refused_unparsed(tmp_path):
    """A repository's rule files are parsed before any model (YAML costs ~235x its size in memory): two files of
    600 KB each, within the 16 MiB read limit for text, are refused as one line naming the second, exit 2."""
    from onnxlint.rulefiles.ruleset import RULE_FILES_LIMIT

    (tmp_path / "rules").mkdir()
    rule = {"id": "XTR001", "name": "no-cast", "severity": "warning", "targets": "any", "summary": "no Cast",
            "explanation": "a Cast node " + "x" * (RULE_FILES_LIMIT * 6 // 10), "match": {"op": "Cast"},
            "message": "a Cast"}
    (tmp_path / "rules" / "a.yaml").write_text(json.dumps([rule]))
    (tmp_path / "rules" / "b.yaml").write_text(json.dumps([{**rule, "id": "XTR002", "name": "no-cast-2"}]))
    onnx.save(dropout(), tmp_path / "m.onnx")
    run = onnxlint("--no-cache", "--rules", "rules", "--", "m.onnx", cwd=tmp_path)
    err = run.stderr.strip()
    assert run.returncode == 2 and err.count("\n") == 0 and "b.yaml" in err and "1 MiB" in err, run.stderr
    (tmp_path / "rules" / "b.yaml").unlink()  # one of them is within it: its rule applies
    run = onnxlint("--no-cache", "--rules", "rules", "--", "m.onnx", cwd=tmp_path)
    assert run.returncode == 1 and "OLX010" in run.stdout, run.stderr


def test_a_long_list_in_a_rule_is_compared_as_its_items_are():
    """A rule's list (`op: [...]`, `in`, `not_in`) is looked up in sets past a few items (a committed list of
    40,000 names cost 29 s on a 2,000-node model); it answers as comparing item by item does: a bool equals only
    a bool, 1 equals 1.0, a list compares item by item, an unhashable value too."""
    from onnxlint.rules import comparison

    want = ["Relu", "Cast", 1, 2.5, True, [1, 2], "x" * 3] + [f"op{k}" for k in range(40)]
    values = ["Relu", "relu", 1, 1.0, True, False, 0, 2.5, np.float32(2.5), np.int64(1), [1, 2], (1, 2), [2, 1],
              "op39", "op40", {"a": 1}, None]
    for v in values:
        linear = v is not None and any(comparison._eq(v, w) for w in want)
        assert comparison.compare(v, want) is linear, v
        assert comparison.compare(v, {"in": want}) is linear, v
        assert comparison.compare(v, {"not_in": want}) is (v is not None and not linear), v
    assert comparison.compare(True, [1] * 20) is False and comparison.compare(1, [True] * 20) is False


def test_rules_of_ones_own_are_evaluated_within_a_budget_per_model(tmp_path):
    """A committed rules folder of 1,000 rules, each matching every node of a 2,000-node model, made 2 million
    findings (25 s, 900 MB). The user's rules are evaluated while OWN_RULE_FLOOR + OWN_RULE_WORK predicates a
    node last; past it one note names those left out. onnxlint's own rules are all evaluated."""
    from onnxlint.linting import engine

    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"n{i}") for i in range(2000)]
    nodes.append(h.make_node("Dropout", ["v2000", "r", "t"], ["y"], name="drop"))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("v0", onnx.TensorProto.FLOAT, [1])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])],
                     initializer=[nh.from_array(np.array(0.5, np.float32), "r"), nh.from_array(np.array(True), "t")])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8), tmp_path / "m.onnx")
    (tmp_path / "rules").mkdir()
    rules = [{"id": f"USR{k:03d}", "name": f"every-node-{k}", "severity": "warning", "targets": "any", "summary": "s",
              "explanation": "e", "message": "m", "match": {"op": {"not_in": [f"Foo{k}"]}}} for k in range(1000)]
    (tmp_path / "rules" / "r.yaml").write_text(json.dumps(rules))
    try:
        run = onnxlint("--no-cache", "--format", "json", "--rules", "rules", "--", "m.onnx", cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("1,000 rules of one's own on a 2,000-node model ran past 60 s")
    findings = json.loads(run.stdout)
    own = [f for f in findings if f["code"].startswith("USR")]
    per_rule = 2001 * 3  # nodes x the predicates of {op: {not_in: [...]}}
    assert len(own) == 2001 * ((engine.OWN_RULE_FLOOR + engine.OWN_RULE_WORK * 2001) // per_rule), len(own)
    assert any(f["code"] == "OLX010" for f in findings)  # the built-in rules all ran
    run = onnxlint("--no-cache", "--rules", "rules", "--", "m.onnx", cwd=tmp_path, timeout=60)
    notes = [ln for ln in run.stdout.splitlines() if "of your own not evaluated" in ln]
    assert len(notes) == 1 and "USR999" not in notes[0] and "more" in notes[0], notes


def test_a_rule_file_of_ones_own_cannot_take_onnxlints_prefix(tmp_path):
    """onnxlint's own rules (OLX) are never budgeted: a rule file's OLX999 is refused, one line, exit 2."""
    (tmp_path / "rules").mkdir()
    rule = {"id": "OLX999", "name": "mine", "severity": "warning", "targets": "any", "summary": "s",
            "explanation": "e", "message": "m", "match": {"op": "Relu"}}
    (tmp_path / "rules" / "r.yaml").write_text(json.dumps([rule]))
    onnx.save(dropout(), tmp_path / "m.onnx")
    run = onnxlint("--no-cache", "--rules", "rules", "--", "m.onnx", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "own prefix" in run.stderr, run.stderr


@pytest.mark.parametrize("mode", modes("verify", "lint-verify", every_run=("verify", "lint-verify")))
def test_verify_runs_its_session_under_the_numeric_checks_address_space_limit(tmp_path, mode):
    """verify's session child runs the model on ORT as the numeric check's does: a ConstantOfShape of 1 GB (ORT's
    session creation folds it) is stopped by the same address-space limit, one line naming the model and the
    limit, exit 1 as any failed verification (it ran unbounded: a larger one took all the machine's memory)."""
    onnx.save(constant_of_shape_model(side=16000), tmp_path / "m.onnx")
    args = (["verify", "m.onnx"] if mode == "verify" else ["m.onnx", "--verify", "--target", "ort-cpu", "--no-cache"])
    run = onnxlint(*args, "--providers", "CPUExecutionProvider", cwd=tmp_path, timeout=120,
                   env={"ONNXLINT_CHECK_MEMORY_MB": "1200"})
    assert run.returncode == 1, run.stdout + run.stderr
    said = [line for line in run.stdout.splitlines() if "out of memory" in line]
    why = "the session ran out of memory (1200 MB address space, ONNXLINT_CHECK_MEMORY_MB sets it)"
    if mode == "verify":
        assert said == [f"m.onnx: verify failed: {why}"], run.stdout
    else:  # the OLX903 finding says it, once
        assert said == [f"m.onnx: error: OLX903 verification failed: {why}"], run.stdout


def test_verify_within_its_limit_runs_the_model(tmp_path):
    """The limit stops what is past it only: the same model at 25M elements (100 MB) verifies."""
    onnx.save(constant_of_shape_model(side=5000), tmp_path / "m.onnx")
    run = onnxlint("verify", "m.onnx", "--providers", "CPUExecutionProvider", cwd=tmp_path, timeout=120,
                   env={"ONNXLINT_CHECK_MEMORY_MB": "2000"})
    assert run.returncode == 0 and "2 agree with the ort-cpu prediction" in run.stdout, run.stdout + run.stderr
