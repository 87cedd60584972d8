"""The package's shape: no import cycle between modules nor between package folders (function-level and type-only
imports counted), entry points alone at the package root, a public API usable from Python, every
target/predicate/fixer registered once."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "onnxlint"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _annotation_modules(tree: ast.AST, modules: dict[str, Path]) -> set[str]:
    """Modules a string annotation names by its dotted path (`"onnxlint.rules.context.LintContext"`): a reference
    to a module as real as an import, though no import statement says so."""
    found: set[str] = set()
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            annotations += [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a]
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for ann in annotations:
            for sub in ast.walk(ann) if ann is not None else ():
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    for word in re.findall(r"onnxlint(?:\.\w+)+", sub.value):
                        while word and word not in modules:
                            word = word.rpartition(".")[0]
                        if word:
                            found.add(word)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports: at the top, in functions, under `if TYPE_CHECKING:`, and
    named by string annotations (a type-only import ties modules together as much as any other)."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
        graph[name] |= _annotation_modules(tree, modules) - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_no_import_cycle_function_level_and_type_only_imports_included():
    graph = import_graph()
    assert "onnxlint.cli" in graph and graph["onnxlint.linting.linter"], "the import graph was not read"
    # read: `LintContext` is imported under TYPE_CHECKING only, by the predicates and the targets
    assert "onnxlint.rules.context" in graph["onnxlint.rules.predicates"] and "onnxlint.rules.context" in graph["onnxlint.targets.base"]
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


ENTRY_POINTS = {"__init__", "__main__", "api", "cli"}  # what the package root holds: everything else is in a package


def folder_of(module: str) -> str:
    """The package folder a module lives in (`onnxlint.ort.optimizer.state` -> `onnxlint.ort`); a module at the
    package root is its own node (an entry point)."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and (PKG / parts[1]).is_dir()):
        return ".".join(parts[:2])
    return module


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph with modules grouped by package folder: folder -> the folders its modules import."""
    out: dict[str, set[str]] = {}
    for module, deps in graph.items():
        folder = folder_of(module)
        out.setdefault(folder, set()).update(f for f in map(folder_of, deps) if f != folder)
    return out


def test_package_folders_import_each_other_without_a_cycle():
    """Grouped by folder, the imports run one way: support <- model <- ort, tensorrt <- rules <- targets <- rulefiles
    <- config <- linting <- cache, formats, verify <- commands <- the entry points. A cycle here is an arrow running
    back up (a low folder asking a high one), which folding it into a function-level import does not hide."""
    folders = folder_graph(import_graph())
    assert {"onnxlint.support", "onnxlint.model", "onnxlint.tensorrt", "onnxlint.ort", "onnxlint.linting"} <= set(folders)
    cycle = _cycle(folders)
    assert cycle is None, " -> ".join(cycle or [])


def test_folder_cycles_are_found():
    graph = {"onnxlint.a.x": {"onnxlint.b.y"}, "onnxlint.b.y": {"onnxlint.b.z"}, "onnxlint.b.z": {"onnxlint.a.w"},
             "onnxlint.a.w": set()}
    assert _cycle(folder_graph(graph)) == ["onnxlint.a", "onnxlint.b", "onnxlint.a"]


def test_the_package_root_holds_entry_points_only():
    root = {p.stem for p in PKG.glob("*.py")}
    assert root == ENTRY_POINTS, sorted(root - ENTRY_POINTS)


MAX_FUNCTION_LINES = 80


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method longer than limit, decorators and docstring included."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            lines = (node.end_lineno or node.lineno) - first + 1
            if lines > limit:
                out.append((node.name, lines))
    return out


def test_no_function_is_over_80_lines():
    """A function says one thing: an orchestrator over 80 lines is split into the steps it takes."""
    found = [f"{p.relative_to(ROOT)}:{name} ({n} lines)" for p in sorted(PKG.rglob("*.py"))
             for name, n in long_functions(p.read_text())]
    assert not found, found
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    assert long_functions(f"def f():\n{body}\n") == [("f", 81)]


_TIMING = re.compile(r"~?\b\d+(?:\.\d+)? ?(?:ms|µs|ns)\b|\b\d+(?:\.\d+)? ?s (?:of CPU|a check|at \d)|GB peak|"
                     r"\b\d+x (?:faster|slower)|\b\d+/s\b")


def test_no_comment_carries_a_benchmark_timing():
    """A comment or docstring says why, not how fast it was once: figures live in benchmarks/README.md."""
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted(PKG.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if _TIMING.search(line)]
    assert not found, found
    assert all(_TIMING.search(t) for t in ("(~15 ms)", "0.69 s -> ~0.05 s a check", "(~0.3 s of CPU)", "2x faster", "at 287/s"))


def test_core_never_imports_the_cli():
    graph = import_graph()
    users = sorted(m for m, deps in graph.items() if "onnxlint.cli" in deps and m != "onnxlint.__main__")
    assert users == [], users


def test_cycle_detector_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_type_only_imports_and_string_annotations_are_edges(tmp_path, monkeypatch):
    """A module pair tied only by `if TYPE_CHECKING:` one way and a string annotation the other is a cycle."""
    pkg = tmp_path / "onnxlint"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from onnxlint.b import B\n")
    (pkg / "b.py").write_text("def f(x: 'onnxlint.a.A') -> None: ...\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PKG", pkg)
    graph = import_graph()
    assert graph["onnxlint.a"] == {"onnxlint.b"} and graph["onnxlint.b"] == {"onnxlint.a"}
    assert _cycle(graph) == ["onnxlint.a", "onnxlint.b", "onnxlint.a"]


def test_public_api_prints_the_finding_from_a_fresh_interpreter(examples_dir):
    code = f"import onnxlint; print(onnxlint.lint({str(examples_dir / 'dropout_training.onnx')!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "OLX010" in out.stdout and "Dropout" in out.stdout


def test_public_api_on_a_model_proto_with_settings(examples_dir):
    import onnx

    import onnxlint

    model = onnx.load(examples_dir / "scatternd.onnx")
    cuda_only = onnxlint.lint(model, onnxlint.Settings.from_config(None, targets=["ort-cuda"]))
    assert all(f.target in ("ort-cuda", "any") for f in cuda_only.findings)
    with_trt = onnxlint.lint(model, onnxlint.Settings.from_config(None, targets=["tensorrt"]))
    assert any(f.target == "tensorrt" for f in with_trt.findings)
    pred = onnxlint.predict(model, "ort-cuda")
    assert {p.node.op_type for p in pred.nodes.values()} >= {"ScatterND"}


def test_targets_are_declared_once_and_drive_the_cli_choices():
    from onnxlint import cli, targets

    action = next(a for a in cli.build_parser()._actions if a.dest == "target")
    assert list(action.choices) == list(targets.names())
    for t in targets.REGISTRY.values():
        if t.predicate:
            assert t.statuses() and t.common_status in t.statuses(), t.name
        versions = t.available_versions()
        assert versions == sorted(versions, key=t.parse_version), t.name


def test_versions_compare_as_versions_not_floats():
    from packaging.version import Version

    from onnxlint.rules.predicates import compare

    assert compare(Version("10.10"), {"gt": "10.9"}) and not compare(Version("10.1"), {"gt": "10.9"})


def test_an_any_of_indexed_predicates_narrows_the_nodes_a_rule_looks_at():
    """A rule whose match is `any: [placement ..., placement ...]` (OLX200, OLX205) is evaluated on the nodes
    that carry one of those verdicts, not on every node: 40 Relus on CUDA are never matched, and the findings
    are the ones a walk over every node gives (Unique has no CUDA kernel: OLX200)."""
    import onnx.parser

    from onnxlint import targets
    from onnxlint.config.settings import Settings
    from onnxlint.fixers.base import fix_for
    from onnxlint.linting import engine, linter
    from onnxlint.model import loading
    from onnxlint.rules import predicates

    relus = " ".join(f"[r{k}] h{k + 1} = Relu(h{k})" for k in range(40))
    model = onnx.parser.parse_model(f"""
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N,4] h0) => (float[N,4] h40, int64[1] y, float[M] u) <int64 zero = {{0}}, int64[1] ax = {{0}}>
      {{ {relus} [shape] s = Shape(h0) [gather] n = Gather(s, zero) [unsq] y = Unsqueeze(n, ax)
        [unique] u = Unique(h40) }}""")
    settings = Settings.from_config(None, targets=["ort-cuda"], ort_version="1.24.4")
    ruleset = linter.ruleset_for(settings.rule_dirs)
    mf = linter.model_file(model)
    ctx = engine.new_context(mf, loading.index_model(mf), linter.options_for(settings), ruleset, targets.REGISTRY)
    anys = [r for r in ruleset.rules if r.scope == "node" and "any" in r.match
            and all(set(alt) == {"placement"} for alt in r.match["any"])]
    assert {"OLX200", "OLX205"} <= {r.id for r in anys}
    found = {}
    for rule in anys:
        narrowed = predicates.candidates(ctx, rule.match, rule.ops)
        assert not any(n.op_type == "Relu" for n in narrowed)
        matched = [n.name for n in narrowed if predicates.match_node(ctx, rule.match, n)]
        assert matched == [n.name for n in ctx.index.nodes if predicates.match_node(ctx, rule.match, n)]
        found[rule.id] = matched
    assert found["OLX200"] == ["unique"]
    assert {f.code for f in engine.lint(ctx, ruleset.rules, fixable=fix_for)} >= {"OLX200", "OLX201"}


def test_an_any_with_an_alternative_whose_index_is_not_exact_is_not_narrowed():
    """`tensorrt` lists no node when TensorRT is not a target, yet still answers; `inputs` lists only typed
    values: an `any` holding one of them looks at every node, so a user rule finds what it found before."""
    import onnx.parser

    from onnxlint import targets
    from onnxlint.config.settings import Settings
    from onnxlint.linting import engine, linter
    from onnxlint.model import loading
    from onnxlint.rules import predicates

    model = onnx.parser.parse_model("""
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N,4] x) => (float[N,4] y) { [relu] y = Relu(x) }""")
    settings = Settings.from_config(None, targets=["ort-cuda"], ort_version="1.24.4")
    mf = linter.model_file(model)
    ctx = engine.new_context(mf, loading.index_model(mf), linter.options_for(settings), linter.ruleset_for(()),
                              targets.REGISTRY)
    for alt in ({"tensorrt": {"status": "supported"}}, {"inputs": {"any": {"dtype": {"exists": False}}}}):
        m = {"any": [alt, {"op": "NotThere"}]}
        assert predicates._indexed(ctx, m) is None
        assert [n.name for n in predicates.candidates(ctx, m, None)] == ["relu"]


def test_a_target_declares_its_verdict_vocabulary_and_the_core_asks_it():
    """A target stub with a vocabulary of its own, given to the context as part of its registry: rules match
    its verdict predicate (narrowed by its candidates), its placeholder is checked against its fields and
    rendered by its own lookup, and the schema generator publishes its predicate's schema; no edit to the
    predicates, the message renderer or the schema generator."""
    import onnx.parser

    from onnxlint import targets
    from onnxlint.fixers.base import fix_for
    from onnxlint.linting import engine, linter
    from onnxlint.model import loading
    from onnxlint.rulefiles import rule_schema
    from onnxlint.rules import messages, predicates
    from onnxlint.rules.context import Options
    from onnxlint.rules.rule import Rule, RuleSet
    from onnxlint.targets.base import Target, Vocabulary

    asked: list = []

    def candidates(ctx, spec):
        asked.append(spec)
        return [n for n in ctx.index.nodes if n.op_type == spec["op"]]

    vocabulary = Vocabulary(predicate="stub", doc="the stub's verdict", schema=lambda shared: {"type": "object", "x-what": shared[0].name},
                            evaluate=lambda ctx, node, spec: node.op_type == spec["op"], candidates=candidates,
                            message_root="stub", message_fields=("speed",),
                            message_value=lambda ctx, rule, node, field: f"{node.op_type}-{field}")
    stub = Target(name="stub", description="a throwaway target", runtime="Stub", vocabulary=vocabulary,
                  statuses=lambda: (), reasons=lambda: (), versions=lambda: [], predict_fn=lambda ctx: None,
                  summary_fn=str)
    fields = {**targets.verdict_fields(), "stub": ("speed",)}
    assert messages.check("{op_type} {stub.speed} {trt.reason}", "node", fields) is None
    assert "unknown field 'sped'" in (messages.check("{stub.sped}", "node", fields) or "")
    assert "unknown placeholder '{stub.speed}'" in (messages.check("{stub.speed}", "node", targets.verdict_fields()) or "")
    assert "not available to a model rule" in (messages.check("{stub.speed}", "model", fields) or "")

    model = onnx.parser.parse_model("""
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N,4] x) => (float[N,4] y) { [abs] a = Abs(x) [relu] y = Relu(a) }""")
    mf = linter.model_file(model)
    ctx = engine.new_context(mf, loading.index_model(mf), Options(targets={"stub"}), RuleSet(),
                             {**targets.REGISTRY, "stub": stub})
    rule = Rule(id="STB001", name="stub", severity="info", targets=("stub",), summary="s", explanation="e",
                match={"stub": {"op": "Relu"}}, message="{node} runs {stub.speed}", ops=None)
    found = engine.lint(ctx, [rule], fixable=fix_for)
    assert [(f.node, f.message) for f in found] == [("relu", "relu runs Relu-speed")]
    assert asked == [{"op": "Relu"}]  # the rule looked at the nodes the stub's index named
    assert [n.name for n in predicates.candidates(ctx, rule.match, None)] == ["relu"]

    with_stub = {**targets.REGISTRY, "stub": stub}
    saved = dict(targets.REGISTRY)
    try:
        targets.REGISTRY.clear()
        targets.REGISTRY.update(with_stub)
        rule_schema.rule_schema.cache_clear()
        schema = rule_schema.rule_schema()
        assert schema["$defs"]["stub"] == {"type": "object", "x-what": "stub"}
        assert schema["$defs"]["node_match"]["properties"]["stub"] == {"$ref": "#/$defs/stub"}
    finally:
        targets.REGISTRY.clear()
        targets.REGISTRY.update(saved)
        rule_schema.rule_schema.cache_clear()


def test_the_lint_plan_is_made_once_per_settings(tmp_path, examples_dir):
    """lint_paths resolves the rule set, the selection and whether the checker is wanted once per settings (not
    once to load and again to lint each model), from the rule source it is given; the reports are those of
    lint_file on each model alone."""
    import shutil

    from onnxlint.config.settings import Settings
    from onnxlint.linting import linter
    from onnxlint.rulefiles.ruleset import get_ruleset

    for name in ("dropout_training.onnx", "scatternd.onnx", "batchnorm_training.onnx"):
        shutil.copy(examples_dir / name, tmp_path / name)
    asked: list[tuple] = []

    def rulesets(dirs):
        asked.append(dirs)
        return get_ruleset(dirs)

    settings = Settings.from_config(None)
    report = linter.lint_paths([tmp_path], lambda p: settings, jobs=1, rulesets=rulesets)
    assert asked == [()]
    assert len(report.files) == 3 and any(r.findings for r in report.files)
    alone = [linter.lint_file(tmp_path / Path(r.filename).name, settings) for r in report.files]
    assert [[(f.code, f.node) for f in r.findings] for r in report.files] == \
           [[(f.code, f.node) for f in r.findings] for r in alone]
    plan = linter.plan_for(settings)
    assert plan.checker_wanted and {r.id for r in plan.rules} >= {"OLX010"}


def test_a_compiled_match_answers_as_match_does(examples_dir):
    """predicates.compiled (the engine's node rules: each predicate looked up once a rule) answers as match for
    every built-in rule and a few mappings of each combinator on every node of the examples, under every target;
    a key no predicate has raises only where match reaches it."""
    from onnxlint import targets
    from onnxlint.config.settings import Settings
    from onnxlint.linting import engine, linter
    from onnxlint.model import loading
    from onnxlint.rules import predicates

    settings = Settings.from_config(None, targets=["ort-cuda", "ort-cpu", "tensorrt"], ort_version="1.24.4")
    ruleset = linter.ruleset_for(settings.rule_dirs)
    extra = [{"any": [{"op": "Conv"}, {"inputs": {"0": {"dtype": "float"}}}]},
             {"all": [{"domain": {"ne": "x"}}, {"not": {"op": ["Relu"]}}]},
             {"inputs": {"all": {"rank": {"ge": 1}}, "0": {"exists": True, "static": False}}},
             {"outputs": {"any": {"dtype": ["float", "double"]}, "1": {"exists": False}}},
             {"op": "NotThere", "nosuch": 1}]
    matches = [r.match for r in ruleset.rules if r.scope == "node"] + extra
    asked = 0
    for path in sorted(examples_dir.glob("*.onnx")):
        mf = loading.load(path, lean=True)
        ctx = engine.new_context(mf, loading.index_model(mf), linter.options_for(settings), ruleset, targets.REGISTRY)
        for m in matches:
            test = predicates.compiled("node", m, ctx.registry)
            for node in ctx.index.nodes:
                assert test(ctx, node) == predicates.match_node(ctx, m, node), (path.name, m, node)
                asked += 1
    assert asked > 500
    node = ctx.index.nodes[0]
    missing = predicates.compiled("node", {"op": node.op_type, "nosuch": 1}, ctx.registry)
    with pytest.raises(KeyError):
        predicates.match_node(ctx, {"op": node.op_type, "nosuch": 1}, node)
    with pytest.raises(KeyError):
        missing(ctx, node)
