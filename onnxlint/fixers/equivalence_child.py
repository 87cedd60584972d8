"""The --fix numeric check in a child process: one per model, with a time and memory limit.

`run_check` writes the original and the fixed model to temporary files (beside the model when it has
external data, whose paths are relative to its folder) and runs `python -m onnxlint.fixers.equivalence_child`
on them. The child says which model it is about to build a session for, then the outcome, in a JSON file; a
child killed by a signal (a native crash), past its time or out of memory becomes a FixError naming the stage,
and the linter goes on with the next model.

Test hook: ONNXLINT_TEST_CRASH_CHECK=<graph name> makes the child die with SIGSEGV when it is about to create
a session for the fixed model of a model whose main graph has that name.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import onnx

from onnxlint.fixers.base import FixError

CRASH_ENV = "ONNXLINT_TEST_CRASH_CHECK"
TIMEOUT_ENV, MEMORY_ENV = "ONNXLINT_CHECK_TIMEOUT", "ONNXLINT_CHECK_MEMORY_MB"
DEFAULT_TIMEOUT = 600.0  # seconds for both models, every size tried
MIN_MEMORY = 8 << 30  # address space; at least this, or 8x the two models' serialized size


def _limits() -> tuple[float, int | None]:
    timeout = float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT)
    memory = os.environ.get(MEMORY_ENV)
    return timeout, (int(memory) << 20 if memory else None)


def _limit_memory(limit: int) -> None:
    import resource

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_check(before: onnx.ModelProto, after: onnx.ModelProto, base_dir: Path | None,
              shapes: dict[str, Sequence[int]] | None) -> str:
    from onnxlint.fixers.equivalence import has_external_data

    external = base_dir is not None and (has_external_data(before) or has_external_data(after))
    timeout, memory = _limits()
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="onnxlint-check."))
        folder = str(base_dir) if external else tmp
        paths = []
        for model in (before, after):
            fd, path = tempfile.mkstemp(prefix=".onnxlint-check.", suffix=".onnx", dir=folder)
            stack.callback(_remove, path)
            with os.fdopen(fd, "wb") as fh:
                fh.write(model.SerializeToString())
            paths.append(path)
        size = sum(os.path.getsize(p) for p in paths)
        limit = memory or max(MIN_MEMORY, 8 * size)
        report = os.path.join(tmp, "report.json")
        cmd = [sys.executable, "-m", "onnxlint.fixers.equivalence_child", *paths, str(base_dir or ""),
               json.dumps({k: list(v) for k, v in (shapes or {}).items()}), report]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True, preexec_fn=lambda: _limit_memory(limit))
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise FixError(f"the numeric check did not finish within {timeout:g} s ({TIMEOUT_ENV} sets the limit)") from None
        data = _read(report)
    if "result" in data:
        return str(data["result"])
    if "fix_error" in data:
        raise FixError(str(data["fix_error"]))
    which = "the fixed model" if data.get("stage") == "fixed" else "the original model"
    if proc.returncode < 0:
        try:
            sig = signal.Signals(-proc.returncode).name
        except ValueError:
            sig = f"signal {-proc.returncode}"
        raise FixError(f"onnxruntime crashed ({sig}) creating a session for {which}")
    if "MemoryError" in stderr or "std::bad_alloc" in stderr:
        raise FixError(f"the numeric check ran out of memory ({limit >> 20} MB address space, {MEMORY_ENV} sets it) "
                       f"running {which}")
    last = [ln for ln in stderr.splitlines() if ln.strip()][-1:] or [f"exit code {proc.returncode}"]
    raise FixError(f"could not run the numeric check: {last[0][:200]}")


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _read(path: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    with contextlib.suppress(OSError):
        with open(path) as fh:
            for line in fh:
                with contextlib.suppress(ValueError):
                    data.update(json.loads(line))
    return data


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
