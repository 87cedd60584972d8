"""The command line of a Python child of onnxlint's own (a module, or a script), without the current folder on its
import path, importing the onnxlint package the parent runs.

`python -m X` and `python -c S` put the current folder first on sys.path, before the standard library and
site-packages, and onnxlint runs in the repository under review (a pre-commit hook's, a CI step's): a committed
`onnx.py`, `numpy.py` or `onnxruntime/` ran in --fix's numeric check, verify's session, doctor's probe and the
Action's lint. `-P` (Python 3.11) leaves it out; before it, the child drops it itself. PYTHONPATH and the user's
site-packages still apply, as for the parent.

Without the current folder a child found no onnxlint where the parent had found it there (`python -m onnxlint` in
a source checkout that is not installed: --fix's check and verify's session failed with 'No module named
onnxlint.fixers'), or found another one (an older release installed beside the checkout). So the child imports
`onnxlint` from the parent's own package folder, by that folder's path: only that package, the folder holding it
is not put on sys.path.
"""

from __future__ import annotations

import os
import sys

# what `-c` puts first is '' (the current folder at each import): dropped before anything else is imported
_DROP_CWD = "import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\n"

# the onnxlint package folder this module belongs to (onnxlint/support/pychild.py)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _own_package() -> str:
    """Child code making `import onnxlint` the parent's package (nothing when it is not a folder of files: a zip)."""
    init = os.path.join(_PACKAGE, "__init__.py")
    if not os.path.isfile(init):
        return ""
    return ("import importlib.util\n"
            f"_spec = importlib.util.spec_from_file_location('onnxlint', {init!r}, "
            f"submodule_search_locations=[{_PACKAGE!r}])\n"
            "_pkg = importlib.util.module_from_spec(_spec)\n"
            "sys.modules['onnxlint'] = _pkg\n"
            "_spec.loader.exec_module(_pkg)\n"
            "del _spec, _pkg\n")


def module(name: str) -> list[str]:
    """`python -m name`, the current folder left off the child's sys.path (append the arguments)."""
    run = f"import runpy\nrunpy.run_module({name!r}, run_name='__main__', alter_sys=True)\n"
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-c", f"import sys\n{_own_package()}{run}"]
    return [sys.executable, "-c", f"{_DROP_CWD}{_own_package()}{run}"]


def script(text: str, python: str | None = None) -> list[str]:
    """`python -c text`, the current folder left off sys.path. python: another interpreter, of any version, for a
    script that does not import onnxlint (the parent's package is not made importable there)."""
    if python is not None:
        return [python, "-c", _DROP_CWD + text]
    return [sys.executable, "-c", _DROP_CWD + _own_package() + text]
