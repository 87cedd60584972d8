#!/usr/bin/env python3
"""JSON identity harness: record onnxlint's JSON output over every model we have, and compare two recordings.

Why: a refactor must leave what users see unchanged. This drives only the command line (`onnxlint --format json`,
`onnxlint placement --format json`), so it works whatever the internals become, and a recording made with the
code before a change is the reference ("golden") for the code after it.

usage:
  python benchmarks/json_identity.py record OUT_DIR [--onnxlint CMD] [--models [LABEL=]DIR ...]
                                                    [--same-models RECORDING] [-j N] [--runs NAME,...] [--batch N]
  python benchmarks/json_identity.py compare GOLDEN_DIR NEW_DIR [--show N]
  python benchmarks/json_identity.py runs        (list the runs and their arguments)

  CMD     how to start onnxlint (default: `onnxlint` on PATH), e.g. `.venv/bin/onnxlint` or
          `.venv/bin/python -m onnxlint`; split like a shell would.
  DIR     a folder searched recursively for *.onnx; LABEL names it in the recording (default: the folder's name).
          Default folders, relative to this checkout: examples/, ../shared/corpus/models, /work/scratch/nodetests
          (onnx's node tests, from ../shared/corpus/gen_onnx_node_tests.py), bench-out/models/ (benchmarks/README.md);
          a default folder that does not exist is skipped with a note.
  RECORDING  lint the very folders and model lists of that recording (models added to a folder since are left
          out): the way to compare against a golden recording.

Each run lints every model: the default run, `--target tensorrt --trt-version V` per shipped TensorRT table,
`--target ort-trt`, and `placement --target ort-cuda` at each ORT optimization level x ORT release. onnxlint runs
with the model folder as its working directory and relative model paths, many models per process; the only
normalisation is that absolute model-folder paths left in the output are made relative. Recorded per run and
folder: each model's JSON (findings, or its placement object), and per process its exit code and stderr.

`compare` prints each difference (folder, model, run, a short diff) and exits 1 when there is any, 0 when the
recordings are identical. When NEW was recorded with --runs, only those runs are compared (the others are named).
Process groups (batches) are the same when both recordings saw the same model list.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TRT_VERSIONS = ["8.4", "8.5", "8.6", "10.0", "10.1", "10.1+rtx1.4"]
ORT_RELEASES = ["1.20.2", "1.24.4", "1.31.1"]
ORT_LEVELS = ["disabled", "basic", "all"]


def all_runs() -> dict[str, list[str]]:
    """Run name -> onnxlint arguments (before the model paths)."""
    runs: dict[str, list[str]] = {"lint-default": ["--format", "json", "--no-cache"]}
    for v in TRT_VERSIONS:
        runs[f"lint-trt-{v}"] = ["--format", "json", "--no-cache", "--target", "tensorrt", "--trt-version", v]
    runs["lint-ort-trt"] = ["--format", "json", "--no-cache", "--target", "ort-trt"]
    for rel in ORT_RELEASES:
        for level in ORT_LEVELS:
            runs[f"placement-cuda-{rel}-{level}"] = ["placement", "--format", "json", "--target", "ort-cuda",
                                                     "--ort-version", rel, "--ort-optimization", level]
    return runs


def default_roots() -> list[str]:
    return [f"examples={ROOT / 'examples'}", f"corpus={(ROOT.parent / 'shared' / 'corpus' / 'models').resolve()}",
            "nodetests=/work/scratch/nodetests", f"bench={ROOT / 'bench-out' / 'models'}"]


def find_models(root: Path) -> list[str]:
    """Every *.onnx under root, as sorted POSIX paths relative to it."""
    found = []
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        for f in files:
            if f.endswith(".onnx"):
                found.append(Path(dirpath, f).relative_to(root).as_posix())
    return sorted(found)


def batches(root: Path, models: list[str], count: int, max_bytes: int) -> list[list[str]]:
    """Models in order, cut into groups of at most `count` models and about `max_bytes` (incl. external data)."""
    out: list[list[str]] = []
    cur: list[str] = []
    size = 0
    for m in models:
        p = root / m
        b = p.stat().st_size + sum(q.stat().st_size for q in p.parent.glob(p.name + ".data"))
        if cur and (len(cur) >= count or size + b > max_bytes):
            out.append(cur)
            cur, size = [], 0
        cur.append(m)
        size += b
    if cur:
        out.append(cur)
    return out


def normalise(text: str, root: Path) -> str:
    """Absolute paths of the model folder (as given and resolved) -> relative: the one volatile part."""
    for r in {str(root), str(root.resolve())}:
        text = text.replace(r + "/", "")
    return text


def run_batch(cmd: list[str], args: list[str], root: Path, models: list[str]) -> dict[str, Any]:
    t0 = time.monotonic()
    proc = subprocess.run(cmd + args + ["--"] + models, cwd=root, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, env={**os.environ, "NO_COLOR": "1"})
    out = normalise(proc.stdout, root)
    per_model: dict[str, Any] = {}
    raw = None
    try:
        data = json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        data, raw = [], out
    if isinstance(data, list):
        for item in data:
            name = item.get("filename", "?") if isinstance(item, dict) else "?"
            if args and args[0] == "placement":
                per_model[name] = item
            else:
                per_model.setdefault(name, []).append(item)
    else:
        raw = out
    return {"models": models, "rc": proc.returncode, "stderr": normalise(proc.stderr, root), "raw_stdout": raw,
            "results": per_model, "seconds": round(time.monotonic() - t0, 2)}


def onnxlint_command(text: str) -> list[str]:
    """`--onnxlint CMD` as an argument list; onnxlint runs in each model folder, so a relative program path is
    made absolute (it names a path from here)."""
    cmd = shlex.split(text)
    if "/" in cmd[0]:
        cmd[0] = str(Path(cmd[0]).absolute())
    return cmd


def record(ns: argparse.Namespace) -> int:
    cmd = onnxlint_command(ns.onnxlint)
    runs = all_runs()
    if ns.runs:
        unknown = [r for r in ns.runs.split(",") if r not in runs]
        if unknown:
            print(f"json_identity: unknown run(s) {', '.join(unknown)} (see `runs`)", file=sys.stderr)
            return 2
        runs = {r: runs[r] for r in ns.runs.split(",")}
    roots: list[tuple[str, Path, list[str] | None]] = []
    if ns.same_models:
        meta_file = Path(ns.same_models) / "meta.json"
        if not meta_file.is_file():
            print(f"json_identity: {ns.same_models}: not a recording (no meta.json)", file=sys.stderr)
            return 2
        for label, r in json.loads(meta_file.read_text())["roots"].items():
            recorded = next(iter(sorted(Path(ns.same_models).glob(f"*/{label}.json"))), None)
            listed = [] if recorded is None else json.loads(recorded.read_text())["models"]
            roots.append((label, Path(r["path"]), sorted(m for m in listed if not m.startswith("?"))))
    for spec in ns.models or ([] if ns.same_models else default_roots()):
        label, _, d = spec.rpartition("=")
        path = Path(d).absolute()
        if not path.is_dir():
            print(f"json_identity: {d}: no such folder, skipped", file=sys.stderr)
            continue
        roots.append((label or path.name, path, None))
    out = Path(ns.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        version = subprocess.run(cmd + ["--version"], capture_output=True, text=True).stdout.strip()
    except OSError as e:
        print(f"json_identity: cannot run onnxlint as {ns.onnxlint!r}: {e.strerror} (see --onnxlint)", file=sys.stderr)
        return 2
    meta: dict[str, Any] = {"onnxlint": ns.onnxlint, "version": version, "cwd": os.getcwd(), "roots": {}, "runs": {}}
    plan = []
    for label, root, listed in roots:
        models = find_models(root) if listed is None else listed
        missing = [m for m in models if not (root / m).is_file()]
        if missing:
            print(f"json_identity: {root}: {len(missing)} model(s) of the list are missing, e.g. {missing[0]}",
                  file=sys.stderr)
            return 2
        meta["roots"][label] = {"path": str(root), "models": len(models)}
        linked = sorted({m for m in models for q in [root / m, *(root / m).parent.glob(Path(m).name + ".data")]
                         if q.stat().st_nlink > 1})
        if linked:  # onnx.checker refuses external data with several hard links: the output changes
            print(f"json_identity: warning: {root}: {len(linked)} model(s) have hard-linked files (a `cp -al` copy?),"
                  f" which onnx.checker treats as an attack on external data, e.g. {linked[0]}", file=sys.stderr)
            meta["roots"][label]["hard_linked"] = linked
        for group in batches(root, models, ns.batch, ns.batch_bytes):
            for run in runs:
                plan.append((run, label, root, group))
    t_all = time.monotonic()
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=ns.jobs) as pool:
        futs = {pool.submit(run_batch, cmd, runs[run], root, group): (run, label, i)
                for i, (run, label, root, group) in enumerate(plan)}
        done = 0
        for fut in concurrent.futures.as_completed(futs):
            run, label, i = futs[fut]
            results.setdefault((run, label), []).append({"order": i, **fut.result()})
            done += 1
            if not ns.quiet and sys.stderr.isatty():
                print(f"\r{done}/{len(plan)} processes", end="", file=sys.stderr, flush=True)
    if not ns.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    for (run, label), parts in sorted(results.items()):
        parts.sort(key=lambda p: p["order"])
        merged: dict[str, object] = {}
        procs = []
        for p in parts:
            for m in p["models"]:
                merged[m] = p["results"].get(m, [] if run.startswith("lint") else None)
            extra = sorted(set(p["results"]) - set(p["models"]))
            for m in extra:  # output naming a file that was not asked for: keep it visible
                merged[f"?{m}"] = p["results"][m]
            procs.append({"models": len(p["models"]), "first": p["models"][0], "rc": p["rc"], "stderr": p["stderr"],
                          "raw_stdout": p["raw_stdout"]})
        d = out / run
        d.mkdir(exist_ok=True)
        (d / f"{label}.json").write_text(json.dumps({"models": merged, "processes": procs}, indent=1,
                                                    sort_keys=True) + "\n")
        meta["runs"].setdefault(run, {"args": runs[run], "seconds": 0.0})
        meta["runs"][run]["seconds"] = round(meta["runs"][run]["seconds"] + sum(p["seconds"] for p in parts), 1)
    meta["wall_seconds"] = round(time.monotonic() - t_all, 1)
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    n = sum(r["models"] for r in meta["roots"].values())
    print(f"recorded {len(runs)} runs x {n} models ({len(plan)} processes) in {meta['wall_seconds']} s -> {out}")
    return 0


def _short_diff(a: object, b: object, limit: int) -> list[str]:
    la = json.dumps(a, indent=1, sort_keys=True).splitlines()
    lb = json.dumps(b, indent=1, sort_keys=True).splitlines()
    lines = list(difflib.unified_diff(la, lb, "golden", "new", n=1, lineterm=""))[2:]
    return lines[:limit] + ([f"... {len(lines) - limit} more diff lines"] if len(lines) > limit else [])


def compare(ns: argparse.Namespace) -> int:
    g, n = Path(ns.golden), Path(ns.new)
    for d in (g, n):
        if not (d / "meta.json").is_file():
            print(f"json_identity: {d}: not a recording (no meta.json)", file=sys.stderr)
            return 2
    gm, nm = (json.loads((d / "meta.json").read_text()) for d in (g, n))
    print(f"golden: {gm['version']} ({g}); new: {nm['version']} ({n})")
    diffs = 0
    skipped = sorted(set(gm["runs"]) - set(nm["runs"]))
    if skipped:  # a recording made with --runs: compare those runs only, and say which were not
        print(f"new recorded {len(nm['runs'])} of golden's {len(gm['runs'])} runs; not compared: {', '.join(skipped)}")
    files = sorted({p.relative_to(g).as_posix() for p in g.glob("*/*.json") if p.parent.name not in skipped}
                   | {p.relative_to(n).as_posix() for p in n.glob("*/*.json")})
    by_run: dict[str, int] = {}
    for rel in files:
        run, label = rel.split("/")[0], rel.split("/")[1][:-5]
        if not (g / rel).exists() or not (n / rel).exists():
            print(f"[{run}] {label}: only in {'new' if not (g / rel).exists() else 'golden'}")
            diffs += 1
            continue
        a, b = json.loads((g / rel).read_text()), json.loads((n / rel).read_text())
        for model in sorted(set(a["models"]) | set(b["models"])):
            if model not in a["models"] or model not in b["models"]:
                print(f"[{run}] {label}/{model}: only in {'new' if model not in a['models'] else 'golden'}")
                diffs += 1
                by_run[run] = by_run.get(run, 0) + 1
                continue
            if a["models"][model] != b["models"][model]:
                diffs += 1
                by_run[run] = by_run.get(run, 0) + 1
                if by_run[run] <= ns.show:
                    print(f"[{run}] {label}/{model}:")
                    print("\n".join("    " + line for line in _short_diff(a["models"][model], b["models"][model],
                                                                           ns.lines)))
        if a["processes"] != b["processes"]:
            for i, (pa, pb) in enumerate(zip(a["processes"], b["processes"])):
                if pa != pb:
                    diffs += 1
                    print(f"[{run}] {label}: process {i} (from {pa['first']}, {pa['models']} models) differs:")
                    print("\n".join("    " + line for line in _short_diff(pa, pb, ns.lines)))
            if len(a["processes"]) != len(b["processes"]):
                diffs += 1
                print(f"[{run}] {label}: {len(a['processes'])} processes in golden, {len(b['processes'])} in new")
    for run, count in sorted(by_run.items()):
        if count > ns.show:
            print(f"[{run}] {count} models differ ({ns.show} shown)")
    if diffs:
        print(f"{diffs} difference(s)")
        return 1
    models = sum(r["models"] for r in gm["roots"].values())
    print(f"identical: {len(files)} outputs, {models} models, {len(gm['runs']) - len(skipped)} runs")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="lint every model with every run, write OUT_DIR")
    r.add_argument("out_dir")
    r.add_argument("--onnxlint", default="onnxlint", help="how to start onnxlint (default: onnxlint on PATH)")
    r.add_argument("--models", nargs="+", metavar="[LABEL=]DIR", help="model folders (default: the four sets)")
    r.add_argument("--same-models", metavar="RECORDING",
                   help="lint exactly the folders and models another recording did (e.g. the golden one)")
    r.add_argument("--runs", help="only these runs, comma-separated (see `runs`)")
    r.add_argument("-j", "--jobs", type=int, default=2, help="onnxlint processes at once (default 2)")
    r.add_argument("--batch", type=int, default=400, help="models per process at most (default 400)")
    r.add_argument("--batch-bytes", type=int, default=400 << 20, help="model bytes per process, about (400 MiB)")
    r.add_argument("-q", "--quiet", action="store_true")
    c = sub.add_parser("compare", help="print differences between two recordings; exit 1 on any")
    c.add_argument("golden")
    c.add_argument("new")
    c.add_argument("--show", type=int, default=20, help="differing models shown per run (default 20)")
    c.add_argument("--lines", type=int, default=24, help="diff lines shown per difference (default 24)")
    sub.add_parser("runs", help="list the runs")
    ns = ap.parse_args(argv)
    if ns.cmd == "record":
        return record(ns)
    if ns.cmd == "compare":
        return compare(ns)
    for name, args in all_runs().items():
        print(f"{name}: onnxlint {' '.join(args)} MODELS...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
