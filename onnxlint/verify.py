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

from onnxlint.errors import UsageError, strip_cpp_frames

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
# placement is decided at session creation (and logged then); a run that fails still leaves that evidence
print(json.dumps({"providers": sess.get_providers()}), flush=True)
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
try:
    sess.run(None, feeds)
except Exception as exc:
    print(json.dumps({"run_error": str(exc).strip().splitlines()[-1][:300]}), flush=True)
print(json.dumps({"profile": sess.end_profiling()}), flush=True)
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


def all_placed_on(text: str) -> tuple[str, int] | None:
    """(provider, node count) when the log says 'All nodes placed on [X]' for the main graph (no names follow)."""
    m = _ALL.search(text)
    return (m.group(1), int(m.group(2))) if m else None


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
        data: dict = {}
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                data.update(json.loads(line))
        if proc.returncode != 0 or "providers" not in data:
            why = _error_line(proc.stderr) or f"child exited with code {proc.returncode}"
            if proc.returncode < 0:
                why = f"the ORT process was killed by signal {-proc.returncode} (a provider library crashed): {why}"
            return {"error": why[:400]}
        events = []
        if data.get("profile") and os.path.exists(data["profile"]):
            with open(data["profile"]) as fh:
                events = json.load(fh)
        data["nodes"] = parse_profile(events)
        data["log_nodes"] = parse_verbose_log(proc.stderr)
        data["all_on"] = all_placed_on(proc.stderr)
        data["cuda_problem"] = cuda_problem(proc.stderr)
        return data


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MISSING_SO = re.compile(r"(lib[\w.+-]+\.so[.\d]*): cannot open shared object file")


def cuda_problem(stderr: str) -> str | None:
    """Why the CUDA EP did not come up, in one line, from ORT's own messages."""
    text = _ANSI.sub("", stderr)
    missing = sorted(set(_MISSING_SO.findall(text)) - {"libonnxruntime_providers_cuda.so"})
    need = re.search(r"Require ([^.]*\.\* and [^.]*\.\*)", text)
    if "not in available provider names" in text:
        return "this onnxruntime build has no CUDA EP (install onnxruntime-gpu)"
    if missing or need or "Failed to create CUDAExecutionProvider" in text:
        parts = [f"missing {', '.join(missing)}"] if missing else []
        if need:
            parts.append(f"ORT requires {need.group(1)}")
        return "failed to create CUDAExecutionProvider" + (f" ({'; '.join(parts)})" if parts else "")
    return None


_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d")


def _error_line(stderr: str) -> str:
    """The exception line of the child's traceback, not ORT's log lines printed after it."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith((" ", "\t")) and not _LOG_LINE.match(ln)
             and not ln.startswith("Traceback")]
    line = lines[-1] if lines else ""
    return strip_cpp_frames(line.replace("onnxruntime.capi.onnxruntime_pybind11_state.", ""))


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


def target_for(providers: list[str]) -> str:
    return "ort-cuda" if "CUDAExecutionProvider" in providers else "ort-cpu"


def _prediction(path: Path, target: str, ort_version: str | None):
    """(partition, node name -> predicted node, node name -> 'cpu'|'gpu'); ORT names nodes by their name."""
    from onnxlint.subcommands import _partition

    pred = _partition(path, target, ort_version)
    by_name = {n["node"].rsplit("/", 1)[-1]: n for n in pred["nodes"]}
    predicted = {k: ("cpu" if n["ep"] in ("CPUExecutionProvider", None) else "gpu") for k, n in by_name.items()}
    return pred, by_name, predicted


def verify_file(path: Path, providers: list[str], shapes: dict, timeout: float = 300,
                ort_version: str | None = None) -> dict:
    """Predict, run a real session, compare. The entry is JSON-ready."""
    target = target_for(providers)
    pred, by_name, predicted = _prediction(path, target, ort_version)
    entry: dict = {"filename": str(path), "target": target, "providers_requested": providers}
    run = run_session(path, providers, shapes, timeout)
    if "error" in run:
        entry["error"] = run["error"]
        return entry
    if target == "ort-cuda" and "CUDAExecutionProvider" not in run["providers"]:
        why = run.get("cuda_problem") or "the session did not take the CUDA EP"
        entry["cuda_unavailable"] = (f"CUDAExecutionProvider was requested but the session has only "
                                     f"{', '.join(run['providers'])}: {why}; `onnxlint doctor` checks the stack. "
                                     "Verified against the ort-cpu prediction instead.")
        target = entry["target"] = "ort-cpu"
        pred, by_name, predicted = _prediction(path, target, ort_version)
    if "run_error" in run:
        entry["run_error"] = (f"the session was created but its run failed ({run['run_error']}); placements come "
                              "from the session log. Dynamic dims default to 1: pass --shape name=1x3x224x224")
    observed = run["log_nodes"] or run["nodes"]
    if not run["log_nodes"] and run.get("all_on"):
        # the log names no nodes when one provider took them all: every main-graph node ran there
        observed = {**{n["node"].rsplit("/", 1)[-1]: run["all_on"][0] for n in pred["nodes"]
                       if n["node"].count("/") == 1 and n["node"].startswith("graph/")}, **run["nodes"]}
    actual = {k: ("cpu" if v == "CPUExecutionProvider" else "gpu") for k, v in observed.items()}
    entry["providers_used"] = run["providers"]
    entry.update(compare(predicted, actual))
    entry["nodes_observed"] = len(actual)
    entry["on_cpu"] = sum(1 for v in actual.values() if v == "cpu")
    entry["ran_on"] = {by_name[k]["node"]: observed[k] for k in observed if k in by_name}
    entry["details"] = {k: {"node": by_name[k]["node"], "op_type": by_name[k]["op_type"],
                            "predicted_ep": by_name[k]["ep"] or "no provider", "ran_on": observed[k]}
                        for k in entry["confirmed"] + entry["missed"] + entry["false_alarms"]}
    return entry


def entry_notes(entry: dict) -> list[str]:
    """What the reader must know to trust the numbers: no CUDA session, or a run that failed."""
    return [entry[k] for k in ("cuda_unavailable", "run_error") if k in entry]


def summary_line(entry: dict) -> str:
    if "error" in entry:
        return f"verify failed: {entry['error']}"
    if entry["target"] == "ort-cpu":
        agree = len(entry["confirmed"]) + entry["agree_on_device"]
        return (f"verify ({', '.join(entry['providers_used'])}): {entry['nodes_observed']} nodes observed, "
                f"{entry['on_cpu']} on CPU; {agree}/{entry['nodes_observed']} agree with the ort-cpu prediction, "
                f"missed {len(entry['missed'])}")
    return (f"verify ({', '.join(entry['providers_used'])}): {entry['nodes_observed']} nodes observed, "
            f"{entry['on_cpu']} on CPU; confirmed fallbacks {len(entry['confirmed'])}, missed {len(entry['missed'])}, "
            f"false alarms {len(entry['false_alarms'])}")


def _message(rule, values: dict) -> str:
    """A verification rule's message: {verify.X} and {node}/{op_type}/{file} come from values, not a graph."""
    from onnxlint.engine import parse_template

    out = []
    for part in parse_template(rule.message):
        if part.__class__ is str:
            out.append(part)
        else:
            key = None if part is None else (part[2] if part[0] == "verify" else part[0])
            out.append(str(values.get(key, "?")))
    return "".join(out)


def attach(res, entry: dict, ruleset, selected=lambda code: True) -> None:
    """Verification findings (OLX901-903) into a lint result, and each lint finding on an observed node
    learns where the node really ran (Finding.verified)."""
    from onnxlint.report import Finding

    rules = ruleset.by_id()

    def add(code, node=None, op_type=None, **values):
        rule = rules.get(code)
        if rule is None or not selected(code):
            return
        values.update(node=node or "model", op_type=op_type or "", file=res.filename)
        res.findings.append(Finding(code=code, name=rule.name, severity=rule.severity, target=entry["target"],
                                    filename=res.filename, node=node, op_type=op_type, message=_message(rule, values),
                                    hint=rule.hint or ""))

    if "error" in entry:
        add("OLX903", error=entry["error"])
        return
    for kind, code in (("missed", "OLX901"), ("false_alarms", "OLX902")):
        for name in entry[kind]:
            d = entry["details"][name]
            add(code, d["node"], d["op_type"], provider=d["ran_on"], predicted=d["predicted_ep"])
    for f in res.findings:
        if f.node in entry["ran_on"] and f.verified is None and f.target in ("ort-cuda", "ort-cpu", "any"):
            f.verified = entry["ran_on"][f.node]


def _lint_settings(path: Path, target: str, ort_version: str | None, *extra: str):
    """(args, Settings) of `onnxlint PATH --target TARGET ...` with the config file nearest to the model."""
    from onnxlint import cli, config as config_mod

    argv = [str(path), "--target", target, "--no-progress", *extra] + (["--ort-version", ort_version] if ort_version else [])
    largs = cli.build_parser().parse_args(argv)
    return largs, cli.Settings(largs, config_mod.find_for(path.parent))


def _fix_in_place(path: Path, target: str, ort_version: str | None) -> list[str]:
    """The lint --fix path (safe fixes only, verified, atomic), for `verify --fix`."""
    from onnxlint import cli

    largs, settings = _lint_settings(path, target, ort_version, "--fix")
    res = cli.lint_file(path, settings, want_placement=False)
    if res.error:
        return [f"fix not attempted: {res.error}"]
    cli._fix_file(largs, path, settings, res)
    return res.notes or ["nothing to fix"]


def main(argv) -> int:
    from onnxlint import loading
    from onnxlint.subcommands import _Parser

    p = _Parser(prog="onnxlint verify", description="Build a real ORT session and compare placement with the prediction.")
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--providers", default="CUDAExecutionProvider,CPUExecutionProvider")
    p.add_argument("--shape", action="append", help="dynamic input dims, e.g. x=1x3x224x224 (default: 1 for each)")
    p.add_argument("--format", default="text", choices=["text", "json", "sarif"])
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--ort-version", help="kernel tables of this ORT version for the prediction (default: installed)")
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place, verify again, show before/after")
    args = p.parse_args(argv)
    providers = [x.strip() for x in args.providers.split(",") if x.strip()]
    shapes = _parse_shapes(args.shape)
    paths = loading.expand_paths([str(m) for m in args.models])
    results, failed = [], False
    for path in paths:
        entry = verify_file(path, providers, shapes, args.timeout, args.ort_version)
        if args.fix:  # also when the session failed: a training-mode BatchNorm or mismatched Equal is fixable
            notes = _fix_in_place(path, entry["target"], args.ort_version)
            entry = {"filename": str(path), "before": entry, "fix": notes,
                     "after": verify_file(path, providers, shapes, args.timeout, args.ort_version)}
        last = entry.get("after", entry)
        failed |= "error" in last or bool(last.get("missed"))  # a failed session is not a pass
        results.append(entry)
    if args.format == "json":
        print(json.dumps(results, indent=2))
    elif args.format == "sarif":
        print(_sarif(paths, results, providers, args.ort_version), end="")
    else:
        for r in results:
            if "before" in r:
                b, a = r["before"], r["after"]
                print(f"{r['filename']}:")
                print(f"  before fix: {summary_line(b)}")
                for note in entry_notes(b):
                    print(f"    note: {note}")
                for note in r["fix"]:
                    print(f"  fix: {note}")
                print(f"  after fix:  {summary_line(a)}")
                for note in entry_notes(a):
                    print(f"    note: {note}")
                if "error" not in a and "error" not in b:
                    left = sorted(set(b["confirmed"]) - set(a["confirmed"]))
                    print(f"  CPU nodes {b['on_cpu']} -> {a['on_cpu']}" + (f"; back on the device: {', '.join(left)}" if left else ""))
                continue
            print(f"{r['filename']}: {summary_line(r)}")
            for note in entry_notes(r):
                print(f"  note: {note}")
            for k in ("missed", "false_alarms"):
                for n in r.get(k, ()):
                    print(f"    {k}: {n}")
    return 1 if failed else 0


def _sarif(paths, results, providers, ort_version) -> str:
    """The lint findings for the verified target, each marked with where its node ran, plus OLX901-903."""
    from onnxlint import cli
    from onnxlint.formats import render
    from onnxlint.report import Report

    report = Report()
    for path, entry in zip(paths, results):
        entry = entry.get("after", entry)
        _, settings = _lint_settings(path, entry["target"], ort_version)
        res = cli.lint_file(path, settings, want_placement=False)
        attach(res, entry, cli.get_ruleset(settings.rule_dirs), settings.selected)
        report.files.append(res)
        report.rules = [r for r in cli.get_ruleset(settings.rule_dirs).rules if settings.selected(r.id)]
    return render("sarif", report)


# ----------------------------------------------------------------------------- doctor


def _check(ok: bool, text: str, fix: str = "") -> str:
    return f"{'✓' if ok else '✗'} {text}" + (f" — fix: {fix}" if fix and not ok else "")


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
    found = {}
    for d in dirs:
        for path in glob.glob(os.path.join(d, f"{stem}.so.*")):
            m = re.match(rf"{stem}\.so\.(\d+)", os.path.basename(path))
            if m:
                found.setdefault(int(m.group(1)), path)
    return found


def _cuda_library_checks(capi: Path | None) -> list[str]:
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
                                f"e.g. pip install 'nvidia-cudnn-cu{_cuda_major()}' 'nvidia-cublas-cu{_cuda_major()}'"))
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        lines.append(_check(out.returncode == 0, f"GPU visible: {out.stdout.strip() or out.stderr.strip()}"))
    else:
        lines.append(_check(False, "GPU visible: nvidia-smi not found", "run on a machine with an NVIDIA GPU and driver"))
    lines.extend(_cuda_library_checks(capi))
    print("\n".join(lines))
    return 0
