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
the kernel to kill them when the parent dies (Linux's PR_SET_PDEATHSIG; a kept worker forked by a thread other than
the main one does not, see _Worker), and leave when their pipe closes.

Each call is bounded in the child: CALL_CPU_SECONDS of CPU time, and CALL_MEMORY (plus CALL_MEMORY_PER_BYTE for
each byte of its input) of address space beyond what the child holds when the call starts. The callers' budget
walk bounds the work they know of; onnx's C++ code has paths it does not see: onnx before 1.23 gives an output
as many dimensions as its shape input is declared long, so inferring a ConstantOfShape of 150 bytes whose shape
input is declared [100000000] fills gigabytes (onnx#8321), and onnx's version converter infers shapes too. A call
past its limit ends as NativeLimit, one line for that model, and the run goes on."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import struct
import sys
from typing import Any, Callable, Iterator

from onnxlint.model.loading import endless

FORK_BYTES = 16 << 20  # above this a call forks a child that already holds the input
# far past what a call within the callers' budget takes (benchmarks/README.md, "Native calls' limits")
CALL_CPU_SECONDS = 60
CALL_MEMORY = 2 << 30  # address space one call may add to what its child holds, and per byte of its input:
CALL_MEMORY_PER_BYTE = 64
_OUT_OF_MEMORY = 3  # the exit code of a child whose call raised MemoryError
_ENABLED = hasattr(os, "fork") and sys.platform != "win32"
_HEAD = struct.Struct("<BBQ")  # kind, flags, payload length
_ANSWER = struct.Struct("<BQQ")  # status (0 answer, 1 exception), first part length, second part length
_INFER, _CHECK_BYTES, _CHECK_PATH, _INFER_FALLBACK, _INFER_NODE, _FUNCTION_BODY, _INLINE_INFER, _CONVERT = range(1, 9)
WHAT = {_INFER: "onnx's shape inference", _CHECK_BYTES: "onnx's checker", _CHECK_PATH: "onnx's checker",
        _INFER_FALLBACK: "onnx's shape inference", _INFER_NODE: "onnx's shape inference",
        _FUNCTION_BODY: "onnx's function builder", _INLINE_INFER: "onnx's function inliner",
        _CONVERT: "onnx's version converter"}
# the calls that run onnx's shape inference (the version converter and the inliner's caller too): screened by
# endless.screen for inputs on which it never returns
_INFERRING = frozenset((_INFER, _INFER_FALLBACK, _INFER_NODE, _INLINE_INFER, _CONVERT))
_ERROR = struct.Struct("<QQ")  # an exception inside a fallback answer: its class name's length, its text's
# a pipe's buffer (Linux's F_SETPIPE_SZ; 64 KiB by default, 1 MiB the most an unprivileged process may ask):
# a 10 MB model through a 64 KiB pipe is 160 wake-ups of each side, each a context switch
PIPE_BYTES = 1 << 20


class NativeCrash(Exception):
    """The child running an onnx C++ call died (a signal, or an exit without answering): one line, naming the
    call and how it ended."""


class NativeLimit(NativeCrash):
    """The child's call ran past its CPU time or its memory (CALL_CPU_SECONDS, CALL_MEMORY), or was not run because
    an earlier call for the same model did (one_model): "onnx's shape inference stopped at its memory limit (2.1
    GB) on this model", "onnx's version converter not run: onnx's shape inference stopped at ..."."""


class NativeError(Exception):
    """An exception onnx raised in the child; its class is made with the original exception's name."""


def raised(exc: BaseException, cls: type[BaseException]) -> bool:
    """Whether exc is what a call raising cls answers: cls itself (run in-process, where there is no fork) or the
    NativeError a child sends for it (the same class name; the class stays in the child)."""
    return isinstance(exc, cls) or (isinstance(exc, NativeError) and type(exc).__name__ == cls.__name__)


_MODEL: list[NativeLimit] | None = None  # inside one_model: the limit a call for this model met (at most one)
# inside one_model: [True] once a payload of the whole model passed endless.screen; the model's other payloads
# (its inferred copy, the converter's) hold the same nodes, so they are not parsed and walked again
_SCREENED: list[bool] | None = None


@contextlib.contextmanager
def one_model() -> Iterator[None]:
    """The native calls made for one model. Once one runs past its limit, the later ones answer NativeLimit at
    once: a model that exhausts onnx's inference once would exhaust it again for every node the optimizer
    re-infers (each a new child filling its limit: a minute for 20 nodes). Outside, every call runs."""
    global _MODEL, _SCREENED
    outer, _MODEL = _MODEL, []
    outer_screened, _SCREENED = _SCREENED, []
    try:
        yield
    finally:
        _MODEL, _SCREENED = outer, outer_screened


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


def infer_node_outputs(node: Any, domain: str, opset: int, types: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """onnx.shape_inference.infer_node_outputs for node (a NodeProto) with the schema of its op in domain ("" for
    ONNX's) at opset, given its inputs' TypeProtos and the TensorProtos of those whose values are known, in a
    child: output name -> TypeProto, or what onnx raised (a NativeError), or NativeCrash. An op's inference given
    input data takes paths the model's own inference never took (a Reshape of a folded shape)."""
    import onnx

    box = onnx.ModelProto()
    box.opset_import.add(domain=domain, version=opset)
    box.graph.node.append(node)
    box.graph.value_info.extend(onnx.helper.make_value_info(k, t) for k, t in types.items())
    box.graph.initializer.extend(data.values())
    answer = onnx.GraphProto.FromString(_call(_INFER_NODE, 0, box.SerializeToString()))
    return {vi.name: vi.type for vi in answer.value_info}


def function_body(node: Any, domain: str, opset: int, since: int, types: list[Any]) -> bytes:
    """The FunctionProto bytes onnx builds for node's context-dependent function (the body depends on the
    node's attributes and input types, TypeProto or None each: C++ reading the model's node), with the schema of
    its op in domain at opset, for the newest opset from `opset` down to `since` for which onnx has one (b"" when
    none), in a child; NativeError or NativeCrash otherwise."""
    import onnx

    box = onnx.ModelProto(model_version=since)
    box.opset_import.add(domain=domain, version=opset)
    box.graph.node.append(node)
    box.graph.input.extend(onnx.helper.make_value_info(str(i), t) if t is not None else onnx.ValueInfoProto(name=str(i))
                           for i, t in enumerate(types))
    return _call(_FUNCTION_BODY, 0, box.SerializeToString())


def inline_and_infer(model: Any) -> Any:
    """onnx.inliner.inline_local_functions, then lenient shape inference, of model (a ModelProto) in a child: the
    inlined and inferred ModelProto, or what onnx raised (a NativeError), or NativeCrash."""
    import onnx

    return onnx.load_from_string(_call(_INLINE_INFER, 0, model.SerializeToString()))


def convert_version(model: Any, target: int) -> None:
    """Whether onnx.version_converter.convert_version(model, target) converts model (a ModelProto): returns when
    it does, raises what it raised (a NativeError) or NativeCrash when it does not. The converted model is not
    sent back: its only caller asks whether the converter can convert it (the fixer converts in its own child)."""
    _call(_CONVERT, target, model.SerializeToString())


def check_model(target: Any) -> None:
    """onnx.checker.check_model(target, full_check=False) in a child (target: bytes, a path or a ModelProto);
    raises what the checker raised (a NativeError of the same class name), or NativeCrash."""
    if isinstance(target, (str, os.PathLike)):
        _call(_CHECK_PATH, 0, os.fsencode(target))
    else:
        _call(_CHECK_BYTES, 0, target if isinstance(target, bytes) else target.SerializeToString())


# ----------------------------------------------------------------------------- the child's side


def _input_bytes(kind: int, payload: bytes) -> int:
    """The size of a call's input: its payload, or the file a path names (the checker reads it)."""
    if kind != _CHECK_PATH:
        return len(payload)
    try:
        return os.stat(os.fsdecode(payload)).st_size
    except OSError:
        return 0


def _memory_allowance(kind: int, payload: bytes) -> int:
    return CALL_MEMORY + CALL_MEMORY_PER_BYTE * _input_bytes(kind, payload)


def _bounded_run(kind: int, flags: int, payload: bytes) -> bytes:
    """_run in a child, under the call's limits (_bound); a MemoryError ends the child with _OUT_OF_MEMORY,
    which the parent reads as NativeLimit (an onnx call that ran out is not onnx's verdict on the model)."""
    return bounded(lambda: _run(kind, flags, payload), _memory_allowance(kind, payload), CALL_CPU_SECONDS)()


def bounded(work: Callable[[], bytes], memory: int, cpu: int | None) -> Callable[[], bytes]:
    """work, to run in a child (run_in_child(what, bounded(work, memory, cpu), memory)) under at most `memory` more
    address space and `cpu` more seconds of CPU time (None: no limit of CPU time) than the child holds and has
    used; a MemoryError ends the child with _OUT_OF_MEMORY, which run_in_child answers as NativeLimit. Where
    there is no fork (run_in_child runs work in-process) work itself: no limit is put on the calling process."""
    if not _ENABLED:
        return work

    def run() -> bytes:
        _bound(memory, cpu)
        try:
            return work()
        except Exception as exc:
            _out_of_memory(exc)
            raise
    return run


def _out_of_memory(exc: BaseException) -> None:
    """End the child with _OUT_OF_MEMORY when exc says an allocation failed: a MemoryError, or another exception
    whose whole text is a C++ std::bad_alloc's (not one that merely quotes it: a node may be named so). Answered
    as an exception, a failure to allocate would read as onnx's verdict on the model."""
    if isinstance(exc, MemoryError) or str(exc).strip() == "std::bad_alloc":
        os._exit(_OUT_OF_MEMORY)


_STARTED_UNDER: dict[int, tuple[int, int]] = {}  # the limits the child was forked with, by resource


def _bound(memory: int, cpu: int | None) -> None:
    """From now, at most `cpu` more seconds of CPU time (None: as it was) and `memory` more address space (Linux:
    elsewhere RLIMIT_AS is not kept) than the child has used and holds; never past a limit it was forked under.
    The soft limits only: past CPU time the kernel sends SIGXCPU, which ends the child; past the address space
    an allocation fails (MemoryError)."""
    import resource

    wanted = {}
    if cpu is not None:
        used = resource.getrusage(resource.RUSAGE_SELF)
        wanted[resource.RLIMIT_CPU] = math.ceil(used.ru_utime + used.ru_stime) + cpu
    if sys.platform.startswith("linux"):
        with open("/proc/self/statm", "rb") as f:
            wanted[resource.RLIMIT_AS] = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") + memory
    for which, soft in wanted.items():
        start_soft, hard = _STARTED_UNDER.setdefault(which, resource.getrlimit(which))
        for cap in (start_soft, hard):
            if cap != resource.RLIM_INFINITY:
                soft = min(soft, cap)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def _run(kind: int, flags: int, payload: bytes) -> bytes:
    import onnx

    if kind == _INFER_FALLBACK:
        from onnx.onnx_cpp2py_export import shape_inference as C

        try:
            return b"\0" + C.infer_shapes(payload, True, True, False)
        except Exception as strict:  # noqa: BLE001 - its text goes back; the lenient pass runs
            _out_of_memory(strict)  # the call's limit, not strict inference's verdict: lenient would meet it too
            first = _pack_error(strict)
        try:
            return b"\1" + first + C.infer_shapes(payload, False, False, False)
        except Exception as lenient:  # noqa: BLE001
            _out_of_memory(lenient)
            return b"\2" + first + _pack_error(lenient)
    if kind == _INFER:
        from onnx.onnx_cpp2py_export import shape_inference as C

        return C.infer_shapes(payload, bool(flags & 1), bool(flags & 2), bool(flags & 4))
    if kind in (_INFER_NODE, _FUNCTION_BODY):
        return _run_on_node(kind, onnx.ModelProto.FromString(payload))
    if kind == _CONVERT:
        from onnx.onnx_cpp2py_export import version_converter

        with _silenced():  # the converter prints its warnings to fd 2, which the child shares with the parent
            version_converter.convert_version(payload, flags)
        return b""
    if kind == _INLINE_INFER:
        from onnx.onnx_cpp2py_export import inliner
        from onnx.onnx_cpp2py_export import shape_inference as C

        return C.infer_shapes(inliner.inline_local_functions(payload, False), False, False, False)
    onnx.checker.check_model(os.fsdecode(payload) if kind == _CHECK_PATH else payload, full_check=False)
    return b""


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """fd 1 and fd 2 to /dev/null for the block: what onnx's C++ prints there would land in the parent's report."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (null, *saved):
            os.close(fd)


def _run_on_node(kind: int, box: Any) -> bytes:
    """The child's side of infer_node_outputs and function_body: the node, its schema's domain and opset, and its
    inputs come in a ModelProto (graph.node[0], opset_import[0], value_info / input, initializer; model_version:
    the oldest opset function_body tries)."""
    import onnx

    node, domain, opset = box.graph.node[0], box.opset_import[0].domain, box.opset_import[0].version
    schema: Any = onnx.defs.get_schema(node.op_type, opset, domain)  # its stubs lack half its API
    if kind == _INFER_NODE:
        out = onnx.shape_inference.infer_node_outputs(schema, node, {vi.name: vi.type for vi in box.graph.value_info},
                                                      {t.name: t for t in box.graph.initializer})
        return onnx.GraphProto(value_info=[onnx.helper.make_value_info(k, t) for k, t in out.items()]).SerializeToString()
    types = [vi.type.SerializeToString() if vi.HasField("type") else b"" for vi in box.graph.input]
    node_bytes, raw = node.SerializeToString(), b""
    for version in range(opset, box.model_version - 1, -1):
        raw = schema.get_context_dependent_function_with_opset_version(version, node_bytes, types)
        if raw:
            break
    return raw if isinstance(raw, bytes) else raw.SerializeToString() if raw is not None else b""


def _answer(out: Any, kind: int, flags: int, payload: bytes) -> None:
    _answer_with(out, lambda: _bounded_run(kind, flags, payload))


def _answer_with(out: Any, work: Callable[[], bytes]) -> None:
    try:
        result = work()
    except Exception as exc:  # noqa: BLE001 - every onnx error goes back to the parent, as it is
        name, text = type(exc).__name__.encode(), str(exc).encode("utf-8", "surrogateescape")
        out.write(_ANSWER.pack(1, len(name), len(text)) + name + text)
    else:
        out.write(_ANSWER.pack(0, len(result), 0))
        out.write(result)
    out.flush()


def _become_child(die_with_parent: bool = True) -> None:
    """In a new child: an interrupt is the parent's to handle, and the child dies with its parent. No cyclic
    collection: it would touch every object the parent shares with the child, copying their pages.
    die_with_parent=False: no PR_SET_PDEATHSIG (see _Worker), the closed pipe alone ends it."""
    import gc

    gc.disable()
    _STARTED_UNDER.clear()  # what a kept worker recorded is not this child's
    null = os.open(os.devnull, os.O_WRONLY)  # its answers go down a pipe: what onnx's C++ prints to stdout would
    os.dup2(null, 1)  # land in the parent's report (JSON, SARIF), so stdout goes nowhere
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "faulthandler" in sys.modules:  # a crash here is reported by the parent in one line, not as a dump
        sys.modules["faulthandler"].disable()
    if die_with_parent and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            if os.getppid() == 1:  # the parent died before prctl: nothing would kill this child
                os._exit(0)
        except (OSError, AttributeError):
            pass


def _serve(requests: int, answers: int, first: tuple[int, int, bytes] | None = None) -> None:
    """The kept worker's loop: a request, its answer, until the request pipe closes. first: the request the
    worker was forked for, answered first from the memory it shares with the parent (not sent down the pipe)."""
    inp, out = os.fdopen(requests, "rb"), os.fdopen(answers, "wb")
    if first is not None:
        _answer(out, *first)
        first = None
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
    """first: the request it is started for, answered before any other (its payload is not copied down the
    pipe: the child has it from the fork).

    The kernel sends PR_SET_PDEATHSIG when the *thread* that forked the child ends, not the process: a worker
    forked by a thread of the API's caller (a pool's, a web server's request thread) was killed when that thread
    ended, and the next model's check read as "onnx's checker crashed on this model (signal 9)", an OLX001 on a
    valid model. Forked from any thread but the main one, the worker goes without it: it leaves when its request
    pipe closes (the parent's end closes when the parent dies, however it dies), or once its one call is done."""

    def __init__(self, first: tuple[int, int, bytes] | None = None) -> None:
        import threading

        self.owner = os.getpid()
        req_r, req_w = _pipe()
        ans_r, ans_w = _pipe()
        pid = _fork((req_w, ans_r), lambda: _serve(req_r, ans_w, first),
                    die_with_parent=threading.current_thread() is threading.main_thread())
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
    if _MODEL:
        raise NativeLimit(f"{WHAT[kind]} not run: {_MODEL[0]}")
    try:
        whole = kind != _INFER_NODE  # a node's box is screened each time: it is not the model
        if kind in _INFERRING and not (whole and _SCREENED):
            why = endless.screen(payload)
            if why:
                raise NativeLimit(f"{WHAT[kind]} not run: {why}")
            if whole and _SCREENED is not None:
                _SCREENED.append(True)
        if not _ENABLED:  # in-process: a call past its limit has none to meet
            return _run(kind, flags, payload)
        return _call_in_child(kind, flags, payload)
    except NativeLimit as exc:
        if _MODEL is not None:
            _MODEL.append(exc)
        raise


def _call_in_child(kind: int, flags: int, payload: bytes) -> bytes:
    if len(payload) > FORK_BYTES:
        return _call_forked(kind, flags, payload)
    global _WORKER
    worker = _WORKER
    if worker is not None and worker.owner != os.getpid():  # inherited by a forked pool worker: not ours
        worker = _WORKER = None
    started = worker is None
    if worker is None:
        worker = _WORKER = _Worker((kind, flags, payload))
        _at_exit()
    try:
        if not started:
            worker.requests.write(_HEAD.pack(kind, flags, len(payload)))
            worker.requests.write(payload)
            worker.requests.flush()
        return _read_answer(worker.answers, WHAT[kind])
    except (NativeCrash, BrokenPipeError, ConnectionResetError):
        _WORKER = None
        crash = _crash(WHAT[kind], worker.pid, _memory_allowance(kind, payload))  # reaps it
        worker.close(reap=False)
        raise crash from None
    except NativeError:  # onnx's own exception, answered in full: the worker is fine
        raise
    except BaseException:  # an interrupt while the worker computes: it is killed (its answer would come later)
        _WORKER = None
        _reap(worker.pid, wait=False)
        worker.close(reap=False)
        raise


def _fork(parent_ends: tuple[int, ...], work: Callable[[], None], die_with_parent: bool = True) -> int:
    """Fork a child that closes the parent's pipe ends, runs work and exits (1 on any exception: a broken pipe
    or anything else, the parent sees the end of its pipe); the child's pid. die_with_parent: _become_child's."""
    from onnxlint.support import interrupt

    _warm()
    pid = -1
    try:
        with interrupt.held():  # a signal during the fork's Python hooks would be dropped there
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                code = 0
                try:
                    for fd in parent_ends:
                        os.close(fd)
                    _become_child(die_with_parent)
                    work()
                except BaseException:  # noqa: BLE001
                    code = 1
                finally:
                    os._exit(code)
    except KeyboardInterrupt:  # held until the fork was done: the child is not wanted
        if pid > 0:
            _reap(pid, wait=False)
        raise
    return pid


def _call_forked(kind: int, flags: int, payload: bytes) -> bytes:
    return run_in_child(WHAT[kind], lambda: _bounded_run(kind, flags, payload), _memory_allowance(kind, payload))


def run_in_child(what: str, work: Callable[[], bytes], memory: int | None = None, cpu: int | None = None) -> bytes:
    """work() in a child forked for the call (it has the parent's memory: nothing is sent down the pipe), its
    bytes back; what work raised comes back as a NativeError of the same class name and text, a child that
    dies as NativeCrash ("<what> crashed on this model (signal 11)"). In-process where there is no fork. memory,
    cpu: the limits a work that runs under bounded's has (its end past one is then NativeLimit, naming it; cpu
    None: CALL_CPU_SECONDS)."""
    if not _ENABLED:
        return work()
    ans_r, ans_w = _pipe()
    pid = _fork((ans_r,), lambda: _answer_with(os.fdopen(ans_w, "wb"), work))
    os.close(ans_w)
    try:
        with os.fdopen(ans_r, "rb") as answers:
            result = _read_answer(answers, what)
    except NativeCrash:
        raise _crash(what, pid, memory, cpu) from None
    except BaseException:
        _reap(pid, wait=False)
        raise
    _reap(pid, wait=True)
    return result


def _pipe() -> tuple[int, int]:
    """os.pipe(), its buffer PIPE_BYTES where the system allows: a model sent down it, or an inferred one sent back,
    moves in 1 MiB steps instead of 64 KiB ones (a sixteenth of the wake-ups and context switches of each side).
    Same bytes either way; where the size is refused the default stays."""
    import fcntl  # only called where there is fork (no Windows)

    r, w = os.pipe()
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if setpipe is not None:
        try:
            fcntl.fcntl(w, setpipe, PIPE_BYTES)
        except OSError:  # past /proc/sys/fs/pipe-max-size, or the user's pipe quota: the default buffer
            pass
    return r, w


def _read_answer(answers: Any, what: str) -> bytes:
    head = answers.read(_ANSWER.size)
    if len(head) < _ANSWER.size:
        raise NativeCrash(what)
    status, n1, n2 = _ANSWER.unpack(head)
    first = answers.read(n1)
    second = answers.read(n2)
    if len(first) < n1 or len(second) < n2:
        raise NativeCrash(what)
    if status == 0:
        return first
    raise type(first.decode("utf-8", "replace"), (NativeError,), {})(second.decode("utf-8", "surrogateescape"))


def _crash(what: str, pid: int, memory: int | None = None, cpu: int | None = None) -> NativeCrash:
    """How the child ended, in one line; NativeLimit where it ran past a limit of _bounded_run's (memory: the
    call's allowance, where it ran under one)."""
    status = _reap(pid, wait=True)
    if memory is not None and status is not None:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == getattr(signal, "SIGXCPU", None):
            seconds = cpu if cpu is not None else CALL_CPU_SECONDS
            return NativeLimit(f"{what} stopped at its CPU-time limit ({seconds} s) on this model")
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == _OUT_OF_MEMORY:
            return NativeLimit(f"{what} stopped at its memory limit ({memory / 1e9:.1f} GB) on this model")
    if status is not None and os.WIFSIGNALED(status):
        how = f"signal {os.WTERMSIG(status)}"
    elif status is not None and os.WIFEXITED(status):
        how = f"it exited with code {os.WEXITSTATUS(status)} without answering"
    else:
        how = "it ended without answering"
    return NativeCrash(f"{what} crashed on this model ({how})")


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
        try:
            worker.close()
        except KeyboardInterrupt:  # a Ctrl-C at exit while it leaves: ended now, no traceback from the exit hook
            _reap(worker.pid, wait=False)
