"""The TensorRT package's shape, as tests/ort/test_ort_layout.py holds ORT's: every version gate reads the version
table (tensorrt/versions.py) and nothing else reads a version's numbers; the table modules import no onnx; no
import cycle inside the package (type-only imports counted); no module over ~800 lines."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRT = ROOT / "onnxlint" / "tensorrt"
sys.path.insert(0, str(ROOT / "tests"))

import test_architecture  # noqa: E402

_VERSION_PARTS = {"release", "major", "minor", "micro", "local", "base_version", "epoch", "pre", "post", "dev"}
_VERSION_CALLS = {"Version", "version_key", "parse", "sort_key"}


def _is_versionish(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value[:1].isdigit()


def version_reads(source: str) -> list[int]:
    """Lines of code that read a version's numbers or compare with a version literal: a packaging Version's parts
    (`.release[0]`), building or keying a version (`Version(...)`, `version_key(...)`), a string compared with or
    tested against a digit-led literal (`ver == "8.6"`, `ver.startswith("8")`, `"10." in ver`), splitting on dots,
    the TensorRT-RTX label pattern. Comments and message text are not code: "(e.g. Pad axes on 8.x)" is allowed."""
    found: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in _VERSION_PARTS:
            found.add(node.lineno)
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if name in _VERSION_CALLS:
                found.add(node.lineno)
            elif name in ("startswith", "endswith") and any(_is_versionish(a) for a in node.args):
                found.add(node.lineno)
            elif name == "split" and any(isinstance(a, ast.Constant) and a.value == "." for a in node.args):
                found.add(node.lineno)
        elif isinstance(node, ast.Compare) and any(_is_versionish(x) for x in (node.left, *node.comparators)):
            found.add(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "+rtx" in node.value:
            found.add(node.lineno)
    return sorted(found)


def test_version_gates_are_read_from_the_version_table_only():
    """No module of the package but versions.py reads a version's numbers: a TensorRT version of a known line is a
    support table alone, a new line a row of versions.LINES."""
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(TRT.rglob("*.py")) if p.name != "versions.py"
             for line in version_reads(p.read_text())]
    assert not found, found
    assert version_reads((TRT / "versions.py").read_text()), "the detector reads nothing in the table itself"


def test_the_detector_finds_each_kind_of_version_gate():
    gates = ['if version_key(ver).release[0] < 10: pass', 'x = want.major >= 10', 'ok = Version(label) > want',
             'if ver == "8.6": pass', 'if ver.startswith("8."): pass', 'if "10." in ver: pass',
             'm = int(ver.split(".")[0])', 'RTX = re.compile(r"\\+rtx")']
    for code in gates:
        assert version_reads(code) == [1], code
    allowed = ['msg = f"{who} rejects {op} with input {i} given (e.g. Pad axes on 8.x)"  # 8.6', 'if sv >= LIMIT: pass',
               'line = versions.line_of(ver)', 'x = c.since_version']
    for code in allowed:
        assert version_reads(code) == [], code


def test_the_table_modules_import_no_onnx():
    """A cached run's summary names the TensorRT table it checked: the table modules must not pull onnx in."""
    code = ("import sys; from onnxlint.tensorrt import tables, versions; tables.resolve('9.0'); tables.available(); "
            "versions.checked(tables.default_version()); print(sorted(m for m in ('onnx', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_tensorrt_package_has_no_import_cycle_type_only_imports_included():
    graph = test_architecture.import_graph()
    trt = {m: {d for d in deps if d.startswith("onnxlint.tensorrt")} for m, deps in graph.items()
           if m.startswith("onnxlint.tensorrt")}
    assert len(trt) >= 9 and test_architecture._cycle(trt) is None


def test_no_module_of_the_package_is_over_800_lines():
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in TRT.rglob("*.py")}
    assert sizes and max(sizes.values()) <= 800, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_every_check_of_a_verified_row_is_listed_once_in_order():
    """builtin_op_checks.CHECKS is the one ordered list a parser-verified row is asked through: each check of the
    module, of behaviour.py and of quantization.py in it once, the control-flow check last. (The stored tensors the
    parser cannot import are asked before any importer: model_importer._verdict.)"""
    from onnxlint.tensorrt import behaviour, builtin_op_checks, quantization

    checks = builtin_op_checks.CHECKS
    assert len(set(checks)) == len(checks)
    assert set(behaviour.CHECKS) <= set(checks) and set(quantization.CHECKS) <= set(checks)
    assert quantization.imported_tensors not in checks
    assert checks[0] is builtin_op_checks.op_version and checks[-1] is builtin_op_checks.control_flow_check
