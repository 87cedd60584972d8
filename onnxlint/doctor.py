"""`onnxlint doctor`: is the GPU stack usable? onnxruntime wheels, providers, EP libraries, CUDA/cuDNN.

Each check is a `Check` (ok, text, fix); the front end renders them through `formats/` and exits 1 when one
fails. Every probe that could abort (loading a provider library) runs in a child process.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from onnxlint.verify.logs import MISSING_SO


@dataclass(frozen=True)
class Check:
    ok: bool
    text: str
    fix: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{'✓' if self.ok else '✗'} {self.text}" + (f" — fix: {self.fix}" if self.fix and not self.ok else "")


def _check(ok: bool, text: str, fix: str = "") -> Check:
    return Check(ok, text, fix)


def _build_cuda_version() -> str | None:
    """The CUDA version an onnxruntime-gpu build was made for (None: not a CUDA build, or no onnxruntime)."""
    try:
        from onnxruntime.capi import build_and_package_info as info
    except Exception:
        return None
    return getattr(info, "cuda_version", None)


def _cuda_major() -> str:
    return str(_build_cuda_version() or "12").split(".")[0]


def _library_dirs(capi: Path | None) -> list[str]:
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    dirs += ["/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"]
    if capi is not None:  # pip's nvidia-*-cu12 wheels, which onnxruntime-gpu can preload
        dirs += glob.glob(str(capi.parent.parent / "nvidia" / "*" / "lib"))
    return dirs


def _majors(dirs: list[str], stem: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for d in dirs:
        for path in glob.glob(os.path.join(d, f"{stem}.so.*")):
            m = re.match(rf"{stem}\.so\.(\d+)", os.path.basename(path))
            if m:
                found.setdefault(int(m.group(1)), path)
    return found


def _cuda_library_checks(capi: Path | None) -> list[Check]:
    """The CUDA and cuDNN versions the onnxruntime-gpu build expects against the libraries on this machine."""
    expected = _build_cuda_version()
    dirs = _library_dirs(capi)
    cudart, cudnn = _majors(dirs, "libcudart"), _majors(dirs, "libcudnn")
    found_rt = ", ".join(f"libcudart.so.{k}" for k in sorted(cudart)) or "none"
    if not expected:
        return [_check(bool(cudart), f"CUDA runtime found: {found_rt} (this onnxruntime build is not a CUDA build)",
                       "pip install onnxruntime-gpu")]
    want = int(str(expected).split(".")[0])
    out = [_check(want in cudart, f"onnxruntime-gpu is built for CUDA {expected}; CUDA runtimes found: {found_rt}",
                  f"install CUDA {want}.x runtime libraries (e.g. pip install 'nvidia-cuda-runtime-cu{want}' "
                  f"'nvidia-cublas-cu{want}') or an onnxruntime-gpu build for the CUDA you have")]
    # ORT's own message for CUDA 12 builds: "Require cuDNN 9.* and CUDA 12.*"
    want_dnn = 9 if want >= 12 else 8
    found_dnn = ", ".join(f"libcudnn.so.{k}" for k in sorted(cudnn)) or "none"
    out.append(_check(want_dnn in cudnn, f"cuDNN {want_dnn} expected by this build; found: {found_dnn}",
                      f"pip install 'nvidia-cudnn-cu{want}'"))
    return out


def checks() -> list[Check]:
    from importlib import metadata

    lines: list[Check] = []
    dists = {}
    for d in ("onnxruntime", "onnxruntime-gpu"):
        try:
            dists[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            pass
    lines.append(_check(bool(dists), f"onnxruntime installed: {', '.join(f'{k} {v}' for k, v in dists.items()) or 'none'}",
                        "pip install 'onnxlint[gpu]'"))
    if len(dists) == 2:
        lines.append(_check(False, "both onnxruntime and onnxruntime-gpu are installed (they overwrite each other's files)",
                            "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu"))
    probe = subprocess.run([sys.executable, "-c", "import onnxruntime as o, json; print(json.dumps(o.get_available_providers()))"],
                           capture_output=True, text=True, timeout=120)
    providers = json.loads(probe.stdout) if probe.returncode == 0 else []
    lines.append(_check(probe.returncode == 0, f"available providers: {', '.join(providers) or probe.stderr.strip()[-200:]}"))
    try:
        import onnxruntime  # noqa: F401  (only to find the package folder)

        capi = Path(onnxruntime.__file__).parent / "capi"
    except Exception:
        capi = None
    for ep, lib in (("CUDA", "libonnxruntime_providers_cuda.so"), ("TensorRT", "libonnxruntime_providers_tensorrt.so")):
        path = capi / lib if capi else None
        if path is None or not path.exists():
            lines.append(_check(False, f"{ep} EP library not shipped by the installed wheel ({lib})",
                                "pip install onnxruntime-gpu" if ep == "CUDA" else "install onnxruntime-gpu and TensorRT"))
            continue
        res = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(path)!r})"],
                             capture_output=True, text=True, timeout=60)
        missing = ", ".join(sorted(set(MISSING_SO.findall(res.stderr)))) or res.stderr.strip()[-200:]
        if res.returncode == 0:
            lines.append(_check(True, f"{ep} EP library loads ({lib})"))
        else:
            lines.append(_check(False, f"{ep} EP library does not load: missing {missing}",
                                "install the CUDA/cuDNN (or TensorRT) runtime libraries matching this onnxruntime-gpu build, "
                                f"e.g. pip install 'nvidia-cudnn-cu{_cuda_major()}' 'nvidia-cublas-cu{_cuda_major()}'"))
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        lines.append(_check(out.returncode == 0, f"GPU visible: {out.stdout.strip() or out.stderr.strip()}"))
    else:
        lines.append(_check(False, "GPU visible: nvidia-smi not found", "run on a machine with an NVIDIA GPU and driver"))
    lines.extend(_cuda_library_checks(capi))
    return lines
