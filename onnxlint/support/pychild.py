"""The command line of a Python child of onnxlint's own (a module, or a script), without the current folder on its
import path.

`python -m X` and `python -c S` put the current folder first on sys.path, before the standard library and
site-packages, and onnxlint runs in the repository under review (a pre-commit hook's, a CI step's): a committed
`onnx.py`, `numpy.py` or `onnxruntime/` ran in --fix's numeric check, verify's session, doctor's probe and the
Action's lint. `-P` (Python 3.11) leaves it out; before it, the child drops it itself. PYTHONPATH and the user's
site-packages still apply, as for the parent.
"""

from __future__ import annotations

import sys

# what `-c` puts first is '' (the current folder at each import): dropped before anything else is imported
_DROP_CWD = "import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\n"


def module(name: str) -> list[str]:
    """`python -m name`, the current folder left off the child's sys.path (append the arguments)."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", name]
    return [sys.executable, "-c", f"{_DROP_CWD}import runpy\nrunpy.run_module({name!r}, run_name='__main__', "
                                  "alter_sys=True)\n"]


def script(text: str, python: str | None = None) -> list[str]:
    """`python -c text` (python: another interpreter, of any version), the current folder left off sys.path."""
    return [python or sys.executable, "-c", _DROP_CWD + text]
