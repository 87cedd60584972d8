"""A child process with a time limit (and, on POSIX, an address-space limit) that can always be ended whole.

ORT runs only in such children (verify's session, doctor's probe, the --fix numeric check): a native crash, a
hang or a runaway allocation costs the child. On POSIX the child leads its own process group, so a timeout
kills whatever it started too; elsewhere the child alone is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any

POSIX = os.name == "posix"


def limit_memory(limit: int) -> None:
    """This process may map at most `limit` bytes (RLIMIT_AS); no-op where it cannot be set."""
    import resource

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run(cmd: list[str], timeout: float, memory: int | None = None, **kwargs: Any) -> tuple[int | None, str, str]:
    """(exit code or None when the time limit ended it, stdout, stderr); text mode, undecodable bytes replaced.
    What the child wrote before it was killed is returned too. A negative code is the signal that ended it."""
    extra: dict[str, Any] = {}
    if POSIX:
        extra["start_new_session"] = True
        if memory:
            extra["preexec_fn"] = lambda: limit_memory(memory)
    from onnxlint.support import interrupt

    proc = None
    try:
        with interrupt.held():  # a preexec_fn runs the fork's Python hooks, where a signal would be dropped
            proc = subprocess.Popen(cmd, stdout=kwargs.pop("stdout", subprocess.PIPE), stderr=subprocess.PIPE,
                                    text=True, errors="replace", **extra, **kwargs)
    except KeyboardInterrupt:  # held until the child was started: it is not wanted
        if proc is not None:
            _kill(proc)
            proc.communicate()
        raise
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, err = proc.communicate()
        return None, out or "", err or ""
    return proc.returncode, out or "", err or ""


def _kill(proc: subprocess.Popen) -> None:
    """The child and, on POSIX, what it started (its own process group)."""
    if POSIX:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()


def signal_name(code: int) -> str:
    """'SIGSEGV' for the exit code -11."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def json_lines(text: str) -> dict[str, Any]:
    """What a child reported: every line of its output that is a JSON object, merged in order (ORT's own
    lines on the same stream are not JSON and are passed over)."""
    import json

    data: dict[str, Any] = {}
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                data.update(json.loads(line))
            except ValueError:
                continue
    return data
