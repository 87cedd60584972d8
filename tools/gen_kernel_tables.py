#!/usr/bin/env python3
"""Generate onnxlint's ORT kernel tables (onnxlint/data/kernels/ort-<ep>.json.gz) from ORT's own binaries.

Never edit those files by hand. Three steps, each a subcommand:

1. ``read``: for each published release, download the wheel (``pip download --no-deps``), install it into a
   throw-away target folder, and read the live kernel registry (``get_all_opkernel_def``) in a subprocess of
   a helper interpreter. Writes one raw file per release and provider, ``RAW/<version>-<ep>.json``, then deletes
   the wheel and the folder. ``onnxruntime`` (CPU wheels) gives the CPU table; ``onnxruntime-gpu`` gives CUDA.

       python tools/gen_kernel_tables.py read --package onnxruntime --from 1.16 --raw RAW --work WORK
       python tools/gen_kernel_tables.py read --package onnxruntime-gpu --from 1.17 --raw RAW --work WORK \\
           --stub-tool /path/to/ort-cuda-truth --cuda-include CUDA_INCLUDE

   Prerequisite for the CUDA provider (no GPU needed, and none is used): ``libonnxruntime_providers_cuda.so``
   only loads when its CUDA libraries do. The generator does not ship stub libraries; it calls the workspace
   harness's ``build_stubs.py`` (``--stub-tool DIR``, the folder holding it, e.g. ort-cuda-truth/) once per
   release on that release's provider libraries (CUDA and TensorRT: ``get_all_opkernel_def`` creates every EP),
   and runs the registry dump with ``LD_LIBRARY_PATH`` set to the resulting stub folder. ``build_stubs.py``
   needs gcc, binutils and the CUDA 12 headers (``--cuda-include``: the ``include/`` folders of the
   nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 wheels merged; ``cuda-include`` below fetches them).
   ``--stub-dir DIR`` instead uses one prebuilt stub folder for every release (it must export every symbol
   the release's provider imports).

   Wheels are tried for Python 3.11, then 3.12, 3.10 (``--pythons``); ``--python 3.11=PATH`` names the
   interpreter for a version (default ``python3.11`` on PATH). The dump runs in a helper venv of that
   interpreter (``WORK/helper-py3.11``, made once, with onnxruntime's dependencies and numpy<2) with the
   unzipped wheel on PYTHONPATH; a release that does not import there is retried in a venv of its own with the
   wheel's own dependencies.

2. ``md``: fallback for a release with no readable wheel: parse ORT's ``docs/OperatorKernels.md``.

       python tools/gen_kernel_tables.py md data/upstream/ort/OperatorKernels@001d12d2.cuda.md \\
           --ort-version 1.24.4 --source "microsoft/onnxruntime@001d12d2 docs/OperatorKernels.md" --raw RAW

3. ``pack``: all raw files -> one compact file per provider (rows shared across releases, each with a bit mask of
   the releases that register it; see ``onnxlint/ort/kernel_registry.py``).

       python tools/gen_kernel_tables.py pack --raw RAW

``live`` reads the registry of an interpreter that already has onnxruntime (prints a raw file's JSON).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxlint.ort import kernel_registry as kernels  # noqa: E402
from onnxlint.ort.releases import version_key  # noqa: E402

OUT = ROOT / "onnxlint" / "data" / "kernels"
EPS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
PKG_EP = {"onnxruntime": "cpu", "onnxruntime-gpu": "cuda"}
# Domains whose schemas onnx itself knows (onnxlint binds formal parameters with onnx's schemas there); for the
# others (ORT's contrib domains) the formal parameters are stored with the table.
ONNX_DOMAINS = {"ai.onnx", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training"}

# Runs inside the release's interpreter: every KernelDef as the registry holds it, plus the formal parameters
# of the contrib-domain schemas (type-constraint names per input/output) for binding node types.
DUMP_SCRIPT = r"""
import json, sys
import onnxruntime
from onnxruntime.capi import _pybind_state as C
wanted = set(sys.argv[1].split(","))
rows = []
for k in C.get_all_opkernel_def():
    if k.provider in wanted:
        rows.append([k.provider, k.domain or "ai.onnx", k.op_name, list(k.version_range),
                     {n: sorted(t) for n, t in k.type_constraints.items()}])
schemas = {}
try:
    for s in C.get_all_operator_schema():
        dom = s.domain or "ai.onnx"
        if dom in ("ai.onnx", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training"):
            continue
        prev = schemas.get((dom, s.name))
        if prev is None or prev[0] < s.since_version:
            f = lambda ps: [[p.name, p.typeStr] for p in ps]
            schemas[(dom, s.name)] = (s.since_version, {"inputs": f(s.inputs), "outputs": f(s.outputs)})
except Exception as exc:  # schemas only feed the contrib-op parameter binding
    print("schemas unavailable:", exc, file=sys.stderr)
json.dump({"ort_version": onnxruntime.__version__, "rows": rows,
           "schemas": [[d, o, p] for (d, o), (_, p) in sorted(schemas.items())]}, sys.stdout)
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run([str(c) for c in cmd], **kw)


# --------------------------------------------------------------------------- raw per-release files


def raw_from_dump(dump: dict, ep: str, source: str) -> dict:
    """One provider's KernelDefs of a dump -> raw file content (defs deduplicated, sorted)."""
    provider = EPS[ep]
    defs = sorted({json.dumps([d, o, lo, hi, c], sort_keys=True) for p, d, o, (lo, hi), c in dump["rows"] if p == provider})
    defs = [json.loads(s) for s in defs]
    ops = {(d, o) for d, o, *_ in defs}
    params = {}
    for d, o, p in dump.get("schemas", []):
        if (d, o) in ops and d not in ONNX_DOMAINS:
            params.setdefault(d, {})[o] = p
    return {"ep": provider, "ort_version": dump["ort_version"], "source": source, "defs": defs, "params": params}


def raw_from_table(ep: str, version: str, source: str, table: dict) -> dict:
    """Canonical (merged-row) table, e.g. from OperatorKernels.md -> raw file content."""
    defs = [[d, o, lo, hi, c] for d, by_op in table["ops"].items() for o, rows in by_op.items() for lo, hi, c in rows]
    params = {d: {o: p for o, p in by_op.items()} for d, by_op in table.get("params", {}).items() if d not in ONNX_DOMAINS}
    return {"ep": EPS[ep], "ort_version": version, "source": source, "defs": sorted(defs, key=json.dumps), "params": params}


def write_raw(raw_dir: Path, ep: str, raw: dict, name: str | None = None) -> Path:
    raw_dir.mkdir(parents=True, exist_ok=True)
    path = raw_dir / (name or f"{raw['ort_version']}-{ep}.json")
    path.write_text(json.dumps(raw, sort_keys=True, separators=(",", ":")) + "\n")
    return path


# --------------------------------------------------------------------------- reading a release's wheel


def pypi_versions(package: str, python: str) -> list[str]:
    proc = run([python, "-m", "pip", "index", "versions", package])
    m = re.search(r"Available versions: (.*)", proc.stdout)
    if not m:
        raise RuntimeError(f"pip index versions {package}: {proc.stderr.strip()[-300:]}")
    return sorted((v.strip() for v in m.group(1).split(",")), key=version_key)


def download(package: str, version: str, dest: Path, pythons: list[str]) -> tuple[Path, str]:
    """The release's manylinux x86_64 wheel for the first Python version that has one."""
    errors = []
    for py in pythons:
        proc = run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--only-binary=:all:",
                    "--python-version", py, "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64",
                    "-d", dest, f"{package}=={version}"])
        wheels = sorted(dest.glob("*.whl"))
        if proc.returncode == 0 and wheels:
            return wheels[0], py
        errors.append(f"py{py}: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    raise RuntimeError(f"no wheel for {package}=={version}: " + "; ".join(errors))


def ensure_helper(venv: Path, python: str) -> str:
    """A venv with onnxruntime's runtime dependencies (not onnxruntime itself). numpy<2: the 1.16-1.18 wheels
    are built against numpy 1 and newer ones import under it too."""
    py = venv / "bin" / "python"
    if not py.exists():
        run([python, "-m", "venv", venv], check=True)
        run([py, "-m", "pip", "install", "-q", "numpy<2", "protobuf", "flatbuffers", "packaging", "coloredlogs", "sympy"], check=True)
    return str(py)


def cuda_env(capi: Path, work: Path, args) -> dict:
    env = dict(os.environ)
    if args.stub_dir:
        stubs = Path(args.stub_dir)
    else:
        if not args.stub_tool:
            raise SystemExit("the CUDA provider needs --stub-tool (folder with build_stubs.py) or --stub-dir")
        stubs = work / "stubs"
        providers = [capi / "libonnxruntime_providers_cuda.so"]
        if (capi / "libonnxruntime_providers_tensorrt.so").exists():
            providers.append(capi / "libonnxruntime_providers_tensorrt.so")
        proc = run([sys.executable, Path(args.stub_tool) / "build_stubs.py", *providers, stubs, args.cuda_include])
        if proc.returncode != 0:
            raise RuntimeError(f"build_stubs.py failed: {proc.stderr.strip()[-500:]}")
    env["LD_LIBRARY_PATH"] = f"{stubs}:{env['LD_LIBRARY_PATH']}" if env.get("LD_LIBRARY_PATH") else str(stubs)
    return env


def needed_cuda_libs(so: Path) -> list[str]:
    out = run(["readelf", "-d", so]).stdout
    return [n for n in re.findall(r"Shared library: \[([^\]]+)\]", out) if re.match(r"lib(cu|nvrtc|nvinfer)", n)]


def read_release(package: str, version: str, args) -> dict[str, dict]:
    """Download, install, dump, clean up. Returns {raw file name: raw file content}.

    A GPU wheel gives the CUDA table and also its CPU provider's table (``<version>-cpu.gpu-wheel.json``),
    used for a release published only as onnxruntime-gpu (e.g. 1.20.2)."""
    ep = PKG_EP[package]
    work = Path(tempfile.mkdtemp(prefix=f"ort-{version}-", dir=args.work))
    try:
        wheel, py = download(package, version, work, args.pythons)
        target = work / "site"
        with zipfile.ZipFile(wheel) as z:
            z.extractall(target)
        wheel.unlink()
        capi = target / "onnxruntime" / "capi"
        for so in capi.glob("*.so*"):
            so.chmod(0o755)
        env = dict(os.environ)
        build = ""
        if ep == "cuda":
            libs = needed_cuda_libs(capi / "libonnxruntime_providers_cuda.so")
            build = "CUDA " + next((n.split(".so.")[1].split(".")[0] for n in libs if n.startswith("libcudart")), "?") + " build"
            env = cuda_env(capi, work, args)
        helper = ensure_helper(Path(args.work) / f"helper-py{py}", args.python_for.get(py, f"python{py}"))
        env["PYTHONPATH"] = str(target)
        env["PYTHONNOUSERSITE"] = "1"
        providers = ",".join(EPS[e] for e in (["cuda", "cpu"] if ep == "cuda" else ["cpu"]))
        proc = run([helper, "-c", DUMP_SCRIPT, providers], env=env, cwd=work, timeout=600)
        if proc.returncode != 0:
            log(f"  {version}: helper interpreter failed ({(proc.stderr.strip().splitlines() or ['?'])[-1]}); own venv")
            venv = work / "venv"
            run([args.python_for.get(py, f"python{py}"), "-m", "venv", venv], check=True)
            deps = [r.split(";")[0].replace(" ", "") for r in _wheel_requires(target)]
            run([venv / "bin/python", "-m", "pip", "install", "-q", *deps], check=True)
            proc = run([venv / "bin/python", "-c", DUMP_SCRIPT, providers], env=env, cwd=work, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"registry dump failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        dump = json.loads(proc.stdout)
        if dump["ort_version"] != version:
            raise RuntimeError(f"wheel reports version {dump['ort_version']}, expected {version}")
        wheel_name = wheel.name
        how = "; CUDA libraries stubbed, no GPU" if ep == "cuda" else ""
        source = f"live registry of {wheel_name}{' [' + build + ']' if build else ''} (get_all_opkernel_def{how})"
        raw = raw_from_dump(dump, ep, source)
        if not raw["defs"]:
            raise RuntimeError(f"no {EPS[ep]} kernels in the registry (provider not created)")
        out = {f"{version}-{ep}.json": raw}
        if ep == "cuda":
            out[f"{version}-cpu.gpu-wheel.json"] = raw_from_dump(dump, "cpu", f"live registry of {wheel_name} (get_all_opkernel_def)")
        for r in out.values():
            r["read"] = datetime.date.today().isoformat()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _wheel_requires(target: Path) -> list[str]:
    meta = next(target.glob("*.dist-info/METADATA"))
    return [line.split(":", 1)[1].strip() for line in meta.read_text().splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def cuda_include(dest: Path) -> None:
    """Merge the include/ folders of the nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 wheels into dest."""
    with tempfile.TemporaryDirectory() as tmp:
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, "nvidia-cuda-runtime-cu12",
             "nvidia-cuda-nvcc-cu12==12.9.86"], check=True)
        for whl in Path(tmp).glob("*.whl"):
            with zipfile.ZipFile(whl) as z:
                for n in z.namelist():
                    if "/include/" in n and not n.endswith("/"):
                        out = dest / n.split("/include/", 1)[1]
                        out.parent.mkdir(parents=True, exist_ok=True)
                        out.write_bytes(z.read(n))


# --------------------------------------------------------------------------- packing


def pack(raw_dir: Path, out_dir: Path) -> list[Path]:
    written = []
    for ep, provider in EPS.items():
        raws = [json.loads(p.read_text()) for p in raw_dir.glob(f"*-{ep}.json")]
        have = {r["ort_version"] for r in raws}
        # a release published only as onnxruntime-gpu: its CPU table from the GPU wheel's CPU provider
        raws += [r for r in (json.loads(p.read_text()) for p in raw_dir.glob(f"*-{ep}.gpu-wheel.json"))
                 if r["ort_version"] not in have]
        if not raws:
            continue
        raws.sort(key=lambda r: version_key(r["ort_version"]))
        releases = [r["ort_version"] for r in raws]
        rows: dict[tuple, int] = {}  # (domain, op, lo, hi, cons json) -> mask
        params: dict[tuple, int] = {}  # (domain, op, params json) -> mask
        for i, raw in enumerate(raws):
            table = kernels.merge_defs(raw["defs"])
            for d, by_op in table.items():
                for o, op_rows in by_op.items():
                    for lo, hi, c in op_rows:
                        key = (d, o, lo, hi, json.dumps(c, sort_keys=True, separators=(",", ":")))
                        rows[key] = rows.get(key, 0) | (1 << i)
            for d, by_op in raw.get("params", {}).items():
                for o, p in by_op.items():
                    key = (d, o, json.dumps(p, separators=(",", ":")))
                    params[key] = params.get(key, 0) | (1 << i)
        cons_pool: dict[str, int] = {}
        ops: dict[str, dict[str, list]] = {}
        for d, o, lo, hi, cj in sorted(rows, key=lambda k: (k[0], k[1], -k[2], -k[3], k[4])):
            cid = cons_pool.setdefault(cj, len(cons_pool))
            ops.setdefault(d, {}).setdefault(o, []).append([lo, hi, cid, rows[(d, o, lo, hi, cj)]])
        par: dict[str, dict[str, list]] = {}
        for d, o, pj in sorted(params):
            par.setdefault(d, {}).setdefault(o, []).append([json.loads(pj), params[(d, o, pj)]])
        sources: dict[str, int] = {}
        for i, raw in enumerate(raws):
            sources[raw["source"]] = sources.get(raw["source"], 0) | (1 << i)
        doc = {
            "format": kernels.PACKED_FORMAT,
            "ep": provider,
            "releases": releases,
            "sources": [[s, m] for s, m in sorted(sources.items(), key=lambda x: x[1])],
            "read": {r["ort_version"]: r.get("read", "") for r in raws},
            "cons": [json.loads(c) for c in cons_pool],
            "ops": ops,
            "params": par,
        }
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"ort-{ep}.json.gz"
        data = (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode()
        path.write_bytes(gzip.compress(data, 9, mtime=0))
        log(f"{path}: {len(releases)} releases, {len(rows)} rows, {len(cons_pool)} constraint sets, "
            f"{len(data)} bytes json, {path.stat().st_size} bytes gz")
        written.append(path)
    return written


def sources_table(raw_dir: Path) -> str:
    """Markdown table: release -> where each provider's table was read from, and when."""
    by_version: dict[str, dict[str, dict]] = {}
    for ep in EPS:
        for p in raw_dir.glob(f"*-{ep}.json"):
            r = json.loads(p.read_text())
            by_version.setdefault(r["ort_version"], {})[ep] = r
        for p in raw_dir.glob(f"*-{ep}.gpu-wheel.json"):
            r = json.loads(p.read_text())
            by_version.setdefault(r["ort_version"], {}).setdefault(ep, r)
    lines = ["| release | CPU table read from | CUDA table read from | read on |", "| --- | --- | --- | --- |"]
    for v in sorted(by_version, key=version_key):
        cells = []
        for ep in ("cpu", "cuda"):
            r = by_version[v].get(ep)
            if r is None:
                cells.append("—")
                continue
            m = re.match(r"live registry of (\S+)(?: \[(CUDA \d+) build\])?", r["source"])
            cells.append(f"`{m.group(1)}`" + (f" ({m.group(2)})" if m.group(2) else "") if m else r["source"])
        dates = sorted({r.get("read", "") for r in by_version[v].values()} - {""})
        lines.append(f"| {v} | {cells[0]} | {cells[1]} | {', '.join(dates)} |")
    return "\n".join(lines) + "\n"


def update_sources_md(path: Path, table: str) -> None:
    text = path.read_text()
    begin, end = "<!-- releases:begin (tools/gen_kernel_tables.py pack) -->", "<!-- releases:end -->"
    if begin in text and end in text:
        text = text[: text.index(begin) + len(begin)] + "\n" + table + text[text.index(end):]
        path.write_text(text)


# --------------------------------------------------------------------------- CLI


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    rd = sub.add_parser("read", help="read releases' live registries from their PyPI wheels")
    rd.add_argument("--package", required=True, choices=sorted(PKG_EP))
    rd.add_argument("--from", dest="since", default="1.16", help="first release line (default 1.16)")
    rd.add_argument("--versions", nargs="*", help="exactly these releases (default: every PyPI release from --from on)")
    rd.add_argument("--raw", type=Path, required=True, help="folder for the raw per-release files")
    rd.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ort-kernel-gen")
    rd.add_argument("--skip-existing", action="store_true", help="skip releases whose raw file exists")
    rd.add_argument("--pythons", nargs="*", default=["3.11", "3.12", "3.10"], help="wheel tags to try, in order")
    rd.add_argument("--python", action="append", default=[], metavar="VER=PATH", help="interpreter for a Python version")
    rd.add_argument("--stub-tool", help="folder with the ort-cuda-truth harness's build_stubs.py (CUDA provider)")
    rd.add_argument("--stub-dir", help="prebuilt stub folder for every release (instead of --stub-tool)")
    rd.add_argument("--cuda-include", help="CUDA 12 headers for build_stubs.py (see `cuda-include`)")
    ci = sub.add_parser("cuda-include", help="fetch the CUDA 12 headers build_stubs.py compiles against")
    ci.add_argument("dest", type=Path)
    md = sub.add_parser("md", help="parse an OperatorKernels.md (fallback for a release with no wheel)")
    md.add_argument("path", type=Path)
    md.add_argument("--ort-version", required=True)
    md.add_argument("--source", required=True)
    md.add_argument("--ep", action="append", choices=sorted(EPS), help="only these providers (default: cpu and cuda)")
    md.add_argument("--raw", type=Path, required=True)
    lv = sub.add_parser("live", help="raw file of an interpreter that has onnxruntime installed")
    lv.add_argument("--python", default=sys.executable)
    lv.add_argument("--ep", default="cpu", choices=sorted(EPS))
    lv.add_argument("--raw", type=Path, required=True)
    pk = sub.add_parser("pack", help="raw files -> onnxlint/data/kernels/ort-<ep>.json.gz")
    pk.add_argument("--raw", type=Path, required=True)
    pk.add_argument("--out", type=Path, default=OUT)
    pk.add_argument("--sources-md", type=Path, default=ROOT / "data" / "upstream" / "ort" / "SOURCES.md",
                    help="rewrite the release table between the releases markers of this file")
    args = ap.parse_args(argv)

    if args.cmd == "read":
        args.python_for = dict(p.split("=", 1) for p in args.python)
        args.work, args.raw = args.work.resolve(), args.raw.resolve()
        args.work.mkdir(parents=True, exist_ok=True)
        ep = PKG_EP[args.package]
        versions = args.versions or [v for v in pypi_versions(args.package, sys.executable)
                                     if version_key(v) >= version_key(args.since)]
        failed = []
        for v in versions:
            if args.skip_existing and (args.raw / f"{v}-{ep}.json").exists():
                continue
            log(f"{args.package}=={v} ...")
            try:
                raws = read_release(args.package, v, args)
            except Exception as exc:  # noqa: BLE001 - report and go on with the next release
                log(f"  FAILED {v}: {exc}")
                failed.append(v)
                continue
            for name, raw in raws.items():
                log(f"  {write_raw(args.raw, ep, raw, name)}: {len(raw['defs'])} KernelDefs; {raw['source']}")
        if failed:
            log("failed:", ", ".join(failed))
        return 1 if failed else 0
    if args.cmd == "cuda-include":
        cuda_include(args.dest)
        return 0
    if args.cmd == "md":
        tables = kernels.parse_operator_kernels_md(args.path.read_text(encoding="utf-8"))
        for ep in args.ep or sorted(EPS):
            if EPS[ep] in tables:
                print(write_raw(args.raw, ep, raw_from_table(ep, args.ort_version, args.source, tables[EPS[ep]])))
        return 0
    if args.cmd == "live":
        proc = run([args.python, "-c", DUMP_SCRIPT, EPS[args.ep]])
        if proc.returncode != 0:
            raise SystemExit(proc.stderr)
        dump = json.loads(proc.stdout)
        print(write_raw(args.raw, args.ep, raw_from_dump(dump, args.ep,
                                                         f"live registry of onnxruntime=={dump['ort_version']} (get_all_opkernel_def)")))
        return 0
    for path in pack(args.raw, args.out):
        print(path)
    if args.sources_md:
        update_sources_md(args.sources_md, sources_table(args.raw))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
