"""Confirm predicted placement with a real ORT session, and check the GPU environment (`doctor`).

The session runs in a child process with a time limit: a provider library that aborts (onnxruntime-gpu
without its CUDA libraries does) is reported, never fatal.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from onnxlint.errors import UsageError

_CHILD = r"""
import json, sys, glob, os
import numpy as np
import onnxruntime as ort
model, providers, shapes, outdir = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
so = ort.SessionOptions()
so.enable_profiling = True
so.profile_file_prefix = os.path.join(outdir, "prof")
so.log_severity_level = 0
# no fusions: the session's nodes must be the model's nodes, one for one, to compare placements
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
sess = ort.InferenceSession(model, so, providers=providers)
feeds = {}
NP = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16, "tensor(int64)": np.int64,
      "tensor(int32)": np.int32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_}
rng = np.random.default_rng(0)
for i in sess.get_inputs():
    shape = shapes.get(i.name) or [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
    if i.type == "tensor(string)":
        n = int(np.prod(shape))
        feeds[i.name] = np.array([("a", "b")[k % 2] for k in range(n)], dtype=object).reshape(shape)
        continue
    dt = NP.get(i.type, np.float32)
    feeds[i.name] = (rng.random(shape) if np.issubdtype(dt, np.floating) else rng.integers(0, 2, shape)).astype(dt)
sess.run(None, feeds)
prof = sess.end_profiling()
print(json.dumps({"providers": sess.get_providers(), "profile": prof}))
"""


def parse_profile(events: list) -> dict[str, str]:
    """Node name -> provider, from ORT's profiling JSON (events with cat 'Node' carry args.provider)."""
    out: dict[str, str] = {}
    for ev in events:
        if ev.get("cat") != "Node":
            continue
        args = ev.get("args", {})
        prov = args.get("provider")
        name = ev.get("name", "")
        for suffix in ("_kernel_time", "_fence_before", "_fence_after"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        if prov and name:
            out[name] = prov
    return out


_PLACED = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
_ALL = re.compile(r"All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)")
_LINE = re.compile(r"^\s+(\w+) \((.*)\)\s*$")


def parse_verbose_log(text: str) -> dict[str, str]:
    """Node name -> provider, from ORT's VERBOSE 'Node placements' lines (session_state.cc)."""
    out: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        m = _PLACED.search(line)
        if m:
            current = m.group(1)
            continue
        m = _LINE.match(line.split("]", 1)[-1] if "] " in line and not line.startswith(" ") else line)
        if current and m:
            out[m.group(2)] = current
        elif current and not line.startswith(" "):
            current = None if not _PLACED.search(line) else current
    return out


def run_session(model: Path, providers: list[str], shapes: dict, timeout: float = 300) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            proc = subprocess.run([sys.executable, "-c", _CHILD, str(model), json.dumps(providers), json.dumps(shapes), tmp],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"session did not finish within {timeout:.0f} s"}
        if proc.returncode != 0:
            err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
            why = err[-1] if err else f"child exited with code {proc.returncode}"
            if proc.returncode < 0:
                why = f"the ORT process was killed by signal {-proc.returncode} (a provider library crashed): {why}"
            return {"error": why[:400]}
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        with open(data["profile"]) as fh:
            events = json.load(fh)
        data["nodes"] = parse_profile(events)
        data["log_nodes"] = parse_verbose_log(proc.stderr)
        return data


def compare(predicted: dict, actual: dict) -> dict:
    """predicted/actual: node name -> 'cpu'|'gpu'. Confirmed/missed/false alarms are about CPU placement."""
    confirmed, missed, false_alarm, agree = [], [], [], 0
    for name, where in actual.items():
        pred = predicted.get(name)
        if pred is None:
            continue
        if where == "cpu" and pred == "cpu":
            confirmed.append(name)
        elif where == "cpu":
            missed.append(name)
        elif pred == "cpu":
            false_alarm.append(name)
        else:
            agree += 1
    return {"confirmed": confirmed, "missed": missed, "false_alarms": false_alarm, "agree_on_device": agree}


def _parse_shapes(values) -> dict:
    out = {}
    for v in values or []:
        name, _, dims = v.partition("=")
        if not dims:
            raise UsageError(f"--shape wants name=1x3x224x224, got {v!r}")
        out[name] = [int(x) for x in dims.lower().split("x")]
    return out


def main(argv) -> int:
    from onnxlint import loading
    from onnxlint.subcommands import _Parser, _partition

    p = _Parser(prog="onnxlint verify", description="Build a real ORT session and compare placement with the prediction.")
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--providers", default="CUDAExecutionProvider,CPUExecutionProvider")
    p.add_argument("--shape", action="append", help="dynamic input dims, e.g. x=1x3x224x224 (default: 1 for each)")
    p.add_argument("--format", default="text", choices=["text", "json"])
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args(argv)
    providers = [x.strip() for x in args.providers.split(",") if x.strip()]
    target = "ort-cuda" if "CUDAExecutionProvider" in providers else "ort-cpu"
    shapes = _parse_shapes(args.shape)
    results, failed = [], False
    for path in loading.expand_paths([str(m) for m in args.models]):
        pred = _partition(path, target, None)
        name_of = {n["node"]: n for n in pred["nodes"]}
        predicted = {}
        for n in pred["nodes"]:
            short = n["node"].rsplit("/", 1)[-1]
            predicted[short] = "cpu" if n["ep"] in ("CPUExecutionProvider", None) else "gpu"
        actual_run = run_session(path, providers, shapes, args.timeout)
        entry = {"filename": str(path), "target": target, "providers_requested": providers}
        if "error" in actual_run:
            entry["error"] = actual_run["error"]
            failed = True
        else:
            nodes = actual_run["log_nodes"] or actual_run["nodes"]
            actual = {k: ("cpu" if v == "CPUExecutionProvider" else "gpu") for k, v in nodes.items()}
            entry["providers_used"] = actual_run["providers"]
            entry.update(compare(predicted, actual))
            entry["nodes_observed"] = len(actual)
            failed |= bool(entry["missed"])
        results.append(entry)
        del name_of
    if args.format == "json":
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            if "error" in r:
                print(f"{r['filename']}: verify failed: {r['error']}")
                continue
            print(f"{r['filename']}: providers {', '.join(r['providers_used'])}; {r['nodes_observed']} nodes observed")
            print(f"  confirmed CPU fallbacks: {len(r['confirmed'])}  missed: {len(r['missed'])}  "
                  f"false alarms: {len(r['false_alarms'])}  agree on device: {r['agree_on_device']}")
            for k in ("missed", "false_alarms"):
                for n in r[k]:
                    print(f"    {k}: {n}")
    return 1 if failed else 0


# ----------------------------------------------------------------------------- doctor


def _check(ok: bool, text: str, fix: str = "") -> str:
    return f"{'✓' if ok else '✗'} {text}" + (f" — fix: {fix}" if fix and not ok else "")


def doctor(argv) -> int:
    from importlib import metadata

    lines = []
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
        res = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(path)!r})"], capture_output=True, text=True, timeout=60)
        missing = re.findall(r"(lib[\w.+-]+\.so[.\d]*): cannot open shared object file", res.stderr)
        if res.returncode == 0:
            lines.append(_check(True, f"{ep} EP library loads ({lib})"))
        else:
            lines.append(_check(False, f"{ep} EP library does not load: missing {', '.join(sorted(set(missing))) or res.stderr.strip()[-200:]}",
                                "install the CUDA/cuDNN (or TensorRT) runtime libraries matching this onnxruntime-gpu build, "
                                "e.g. pip install 'nvidia-cudnn-cu12' 'nvidia-cublas-cu12'"))
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        lines.append(_check(out.returncode == 0, f"GPU visible: {out.stdout.strip() or out.stderr.strip()}"))
    else:
        lines.append(_check(False, "GPU visible: nvidia-smi not found", "run on a machine with an NVIDIA GPU and driver"))
    cudart = sorted({os.path.basename(p) for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") + ["/usr/local/cuda/lib64"]
                     if d for p in glob.glob(os.path.join(d, "libcudart.so*"))})
    lines.append(_check(bool(cudart), f"CUDA runtime found: {', '.join(cudart) or 'none on LD_LIBRARY_PATH or /usr/local/cuda'}",
                        "install the CUDA toolkit/runtime the onnxruntime-gpu release notes name"))
    print("\n".join(lines))
    return 0
