"""The --fix numeric check in a child process: one per model, with a time and memory limit.

`equivalence.run_check` writes the original and the fixed model to temporary files (beside the model when it has
external data, whose paths are relative to its folder) and runs `python -m onnxlint.fixers.equivalence_child`
on them. The child says which model it is about to build a session for, then the outcome, in a JSON file; a
child killed by a signal (a native crash), past its time or out of memory becomes a FixError naming the stage,
and the linter goes on with the next model.

Test hook: ONNXLINT_TEST_CRASH_CHECK=<graph name> makes the child die with SIGSEGV when it is about to create
a session for the fixed model of a model whose main graph has that name.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import onnx

from onnxlint.fixers.base import FixError

CRASH_ENV = "ONNXLINT_TEST_CRASH_CHECK"


def main(argv: list[str]) -> int:
    from onnxlint.fixers import equivalence

    before_path, after_path, base, shapes_json, report = argv
    before = onnx.load(before_path, load_external_data=False)
    after = onnx.load(after_path, load_external_data=False)
    base_dir = Path(base) if base else None
    crash = os.environ.get(CRASH_ENV)

    def say(**values: Any) -> None:
        with open(report, "a") as fh:
            fh.write(json.dumps(values) + "\n")

    def before_session(model: onnx.ModelProto) -> None:
        stage = "fixed" if model is after else "original"
        say(stage=stage)
        if crash and stage == "fixed" and before.graph.name == crash:
            os.kill(os.getpid(), signal.SIGSEGV)

    equivalence.BEFORE_SESSION.append(before_session)
    shapes = json.loads(shapes_json) or None
    try:
        with equivalence.capture_output():
            say(result=equivalence._check_equivalent(before, after, base_dir, shapes))
    except FixError as exc:
        say(fix_error=str(exc))
    except Exception as exc:
        say(fix_error=f"could not run the numeric check: {equivalence.ort_message(exc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
