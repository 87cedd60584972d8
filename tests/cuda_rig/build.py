"""Build the CUDA test rig: onnxruntime-gpu's real CUDA execution provider on fake CUDA libraries, no GPU.

    python tests/cuda_rig/build.py [RIG_DIR]        (default: .cuda-rig in the repository root)

Makes RIG_DIR/venv (onnxruntime-gpu ONNXRUNTIME_GPU, default 1.24.4, plus this checkout, editable),
RIG_DIR/both (the CPU wheel over it, as `pip install onnxruntime` after onnxruntime-gpu leaves an environment)
and RIG_DIR/libs: one fake library per CUDA library the provider links (same soname, every imported symbol
exported under its version node, since the provider is linked BIND_NOW with versioned imports) plus
libcuda.so.1, which a static constructor of the provider dlopens. fake_cudart.c and fake_cudalibs.c give
the functions whose results matter; every other import is generated as `int f(void) { return 0; }`.
Session creation is then real (kernel registry, GetCapability, kernel constructors); a Run computes nothing.
tests/test_cuda_rig.py uses it when RIG_DIR/ready exists. Needs gcc, readelf, nm, strings, PyPI (or a pip
cache). About a minute and 1.3 GB on disk.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VERSION = os.environ.get("ONNXRUNTIME_GPU", "1.24.4")
# the headers for cudaDeviceProp's layout: the runtime wheel, and crt/host_defines.h from the nvcc wheel
HEADER_WHEELS = ("nvidia-cuda-runtime-cu12==12.9.79", "nvidia-cuda-nvcc-cu12==12.9.86")
# flag for fake_cudalibs.c per library stem
FLAGS = {"libcuda": "RIG_DRIVER", "libcublas": "RIG_CUBLAS", "libcublasLt": "RIG_CUBLASLT", "libcudnn": "RIG_CUDNN",
         "libcufft": "RIG_CUFFT", "libnvinfer": "RIG_NVINFER"}


def out(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def venv(path: Path, *installs: list[str]) -> Path:
    py = path / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    for args in installs:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args], check=True)
    return py


def headers(rig: Path) -> Path:
    inc = rig / "include"
    if (inc / "cuda_runtime_api.h").exists() and (inc / "crt" / "host_defines.h").exists():
        return inc
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, *HEADER_WHEELS], check=True)
        for wheel in Path(tmp).glob("*.whl"):
            with zipfile.ZipFile(wheel) as z:
                for name in z.namelist():
                    if "/include/" in name and not name.endswith("/"):
                        dst = inc / name.split("/include/", 1)[1]
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        dst.write_bytes(z.read(name))
    return inc


def imports(providers: list[Path]) -> dict[str, set[str]]:
    """soname -> the symbols the providers import from it (libcuda.so.1: the driver names in their strings)."""
    need: dict[str, set[str]] = {"libcuda.so.1": set()}
    for lib in providers:
        dyn = out("readelf", "-d", str(lib))
        sonames = [n for n in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
                   if re.match(r"lib(cu|nvrtc|nvJitLink|nvinfer|nvonnxparser)", n)]
        for n in sonames:
            need.setdefault(n, set())
        trt = next((n for n in sonames if n.startswith("libnvinfer.")), None)
        for line in out("nm", "-D", "--undefined-only", str(lib)).splitlines():
            sym = line.split()[-1]
            name, _, version = sym.partition("@")
            version = version.lstrip("@")
            if version in need:
                need[version].add(name)
            elif not version and trt and name != "Provider_GetHost" and not name.startswith("_"):
                need[trt].add(name)  # TensorRT's C entry points are unversioned
        need["libcuda.so.1"] |= set(re.findall(r"^(cu[A-Z]\w+)$", out("strings", "-n", "5", str(lib)), re.M))
    return need


def build_libs(providers: list[Path], inc: Path, libs: Path) -> None:
    libs.mkdir(parents=True, exist_ok=True)
    for soname, symbols in sorted(imports(providers).items()):
        stem = soname.split(".so")[0]
        objs = []
        if stem == "libcudart":
            objs.append(libs / "fake_cudart.o")
            subprocess.run(["gcc", "-O1", "-fPIC", "-c", "-I", str(inc), str(HERE / "fake_cudart.c"), "-o", str(objs[-1])], check=True)
        elif stem in FLAGS:
            objs.append(libs / f"fake_{stem}.o")
            subprocess.run(["gcc", "-O1", "-fPIC", "-c", f"-D{FLAGS[stem]}", str(HERE / "fake_cudalibs.c"), "-o", str(objs[-1])],
                           check=True)
        written = {ln.split()[2] for o in objs for ln in out("nm", "--defined-only", str(o)).splitlines()
                   if len(ln.split()) == 3 and ln.split()[1] in "TDBR"}
        gen = libs / f"gen_{stem}.c"
        gen.write_text("".join(f"int {s}(void) {{ return 0; }}\n" for s in sorted(symbols - written)))
        script = libs / f"{stem}.map"
        script.write_text(f"{soname} {{ global: *; }};\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1", f"-Wl,-soname,{soname}", f"-Wl,--version-script,{script}",
                        "-o", str(libs / soname), str(gen), *map(str, objs)], check=True)
        print(f"{soname}: {len(symbols)} imports, {len(symbols & written)} written by hand")


def main(argv: list[str]) -> int:
    rig = Path(argv[0]).resolve() if argv else ROOT / ".cuda-rig"
    rig.mkdir(parents=True, exist_ok=True)
    (rig / "ready").unlink(missing_ok=True)
    py = venv(rig / "venv", [f"onnxruntime-gpu=={VERSION}", "-e", str(ROOT)])
    capi = Path(out(str(py), "-c", "import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))").strip()) / "capi"
    providers = [p for p in (capi / "libonnxruntime_providers_cuda.so", capi / "libonnxruntime_providers_tensorrt.so") if p.exists()]
    build_libs(providers, headers(rig), rig / "libs")
    # both wheels: the CPU wheel's files over onnxruntime-gpu's (what pip leaves), onnxruntime-gpu still recorded
    both = venv(rig / "both", ["--no-deps", f"onnxruntime=={VERSION}"])
    site = Path(out(str(both), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    gpu_site = Path(out(str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    # after the CPU wheel on sys.path: onnx, numpy, onnxlint (its editable .pth too, hence addsitedir)
    (site / "zz_cuda_rig.pth").write_text(f"import site; site.addsitedir({str(gpu_site)!r})\n")
    (rig / "ready").write_text(f"onnxruntime-gpu {VERSION}\n{sysconfig.get_python_version()}\n")
    print(f"rig ready in {rig}: LD_LIBRARY_PATH={rig / 'libs'} {py}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
