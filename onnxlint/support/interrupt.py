"""Stopping a run on SIGINT or SIGTERM: within a second, printing what was finished, leaving no child process.

Ctrl-C sends SIGINT to the whole foreground process group; a CI timeout sends SIGTERM (to the process, or the
group). Python turns SIGINT into KeyboardInterrupt but dies on SIGTERM at once, printing nothing and leaving a
process pool's workers behind; and a pool used as a context manager waits for all queued work on the way out.
Here SIGTERM is raised like SIGINT (Interrupted), pool workers ignore SIGINT (the parent decides), and an
interrupted pool is stopped by killing its workers (stop_pool); onnx's native children (loading.native) die
with their parent."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any, Iterator


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal; files: the reports finished before it (in order), for the caller to print."""

    def __init__(self, signum: int = signal.SIGINT, files: list[Any] | None = None):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.files: list[Any] = list(files or [])

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # as a shell reports a process a signal ended: 130 for SIGINT, 143 for SIGTERM


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def interrupted(exc: BaseException, files: list[Any]) -> Interrupted:
    """exc (an Interrupted or a plain KeyboardInterrupt) as an Interrupted holding files, what was finished."""
    signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
    return Interrupted(signum, files)


def _raise_interrupted(signum: int, _frame: Any) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """While inside: SIGTERM raises Interrupted (as SIGINT raises KeyboardInterrupt). Only the main thread can
    set a handler: elsewhere (a library caller's thread) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM arriving inside are raised as it ends, in the code around it. For a fork (os.fork, a
    process pool starting its workers, subprocess with preexec_fn): the at-fork hooks of logging and
    concurrent.futures run Python code in the parent, where an exception a signal's handler raises is printed
    ("Exception ignored in: <function _releaseLock ...>") and dropped, and the run went on as if never stopped
    (exit 0 or 1 after Ctrl-C or a CI timeout's SIGTERM). Only the raising handlers (Python's KeyboardInterrupt,
    signals_interrupt's) are held, in the main thread; a forked child leaves its handlers to its own code."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    kept: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if handler is signal.default_int_handler or handler is _raise_interrupted:
            kept[signum] = handler
            signal.signal(signum, lambda s, _f: came.append(s))
    parent = os.getpid()
    try:
        yield
    finally:
        if os.getpid() == parent:
            for number, previous in kept.items():
                signal.signal(number, previous)
            if came:
                kept[came[0]](came[0], None)  # raises as the signal itself would have


def pool_worker_init() -> None:
    """A pool worker leaves SIGINT to the parent (the terminal sends it to the whole group) and dies on SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop_pool(pool: Any) -> None:
    """Stop a ProcessPoolExecutor now: queued work is cancelled and running workers are killed (their native
    children die with them), instead of shutdown's wait for every queued model."""
    # read before shutdown, which sets both attributes to None (read after it, the pop and the joins below never ran)
    manager = getattr(pool, "_executor_manager_thread", None)
    workers = list((getattr(pool, "_processes", None) or {}).values())
    kill = getattr(pool, "terminate_workers", None)  # Python 3.14
    if kill is None:
        for proc in workers:
            with contextlib.suppress(OSError, AttributeError):
                proc.kill()
    else:
        with contextlib.suppress(Exception):
            kill()
    with contextlib.suppress(Exception):
        pool.shutdown(wait=False, cancel_futures=True)
    # the pool's manager thread closes its wake-up pipe on its way out; Python's exit hook for process pools
    # writes to that pipe, and racing the close it died with EBADF in threading._shutdown (a traceback after the
    # report, seen in CI on 3.10, 3.12 and 3.13). The hook is not to wake this pool's manager at all: shutdown
    # just woke it, its killed workers wake it too, and the interpreter's shutdown still waits for the thread
    if manager is not None:
        with contextlib.suppress(Exception):
            from concurrent.futures import process

            process._threads_wakeups.pop(manager, None)
    for proc in workers:
        with contextlib.suppress(Exception):
            proc.join(1)
    if manager is not None:
        with contextlib.suppress(Exception):
            manager.join(1)
