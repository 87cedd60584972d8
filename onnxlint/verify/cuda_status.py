"""Why the CUDA execution provider was not exercised, in one line with its fix, from what ORT said.

Three causes a user can act on: a build without the CUDA EP (the CPU wheel, or both wheels installed, where
the CPU wheel's files overwrote onnxruntime-gpu's), and CUDA/cuDNN libraries the provider library cannot
load (named all at once from its dynamic dependencies, not only the first one dlopen reports).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

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
    if capi is not None and (capi / CUDA_LIBRARY).exists():
        missing |= set(missing_libraries(capi / CUDA_LIBRARY))
    need = re.search(r"Require (cuDNN [^ ]+ and CUDA [^ .]+\.\*)", text)
    if missing:
        major = next((m.group(1) for m in (re.search(r"\.so\.(\d+)", x) for x in sorted(missing) if "cudart" in x) if m), "12")
        wants = f" (ORT requires {need.group(1)})" if need else ""
        return (f"the CUDA EP library cannot load: missing {', '.join(sorted(missing))}{wants}",
                f"pip install 'nvidia-cudnn-cu{major}' 'nvidia-cublas-cu{major}' 'nvidia-cufft-cu{major}' "
                f"'nvidia-curand-cu{major}' 'nvidia-cuda-runtime-cu{major}', or add the folder holding them to LD_LIBRARY_PATH")
    return (f"failed to create the CUDA EP: {ort_error(text) or 'ORT gave no reason'}",
            "see ORT's message; `onnxlint doctor` checks the whole stack")


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
