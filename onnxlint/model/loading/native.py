"""onnx's C++ checker and shape inference, run where a crash costs one model, not the run.

Some models make onnx's C++ code crash (a segfault in an op's shape inference, found by benchmarks/fuzz.py):
in-process, that loses every result of the run, and under a process pool it is a BrokenProcessPool traceback.
Here the native call runs in a child process, and a child that dies answers NativeCrash, a one-line message
("onnx's shape inference crashed on this model (signal 11)") that the caller records for that model.

Two kinds of child, chosen by the size of what the call is given:
- a worker forked once per process (the CLI's, or a pool worker's) and kept: each call sends its bytes down a
  pipe and reads the answer (no fork per call); a crash ends it, and the next call forks a new one;
- for inputs over FORK_BYTES, a child forked for the one call, which has the bytes already (fork shares the
  parent's memory): copying hundreds of MB down a pipe would cost more than the fork.
Where there is no fork (Windows) the calls run in-process, as before.

The children never outlive their parent: they ignore SIGINT (the parent decides what an interrupt ends), ask
the kernel to kill them when the parent dies (Linux's PR_SET_PDEATHSIG), and leave when their pipe closes."""

from __future__ import annotations

import os
import signal
import struct
import sys
from typing import Any, Callable

FORK_BYTES = 16 << 20  # above this a call forks a child that already holds the input
_ENABLED = hasattr(os, "fork") and sys.platform != "win32"
_HEAD = struct.Struct("<BBQ")  # kind, flags, payload length
_ANSWER = struct.Struct("<BQQ")  # status (0 answer, 1 exception), first part length, second part length
_INFER, _CHECK_BYTES, _CHECK_PATH, _INFER_FALLBACK = 1, 2, 3, 4
WHAT = {_INFER: "onnx's shape inference", _CHECK_BYTES: "onnx's checker", _CHECK_PATH: "onnx's checker",
        _INFER_FALLBACK: "onnx's shape inference"}
_ERROR = struct.Struct("<QQ")  # an exception inside a fallback answer: its class name's length, its text's


class NativeCrash(Exception):
    """The child running an onnx C++ call died (a signal, or an exit without answering): one line, naming the
    call and how it ended."""


class NativeError(Exception):
    """An exception onnx raised in the child; its class is made with the original exception's name."""


def infer_shapes(model: Any, check_type: bool = False, strict_mode: bool = False, data_prop: bool = False) -> Any:
    """onnx.shape_inference.infer_shapes(model, ...) (a ModelProto or its bytes) in a child: the inferred
    ModelProto, or what onnx raised (as a NativeError of the same class name), or NativeCrash."""
    import onnx

    data = model if isinstance(model, bytes) else model.SerializeToString()
    flags = check_type | strict_mode << 1 | data_prop << 2
    return onnx.load_from_string(_call(_INFER, flags, data))


def infer_strict_then_lenient(data: bytes) -> tuple[Any, Exception | None, Exception | None]:
    """Strict inference (check_type, strict_mode) and, only when it raises, lenient inference, in one request
    to the child (one round trip where two would be: each costs two wake-ups of a busy machine's scheduler).
    (the inferred ModelProto or None, strict's exception or None, lenient's exception or None); NativeCrash
    when the child dies (the caller may ask for the lenient one alone)."""
    import onnx

    answer = _call(_INFER_FALLBACK, 0, data)
    if answer[:1] == b"\0":
        return onnx.load_from_string(answer[1:]), None, None
    strict, at = _unpack_error(answer, 1)
    if answer[:1] == b"\1":
        return onnx.load_from_string(answer[at:]), strict, None
    lenient, _ = _unpack_error(answer, at)
    return None, strict, lenient


def _pack_error(exc: BaseException) -> bytes:
    name, text = type(exc).__name__.encode(), str(exc).encode("utf-8", "surrogateescape")
    return _ERROR.pack(len(name), len(text)) + name + text


def _unpack_error(buf: bytes, at: int) -> tuple[Exception, int]:
    n1, n2 = _ERROR.unpack_from(buf, at)
    at += _ERROR.size
    name, text = buf[at:at + n1].decode("utf-8", "replace"), buf[at + n1:at + n1 + n2]
    return type(name, (NativeError,), {})(text.decode("utf-8", "surrogateescape")), at + n1 + n2


def check_model(target: Any) -> None:
    """onnx.checker.check_model(target, full_check=False) in a child (target: bytes, a path or a ModelProto);
    raises what the checker raised (a NativeError of the same class name), or NativeCrash."""
    if isinstance(target, (str, os.PathLike)):
        _call(_CHECK_PATH, 0, os.fsencode(target))
    else:
        _call(_CHECK_BYTES, 0, target if isinstance(target, bytes) else target.SerializeToString())


# ----------------------------------------------------------------------------- the child's side


def _run(kind: int, flags: int, payload: bytes) -> bytes:
    import onnx

    if kind == _INFER_FALLBACK:
        from onnx.onnx_cpp2py_export import shape_inference as C

        try:
            return b"\0" + C.infer_shapes(payload, True, True, False)
        except Exception as strict:  # noqa: BLE001 - its text goes back; the lenient pass runs
            first = _pack_error(strict)
        try:
            return b"\1" + first + C.infer_shapes(payload, False, False, False)
        except Exception as lenient:  # noqa: BLE001
            return b"\2" + first + _pack_error(lenient)
    if kind == _INFER:
        from onnx.onnx_cpp2py_export import shape_inference as C

        return C.infer_shapes(payload, bool(flags & 1), bool(flags & 2), bool(flags & 4))
    onnx.checker.check_model(os.fsdecode(payload) if kind == _CHECK_PATH else payload, full_check=False)
    return b""


def _answer(out: Any, kind: int, flags: int, payload: bytes) -> None:
    try:
        result = _run(kind, flags, payload)
    except Exception as exc:  # noqa: BLE001 - every onnx error goes back to the parent, as it is
        name, text = type(exc).__name__.encode(), str(exc).encode("utf-8", "surrogateescape")
        out.write(_ANSWER.pack(1, len(name), len(text)) + name + text)
    else:
        out.write(_ANSWER.pack(0, len(result), 0))
        out.write(result)
    out.flush()


def _become_child() -> None:
    """In a new child: an interrupt is the parent's to handle, and the child dies with its parent. No cyclic
    collection: it would touch every object the parent shares with the child, copying their pages."""
    import gc

    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "faulthandler" in sys.modules:  # a crash here is reported by the parent in one line, not as a dump
        sys.modules["faulthandler"].disable()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            if os.getppid() == 1:  # the parent died before prctl: nothing would kill this child
                os._exit(0)
        except (OSError, AttributeError):
            pass


def _serve(requests: int, answers: int) -> None:
    """The kept worker's loop: a request, its answer, until the request pipe closes."""
    inp, out = os.fdopen(requests, "rb"), os.fdopen(answers, "wb")
    while True:
        head = inp.read(_HEAD.size)
        if len(head) < _HEAD.size:
            return
        kind, flags, n = _HEAD.unpack(head)
        payload = inp.read(n)
        if len(payload) < n:
            return
        _answer(out, kind, flags, payload)


# ----------------------------------------------------------------------------- the parent's side


class _Worker:
    def __init__(self) -> None:
        self.owner = os.getpid()
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        pid = _fork((req_w, ans_r), lambda: _serve(req_r, ans_w))
        os.close(req_r)
        os.close(ans_w)
        self.pid = pid
        self.requests = os.fdopen(req_w, "wb")
        self.answers = os.fdopen(ans_r, "rb")

    def close(self, reap: bool = True) -> None:
        for f in (self.requests, self.answers):
            try:
                f.close()
            except OSError:
                pass
        if reap and self.owner == os.getpid():
            _reap(self.pid, wait=True)  # it leaves once its request pipe is closed


_WORKER: _Worker | None = None


def _warm() -> None:
    """onnx builds its registry of op schemas on first use: built here, before a fork, the children
    share it with the parent, which reads schemas while linting anyway, instead of building their own too."""
    import onnx

    onnx.defs.has("Relu")


def _call(kind: int, flags: int, payload: bytes) -> bytes:
    if not _ENABLED:
        return _run(kind, flags, payload)
    if len(payload) > FORK_BYTES:
        return _call_forked(kind, flags, payload)
    global _WORKER
    worker = _WORKER
    if worker is not None and worker.owner != os.getpid():  # inherited by a forked pool worker: not ours
        worker = _WORKER = None
    if worker is None:
        worker = _WORKER = _Worker()
        _at_exit()
    try:
        worker.requests.write(_HEAD.pack(kind, flags, len(payload)))
        worker.requests.write(payload)
        worker.requests.flush()
        return _read_answer(worker.answers, kind)
    except (NativeCrash, BrokenPipeError, ConnectionResetError):
        _WORKER = None
        crash = _crash(kind, worker.pid)  # reaps it
        worker.close(reap=False)
        raise crash from None
    except NativeError:  # onnx's own exception, answered in full: the worker is fine
        raise
    except BaseException:  # an interrupt while the worker computes: it is killed (its answer would come later)
        _WORKER = None
        _reap(worker.pid, wait=False)
        worker.close(reap=False)
        raise


def _fork(parent_ends: tuple[int, ...], work: Callable[[], None]) -> int:
    """Fork a child that closes the parent's pipe ends, runs work and exits (1 on any exception: a broken pipe
    or anything else, the parent sees the end of its pipe); the child's pid."""
    _warm()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            for fd in parent_ends:
                os.close(fd)
            _become_child()
            work()
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    return pid


def _call_forked(kind: int, flags: int, payload: bytes) -> bytes:
    ans_r, ans_w = os.pipe()
    pid = _fork((ans_r,), lambda: _answer(os.fdopen(ans_w, "wb"), kind, flags, payload))
    os.close(ans_w)
    try:
        with os.fdopen(ans_r, "rb") as answers:
            result = _read_answer(answers, kind)
    except NativeCrash:
        raise _crash(kind, pid) from None
    except BaseException:
        _reap(pid, wait=False)
        raise
    _reap(pid, wait=True)
    return result


def _read_answer(answers: Any, kind: int) -> bytes:
    head = answers.read(_ANSWER.size)
    if len(head) < _ANSWER.size:
        raise NativeCrash(WHAT[kind])
    status, n1, n2 = _ANSWER.unpack(head)
    first = answers.read(n1)
    second = answers.read(n2)
    if len(first) < n1 or len(second) < n2:
        raise NativeCrash(WHAT[kind])
    if status == 0:
        return first
    raise type(first.decode("utf-8", "replace"), (NativeError,), {})(second.decode("utf-8", "surrogateescape"))


def _crash(kind: int, pid: int) -> NativeCrash:
    status = _reap(pid, wait=True)
    if status is not None and os.WIFSIGNALED(status):
        how = f"signal {os.WTERMSIG(status)}"
    elif status is not None and os.WIFEXITED(status):
        how = f"it exited with code {os.WEXITSTATUS(status)} without answering"
    else:
        how = "it ended without answering"
    return NativeCrash(f"{WHAT[kind]} crashed on this model ({how})")


def _reap(pid: int, wait: bool) -> int | None:
    """The child's wait status (None when it is not ours or not known); wait=False kills it first."""
    try:
        if not wait:
            os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError, OSError):
        return None


_REGISTERED = False


def _at_exit() -> None:
    """The kept worker is ended and waited for when the process exits: it leaves no process behind, and its CPU
    time counts in the process's own (what a benchmark's wait4 reads)."""
    global _REGISTERED
    if not _REGISTERED:
        import atexit

        atexit.register(shutdown)
        _REGISTERED = True


def shutdown() -> None:
    """End this process's kept worker (it would also end with the process: its pipe closes)."""
    global _WORKER
    worker, _WORKER = _WORKER, None
    if worker is not None and worker.owner == os.getpid():
        worker.close()
