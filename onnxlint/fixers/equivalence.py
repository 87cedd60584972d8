"""The numeric check: a fixed model must pass the checker and strict shape inference, and a safe fix must
give the original's outputs on the same random inputs (ORT CPU; tolerance per dtype).

The runtimes never run in the linting process: check_equivalent hands both models to a child process
(equivalence_child, one per file, with a time and memory limit), so a native crash in onnxruntime (a real
float16 export segfaults ORT 1.24.4's CPU session) costs that file's fix, not the run over a folder.

Input shapes: `--shape name=1x3x224x224` first, then the declared dims; a symbolic dim (one symbol, one value
across all inputs) takes small sizes in turn until the original runs, and where a dim is symbolic the two
models are compared at two sizes. Everything the runtimes print goes to a captured file descriptor
(`capture_output`), never to stdout.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from onnxlint.fixers import data_links
from onnxlint.fixers.base import REGISTRY, FixError
from onnxlint.model import write_guard
from onnxlint.model.graph import iter_graphs
from onnxlint.model.loading import has_external_data
from onnxlint.support import bounded_child, pychild
from onnxlint.support.errors import clip, first_line, ort_message

# sizes tried for a symbolic dim: batch-like dims (axis 0 only) first 1 then 2; other dims grow until the
# original runs (strided image models need a multiple of 32, a few need the exported size)
BATCH_SIZES = (1, 2)
OTHER_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 224, 256, 320, 512, 640)
MAX_ELEMENTS = 64 * 2**20
MAX_TRIES = 24  # runs of the original while looking for sizes  # a try whose inputs would exceed this many elements is skipped

# (rtol, atol) per output dtype; atol scales with the output's magnitude; integers and bools compare exactly
TOLERANCE = {np.float16: (1e-2, 1e-2), np.float32: (1e-4, 1e-5), np.float64: (1e-9, 1e-12)}


@contextlib.contextmanager
def capture_output() -> Iterator[list[str]]:
    """Redirect fd 1 and fd 2 (and sys.stdout/sys.stderr) to a temporary file for the block, so whatever
    onnx-graphsurgeon, onnxruntime or onnxslim prints (from Python or C++) reaches neither
    stdout nor the terminal. Yields a list that holds the captured text after the block."""
    captured: list[str] = []
    for s in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            s.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no usable fds (embedded): capture at the Python level only
        saved = None
    tmp = tempfile.TemporaryFile(mode="w+b")
    old_out, old_err = sys.stdout, sys.stderr
    try:
        if saved:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
        import io

        buf = io.StringIO()
        sys.stdout = sys.stderr = buf
        try:
            yield captured
        finally:
            sys.stdout, sys.stderr = old_out, old_err
            if saved:
                with contextlib.suppress(Exception):
                    os.fsync(1)
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
            tmp.seek(0)
            captured.append(tmp.read().decode("utf-8", "replace") + buf.getvalue())
    finally:
        if saved:
            for fd in saved:
                os.close(fd)
        tmp.close()


# ------------------------------------------------------------------ inputs


@dataclass
class InputSpec:
    name: str
    dtype: Any
    dims: list  # int (fixed) or str (a symbol; unnamed dims get a per-input symbol)


def input_specs(model: onnx.ModelProto, shapes: dict[str, Sequence[int]] | None = None) -> list[InputSpec]:
    inits = {i.name for i in model.graph.initializer}
    specs = []
    for inp in model.graph.input:
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        tt = inp.type.tensor_type
        dt = helper.tensor_dtype_to_np_dtype(tt.elem_type) if tt.elem_type else np.dtype(np.float32)
        if shapes and inp.name in shapes:
            dims: list = [int(d) for d in shapes[inp.name]]
        else:
            dims = []
            for k, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value") and d.dim_value > 0:
                    dims.append(d.dim_value)
                else:
                    dims.append(d.dim_param if d.HasField("dim_param") and d.dim_param else f"{inp.name}:{k}")
        specs.append(InputSpec(inp.name, dt, dims))
    pins = _channels(model, specs)  # a symbolic channel count a Conv's weight fixes (optimum's num_channels)
    for spec in specs:
        spec.dims = [pins.get(d, d) if isinstance(d, str) else d for d in spec.dims]
    return specs


def _channels(model: onnx.ModelProto, specs: list[InputSpec]) -> dict[str, int]:
    """symbol -> size for a symbolic channel dim (axis 1) of a graph input a Conv reads directly: its weight
    says how many channels it takes (W's dim 1 x group). No size tried for the other symbols could run it."""
    weights = {t.name: t for t in model.graph.initializer}
    by_name = {s.name: s for s in specs}
    pins: dict[str, int] = {}
    for n in model.graph.node:
        if n.op_type != "Conv" or n.domain not in ("", "ai.onnx") or len(n.input) < 2:
            continue
        spec, w = by_name.get(n.input[0]), weights.get(n.input[1])
        if spec is None or w is None or len(spec.dims) < 2 or len(w.dims) < 2 or not isinstance(spec.dims[1], str):
            continue
        group = next((a.i for a in n.attribute if a.name == "group"), 1) or 1
        pins.setdefault(spec.dims[1], int(w.dims[1]) * int(group))
    return pins


def _expression(dim: str) -> ast.expr | None:
    """A dim_param that is arithmetic over other symbols (optimum's `past_sequence_length + sequence_length`):
    its parsed form; None for a plain symbol or anything else."""
    try:
        tree = ast.parse(dim, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(tree, ast.Name):
        return None
    for n in ast.walk(tree):
        if not isinstance(n, (ast.BinOp, ast.Name, ast.Constant, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            return None
        if isinstance(n, ast.Constant) and not isinstance(n.value, int):
            return None
    return tree


def _dim(d: int | str, values: dict[str, int]) -> int:
    """A dim's size: fixed, a symbol's value, or an expression's over the symbols' values."""
    if isinstance(d, int):
        return d
    if d in values:
        return values[d]
    tree = _expression(d)
    return _eval(tree, values) if tree is not None else values[d]


def _eval(n: ast.expr, values: dict[str, int]) -> int:
    if isinstance(n, ast.Constant):
        return n.value if isinstance(n.value, int) else 0  # _expression lets only ints through
    if isinstance(n, ast.Name):
        return values[n.id]
    assert isinstance(n, ast.BinOp)
    a, b = _eval(n.left, values), _eval(n.right, values)
    if isinstance(n.op, ast.Add):
        return a + b
    if isinstance(n.op, ast.Sub):
        return a - b
    return a * b if isinstance(n.op, ast.Mult) else a // max(b, 1)


def _symbols(specs: list[InputSpec]) -> tuple[list[str], set[str]]:
    """The symbols in order, and those only ever seen at axis 0 (batch-like). A dim that is an expression over
    symbols is no symbol of its own: its names are (they take values, the expression follows from them)."""
    order: list[str] = []
    not_batch: set[str] = set()
    for s in specs:
        for k, d in enumerate(s.dims):
            if not isinstance(d, str):
                continue
            tree = _expression(d)
            names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)] if tree is not None else [d]
            for x in names:
                if x not in order:
                    order.append(x)
                if tree is not None or k != 0 or len(s.dims) < 2:
                    not_batch.add(x)
    return order, {x for x in order if x not in not_batch}


def make_feeds(specs: list[InputSpec], values: dict[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for s in specs:
        shape = [_dim(d, values) for d in s.dims]
        dt = np.dtype(s.dtype)
        if np.issubdtype(dt, np.floating):
            feeds[s.name] = rng.standard_normal(shape).astype(dt)
        elif dt == np.bool_:
            feeds[s.name] = rng.integers(0, 2, shape).astype(bool)
        elif dt.kind in "iu":
            feeds[s.name] = rng.integers(0, 4, shape).astype(dt)
        elif dt.kind in "OUS":
            feeds[s.name] = np.full(shape, "a", dtype=object)
        else:
            feeds[s.name] = np.zeros(shape, dt)
    return feeds


def _size(specs: list[InputSpec], values: dict[str, int]) -> int:
    return sum(int(np.prod([_dim(d, values) for d in s.dims], dtype=np.int64)) for s in specs)


def size_hints(model: onnx.ModelProto, limit: int = 8) -> list[int]:
    """Sizes a traced export may have baked in: the small integers of its short int64 constants (Reshape and
    Concat shape pieces), most frequent first. A model traced at seq=10 often only runs at seq=10."""
    from collections import Counter

    from onnx import numpy_helper

    seen: Counter = Counter()
    for g in iter_graphs(model):
        tensors = [t for t in g.initializer if t.data_type == TensorProto.INT64 and len(t.dims) <= 1]
        tensors += [a.t for n in g.node if n.op_type == "Constant" for a in n.attribute
                    if a.name == "value" and a.t.data_type == TensorProto.INT64 and len(a.t.dims) <= 1]
        for t in tensors:
            if t.data_location == TensorProto.EXTERNAL or (t.dims and t.dims[0] > 8):
                continue
            for v in numpy_helper.to_array(t).reshape(-1).tolist():
                if 2 < v <= 1024 and v not in OTHER_SIZES:
                    seen[int(v)] += 1
    return [v for v, _ in seen.most_common(limit)]


def candidate_values(specs: list[InputSpec], hints: Sequence[int] = ()) -> Iterator[dict[str, int]]:
    """Assignments of the symbolic dims to try, smallest first, then the model's own size hints."""
    order, batch = _symbols(specs)
    if not order:
        yield {}
        return
    for b in BATCH_SIZES:
        for o in (*OTHER_SIZES, *hints):
            values = {x: (b if x in batch else o) for x in order}
            if _size(specs, values) <= MAX_ELEMENTS:
                yield values
            if not set(order) - batch:
                break  # batch-only symbols: the other size does not matter


# ------------------------------------------------------------------ running


# set by equivalence_child: told about each runtime session before it is created (which model, for a crash report)
BEFORE_SESSION: list[Callable[[onnx.ModelProto], None]] = []
# set by the check's child: how its session files in the model's folder are named, so the parent finds and removes
# them when the child was killed (its time limit, a crash) while ORT was creating a session from one
SESSION_PREFIX: list[str] = []


def session(model: onnx.ModelProto, base_dir: Path | None = None) -> Callable[[dict], list]:
    """A runner on ORT's CPU provider; made once, run on several feeds.

    A model with external data is given to ORT with base_dir, the folder its data paths are relative to, as
    the folder of its external data (ORT 1.21 and later; 1.20 loads a file in a temporary folder beside links to
    the data files: data_links.session_file), so ORT reads the weights itself and Python never holds them, and
    nothing is written in the model's folder, which may be read-only. The BEFORE_SESSION hooks run right before ORT is called."""
    external = base_dir is not None and has_external_data(model)
    if external and base_dir is not None:
        from onnxlint.model.loading import check_external_data

        problem = check_external_data(model, base_dir)  # ORT and onnx follow any path; check first
        if problem:
            raise FixError(f"external data: {problem}")
    import onnxruntime as ort  # --fix checks it is installed before anything runs (fixing.require_numeric_check)

    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = min(4, os.cpu_count() or 1)
    folder_option = data_links.data_folder_option(ort.__version__)  # ORT 1.21 and later; 1.20 reads beside the file
    if external and base_dir is not None and folder_option:
        so.add_session_config_entry(data_links.OPTION, os.path.abspath(base_dir))
    with contextlib.ExitStack() as stack:
        raw = model.SerializeToString()
        source: str | bytes = raw
        if external and base_dir is not None and not folder_option:
            source = stack.enter_context(data_links.session_file(
                raw, data_links.locations(model), str(base_dir), (SESSION_PREFIX or [".onnxlint-check."])[0]))
        for hook in BEFORE_SESSION:
            hook(model)
        sess = ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])
    return lambda feeds: sess.run(None, feeds)


def _first_line(exc: BaseException) -> str:
    """The first line of what ORT (or another library) raised, at most 200 characters, "…" saying the rest was cut:
    a note quoting ORT's refusal ended mid-sentence ("Please load external data into raw data ), so only ...")."""
    text = ort_message(exc) if "onnxruntime" in type(exc).__module__ else str(exc)
    return clip((text.strip().splitlines() or [type(exc).__name__])[0], 200)


def feeds_for(model: onnx.ModelProto, shapes: dict[str, Sequence[int]] | None = None,
              run: Callable[[dict], list] | None = None, seed: int = 0, sizes: int = 2) -> list[dict]:
    """Feeds to compare on: one when every dim is fixed, else two of different sizes the original runs on
    (a first size only when no second one runs; sizes=1: the first size that runs alone). Without `run`, the first
    candidates, untried."""
    specs = input_specs(model, shapes)
    cands = list(candidate_values(specs, size_hints(model) if _symbols(specs)[0] else ()))
    if run is None:
        return [make_feeds(specs, v, seed) for v in cands[:2]]
    found: list = []
    errors: list = []

    def attempt(v):
        feeds = make_feeds(specs, v, seed)
        try:
            found.append((v, feeds, run(feeds)))
            return True
        except Exception as exc:
            errors.append((v, exc))
            return False

    for v in cands[:MAX_TRIES]:
        if attempt(v):
            break
    if sizes > 1 and found and found[0][0]:
        first = found[0][0]
        _, batch = _symbols(specs)
        # a second size: every symbolic dim different if the original runs so, else only the batch changed
        tries = 0
        for v in cands:
            if tries >= MAX_TRIES // 3:
                break
            if all(v[x] != first[x] for x in v):
                tries += 1
                if attempt(v):
                    break
        if len(found) == 1 and batch:
            attempt({x: (first[x] % 2) + 1 if x in batch else first[x] for x in first})
    if not found:
        if not errors:
            raise _CannotRun("no size tried", {})  # every candidate past MAX_ELEMENTS
        v, exc = errors[0]
        raise _CannotRun(_first_line(exc), v)
    return found


class _CannotRun(Exception):
    def __init__(self, why: str, values: dict):
        super().__init__(why)
        self.why, self.values = why, values


def _describe(values: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "fixed shapes"


def compare(i: int, x, y) -> None:
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        raise FixError(f"output {i} shape changed {x.shape} -> {y.shape}")
    if x.dtype != y.dtype:
        raise FixError(f"output {i} dtype changed {x.dtype} -> {y.dtype}")
    tol = TOLERANCE.get(x.dtype.type)
    if x.dtype.kind == "V" or str(x.dtype) == "bfloat16":
        tol = (2e-2, 2e-2)
    if tol:
        rtol, atol = tol
        finite = np.isfinite(x)
        scale = float(np.max(np.abs(x[finite]))) if finite.any() else 1.0
        if not np.allclose(x, y, rtol=rtol, atol=atol * max(1.0, scale), equal_nan=True):
            with np.errstate(invalid="ignore"):
                diff = np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))) if x.size else 0
            raise FixError(f"output {i} differs (max abs diff {diff:.3g})")
    elif not np.array_equal(x, y):
        raise FixError(f"output {i} differs")


def check_equivalent(before: onnx.ModelProto, after: onnx.ModelProto, base_dir: Path | None = None,
                     shapes: dict[str, Sequence[int]] | None = None) -> str:
    """Run both models on the same inputs, in a child process; raises FixError when outputs differ or the
    child dies. Returns what was compared (e.g. "outputs equal at batch=1, batch=2") or why only the fixed
    model was run."""
    return run_check(before, after, base_dir, shapes)


def _check_equivalent(before, after, base_dir, shapes) -> str:
    try:
        run_a = session(before, base_dir)
    except Exception as exc:
        run_a, load_error = None, _first_line(exc)
    try:
        found = feeds_for(before, shapes, run_a) if run_a else None
    except _CannotRun as exc:
        found, load_error = None, f"{exc.why} (at {_describe(exc.values)})"
    if found is None:
        # ORT refuses the original (e.g. Equal on int64 vs int32, what equal-cast fixes): only the fixed model
        # can run. (onnx.reference is no stand-in: it refuses the same models, and follows NumPy, not ORT.)
        _run_fixed_alone(after, base_dir, shapes)
        return f"the original cannot run ({load_error}), so only the fixed model was run"
    run_b = session(after, base_dir)
    for values, feeds, a in found:
        try:
            b = run_b(feeds)
        except Exception as exc:
            raise FixError(f"the fixed model fails at {_describe(values)}: {_first_line(exc)}") from None
        if len(a) != len(b):
            raise FixError(f"output count changed ({len(a)} -> {len(b)})")
        for i, (x, y) in enumerate(zip(a, b)):
            try:
                compare(i, x, y)
            except FixError as exc:
                raise FixError(f"{exc} at {_describe(values)}") from None
    sizes = " and ".join(_describe(v) for v, _, _ in found)
    return f"outputs equal at {sizes}"


def _run_fixed_alone(after: onnx.ModelProto, base_dir: Path | None, shapes: dict[str, Sequence[int]] | None) -> None:
    """Run the fixed model where the original cannot run, at the sizes the check tries for an original (feeds_for,
    up to MAX_TRIES) until one runs: a model whose inputs' symbolic dims must agree (a UNet's latent and its text
    states, a MobileNet's spatial size) failed at the first (inline-small-tensors: 3 of 76 producer-set models).
    Raises FixError with the first size's failure when none runs."""
    try:
        feeds_for(after, shapes, session(after, base_dir), sizes=1)
        return
    except _CannotRun as exc:
        why = exc.why
    except Exception as exc:  # the session could not be made
        why = _first_line(exc)
    raise FixError(f"neither the original nor the fixed model runs on ORT CPU: {why}") from None


def _unrun_storage_fix(error: str, applied: Sequence[str]) -> str | None:
    """The note where neither model runs on ORT CPU for a node with no CPU kernel (a bf16 Sqrt-13) and every fix
    applied moved stored bytes only (Fixer.storage_only): ORT says so once its graph resolution accepted the fixed
    model, what OLX007's `fixable` claimed; else None (the FixError stands)."""
    head = "neither the original nor the fixed model runs on ORT CPU: "
    if not applied or not error.startswith(head) or "Could not find an implementation for" not in error:
        return None
    if not all(REGISTRY[name].storage_only for name in applied):
        return None
    return (f"not run: ORT CPU has no kernel for a node of either model ({error[len(head):]}); "
            f"{', '.join(applied)} only moved stored bytes, and ORT's graph resolution accepts the fixed model")


def validity_error(model: onnx.ModelProto, checker: bool = True) -> str | None:
    """The first line of what onnx's checker or strict shape inference says against `model`, or None. checker:
    False leaves the checker to the written file's check (as for a model with external data)."""
    from onnxlint.model.loading import native

    try:  # in the native worker: the fixed model is new to onnx's C++, and a crash costs this fix only
        if checker and not has_external_data(model):
            native.check_model(model)  # else checked from the written file, where its data paths resolve
        native.infer_shapes(model, strict_mode=True)
    except Exception as exc:  # onnx's exception (by class name and text), or NativeCrash
        return first_line(exc, limit=1 << 20)  # compared whole with the written file's complaint (write.atomic_write)
    return None


def verify(before: onnx.ModelProto, after: onnx.ModelProto, safe: bool, applied: Sequence[str] = (),
           base_dir: Path | None = None, shapes: dict[str, Sequence[int]] | None = None) -> str | None:
    """Raises FixError when the fixed model must not be written; returns what the numeric check did (or a
    caveat worth telling the user).

    base_dir: the folder the models' external data paths are relative to. An original with external data is
    checked by strict inference alone here (the checker could only run by path): so is the fixed model, which
    inline-small-tensors may leave with none, or a checker complaint the original file has too would pass for the
    fix's own; the written file is checked against the original file's (write.atomic_write's known_error)."""
    after_error = validity_error(after, checker=not has_external_data(before))
    inherited = None
    if after_error is not None:
        if validity_error(before) != after_error:
            raise FixError(f"fixed model fails the checker or shape inference: {after_error}")
        # the original already fails the same way: the fix did not cause it (OLX001 still reports it)
        inherited = f"the original fails the checker the same way ({after_error})"
    if not safe:
        return "not run (unsafe fixes change the interface or numerics)"
    for name in applied:
        ref = REGISTRY[name].reference
        if ref is not None:
            before = ref(before)
    try:
        result = check_equivalent(before, after, base_dir, shapes)
    except FixError as exc:
        unrun = _unrun_storage_fix(str(exc), applied)
        if unrun is None:
            raise
        result = unrun
    except Exception as exc:
        raise FixError(f"could not run the numeric check: {ort_message(exc)}") from None
    return f"{result}; {inherited}" if inherited else result


# ------------------------------------------------------------------ the child process

CRASH_ENV = "ONNXLINT_TEST_CRASH_CHECK"  # test hook: see equivalence_child
# the check's copies in the model's folder (run_check's, and the child's session files named after them)
CHECK_COPY = re.compile(r"\.onnxlint-check\.[a-z0-9_]{8}(?:\.s\.[a-z0-9_]{8})?\.onnx")
TIMEOUT_ENV, MEMORY_ENV = "ONNXLINT_CHECK_TIMEOUT", "ONNXLINT_CHECK_MEMORY_MB"
DEFAULT_TIMEOUT = 600.0  # seconds for both models, every size tried
# as verify --timeout's bound: 1e308 failed each check ("timestamp out of range for platform time_t")
MAX_TIMEOUT = 7 * 86400
MAX_MEMORY_MB = 1 << 30  # a petabyte: past 2**43 MB the bytes overflow setrlimit and each check's child failed
MIN_MEMORY = 8 << 30  # address space; at least this, or 8x the two models' serialized size


def check_limits() -> tuple[float, int | None]:
    """The check's limits from the environment (seconds; bytes, None: the default). A value that is not a number
    above 0 is a UsageError: `abc` failed every model's check in Python's words, and a negative memory limit
    was refused by setrlimit unseen, leaving the check unbounded."""
    from onnxlint.support.errors import UsageError

    raw_timeout = os.environ.get(TIMEOUT_ENV)
    try:
        timeout = float(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT
    except ValueError:
        timeout = float("nan")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise UsageError(f"{TIMEOUT_ENV}={raw_timeout}: not a number of seconds above 0 and at most {MAX_TIMEOUT} "
                         "(a week)")
    return timeout, check_memory()


def check_memory() -> int | None:
    """MEMORY_ENV in bytes (None: not set); not a whole number of megabytes within bounds is a UsageError."""
    from onnxlint.support.errors import UsageError

    raw_memory = os.environ.get(MEMORY_ENV)
    if not raw_memory:
        return None
    # ASCII digits only ("²" is a digit to str.isdigit, not to int()), and a byte count setrlimit takes
    if not raw_memory.strip().isascii() or not raw_memory.strip().isdigit() or not 0 < int(raw_memory) <= MAX_MEMORY_MB:
        raise UsageError(f"{MEMORY_ENV}={raw_memory}: not a whole number of megabytes above 0 and at most "
                         f"{MAX_MEMORY_MB}")
    return int(raw_memory) << 20


def address_space(size: int) -> int:
    """The address-space limit of a child running ORT on models of `size` bytes in all: MEMORY_ENV, else
    max(MIN_MEMORY, 8x size). The numeric check's children and verify's session child have it."""
    return check_memory() or max(MIN_MEMORY, 8 * size)


def run_check(before: onnx.ModelProto, after: onnx.ModelProto, base_dir: Path | None,
              shapes: dict[str, Sequence[int]] | None) -> str:
    """check_equivalent's work in `python -m onnxlint.fixers.equivalence_child` (see that module)."""
    external = base_dir is not None and (has_external_data(before) or has_external_data(after))
    timeout, _ = check_limits()
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="onnxlint-check."))
        base_dir = Path(os.path.abspath(base_dir)) if base_dir is not None else None  # the check server has its own cwd
        paths: list[str] = []
        if external and base_dir is not None:  # the copies a run killed during its check (SIGKILL) left in the
            write_guard.remove_unheld(base_dir, CHECK_COPY)  # model's folder (as before 0.2.0), held by none
        for model in (before, after):  # read by the child without their data: never in the model's folder
            fd, path = tempfile.mkstemp(prefix=".onnxlint-check.", suffix=".onnx", dir=tmp)
            held = os.dup(fd)  # locked until it is removed
            write_guard.lock(held)
            stack.callback(os.close, held)
            stack.callback(_remove, path)
            if not paths and external and base_dir is not None:  # what the child, killed while ORT read one, left
                stack.callback(_remove_prefixed, str(base_dir), session_prefix(path))  # of its session files
            with os.fdopen(fd, "wb") as fh:
                fh.write(model.SerializeToString())
            paths.append(path)
        size = sum(os.path.getsize(p) for p in paths)
        limit = address_space(size)
        report, errors = os.path.join(tmp, "report.json"), os.path.join(tmp, "stderr.txt")
        args = (*paths, str(base_dir or ""), json.dumps({k: list(v) for k, v in (shapes or {}).items()}), report)
        code, stderr = _run_child(args, os.environ.get(CRASH_ENV), errors, timeout, limit)
        if code is None:
            raise FixError(f"the numeric check did not finish within {timeout:g} s ({TIMEOUT_ENV} sets the limit)")
        data = bounded_child.json_lines(_read_text(report))
    if "result" in data:
        return str(data["result"])
    which = "the fixed model" if data.get("stage") == "fixed" else "the original model"
    error = str(data.get("fix_error") or "")
    if error and not out_of_memory(error):
        raise FixError(error)
    if error.startswith("neither"):
        which = "both models"
    if not error and code < 0:
        raise FixError(f"onnxruntime crashed ({bounded_child.signal_name(code)}) creating a session for {which}")
    if out_of_memory(error or stderr):  # ORT's allocation past the limit is an exception in the child, not a crash
        raise FixError(f"the numeric check ran out of memory ({limit >> 20} MB address space, {MEMORY_ENV} sets it) "
                       f"running {which}")
    last = [ln for ln in stderr.splitlines() if ln.strip()][-1:] or [f"exit code {code}"]
    raise FixError(f"could not run the numeric check: {last[0][:200]}")


def out_of_memory(text: str) -> bool:
    return "MemoryError" in text or "std::bad_alloc" in text or "Failed to allocate memory" in text


# The children fork from a server that has onnx, numpy and onnxruntime imported (check_server, started as
# `python -m onnxlint.fixers.check_server`, one per process): one fresh process per model without paying the
# imports each time. Not multiprocessing's forkserver:
# it imports the caller's main module again in every child, so a script calling onnxlint.fix() at module level
# without a __main__ guard ran twice. Where there is no fork (Windows) or the server cannot start or dies, each
# check is `python -m onnxlint.fixers.equivalence_child`.
_SERVER: list[Any] = []  # [the server's Popen, or None where there is none]
_SERVER_LOCK = threading.Lock()


def _server() -> Any:
    if _SERVER and (_SERVER[0] is None or _SERVER[0].poll() is None):
        return _SERVER[0]
    proc = None
    if hasattr(os, "fork") and sys.platform != "win32":
        try:
            proc = subprocess.Popen(pychild.module("onnxlint.fixers.check_server"), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            proc = None
    _SERVER[:] = [proc]
    if proc is not None:
        atexit.register(_close, proc)
    return proc


def _close(proc: Any) -> None:
    """At exit: the server ends when its stdin closes (it would anyway, when this process is gone); one still
    unwinding its imports after a moment is ended, so no process of ours outlives this one unreaped."""
    with contextlib.suppress(Exception):
        proc.stdin.close()
    try:
        proc.wait(2)
    except BaseException:  # slow to leave, or a Ctrl-C while waiting for it (a traceback from the exit hook): ended now
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            proc.wait(10)
    with contextlib.suppress(Exception):
        proc.stdout.close()


def _read_line(proc: Any, deadline: float | None) -> dict[str, Any] | None:
    """The server's next JSON line; None when it ended, or when the deadline passed first."""
    fd = proc.stdout.fileno()
    buf = proc.__dict__.setdefault("_onnxlint_buf", bytearray())
    while b"\n" not in buf:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        buf.extend(chunk)
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    try:
        got = json.loads(line)
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def _on_server(proc: Any, args: tuple[Any, ...], crash: str | None, errors: str, timeout: float,
               memory: int) -> tuple[int | None, str] | None:
    """The check in a child of the server: (exit code, None past the time limit; what the child printed), or
    None when the server could not run it (the caller runs the plain child instead)."""
    start = time.monotonic()
    try:
        proc.stdin.write((json.dumps({"args": list(args), "crash": crash, "errors": errors, "memory": memory})
                          + "\n").encode())
        proc.stdin.flush()
    except OSError:
        return None
    # the first check waits for the server's imports too (~1 s): within the check's own time limit
    got = _read_line(proc, start + timeout)
    if got is None or "pid" not in got:
        alive = proc.poll() is None
        _stop(proc, forever=not alive)
        return (None, "") if alive else None  # still starting when the time was up: this check timed out
    pid = int(got["pid"])
    done = _read_line(proc, start + timeout)
    if done is None:  # past the time limit: the child is killed, the server reports it and serves on
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        if _read_line(proc, time.monotonic() + 30) is None:
            _stop(proc)
        return None, ""
    return int(done.get("exit", 1)), _read_text(errors)


def _stop(proc: Any, forever: bool = False) -> None:
    """End a server that is stuck (the next check starts a new one) or that died on its own (forever: every later
    check runs the plain child)."""
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(5)
    _SERVER[:] = [None] if forever else []


def _run_child(args: tuple[str, ...], crash: str | None, errors: str, timeout: float,
               memory: int) -> tuple[int | None, str]:
    """(exit code, None past the time limit; what the child printed)."""
    with _SERVER_LOCK:
        proc = _server()
        if proc is not None:
            got = _on_server(proc, args, crash, errors, timeout, memory)
            if got is not None:
                return got
    cmd = [*pychild.module("onnxlint.fixers.equivalence_child"), *args]
    env = None if crash is None else {**os.environ, CRASH_ENV: crash}
    code, _, stderr = bounded_child.run(cmd, timeout, memory=memory, stdout=subprocess.DEVNULL, env=env)
    return code, stderr


def _read_text(path: str) -> str:
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def session_prefix(before_path: str) -> str:
    """How the child's session files are named: after the original's file the parent wrote (a name it chose)."""
    return os.path.basename(before_path)[: -len(".onnx")] + ".s."


def _remove_prefixed(folder: str, prefix: str) -> None:
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if name.startswith(prefix) and name.endswith(".onnx"):
                _remove(os.path.join(folder, name))


def _child_check(before_path: str, after_path: str, base: str, shapes_json: str, report: str, crash: str | None,
                 stderr_path: str | None = None, memory: int | None = None) -> None:
    """The child's side of run_check: both models from their files, the check, the outcome into `report` (one
    JSON object a line: the stage before each session, then result or fix_error)."""
    if stderr_path:  # a check server's child: what it prints goes to a file of its own, never the terminal
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    if memory:
        bounded_child.limit_memory(memory)
    SESSION_PREFIX[:] = [session_prefix(before_path)]
    before = onnx.load(before_path, load_external_data=False)
    after = onnx.load(after_path, load_external_data=False)

    def say(**values: Any) -> None:
        with open(report, "a") as fh:
            fh.write(json.dumps(values) + "\n")

    def before_session(model: onnx.ModelProto) -> None:
        stage = "fixed" if model is after else "original"
        say(stage=stage)
        if crash and stage == "fixed" and before.graph.name == crash:
            os.kill(os.getpid(), signal.SIGSEGV)

    BEFORE_SESSION.append(before_session)
    try:
        with capture_output():
            say(result=_check_equivalent(before, after, Path(base) if base else None, json.loads(shapes_json) or None))
    except FixError as exc:
        say(fix_error=str(exc))
    except Exception as exc:
        say(fix_error=f"could not run the numeric check: {ort_message(exc)}")
    finally:
        BEFORE_SESSION.remove(before_session)
