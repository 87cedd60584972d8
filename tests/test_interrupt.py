"""SIGINT and SIGTERM stop a run promptly, print what was finished, and leave no process behind (issue 33, class 5).

A run in a subprocess lints a folder whose later models are slow (the linter is wrapped to sleep on them, in the
parent and in forked pool workers alike); the test waits until a slow model has started, sends the signal, and
checks the exit code, the report of the finished models, and that no process carrying the run's marker is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import onnx
import pytest
from conftest import make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists() or not hasattr(os, "killpg"),
                                reason="finds the run's processes through Linux /proc")

_SLOW_RUN = r"""
import os, sys, time
from pathlib import Path
from onnxlint.linting import linter
real = linter.lint_file

def lint_file(path, *a, **k):
    if Path(path).name.startswith("slow"):
        Path(os.environ["SLOW_STARTED"]).touch()
        time.sleep(60)
    return real(path, *a, **k)

linter.lint_file = lint_file
from onnxlint.cli import main
sys.argv[0] = "onnxlint"
sys.exit(main())
"""


def _folder(tmp_path: Path, fast: int = 10, slow: int = 10) -> Path:
    d = tmp_path / "models"
    d.mkdir()
    m = make_model([h.make_node("Equal", ["x", "k"], ["y"], name="eq")], [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])],
                   [vi("y", T.BOOL, [4])])
    for i in range(fast):
        onnx.save(m, d / f"a{i:02d}.onnx")
    for i in range(slow):
        onnx.save(m, d / f"slow{i:02d}.onnx")
    return d


def _marked(mark: str) -> list[int]:
    """Processes whose environment carries the run's marker (the run, its pool workers, their children)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if mark.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _run_and_signal(tmp_path: Path, sig: int, extra: list[str], group: bool) -> tuple[int, str, str, float, list[int]]:
    folder = _folder(tmp_path)
    started = tmp_path / "slow-started"
    mark = f"ONNXLINT_TEST_MARK={uuid.uuid4().hex}"
    env = {**os.environ, "SLOW_STARTED": str(started), "ONNXLINT_TEST_MARK": mark.split("=", 1)[1],
           "ONNXLINT_CACHE_DIR": str(tmp_path / "cache")}
    # SIGINT at its default, as a terminal's foreground job has it: run from a background job (`pytest &`), the
    # suite would hand its own SIG_IGN down, Python would then leave Ctrl-C ignored, and the test would wait 30 s
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, str(folder), "--no-progress", *extra], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no slow model started"
            time.sleep(0.05)
        time.sleep(0.3)
        sent = time.monotonic()
        if group:  # what a terminal's Ctrl-C does: the whole foreground group gets it
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    left: list[int] = []
    for _ in range(50):  # children end with their parent; give the kernel a moment to reap them
        left = _marked(mark)
        if not left:
            break
        time.sleep(0.1)
    return proc.returncode, out, err, took, left


@pytest.mark.parametrize("sig, group", [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)])
@pytest.mark.parametrize("extra", [[], ["--jobs", "2"], ["--no-cache", "--jobs", "2"]])
def test_a_signal_stops_the_run_prints_what_was_finished_and_leaves_no_process(tmp_path, sig, group, extra):
    rc, out, err, took, left = _run_and_signal(tmp_path, sig, extra, group)
    assert rc == 128 + sig, (rc, out, err)
    assert "Traceback" not in err and f"interrupted ({signal.Signals(sig).name})" in err
    assert took < 10  # it stopped at once, not after the queued slow models (10 x 60 s)
    finished = int(err.split(" after ")[1].split(" of ")[0])
    assert 10 <= finished < 20 and err.split(" of ")[1].startswith("20 model")
    assert f" in {finished} files" in out and "OLX015" in out  # the report of what was finished
    assert left == [], f"processes left: {left}"


def test_a_pool_manager_slower_than_its_wait_is_not_woken_by_the_exit_hook():
    """The pool's manager thread closes its wake-up pipe on its way out, and Python's exit hook for process pools
    wrote to the pipe as the thread closed it: the run ended with a traceback after its report (EBADF in
    threading._shutdown; CI on 3.10, 3.12, 3.13, whether the thread ended within stop_pool's wait or not). The
    hook never wakes a stopped pool's manager now (shutdown woke it already)."""
    import threading
    from concurrent.futures import process

    from onnxlint.support import interrupt

    class Pool:
        _processes: dict = {}

        def __init__(self, manager):
            self._executor_manager_thread = manager

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    release = threading.Event()
    slow = threading.Thread(target=release.wait, args=(30,))
    quick = threading.Thread(target=lambda: None)
    for t in (slow, quick):
        t.start()
        process._threads_wakeups[t] = process._ThreadWakeup()
    try:
        interrupt.stop_pool(Pool(slow))
        interrupt.stop_pool(Pool(quick))
        assert slow not in process._threads_wakeups and quick not in process._threads_wakeups
    finally:
        release.set()
        for t in (slow, quick):
            t.join()
            wakeup = process._threads_wakeups.pop(t, None)
            if wakeup is not None:
                wakeup.close()


def test_a_real_pools_manager_is_taken_out_of_the_exit_hooks_list():
    """A ProcessPoolExecutor's shutdown() sets its _executor_manager_thread to None: read after it, as stop_pool
    did, the manager was never taken out, and the exit hook's race (the test above) stayed open for every real
    pool (CI on 3.10 again: `[extra1-Signals.SIGTERM-False]`). The fake pool above keeps the attribute."""
    from concurrent.futures import ProcessPoolExecutor, process

    from onnxlint.support import interrupt

    pool = ProcessPoolExecutor(max_workers=1)
    assert pool.submit(abs, -1).result(timeout=60) == 1
    manager = pool._executor_manager_thread
    assert manager in process._threads_wakeups
    interrupt.stop_pool(pool)
    assert manager not in process._threads_wakeups
    manager.join(30)


def test_a_signal_while_the_pool_shuts_down_stops_it_as_one_during_the_lint(tmp_path, monkeypatch):
    """The pool's shutdown(), which waits for its threads, ran outside the lint's try: a signal there left the
    manager thread closing its wake-up pipe while Python's exit hook wrote to it (a traceback after the report,
    on the floors' Python 3.10). An interrupt there stops the pool as one during the lint does."""
    from concurrent.futures import ProcessPoolExecutor

    from onnxlint.config.settings import Settings
    from onnxlint.linting import linter
    from onnxlint.support import interrupt

    for k in range(16):
        onnx.save(make_model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]),
                  tmp_path / f"m{k:02d}.onnx")
    real_shutdown, stopped = ProcessPoolExecutor.shutdown, []

    def interrupted_shutdown(self, wait=True, cancel_futures=False):
        if wait and not stopped:
            raise KeyboardInterrupt
        return real_shutdown(self, wait=wait, cancel_futures=cancel_futures)

    real_stop = interrupt.stop_pool
    monkeypatch.setattr(ProcessPoolExecutor, "shutdown", interrupted_shutdown)
    monkeypatch.setattr(interrupt, "stop_pool", lambda pool: stopped.append(pool) or real_stop(pool))
    settings = Settings()
    with pytest.raises(KeyboardInterrupt) as got:
        linter.lint_paths(sorted(tmp_path.glob("*.onnx")), lambda f: settings, jobs=2)
    assert len(stopped) == 1 and len(getattr(got.value, "files", [])) == 16


_SIGNAL_IN_A_FORK = r"""
import os, signal, sys
from pathlib import Path
from onnxlint.support.interrupt import signals_interrupt

armed = [True]

def hook():  # as logging's and concurrent.futures' at-fork hooks: Python code in the parent, after each fork
    if armed[0]:
        armed[0] = False
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        for _ in range(1000):  # the signal's handler runs here, inside the hook
            pass

os.register_at_fork(after_in_parent=hook)
try:
    with signals_interrupt():
        if sys.argv[2] == "native":
            from onnxlint.model.loading import native
            native.run_in_child("a test", lambda: b"x")
        elif sys.argv[2] == "bounded":
            from onnxlint.support import bounded_child
            bounded_child.run([sys.executable, "-c", "pass"], timeout=60, memory=1 << 34)
        else:
            from onnxlint.config.settings import Settings
            from onnxlint.linting import linter
            settings = Settings()
            linter.lint_paths(sorted(Path(sys.argv[3]).glob("*.onnx")), lambda f: settings, jobs=2)
    print("went on")
except KeyboardInterrupt as exc:
    print("stopped", type(exc).__name__, getattr(exc, "exit_code", 130))
"""


@pytest.mark.parametrize("fork", ["native", "bounded", "pool"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_during_a_forks_python_hooks_stops_the_run(tmp_path, fork, sig):
    """os.fork() runs the at-fork hooks of logging and concurrent.futures in the parent, where an exception a signal's
    handler raises is printed ("Exception ignored in: <function _releaseLock ...>") and dropped: a Ctrl-C or a CI
    timeout landing as onnxlint forked onnx's child, the numeric check's or a pool's worker was lost, and the run
    went on to exit 0 or 1 with a traceback on stderr. It is held for the fork and raised after it."""
    for k in range(16):
        onnx.save(make_model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]),
                  tmp_path / f"m{k:02d}.onnx")
    out = subprocess.run([sys.executable, "-c", _SIGNAL_IN_A_FORK, sig, fork, str(tmp_path)], capture_output=True,
                         text=True, timeout=120, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    kind = "KeyboardInterrupt" if sig == "SIGINT" and fork != "pool" else "Interrupted"
    assert out.stdout.split() == ["stopped", kind, str(128 + getattr(signal, sig))], out.stdout + out.stderr
    assert "Exception ignored" not in out.stderr, out.stderr


def test_a_ctrl_c_while_the_exit_hook_waits_for_the_check_server_ends_it_quietly():
    """After a --fix was written, the exit hook waits for the numeric check's server to leave; a Ctrl-C then escaped
    it ("Exception ignored in atexit callback: <function _close ...> KeyboardInterrupt", a traceback after the
    report, 4 in 50 random Ctrl-Cs of a --fix). The server is killed and the hook returns."""
    from onnxlint.fixers import equivalence

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, start_new_session=True)
    real_wait, calls = proc.wait, []

    def wait(timeout=None):
        calls.append(timeout)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real_wait(timeout)

    proc.wait = wait  # type: ignore[method-assign]
    try:
        equivalence._close(proc)
    except KeyboardInterrupt:
        proc.kill()
        real_wait()
        pytest.fail("the exit hook let the Ctrl-C out")
    assert proc.returncode == -signal.SIGKILL and calls == [2, 10]


def test_an_interrupted_run_leaves_the_report_file_as_it_was(tmp_path):
    """A run stopped by a signal reports the models finished before it; written to -o, that report replaced the
    last whole one and read as a whole run's (SARIF's executionSuccessful true, no results for the models never
    reached): a SARIF upload after a CI timeout (`if: always()`) closed their alerts. -o is left as it was, and the
    message says so; standard output still gets what was finished."""
    report = tmp_path / "results.sarif"
    report.write_text("the last whole run's\n")
    rc, out, err, took, left = _run_and_signal(tmp_path, signal.SIGTERM, ["--format", "sarif", "-o", str(report)], False)
    assert rc == 143 and "Traceback" not in err, (rc, err)
    assert report.read_text() == "the last whole run's\n" and out == ""
    assert f"-o {report} was left as it was (a report of those alone would read as the whole run's)" in err, err
    assert left == []
