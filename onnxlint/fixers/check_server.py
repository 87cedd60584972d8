"""The --fix numeric check's fork server: a process of onnxlint's own that has onnx, numpy and onnxruntime
imported and forks one child per check (`equivalence._child_check`), so a check costs a fork, not the imports.

It is started as `python -m onnxlint.fixers.check_server`, never by multiprocessing: multiprocessing's forkserver
and spawn start each child by importing the caller's main module again (`__mp_main__`), so a script calling
`onnxlint.fix(...)` at module level, without an `if __name__ == "__main__":` guard, ran twice (printed
everything twice and fixed the file twice). This process imports nothing of the caller's.

Protocol, one JSON object a line: a request on stdin, {"args": [...], "crash": ..., "errors": path, "memory":
bytes}; on stdout {"pid": N} once the child is forked, then {"exit": code} when it ends (negative: the signal
that ended it). The client (equivalence._run_child) enforces the time limit by killing the child by its pid.
The server ends when its stdin closes: when the process that started it ends, whatever way it ends.
"""

from __future__ import annotations

import json
import os
import sys


def _serve() -> None:
    from onnxlint.fixers import equivalence

    try:
        import onnxruntime  # noqa: F401 - preloaded: every child has it imported already
    except ImportError:
        pass
    out = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # what the server or a library prints never reaches the protocol stream
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        pid = os.fork()
        if pid == 0:  # the child: one check, its output to its own file (_child_check redirects fds 1 and 2)
            code = 1
            try:
                os.dup2(devnull, 0)
                out.close()
                before, after, base, shapes, report = req["args"]
                equivalence._child_check(before, after, base, shapes, report, req.get("crash"), req.get("errors"),
                                         req.get("memory"))
                code = 0
            finally:
                os._exit(code)
        out.write(json.dumps({"pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        out.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")


if __name__ == "__main__":
    _serve()
