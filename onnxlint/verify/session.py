"""Running the verification session in a child process with a time limit, and collecting its evidence.

The child's stdout carries JSON lines as it goes (available providers, then the session's providers as soon as
it exists, then the run's outcome), its stderr ORT's VERBOSE log. Whatever the child did before it crashed or
ran out of time is kept: the placement is logged at session creation, before any Run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onnxlint.support import bounded_child, pychild
from onnxlint.support.errors import strip_cpp_frames
from onnxlint.verify import cuda_status, logs

CUDA = "CUDAExecutionProvider"
# verify's copies in a model's folder: session_child's renamed copy (ORT 1.20, or a verify before 0.2.0), verify --fix's
# fixed model before a session ran it (and the temporary file its atomic write made)
VERIFY_COPY = re.compile(r"\.?\.onnxlint-verify[.-][a-z0-9_]{8}\.onnx(?:\.[a-z0-9_]{8}\.tmp)?")


@dataclass
class SessionRun:
    """What one session told: providers it took, where each node of its graph ran, and what went wrong."""

    error: str | None = None  # no session was built
    available: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    run_error: str | None = None  # the session exists; its run failed, crashed or timed out
    placements: list[logs.Placed] = field(default_factory=list)  # the log's "Node placements" block
    all_on: tuple[str, int] | None = None  # the log's "All nodes placed on [X]" (names no node)
    profile_nodes: dict[str, str] = field(default_factory=dict)  # node name -> provider, from profiling
    defaulted: list[str] = field(default_factory=list)  # inputs whose dynamic dims were fed as 1
    cuda_problem: str | None = None  # CUDA was requested, the session does not have it: why, with the fix
    # every other requested provider the session does not have: provider -> why, with the fix
    unexercised: dict[str, str] = field(default_factory=dict)


def run_session(model: Path, providers: list[str], shapes: dict[str, list[int]], timeout: float = 300,
                level: str = "all", memory: int | None = None, data_folder: Path | None = None) -> SessionRun:
    """One session of `model` in a child. data_folder: the folder its external data paths are relative to, when
    not the model file's own (verify's renamed copy, in a temporary folder, of a model with external data). memory:
    its address-space limit where the session can have only the CPU EP (session_child; by default the --fix numeric
    check's, equivalence.address_space, of the model file's size)."""
    from onnxlint.fixers.equivalence import address_space

    memory = memory or address_space(os.path.getsize(model))
    cmd = [*pychild.module("onnxlint.verify.session_child"), str(model), json.dumps(providers), json.dumps(shapes)]
    folder = os.path.abspath(data_folder) if data_folder is not None else ""
    with tempfile.TemporaryDirectory(prefix="onnxlint-verify.") as tmp:
        code, stdout, stderr = bounded_child.run([*cmd, tmp, level, str(memory), folder], timeout)
        timed_out = code is None
        data = bounded_child.json_lines(stdout)
        _remove_copy(folder, data.get("copy"))
        run = SessionRun(available=list(data.get("available", [])), defaulted=list(data.get("defaulted", [])))
        if data.get("memory") and _out_of_memory(data, stderr, code):
            run.error = (f"the session ran out of memory ({int(data['memory']) >> 20} MB address space, "
                         "ONNXLINT_CHECK_MEMORY_MB sets it)")
            return run
        if "providers" not in data:  # no session
            if timed_out:
                run.error = f"the session was not created within {timeout:g} s"
            elif code is not None and code < 0:
                run.error = (f"onnxruntime crashed creating the session ({bounded_child.signal_name(code)}): "
                             f"{cuda_status.ort_error(stderr) or 'no message'}")
            elif data.get("error"):  # the exception the session raised, sent whole on one line
                run.error = strip_cpp_frames(str(data["error"]))
            else:
                run.error = logs.error_line(stderr) or f"the session child exited with code {code}"
            run.error = run.error[:400]
            return run
        run.providers = list(data["providers"])
        run.placements = logs.parse_placements(stderr)
        run.all_on = logs.all_placed_on(stderr)
        if timed_out:
            run.run_error = f"the run did not finish within {timeout:g} s"
        elif code is not None and code < 0:
            run.run_error = f"onnxruntime crashed during the run ({bounded_child.signal_name(code)})"
        elif data.get("run_error"):
            run.run_error = str(data["run_error"])
        profile = data.get("profile")
        if profile and os.path.exists(profile):
            try:
                with open(profile) as fh:
                    run.profile_nodes = logs.parse_profile(json.load(fh))
            except (OSError, ValueError):
                pass
        if CUDA in providers and CUDA not in run.providers:
            capi = data.get("capi")
            run.cuda_problem = cuda_status.explain(run.available, stderr, Path(capi) if capi else None)
        for p in providers:  # ORT drops a provider it cannot create with a warning, and runs on the others
            if p != CUDA and p not in run.providers:
                run.unexercised[p] = cuda_status.explain_provider(p, run.available, stderr)
        return run


def _remove_copy(folder: str, copy: Any) -> None:
    """The copy the child wrote in the data folder (ORT 1.20, session_child.model_source), when the child was killed
    or crashed before it removed it: only a name of verify's own there."""
    if not folder or not isinstance(copy, str) or os.path.dirname(copy) != folder:
        return
    if VERIFY_COPY.fullmatch(os.path.basename(copy)):
        with contextlib.suppress(OSError):
            os.unlink(copy)


def _out_of_memory(data: dict[str, Any], stderr: str, code: int | None) -> bool:
    """Whether the child, under its address-space limit, failed an allocation: ORT's exception (creating the
    session or running it), numpy's MemoryError feeding it, or a std::bad_alloc nothing caught."""
    from onnxlint.fixers.equivalence import out_of_memory

    said = f"{data.get('error', '')} {data.get('run_error', '')}"
    return out_of_memory(said) or (code is not None and code != 0 and out_of_memory(stderr))
