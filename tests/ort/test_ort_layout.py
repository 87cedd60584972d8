"""The ORT engine's shape: one module per graph transformer, transformers that talk to the optimizer state through
its methods only, release gates read from the release table only, no import cycle (type-only imports counted),
no module over ~800 lines."""

import ast
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ORT = ROOT / "onnxlint" / "ort"
sys.path.insert(0, str(ROOT / "tests"))

import test_architecture  # noqa: E402

from onnxlint.ort import releases  # noqa: E402
from onnxlint.ort.optimizer.graph_transformer_utils import generate_transformers  # noqa: E402
from onnxlint.ort.optimizer.state import OptimizerState  # noqa: E402


def test_the_ort_package_has_no_import_cycle_type_only_imports_included():
    graph = test_architecture.import_graph()  # type-only imports and string annotations counted
    ort = {m: {d for d in deps if d.startswith("onnxlint.ort")} for m, deps in graph.items() if m.startswith("onnxlint.ort")}
    assert len(ort) > 20 and test_architecture._cycle(ort) is None


def test_no_module_of_the_package_is_over_800_lines():
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in ORT.rglob("*.py")}
    assert sizes and max(sizes.values()) <= 800, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_each_level1_transformer_has_its_own_module():
    level1 = generate_transformers(releases.NEWEST, 0)
    transformers = [level1.first, level1.once, *level1.repeated]
    by_module: dict[str, set[str]] = {}
    for t in transformers:
        by_module.setdefault(type(t).__module__, set()).add(t.name.split(".")[0])  # ReshapeFusion.FuseContiguousReshapes
    assert all(len(names) == 1 for names in by_module.values()), by_module
    assert len(by_module) == len({t.name.split(".")[0] for t in transformers}) == 8
    assert all(m.startswith("onnxlint.ort.optimizer.") for m in by_module)


def test_transformers_use_the_state_through_its_methods():
    """A transformer module reads no field of the OptimizerState it receives (`state.x` is a public method):
    the state's storage can change without touching them."""
    methods = {name for name, fn in inspect.getmembers(OptimizerState, inspect.isfunction) if not name.startswith("_")}
    used: dict[str, set[str]] = {}
    for path in (ORT / "optimizer").glob("*.py"):
        if path.stem in ("state", "optimized", "refined_shapes", "graph_transformer_mgr"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "state":
                used.setdefault(node.attr, set()).add(path.stem)
    assert {"remove", "made_constant", "shape", "value", "nodes"} <= set(used)
    assert set(used) <= methods, {a: used[a] for a in set(used) - methods}


def test_release_gates_are_read_from_the_release_table_only():
    """No (major, minor) literal outside ort/releases.py: a new ORT release is a row there."""
    pattern = re.compile(r"\(1, \d+\)")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in ORT.rglob("*.py") if p.name != "releases.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line.split("#")[0])]
    assert not found
