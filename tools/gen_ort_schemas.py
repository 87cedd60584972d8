#!/usr/bin/env python3
"""Generate onnxlint's table of the op schemas ONNX Runtime registers itself (onnxlint/data/kernels/ort-schemas.json.gz).

Never edit that file by hand. ORT defines some ops onnx has no schema for, in its contrib domains
(com.microsoft: Attention, SkipLayerNormalization, ...) and in the ONNX domain itself (SimplifiedLayerNormalization
at version 1 with no upper bound, LayerNormalization-1 before onnx's 17, the deprecated Scale/Crop/...), and a node
of such an op resolves to ORT's schema: its since-version picks the kernel. These schemas are read from each
release's own binary, like the kernel tables (``tools/gen_kernel_tables.py``): the wheel's
``onnxruntime.capi._pybind_state.get_all_operator_schema()``, keeping the schemas whose source file is ORT's
(``onnxruntime/core/...``), not onnx's (``onnx/defs/...``), which the installed onnx answers for.

Two steps, each a subcommand:

1. ``read``: for each release of the shipped CPU kernel table (or ``--versions``), download the ``onnxruntime``
   wheel (else the ``onnxruntime-gpu`` one: 1.20.2 is published only as that; importing it loads no CUDA library),
   unzip it and dump the schemas in a helper interpreter (``gen_kernel_tables.ensure_helper``): ``RAW/<version>-schemas.json``.

       python tools/gen_ort_schemas.py read --raw RAW --work WORK

2. ``pack``: the raw files -> one file (rows shared across releases, each with a bit mask of its releases).

       python tools/gen_ort_schemas.py pack --raw RAW
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import gen_kernel_tables as kt  # noqa: E402

from onnxlint.ort import kernel_registry as kernels  # noqa: E402
from onnxlint.ort import schema_registry  # noqa: E402
from onnxlint.ort.releases import version_key  # noqa: E402

OUT = ROOT / "onnxlint" / "data" / "kernels" / "ort-schemas.json.gz"

# Runs inside the release's interpreter. Internal domains ORT creates itself during optimization
# (com.ms.internal.nhwc: the layout transformer's NHWC copies of onnx ops) are left out: no model carries them.
DUMP_SCRIPT = r"""
import json, sys
import onnxruntime
from onnxruntime.capi import _pybind_state as C
rows = []
for s in C.get_all_operator_schema():
    f = s.file.replace("\\", "/")
    if "/onnx/defs/" in f or "onnxruntime/" not in f:
        continue  # onnx's own schema (ORT compiles onnx in): the installed onnx answers for those
    dom = s.domain or "ai.onnx"
    if dom.startswith("com.ms.internal."):
        continue
    opt = lambda p: str(p.option).rsplit(".", 1)[-1].lower()
    par = lambda ps: [[p.name, p.typeStr, opt(p)] for p in ps]
    rows.append([dom, s.name, s.since_version, bool(s.deprecated), par(s.inputs), par(s.outputs),
                 f.split("onnxruntime/", 1)[1]])
json.dump({"ort_version": onnxruntime.__version__, "schemas": sorted(rows, key=json.dumps)}, sys.stdout)
"""


def read_release(version: str, args) -> dict:
    """Download the release's wheel, dump ORT's own schemas, clean up. The raw file's content."""
    work = Path(tempfile.mkdtemp(prefix=f"ort-schemas-{version}-", dir=args.work))
    try:
        errors = []
        for package in ("onnxruntime", "onnxruntime-gpu"):
            try:
                wheel, py = kt.download(package, version, work, args.pythons)
                break
            except RuntimeError as exc:
                errors.append(str(exc))
        else:
            raise RuntimeError("; ".join(errors))
        target = work / "site"
        with zipfile.ZipFile(wheel) as z:
            z.extractall(target)
        wheel_name = wheel.name
        wheel.unlink()
        helper = kt.ensure_helper(Path(args.work) / f"helper-py{py}", args.python_for.get(py, f"python{py}"))
        env = dict(os.environ, PYTHONPATH=str(target), PYTHONNOUSERSITE="1")
        proc = subprocess.run([helper, "-c", DUMP_SCRIPT], capture_output=True, text=True, env=env, cwd=work, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"schema dump failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        dump = json.loads(proc.stdout)
        if dump["ort_version"] != version:
            raise RuntimeError(f"wheel reports version {dump['ort_version']}, expected {version}")
        return {"ort_version": version, "source": f"{wheel_name} (get_all_operator_schema)",
                "read": datetime.date.today().isoformat(), "schemas": dump["schemas"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pack(raw_dir: Path, out: Path) -> Path:
    raws = sorted((json.loads(p.read_text()) for p in raw_dir.glob("*-schemas.json")),
                  key=lambda r: version_key(r["ort_version"]))
    if not raws:
        raise SystemExit(f"no raw schema files in {raw_dir}")
    rows: dict[str, int] = {}  # row json -> mask
    sources: dict[str, int] = {}
    for i, raw in enumerate(raws):
        for row in raw["schemas"]:
            key = json.dumps(row, separators=(",", ":"))
            rows[key] = rows.get(key, 0) | (1 << i)
        sources[raw["source"]] = sources.get(raw["source"], 0) | (1 << i)
    doc = {
        "format": schema_registry.PACKED_FORMAT,
        "releases": [r["ort_version"] for r in raws],
        "sources": [[s, m] for s, m in sorted(sources.items(), key=lambda x: x[1])],
        "read": {r["ort_version"]: r["read"] for r in raws},
        "schemas": [[*json.loads(k), m] for k, m in sorted(rows.items())],
    }
    data = (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(data, 9, mtime=0))
    kt.log(f"{out}: {len(raws)} releases, {len(rows)} schema rows, {len(data)} bytes json, {out.stat().st_size} bytes gz")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    rd = sub.add_parser("read", help="read each release's own schemas from its PyPI wheel")
    rd.add_argument("--versions", nargs="*", help="these releases (default: every release of the shipped CPU kernel table)")
    rd.add_argument("--raw", type=Path, required=True)
    rd.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ort-kernel-gen")
    rd.add_argument("--skip-existing", action="store_true")
    rd.add_argument("--pythons", nargs="*", default=["3.11", "3.12", "3.10"])
    rd.add_argument("--python", action="append", default=[], metavar="VER=PATH")
    pk = sub.add_parser("pack", help="raw files -> onnxlint/data/kernels/ort-schemas.json.gz")
    pk.add_argument("--raw", type=Path, required=True)
    pk.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.cmd == "pack":
        print(pack(args.raw, args.out))
        return 0
    args.python_for = dict(p.split("=", 1) for p in args.python)
    args.work, args.raw = args.work.resolve(), args.raw.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    args.raw.mkdir(parents=True, exist_ok=True)
    failed = []
    for v in args.versions or kernels.releases("cpu"):
        path = args.raw / f"{v}-schemas.json"
        if args.skip_existing and path.exists():
            continue
        kt.log(f"{v} ...")
        try:
            raw = read_release(v, args)
        except Exception as exc:  # noqa: BLE001 - report and go on with the next release
            kt.log(f"  FAILED {v}: {exc}")
            failed.append(v)
            continue
        path.write_text(json.dumps(raw, sort_keys=True, separators=(",", ":")) + "\n")
        kt.log(f"  {path}: {len(raw['schemas'])} schemas; {raw['source']}")
    if failed:
        kt.log("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
