"""The child process of `onnxlint verify`: builds one ORT session, runs it once, prints JSON lines.

Run as `python -m onnxlint.verify.session_child MODEL PROVIDERS_JSON SHAPES_JSON OUTDIR LEVEL [MEMORY [DATA_FOLDER]]`. It is a process
of its own so that a provider library that aborts (onnxruntime-gpu without its CUDA libraries does) or a
kernel that crashes costs the child, never the linter. Placement is decided (and logged, on stderr) at session
creation, and the child says `{"providers": ...}` on stdout as soon as the session exists, so a run that fails
or crashes later still leaves that evidence. ORT's Python fallback (rebuild the session on the CPU EP and run
again when the CUDA EP fails) is disabled: its second placement log and profile would override the first.
MEMORY (bytes) limits the child's address space, as the --fix numeric check's child is limited, when its session
can have only the CPU EP: a GPU provider's driver maps address space the size of the device's memory and more,
which such a limit would refuse (the child says `{"memory": MEMORY}` when it set the limit). DATA_FOLDER: the
folder MODEL's external data paths are relative to, when not MODEL's own (verify's renamed copy of a model with
external data lies in a temporary folder; model_source).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, Iterator

# onnxlint's names for ORT's GraphOptimizationLevel values (ORT's default is ORT_ENABLE_ALL)
LEVELS = {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED",
          "all": "ORT_ENABLE_ALL"}
# test hook: the child kills itself with this signal once the session exists (a native crash during Run)
CRASH_ENV = "ONNXLINT_TEST_CRASH_AFTER_SESSION"


def _feeds(sess: Any, shapes: dict[str, list[int]], defaulted: list[str]) -> dict[str, Any]:
    import numpy as np

    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
             "tensor(bool)": np.bool_}
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = shapes.get(i.name) or [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        if i.name not in shapes and any(not (isinstance(d, int) and d > 0) for d in i.shape):
            defaulted.append(i.name)
        if i.type == "tensor(string)":
            n = int(np.prod(shape))
            feeds[i.name] = np.array([("a", "b")[k % 2] for k in range(n)], dtype=object).reshape(shape)
            continue
        dt = types.get(i.type, np.float32)
        feeds[i.name] = (rng.random(shape) if np.issubdtype(dt, np.floating) else rng.integers(0, 2, shape)).astype(dt)
    return feeds


def cpu_only(providers: list[str], available: list[str]) -> bool:
    """Whether a session asked for `providers` can have only the CPU EP (the others are not in this ORT build)."""
    return all(p == "CPUExecutionProvider" or p not in available for p in providers)


def _refusal(exc: Exception) -> str:
    """ORT's refusal of the session on one line. ORT's Python binding raises UnicodeDecodeError for a refusal whose
    message quotes a string of the model that is not UTF-8 (a node's domain, a value name): ORT's words are the
    bytes it could not decode, given as text, each bad byte `\\xNN` (support.escape.field_text). Under Python 3.10
    (ORT 1.23.2's binding, measured) the same refusal is a `Fail` with no message at all: said as such, not "Fail: "."""
    text = str(exc)
    if isinstance(exc, UnicodeDecodeError) and isinstance(exc.object, bytes) and exc.object.startswith(b"[ONNXRuntimeError]"):
        from onnxlint.support.escape import field_text

        return " ".join(field_text(exc.object).split())
    if not text.strip():
        return (f"{type(exc).__name__} with no message (ORT's Python binding gave none; on Python 3.10 it drops a "
                "message that quotes text of the model that is not UTF-8)")
    return f"{type(exc).__name__}: {' '.join(text.split())}"


def _say(**values: Any) -> None:
    print(json.dumps(values), flush=True)


@contextlib.contextmanager
def model_source(ort: Any, model: str, so: Any, data_folder: str) -> Iterator[str | bytes]:
    """What the session is built from: the model file; for one whose external data is in data_folder, its bytes,
    with ORT told that folder (session.model_external_initializers_file_folder_path, ORT 1.21 and later), so nothing
    is written there. ORT 1.20 ignores that option: there the session loads the model from a temporary folder beside
    links to its data files (data_links.session_file); only where no link can be made is it copied into data_folder
    while the session is built (`.onnxlint-verify.XXXXXXXX.onnx`, locked while it exists; the child says
    `{"copy": PATH}`, so the parent removes it if the child dies first)."""
    from onnxlint.fixers import data_links

    if not data_folder:
        yield model
        return
    with open(model, "rb") as fh:
        raw = fh.read()
    if data_links.data_folder_option(ort.__version__):
        so.add_session_config_entry(data_links.OPTION, data_folder)
        yield raw
        return
    import onnx

    names = data_links.locations(onnx.load_from_string(raw))
    with data_links.session_file(raw, names, data_folder, ".onnxlint-verify.", lambda path: _say(copy=path)) as path:
        yield path


def main(argv: list[str]) -> int:
    import onnxruntime as ort

    from onnxlint.verify.cuda_status import preload_cuda_libraries

    if "CUDAExecutionProvider" in argv[1] or "TensorrtExecutionProvider" in argv[1]:
        preload_cuda_libraries(ort)  # CUDA and cuDNN from the NVIDIA wheels on PyPI, as ORT's docs install them
    model, providers, shapes, outdir = argv[0], json.loads(argv[1]), json.loads(argv[2]), argv[3]
    level = argv[4] if len(argv) > 4 else "all"
    available = ort.get_available_providers()
    memory = int(argv[5]) if len(argv) > 5 else 0
    data_folder = argv[6] if len(argv) > 6 else ""
    if memory and cpu_only(providers, available):
        from onnxlint.support.bounded_child import limit_memory

        limit_memory(memory)
        _say(memory=memory)
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(outdir, "prof")
    so.log_severity_level = 0
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    _say(available=available, capi=os.path.join(os.path.dirname(ort.__file__), "capi"))
    try:
        with model_source(ort, model, so, data_folder) as source:  # a copy ORT 1.20 reads goes once it is built
            sess = ort.InferenceSession(source, so, providers=providers, enable_fallback=0)
    except Exception as exc:  # the reason goes back as data: read off stderr, a line break in a node name ORT
        # quotes could stand for it
        _say(error=_refusal(exc))
        return 1
    sess.disable_fallback()  # releases without the keyword: at least no fallback on Run
    _say(providers=sess.get_providers())
    sys.stderr.flush()
    crash = os.environ.get(CRASH_ENV)
    if crash:
        import signal

        os.kill(os.getpid(), getattr(signal, crash))
    defaulted: list[str] = []
    try:
        feeds = _feeds(sess, shapes, defaulted)
        _say(defaulted=defaulted)
        sess.run(None, feeds)
    except Exception as exc:
        text = " ".join(str(exc).split()).replace("[ONNXRuntimeError] : ", "")
        _say(run_error=text if len(text) <= 240 else text[:240] + " ...")
    _say(profile=sess.end_profiling())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
