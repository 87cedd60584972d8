"""Shape folding compared: onnxlint's `fold-shapes` fixer against onnx-graphsurgeon, onnxslim and onnxsim.

For every model (default: the shared corpus and the export set's models with fold-shapes findings) and every
engine: nodes before/after, fold-shapes findings (OLX201/OLX309) before/after from an in-memory lint,
onnx.checker, outputs identical to the original on ORT CPU (random inputs, dynamic dims filled the way the
numeric check fills them), time. Each (model, engine) runs in a child process with a time limit.

    python benchmarks/fold_compare.py                          # default model set, table on stdout
    python benchmarks/fold_compare.py a.onnx b.onnx --engines onnxlint,onnxslim --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ("graphsurgeon", "onnxslim", "onnxsim", "onnxlint", "onnxlint-own")
FOLD_CODES = {"OLX201", "OLX309"}


def _fold(engine: str, model):

    if engine == "graphsurgeon":
        import onnx_graphsurgeon as gs

        g = gs.import_onnx(model)
        g.fold_constants().cleanup().toposort()
        out = gs.export_onnx(g)
        out.ir_version = model.ir_version
        return out
    if engine == "onnxslim":
        import onnxslim

        return onnxslim.slim(model)
    if engine == "onnxsim":
        import onnxsim

        out, ok = onnxsim.simplify(model)
        return out
    if engine == "onnxlint-own":  # onnxlint's own folding alone
        from onnxlint.fixers.fold_shapes import fold

        return fold(model, "own")
    if engine == "onnxlint":  # what the fixer writes: own + onnxslim + own, else (checks failed) own alone
        from onnxlint.fixers import FixError, verify
        from onnxlint.fixers.fold_shapes import fold

        out = fold(model, "onnxslim")
        try:
            verify(model, out, safe=True)
        except FixError as exc:
            if "cannot run" in str(exc) or "neither" in str(exc):
                return out
            return fold(model, "own")
        return out
    raise ValueError(engine)


def _fold_findings(model) -> tuple[int, int]:
    """(fold-shapes findings, of which fixable) of an in-memory model under the default targets."""
    import onnxlint

    rep = onnxlint.lint(model)
    fs = [f for f in rep.findings if f.code in FOLD_CODES]
    return len(fs), sum(1 for f in fs if f.fixable)


def _count_nodes(model) -> int:
    from onnxlint.model.graph import iter_graphs

    return sum(len(g.node) for g in iter_graphs(model))


def one(path: str, engine: str) -> dict:
    """Fold one model with one engine (run in a child process)."""
    import numpy as np
    import onnx

    from onnxlint.fixers.equivalence import capture_output

    model = onnx.load(path)
    row: dict = {"model": path, "engine": engine, "nodes_before": _count_nodes(model)}
    row["findings_before"], row["fixable_before"] = _fold_findings(model)
    t0 = time.perf_counter()
    try:
        with capture_output():
            out = _fold(engine, model)
    except Exception as exc:
        row.update(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}",
                   time_s=round(time.perf_counter() - t0, 2))
        return row
    row["time_s"] = round(time.perf_counter() - t0, 2)
    row["nodes_after"] = _count_nodes(out)
    try:
        onnx.checker.check_model(out)
        row["checker"] = "ok"
    except Exception as exc:
        row["checker"] = f"FAIL: {str(exc).splitlines()[0][:120]}"
    row["findings_after"], _ = _fold_findings(out)
    from onnxlint.fixers.equivalence import feeds_for, session

    try:
        with capture_output():
            found = feeds_for(model, None, session(model))  # sizes the original runs at (two where dims are symbolic)
    except Exception as exc:
        row["outputs"] = f"original cannot run: {str(exc).splitlines()[0][:100]}"
        return row
    try:
        with capture_output():
            run_b = session(out)
            same = True
            for _, feeds, a in found:
                b = run_b(feeds)
                same = same and len(a) == len(b) and all(
                    np.asarray(x).shape == np.asarray(y).shape
                    and np.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True) for x, y in zip(a, b))
        row["outputs"] = "identical" if same else "DIFFER"
    except Exception as exc:
        row["outputs"] = f"FAIL to run: {str(exc).splitlines()[0][:100]}"
    return row


def default_models() -> list[str]:
    corpus = sorted(str(p) for p in Path(os.environ.get("ONNXLINT_CORPUS", ROOT / "bench-out" / "corpus")).glob("*.onnx"))
    bench = ROOT / "bench-out" / "models"
    picked = []
    manifest = bench / "MANIFEST.tsv"
    if manifest.exists():
        import csv

        for row in csv.DictReader(manifest.open(), delimiter="\t"):
            p = bench / row["path"]
            if p.exists() and int(row.get("size_bytes") or 0) < 60e6 and not Path(str(p) + ".data").exists():
                picked.append(str(p))
    return corpus + picked


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", help="also write the rows here (JSON lines, appended as they come)")
    ap.add_argument("--only-with-findings", action="store_true", default=True)
    ap.add_argument("--one", nargs=2, metavar=("MODEL", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    models = args.models or default_models()
    engines = args.engines.split(",")
    rows = []
    for m in models:
        for e in engines:
            t0 = time.perf_counter()
            try:
                p = subprocess.run([sys.executable, __file__, "--one", m, e], capture_output=True, text=True,
                                   timeout=args.timeout, cwd=ROOT)
                line = (p.stdout.strip().splitlines() or [""])[-1]
                row = json.loads(line) if line.startswith("{") else {
                    "model": m, "engine": e, "error": (p.stderr.strip().splitlines() or ["no output"])[-1][:160]}
            except subprocess.TimeoutExpired:
                row = {"model": m, "engine": e, "error": f"timeout after {args.timeout:.0f}s",
                       "time_s": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            if args.json:
                with open(args.json, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
            print(_fmt(row), flush=True)
            if e == engines[0] and not row.get("findings_before") and args.only_with_findings and not args.models:
                break  # nothing to fold for: skip the other engines
    print()
    print(summary(rows))
    return 0


def _fmt(r: dict) -> str:
    name = Path(r["model"]).name
    if "error" in r and "nodes_after" not in r:
        return f"{name:<58} {r['engine']:<12} ERROR {r['error']}"
    return (f"{name:<58} {r['engine']:<12} nodes {r['nodes_before']:>5} -> {r['nodes_after']:>5}  fold findings "
            f"{r['findings_before']:>4} -> {r['findings_after']:>4}  checker {r['checker'][:20]:<8} outputs "
            f"{r.get('outputs', '?')[:40]:<12} {r['time_s']:>6.1f}s")


def summary(rows: list[dict]) -> str:
    by: dict[str, dict] = {}
    for r in rows:
        if not r.get("findings_before") and "nodes_after" in r:
            continue
        s = by.setdefault(r["engine"], {"models": 0, "errors": 0, "checker_fail": 0, "differ": 0, "folded": 0,
                                         "before": 0, "after": 0, "time": 0.0})
        s["models"] += 1
        s["time"] += r.get("time_s", 0) or 0
        if "nodes_after" not in r:
            s["errors"] += 1
            s["before"] += r.get("findings_before", 0)
            s["after"] += r.get("findings_before", 0)
            continue
        s["folded"] += r["nodes_before"] - r["nodes_after"]
        s["before"] += r["findings_before"]
        s["after"] += r["findings_after"]
        s["checker_fail"] += r["checker"] != "ok"
        s["differ"] += r.get("outputs") not in ("identical",) and not str(r.get("outputs", "")).startswith("original")
    lines = [f"{'engine':<12} {'models':>6} {'nodes removed':>13} {'fold findings':>15} {'checker fail':>12} "
             f"{'outputs differ/fail':>19} {'errors':>6} {'time s':>7}"]
    for e, s in by.items():
        lines.append(f"{e:<12} {s['models']:>6} {s['folded']:>13} {s['before']:>7} -> {s['after']:<5} "
                     f"{s['checker_fail']:>12} {s['differ']:>19} {s['errors']:>6} {s['time']:>7.1f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
