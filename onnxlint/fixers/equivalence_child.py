"""The --fix numeric check in a child process: one per model, with a time and memory limit.

`equivalence.run_check` writes the original and the fixed model to temporary files (beside the model when it has
external data, whose paths are relative to its folder) and runs the check in a child: forked from a server
that has the imports done (`check_server`, onnxlint's own: never the caller's main module imported again),
or, where there is none, `python -m onnxlint.fixers.equivalence_child` on them. The child says which model it
is about to build a session for, then the outcome, in a JSON file; a child killed by a signal (a native crash),
past its time or out of memory becomes a FixError naming the stage, and the linter goes on with the next model.

Test hook: ONNXLINT_TEST_CRASH_CHECK=<graph name> makes the child die with SIGSEGV when it is about to create
a session for the fixed model of a model whose main graph has that name.
"""

from __future__ import annotations

import os
import sys

from onnxlint.fixers import equivalence

CRASH_ENV = equivalence.CRASH_ENV


def main(argv: list[str]) -> int:
    before, after, base, shapes, report = argv
    equivalence._child_check(before, after, base, shapes, report, os.environ.get(CRASH_ENV))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
