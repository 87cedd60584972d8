"""verify against ORT's own placement log on the CUDA rig (tests/cuda_rig), over any folders of models.

    python benchmarks/cuda_rig_verify.py [--rig .cuda-rig] [--level all] PATH...

Runs `onnxlint verify --format json` in the rig's venv with its fake CUDA libraries (onnxruntime-gpu's real
session creation and placement log), then prints per model and in total: sessions built, nodes in the
sessions, confirmed fallbacks, missed (OLX901), false alarms (OLX902), nodes ORT fused away, Run failures.
Exit 1 when any model has a miss or a false alarm.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--rig", type=Path, default=ROOT / ".cuda-rig")
    ap.add_argument("--level", default="all", choices=["disabled", "basic", "all"])
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    if not (args.rig / "ready").exists():
        print(f"no CUDA rig at {args.rig}: python tests/cuda_rig/build.py", file=sys.stderr)
        return 2
    env = {**os.environ, "LD_LIBRARY_PATH": str(args.rig / "libs")}
    cmd = [str(args.rig / "venv" / "bin" / "python"), "-m", "onnxlint", "verify", *args.paths, "--format", "json",
           "--ort-optimization", args.level, "--timeout", str(args.timeout)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    results = json.loads(proc.stdout)
    keys = ("nodes_observed", "confirmed", "missed", "false_alarms", "removed_unpredicted")
    total = dict.fromkeys(keys, 0)
    built = run_errors = 0
    print(f"{'model':<60} {'nodes':>6} {'confirmed':>9} {'missed':>6} {'false al.':>9} {'fused':>6}")
    for r in results:
        name = r["filename"][-60:]
        if "error" in r or "cuda_unavailable" in r:
            print(f"{name:<60} not verified: {(r.get('error') or r['cuda_unavailable'])[:90]}")
            continue
        built += 1
        run_errors += bool(r.get("run_error"))
        row = {k: r[k] if isinstance(r[k], int) else len(r[k]) for k in keys}
        for k in keys:
            total[k] += row[k]
        print(f"{name:<60} {row['nodes_observed']:>6} {row['confirmed']:>9} {row['missed']:>6} {row['false_alarms']:>9} "
              f"{row['removed_unpredicted']:>6}")
        for k in ("missed", "false_alarms"):
            for loc in r[k]:
                print(f"    {k}: {loc}")
    print(f"{len(results)} models, {built} sessions built ({run_errors} Run failures, placement from the log): "
          f"{total['nodes_observed']} nodes, {total['confirmed']} confirmed fallbacks, {total['missed']} missed, "
          f"{total['false_alarms']} false alarms, {total['removed_unpredicted']} fused away by ORT")
    return 1 if total["missed"] or total["false_alarms"] else 0


if __name__ == "__main__":
    sys.exit(main())
