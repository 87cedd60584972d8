"""Why the CUDA execution provider was not exercised, in one line with its fix, from what ORT said.

Three causes a user can act on: a build without the CUDA EP (the CPU wheel, or both wheels installed, where
the CPU wheel's files overwrote onnxruntime-gpu's), and CUDA/cuDNN libraries the provider library cannot
load (named all at once from its dynamic dependencies, not only the first one dlopen reports).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MISSING_SO = re.compile(r"(lib[\w.+-]+\.so[.\d]*): cannot open shared object file")
CUDA_LIBRARY = "libonnxruntime_providers_cuda.so"
UNINSTALL_BOTH = "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu"


def installed_wheels() -> dict[str, str]:
    """{'onnxruntime': '1.24.4', 'onnxruntime-gpu': ...}: the ORT distributions installed in this environment."""
    from importlib import metadata

    found = {}
    for name in ("onnxruntime", "onnxruntime-gpu"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def both_wheels(wheels: dict[str, str]) -> tuple[str, str] | None:
    if len(wheels) < 2:
        return None
    return (f"both onnxruntime {wheels['onnxruntime']} and onnxruntime-gpu {wheels['onnxruntime-gpu']} are installed "
            "(they share the onnxruntime package folder and overwrite each other's files)", f"uninstall one: {UNINSTALL_BOTH}")


def missing_libraries(provider: Path, timeout: float = 30) -> list[str]:
    """The libraries `ldd` cannot find for the provider library, all of them ([] when ldd is unavailable)."""
    try:
        out = subprocess.run(["ldd", str(provider)], capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return re.findall(r"^\s*(\S+) => not found", out, re.M)


def no_cuda_ep(available: list[str], wheels: dict[str, str]) -> tuple[str, str]:
    both = both_wheels(wheels)
    if both:
        return f"this onnxruntime has no CUDA EP (available: {', '.join(available)}): {both[0]}", both[1]
    have = ", ".join(f"{k} {v}" for k, v in wheels.items()) or "onnxruntime"
    return (f"this onnxruntime build has no CUDA EP ({have}; available: {', '.join(available)})",
            "pip uninstall -y onnxruntime && pip install onnxruntime-gpu")


def cuda_ep_failed(log: str, capi: Path | None) -> tuple[str, str]:
    """The CUDA EP is in the build but was not created: which libraries are missing, or ORT's own message."""
    text = ANSI.sub("", log)
    missing = set(MISSING_SO.findall(text)) - {CUDA_LIBRARY}
    gpu = installed_wheels().get("onnxruntime-gpu")
    if capi is not None and (capi / CUDA_LIBRARY).exists():
        # ldd knows nothing of the libraries preload_cuda_libraries loads from site-packages' nvidia/ folders
        found = _from_pip_packages(capi.parent.parent) if gpu and _has_extras(gpu) else set()
        missing |= set(missing_libraries(capi / CUDA_LIBRARY)) - found
    need = re.search(r"Require (cuDNN [^ ]+ and CUDA [^ .]+\.\*)", text)
    if missing:
        wants = f" (ORT requires {need.group(1)})" if need else ""
        return (f"the CUDA EP library cannot load: missing {', '.join(sorted(missing))}{wants}",
                install_cuda_libraries(sorted(missing), gpu, capi))
    return (f"failed to create the CUDA EP: {ort_error(text) or 'ORT gave no reason'}",
            "see ORT's message; `onnxlint doctor` checks the whole stack")


def _has_extras(version: str) -> bool:
    """onnxruntime-gpu 1.21.0 and later declare the extras `cuda` and `cudnn` (the NVIDIA wheels of the CUDA and
    cuDNN it was built with) and have onnxruntime.preload_dlls(), which loads them from site-packages."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) >= Version("1.21.0")
    except InvalidVersion:
        return False


def _from_pip_packages(site: Path) -> set[str]:
    """The libraries the NVIDIA wheels put in site-packages/nvidia/*/lib, by file name."""
    try:
        return {p.name for p in (site / "nvidia").glob("*/lib/lib*.so*")}
    except OSError:
        return set()


# a CUDA library's soname -> its NVIDIA wheel on PyPI (with -cu<CUDA major>: the names of the CUDA 11 and 12 wheels)
_WHEELS = {"libcudart": "nvidia-cuda-runtime", "libcublas": "nvidia-cublas", "libcublasLt": "nvidia-cublas",
           "libcufft": "nvidia-cufft", "libcurand": "nvidia-curand", "libcudnn": "nvidia-cudnn",
           "libnvrtc": "nvidia-cuda-nvrtc"}


def install_cuda_libraries(missing: list[str], gpu: str | None, capi: Path | None) -> str:
    """The command that installs the missing CUDA/cuDNN libraries from PyPI, for the onnxruntime-gpu installed.

    From 1.21.0 its own extras: the wheels its build needs, of the right CUDA major (CUDA 13's wheels have no
    -cu13 suffix: `nvidia-cublas-cu13` is a placeholder that refuses to install), found by preload_dlls (onnxlint
    calls it in its session children). Before, the -cu<major> wheels of the missing libraries (cuDNN at the major
    the build links), which the loader finds only through LD_LIBRARY_PATH."""
    if gpu and _has_extras(gpu):
        return (f"pip install 'onnxruntime-gpu[cuda,cudnn]=={gpu}' (the CUDA and cuDNN wheels its build needs; "
                "onnxlint loads them from site-packages), or add the folder holding them to LD_LIBRARY_PATH")
    major = _cuda_major(missing, capi)
    wheels: dict[str, None] = {}
    for lib in missing:
        m = re.match(r"(lib[A-Za-z]+)\.so\.(\d+)", lib)
        if m and m.group(1) in _WHEELS:
            name = f"{_WHEELS[m.group(1)]}-cu{major}"
            wheels[f"'{name}=={m.group(2)}.*'" if m.group(1) == "libcudnn" else f"'{name}'"] = None
    if not wheels:
        return "install the CUDA and cuDNN libraries ORT names, or add the folder holding them to LD_LIBRARY_PATH"
    return (f"pip install {' '.join(wheels)}, then add their lib folders (site-packages/nvidia/*/lib) to "
            "LD_LIBRARY_PATH, or add the folder holding the system's libraries to it")


def _cuda_major(missing: list[str], capi: Path | None) -> str:
    """The CUDA major the build links: its build_and_package_info.py (`cuda_version = '12.8'`), else the soname
    of a missing CUDA runtime or cuBLAS library, else 12."""
    try:
        info = (capi / "build_and_package_info.py").read_text() if capi is not None else ""
    except OSError:
        info = ""
    m = re.search(r"cuda_version\s*=\s*['\"](\d+)", info)
    if m:
        return m.group(1)
    for lib in missing:
        m = re.match(r"lib(?:cudart|cublas|cublasLt)\.so\.(\d+)", lib)
        if m:
            return m.group(1)
    return "12"


def preload_cuda_libraries(ort: Any) -> None:
    """In a session child, before the session: onnxruntime-gpu (1.21+) finds the CUDA and cuDNN wheels installed
    from PyPI (`pip install 'onnxruntime-gpu[cuda,cudnn]'`, or PyTorch's) only when asked, by preload_dlls(), which
    loads them from site-packages' nvidia/ folders, then by the loader's own search. What it prints is not the
    user's business: a library still missing is named by the provider's failure."""
    preload = getattr(ort, "preload_dlls", None)
    if preload is None:
        return
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            preload()
        except Exception:
            pass


def ort_error(log: str) -> str | None:
    """The last error line ORT logged ([E:...] or a 'Failed to create' warning), without its log prefix."""
    lines = [ln for ln in ANSI.sub("", log).splitlines()
             if re.search(r"\[E:onnxruntime|Failed to create \w+ExecutionProvider|CUDA failure|CUDNN failure", ln)]
    if not lines:
        return None
    line = re.sub(r"^.*?\] ", "", lines[-1]).strip()
    line = re.sub(r"/onnxruntime_src/\S+ ", "", line)
    return line[:400]


def diagnose(available: list[str], log: str, capi: Path | None) -> tuple[str, str]:
    """(why CUDAExecutionProvider is not among the session's providers, the fix)."""
    wheels = installed_wheels()
    if "CUDAExecutionProvider" not in available:
        return no_cuda_ep(available, wheels)
    why, fix = cuda_ep_failed(log, capi)
    both = both_wheels(wheels)
    return (f"{why}; also {both[0]}", f"{fix}; {both[1]}") if both else (why, fix)


def explain(available: list[str], log: str, capi: Path | None) -> str:
    """diagnose() as one sentence."""
    why, fix = diagnose(available, log, capi)
    return f"{why}; fix: {fix}"


def explain_provider(provider: str, available: list[str], log: str) -> str:
    """Why a requested provider other than CUDA's is not among the session's, with the fix, in one sentence: not
    in this onnxruntime build (TensorRT's EP is in onnxruntime-gpu, and needs TensorRT's libraries), or in it
    and not created (ORT's own message)."""
    if provider not in available:
        have = ", ".join(f"{k} {v}" for k, v in installed_wheels().items()) or "onnxruntime"
        fix = ("pip install onnxruntime-gpu, with TensorRT's libraries on LD_LIBRARY_PATH"
               if provider == "TensorrtExecutionProvider" else f"install an onnxruntime build that has {provider}")
        return f"this onnxruntime build has no {provider} ({have}; available: {', '.join(available)}); fix: {fix}"
    return (f"failed to create {provider}: {ort_error(log) or 'ORT gave no reason'}; fix: see ORT's message; "
            "`onnxlint doctor` checks the whole stack")
