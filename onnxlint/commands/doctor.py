"""`onnxlint doctor`: can this environment run a CUDA session? Checked by building one.

The probe is the thing itself: a one-node model in an `InferenceSession` with the CUDA EP, in a child process
with a time limit (a provider library can abort or hang the process that loads it). Loading the provider
library alone proves nothing (it needs symbols of ORT itself), and library scans guess where ORT looks.
Each check is a `Check` (ok, text, fix); the front end renders them through `formats/` and exits 1 when one
fails. Nothing here imports onnxruntime into the calling process.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from onnxlint.support import bounded_child, pychild
from onnxlint.verify import cuda_status

PROBE_TIMEOUT = 120.0
SMI_TIMEOUT = 10.0

# the child: import onnxruntime, build a one-node CUDA session (ORT's fallbacks off), say what happened as JSON
_PROBE = r"""
import json, os, sys
try:
    import onnxruntime as ort
except BaseException as exc:
    print(json.dumps({"import_error": f"{type(exc).__name__}: {exc}"}), flush=True)
    sys.exit(0)
from onnx import TensorProto, helper
from onnxlint.verify.cuda_status import preload_cuda_libraries
preload_cuda_libraries(ort)  # CUDA and cuDNN from the NVIDIA wheels on PyPI, as a verify session finds them
capi = os.path.join(os.path.dirname(ort.__file__), "capi")
print(json.dumps({"version": ort.__version__, "available": ort.get_available_providers(), "capi": capi}), flush=True)
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="probe")], "probe",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
so = ort.SessionOptions()
so.log_severity_level = 1
try:
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
                             enable_fallback=0)
    print(json.dumps({"providers": s.get_providers()}), flush=True)
except Exception as exc:
    print(json.dumps({"session_error": " ".join(str(exc).split())[:400]}), flush=True)
"""


@dataclass(frozen=True)
class Check:
    ok: bool
    text: str
    fix: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{'✓' if self.ok else '✗'} {self.text}" + (f" — fix: {self.fix}" if self.fix and not self.ok else "")


def _probe(timeout: float) -> tuple[dict[str, Any], str, str | None]:
    """(what the child said, its stderr, why it gave no answer or None)."""
    code, out, err = bounded_child.run(pychild.script(_PROBE), timeout)
    data = bounded_child.json_lines(out)
    if code is None:
        return data, err, f"the probe session did not finish within {timeout:g} s"
    if code < 0:
        return data, err, f"onnxruntime crashed creating a CUDA session ({bounded_child.signal_name(code)})"
    return data, err, None


def _session_checks(timeout: float) -> list[Check]:
    wheels = cuda_status.installed_wheels()
    if not wheels:
        return [Check(False, "onnxruntime is not installed", "pip install onnxruntime-gpu (from PyPI)")]
    out = [Check(True, f"onnxruntime installed: {', '.join(f'{k} {v}' for k, v in wheels.items())}")]
    both = cuda_status.both_wheels(wheels)
    if both:
        out.append(Check(False, both[0], both[1]))
    data, stderr, died = _probe(timeout)
    if "import_error" in data:
        out.append(Check(False, f"onnxruntime does not import: {data['import_error'][:300]}",
                         f"reinstall it: {cuda_status.UNINSTALL_BOTH}"))
        return out
    available = list(data.get("available", []))
    if available:
        out.append(Check(True, f"onnxruntime {data.get('version')}: available providers {', '.join(available)}"))
    if died:
        reason = cuda_status.ort_error(stderr)
        out.append(Check(False, died + (f": {reason}" if reason else ""),
                         "run the same session with log_severity_level=0 to see where it stops; check the driver"))
        return out
    if "session_error" in data:
        out.append(Check(False, f"a one-node CUDA session fails: {data['session_error']}",
                         "see ORT's message; reinstall onnxruntime-gpu for your CUDA version"))
        return out
    providers = list(data.get("providers", []))
    if "CUDAExecutionProvider" in providers:
        out.append(Check(True, "a one-node session runs on CUDAExecutionProvider"))
        return out
    capi = data.get("capi")
    why, fix = cuda_status.diagnose(available, stderr, Path(capi) if capi else None)
    if both and "CUDAExecutionProvider" not in available:
        why, fix = f"this onnxruntime has no CUDA EP (available: {', '.join(available)})", both[1]
    out.append(Check(False, f"a one-node CUDA session got only {', '.join(providers) or 'no provider'}: {why}", fix))
    return out


def _gpu_check(cuda_ok: bool, timeout: float) -> Check | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        # informational when the CUDA session came up (a container without the tool); else a likely cause
        return None if cuda_ok else Check(False, "no NVIDIA driver tools: nvidia-smi not found",
                                          "run on a machine with an NVIDIA GPU and its driver")
    try:
        res = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return Check(False, f"nvidia-smi did not answer within {timeout:g} s (the driver may be hung)",
                     "check the NVIDIA driver (dmesg, nvidia-smi by hand); a reboot or driver reinstall may be needed")
    except OSError as exc:
        return Check(False, f"nvidia-smi cannot run: {exc.strerror or exc}", "reinstall the NVIDIA driver")
    text = " ".join((res.stdout.strip() or res.stderr.strip()).split())[:200]
    if res.returncode != 0:
        return Check(False, f"nvidia-smi fails: {text or f'exit {res.returncode}'}", "check the NVIDIA driver installation")
    return Check(True, f"GPU: {text}")


def checks(probe_timeout: float = PROBE_TIMEOUT, smi_timeout: float = SMI_TIMEOUT) -> list[Check]:
    lines = _session_checks(probe_timeout)
    cuda_ok = any(c.ok and "CUDAExecutionProvider" in c.text and "one-node" in c.text for c in lines)
    gpu = _gpu_check(cuda_ok, smi_timeout)
    return lines + ([gpu] if gpu else [])


def run(format: str) -> int:
    """Print the checks; the exit code: 1 when one failed, else 0."""
    from onnxlint.formats import doctor_output

    found = checks()
    sys.stdout.write(doctor_output.render(format, found))
    return 0 if all(c.ok for c in found) else 1
