#!/usr/bin/env python3
"""Are onnxlint's "ORT will refuse this model" claims true? Each model is linted, then loaded by onnxruntime.

    python benchmarks/refusal_claims.py PATH... [--onnxlint CMD] [--ort-version V] [--sample N] [--timeout S] [--show N]

A claim is an error of a rule saying ONNX Runtime refuses the model (OLX007 graph resolution, OLX014 a custom-domain
op with no implementation, OLX202 no CUDA or CPU kernel, OLX203 opset/IR newer than the release; OLX001 too while it
was an error: "ORT will most likely refuse"),
from `onnxlint --format json --target ort-cuda --ort-version V` (V: the installed onnxruntime's release, so the
claim is about the ORT that checks it). OLX204 (a CUDA kernel constructor throws) is left out: a CPU session
cannot show it; so is an OLX203 that a CUDA-only fusion refusal makes (GatherSliceToSplitFusion's Squeeze on CUDA
with no CUDA kernel, ORT 1.20-1.24: the CPU provider has the kernel; measured with the CUDA truth harness instead), and
one for an initializer ORT 1.23 copies for its CUDA nodes (a CPU session makes no copy).
Each claimed model, and up to --sample models per folder with no claim (default: all), gets an
onnxruntime CPU InferenceSession at default options, in a forked child per model with a time limit (a crash
costs that model one line). Prints per folder: claims, claims ORT agrees with, false claims (ORT loads the
model), refusals with no claim (misses), refusals for want of a CPU kernel with no claim (not judged: the CUDA EP
may run the node), crashes/timeouts; then each false claim and miss with ORT's words.
Exit 1 on any false claim.

CMD: how to start onnxlint (default: this checkout's `python -m onnxlint`), split like a shell would.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

from json_identity import onnxlint_command  # benchmarks/ is sys.path[0]

ROOT = Path(__file__).resolve().parent.parent
CLAIM_CODES = ("OLX001", "OLX007", "OLX014", "OLX202", "OLX203")
# a CPU session refusing for want of a CPU kernel says nothing about an ort-cuda prediction (CUDA may run it)
# the words of the refusals only a CUDA session shows (gather_slice_fusion.no_kernel's message, the 1.23 initializer copy's)
CUDA_ONLY = ("GatherSliceToSplitFusion (a Level-2 graph optimization", "refuses this model on the CUDA EP: initializer")
NO_CPU_KERNEL = ("Could not find an implementation for", "Failed to find kernel for")


def lint_claims(cmd: list[str], folder: Path, models: list[Path], ort_version: str) -> dict[Path, list[dict]]:
    """model -> the refusal claims onnxlint makes about it (error findings of CLAIM_CODES)."""
    out: dict[Path, list[dict]] = {m: [] for m in models}
    for start in range(0, len(models), 200):
        batch = models[start:start + 200]
        proc = subprocess.run([*cmd, "--format", "json", "--no-cache", "--target", "ort-cuda", "--ort-version", ort_version,
                               *[str(m.relative_to(folder)) for m in batch]], capture_output=True, text=True, cwd=folder)
        if proc.returncode not in (0, 1, 2) or not proc.stdout.strip():
            raise SystemExit(f"onnxlint failed in {folder}: {proc.stderr.strip()[-300:]}")
        for f in json.loads(proc.stdout):
            if f["code"] in CLAIM_CODES and f["severity"] == "error" and not any(w in f["message"] for w in CUDA_ONLY):
                out.setdefault((folder / f["filename"]).resolve(), []).append(f)
    return {m.resolve(): out.get(m.resolve(), []) for m in models}


def _session(path: str, conn) -> None:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        conn.send(("loads", ""))
    except Exception as exc:  # noqa: BLE001 - ORT's refusal, in its words
        conn.send(("refuses", " ".join(str(exc).split())))


def ort_verdict(path: Path, timeout: float) -> tuple[str, str]:
    """("loads" | "refuses" | "crashed" | "timeout", ORT's words) for a CPU session of the model, in a forked child."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_session, args=(str(path), send))
    p.start()
    send.close()
    got = recv.poll(timeout)
    verdict = recv.recv() if got else None
    p.join(5 if got else 0)
    if p.is_alive():
        p.kill()
        p.join()
    if verdict is not None:
        return verdict
    return ("timeout", f"no answer in {timeout:.0f} s") if not got else ("crashed", f"exit code {p.exitcode}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path, help="folders searched recursively for *.onnx")
    ap.add_argument("--onnxlint", default=f"{sys.executable} -m onnxlint")
    ap.add_argument("--ort-version", help="the release onnxlint predicts for (default: the installed onnxruntime's)")
    ap.add_argument("--sample", type=int, help="models with no claim to load per folder (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--show", type=int, default=20, help="false claims and misses printed per folder")
    args = ap.parse_args()
    import onnxruntime  # in this process once: each child is forked with it imported

    version = args.ort_version or onnxruntime.__version__
    cmd = onnxlint_command(args.onnxlint)  # it runs in each model folder
    totals: Counter[str] = Counter()
    print(f"onnxruntime {onnxruntime.__version__} CPU sessions; onnxlint claims for ORT {version}")
    print(f"{'folder':<28} {'models':>6} {'loaded':>6} {'claims':>6} {'agree':>6} {'false':>6} {'missed':>6} "
          f"{'no-cpu':>6} {'crash':>5}")
    details = []
    for folder in args.paths:
        folder = folder.resolve()
        models = sorted(p for p in folder.rglob("*.onnx") if p.is_file())
        if not models:
            continue
        claims = lint_claims(cmd, folder, models, version)
        claimed = [m for m, c in claims.items() if c]
        rest = [m for m, c in claims.items() if not c]
        if args.sample is not None and len(rest) > args.sample:
            rest = sorted(random.Random(args.seed).sample(rest, args.sample))
        row: Counter[str] = Counter(models=len(models), claims=len(claimed))
        for m in [*claimed, *rest]:
            verdict, words = ort_verdict(m, args.timeout)
            row["loaded"] += 1
            name = str(m.relative_to(folder))
            if verdict in ("crashed", "timeout"):
                row["crash"] += 1
                details.append(f"  {folder.name}/{name}: ORT {verdict} ({words})")
                continue
            if claims[m]:
                if verdict == "refuses":
                    row["agree"] += 1
                else:
                    row["false"] += 1
                    codes = ", ".join(sorted({c["code"] for c in claims[m]}))
                    details.append(f"  FALSE CLAIM {folder.name}/{name}: {codes}: {claims[m][0]['message'][:200]}")
            elif verdict == "refuses" and any(w in words for w in NO_CPU_KERNEL):
                row["cpu-kernel"] += 1
                details.append(f"  NO CPU KERNEL {folder.name}/{name}: ORT: {words[:240]}")
            elif verdict == "refuses":
                row["missed"] += 1
                details.append(f"  MISSED {folder.name}/{name}: ORT: {words[:240]}")
        totals.update(row)
        print(f"{folder.name[:28]:<28} {row['models']:>6} {row['loaded']:>6} {row['claims']:>6} {row['agree']:>6} "
              f"{row['false']:>6} {row['missed']:>6} {row['cpu-kernel']:>6} {row['crash']:>5}")
    print(f"{'total':<28} {totals['models']:>6} {totals['loaded']:>6} {totals['claims']:>6} {totals['agree']:>6} "
          f"{totals['false']:>6} {totals['missed']:>6} {totals['cpu-kernel']:>6} {totals['crash']:>5}")
    shown: Counter[str] = Counter()
    for line in details:
        key = line.split(":")[0]
        shown[key] += 1
        if shown[key] <= args.show:
            print(line)
    return 1 if totals["false"] else 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    raise SystemExit(main())
