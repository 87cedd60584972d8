"""Before/after table for `--fix` on real models: lint -> --fix -> lint, on copies.

For every model of the export set (bench-out/models/MANIFEST.tsv) and the shared corpus
($ONNXLINT_CORPUS, default bench-out/corpus), a copy (with its external data) is made under --work; the copy is fixed with
the public API (`onnxlint.fix`, safe fixes, default targets) and linted again. Per model: findings before,
of which marked fixable (safe), fixed, fixable left after (with the reason the fix notes give), whether the
file was rewritten, and the numeric check's result. Each model runs in a child process with a time limit.

Issue 16's check, made independently of what `--fix` says about itself: every rewritten file is re-read from
disk and must pass `onnx.checker` (full check) and give the original file's outputs on ORT CPU (the numeric
comparison re-run from the two files on disk); a second copy is fixed through the CLI with `--fix --format
json`, whose stdout must parse as JSON and list the same findings the re-lint of the first copy leaves.

Issue 34's check: every rewritten file is tidy (no initializer and no node that nothing reads, in any graph:
ORT warns about each on every load; nodes topologically sorted: onnx.checker rejects them otherwise), and
passes onnx.checker wherever the original file passed it. `--keep` leaves the fixed copies under --work.

    python benchmarks/fix_realworld.py                       # both sets, table + totals on stdout
    python benchmarks/fix_realworld.py --split heldout     # the held-out half of the export set only
    python benchmarks/fix_realworld.py --json rows.jsonl a.onnx b.onnx
    python benchmarks/fix_realworld.py --work /tmp/fixed --keep     # the whole export set, fixed copies kept
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench-out" / "models"
CORPUS = Path(os.environ.get("ONNXLINT_CORPUS", ROOT / "bench-out" / "corpus"))  # a folder of .onnx models; none: skipped


def models(split: str = "all") -> list[tuple[str, Path]]:
    out = []
    manifest = BENCH / "MANIFEST.tsv"
    if manifest.exists():
        for row in csv.DictReader(manifest.open(), delimiter="\t"):
            p = BENCH / row["path"]
            if p.exists() and split in ("all", row["split"]):
                out.append(("exports", p))
    if split == "all":
        out += [("corpus", p) for p in sorted(CORPUS.glob("*.onnx"))]
    return out


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    import onnx

    from onnxlint.model.graph import iter_graphs

    m = onnx.load(str(src), load_external_data=False)
    for g in iter_graphs(m):
        for t in g.initializer:
            if t.data_location == onnx.TensorProto.EXTERNAL:
                loc = {e.key: e.value for e in t.external_data}.get("location")
                if loc and not (dest.parent / loc).exists():
                    shutil.copyfile(src.parent / loc, dest.parent / loc)


def one(src: str, work: str) -> dict:
    """Fix one copy (run in a child process)."""
    import onnxlint
    from onnxlint.fixers import REGISTRY

    src_p, dest = Path(src), Path(work)
    _copy(src_p, dest)
    before_bytes = dest.stat().st_mtime_ns, dest.stat().st_size
    t0 = time.perf_counter()
    res = onnxlint.fix(dest)
    row: dict = {"model": src, "time_s": round(time.perf_counter() - t0, 1)}
    if res.error:
        row["error"] = res.error
        return row
    safe = [f for f in res.findings if f.fix and REGISTRY[f.fix].safe and not f.suppressed]
    row.update(findings=len(res.findings), fixable=len(safe),
               fixable_unsafe=sum(1 for f in res.findings if f.fix and not REGISTRY[f.fix].safe),
               fixed=sum(1 for f in res.findings if getattr(f, "fixed", False)), notes=res.notes)
    written = (dest.stat().st_mtime_ns, dest.stat().st_size) != before_bytes
    row["written"] = written
    if written:
        after = onnxlint.lint(dest)
        left = [f for f in after.findings if f.fix and REGISTRY[f.fix].safe and not f.suppressed]
        row["findings_after"] = len(after.findings)
        import onnx

        row["checker_original"] = _checker(src_p)
        row["checker"] = _checker(dest)
        if row["checker"] != "ok" and row["checker_original"] != "ok":
            row["checker"] = "as original: " + row["checker"][5:]  # the fix did not cause it (OLX001 reports it)
        row["tidy"] = untidy(dest)
        from onnxlint.fixers.equivalence import check_equivalent

        original = onnx.load(str(src_p))
        for name in _applied(res.notes):  # an intended change (training-mode BN/Dropout): against its reference
            if name in REGISTRY and REGISTRY[name].reference is not None:
                original = REGISTRY[name].reference(original)
        try:  # re-run from the two files on disk, not from what --fix held in memory
            row["ort_cpu"] = check_equivalent(original, onnx.load(str(dest)), dest.parent)
        except Exception as exc:
            row["ort_cpu"] = f"FAIL {str(exc).splitlines()[0][:160]}"
        row["json"] = _cli_json(src_p, dest.with_name("cli-" + dest.name), {(f.code, f.node) for f in after.findings if not f.suppressed})
    else:
        left = safe
        row["findings_after"] = len(res.findings)
    row["left"] = len(left)
    by: dict[str, int] = {}
    for f in left:
        by[f"{f.code}/{f.fix}"] = by.get(f"{f.code}/{f.fix}", 0) + 1
    row["left_by"] = by
    numeric = [n for n in res.notes if n.startswith("numeric check") or n.startswith("fix not written")]
    row["numeric"] = numeric[0] if numeric else ("-" if not safe else "")
    return row


def _applied(notes: list[str]) -> list[str]:
    """The fixers the summary note names: "... wrote PATH (fold-shapes, dropout-inference)"."""
    import re

    m = next((re.search(r"; wrote .* \(([^()]*)\)$", n) for n in notes if "; wrote " in n), None)
    return [x.strip() for x in m.group(1).split(",")] if m else []


def _checker(path: Path) -> str:
    """onnx.checker's full check of a model file (by path: external data resolves beside it): "ok" or "FAIL ..."."""
    import onnx

    try:
        onnx.checker.check_model(str(path), full_check=True)
        return "ok"
    except Exception as exc:
        return f"FAIL {(str(exc).splitlines() or [type(exc).__name__])[0][:100]}"


def untidy(path: Path) -> list[str]:
    """What keeps a written model from being tidy: dead initializers, dead nodes, an unsorted graph."""
    import onnx

    from onnxlint.fixers.tidy import dead_initializers, dead_nodes, is_sorted

    m = onnx.load(str(path), load_external_data=False)
    inits, nodes = dead_initializers(m), dead_nodes(m)
    out = [f"dead initializers {inits[:3]}" if inits else "", f"dead nodes {nodes[:3]}" if nodes else "",
           "" if is_sorted(m.graph) else "unsorted graph"]
    return [p for p in out if p]


def _cli_json(src: Path, copy: Path, expected: set) -> str:
    """`onnxlint COPY --fix --format json` on a second copy: stdout parses as JSON and lists what the re-lint of
    the first copy left (suppressed findings aside)."""
    _copy(src, copy)
    try:
        p = subprocess.run([sys.executable, "-m", "onnxlint", str(copy), "--fix", "--format", "json", "--show-info"],
                           capture_output=True, text=True, cwd=ROOT)
        try:
            listed = json.loads(p.stdout)
        except ValueError as exc:
            return f"FAIL not JSON ({exc}): {p.stdout[:80]!r}"
        got = {(f["code"], f["node"]) for f in listed}
        return "ok" if got == expected else f"FAIL differs: {sorted(got ^ expected)[:3]}"
    finally:
        for f in copy.parent.glob(copy.name + "*"):
            f.unlink(missing_ok=True)


def _why(r: dict) -> str:
    if r.get("error"):
        return "lint error: " + r["error"][:80]
    if not r.get("left"):
        return ""
    notes = [n for n in r.get("notes", []) if not n.startswith("numeric check") and "fixed," not in n]
    return "; ".join(f"{k}×{v}" for k, v in r["left_by"].items()) + (": " + " | ".join(notes)[:160] if notes else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--work", type=Path, default=ROOT / "bench-out" / "fixes")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--split", choices=("all", "dev", "heldout"), default="all", help="which part of the export set")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--keep", action="store_true", help="keep the fixed copies under --work (else each is removed)")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print("ROW " + json.dumps(one(*args.one)))
        return 0
    todo = [("args", p) for p in args.models] if args.models else models(args.split)
    if args.work.exists():
        shutil.rmtree(args.work)

    def run(item):
        kind, src = item
        rel = src.relative_to(BENCH) if str(src).startswith(str(BENCH)) else Path(src.name)
        dest = args.work / kind / rel
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, __file__, "--one", str(src), str(dest)], capture_output=True, text=True,
                               timeout=args.timeout, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"})
            rows = [ln[4:] for ln in p.stdout.splitlines() if ln.startswith("ROW ")]
            row = json.loads(rows[-1]) if rows else {"model": str(src), "error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
            if not rows and p.stdout.strip():
                row["stdout_noise"] = True
            elif p.stdout.count("\n") > 1:
                row["stdout_noise"] = True  # something besides the row reached stdout
        except subprocess.TimeoutExpired:
            row = {"model": str(src), "error": f"timeout after {args.timeout:.0f}s"}
        row["set"] = kind
        row["wall_s"] = round(time.perf_counter() - t0, 1)
        if not args.keep or not row.get("written"):
            for f in dest.parent.glob(dest.name + "*"):
                f.unlink(missing_ok=True)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(row) + "\n")
        return row

    rows = []
    with ThreadPoolExecutor(args.jobs) as ex:
        for row in ex.map(run, todo):
            rows.append(row)
            print(fmt(row), flush=True)
    print()
    print(totals(rows))
    return 0


HEADER = f"{'model':<62} {'found':>5} {'fixbl':>5} {'fixed':>5} {'left':>4} {'wrote':>5}  numeric check / why left"


def fmt(r: dict) -> str:
    name = str(Path(r["model"]).relative_to(BENCH)) if str(r["model"]).startswith(str(BENCH)) else Path(r["model"]).name
    if r.get("error") and "findings" not in r:
        return f"{name[:62]:<62} ERROR {r['error'][:100]}"
    num = (r.get("numeric") or "")[:70]
    for key in ("checker", "ort_cpu", "json"):
        if str(r.get(key, "")).startswith("FAIL"):
            num += f" {key.upper()} {r[key][:80]}"
    if r.get("tidy"):
        num += " UNTIDY " + "; ".join(r["tidy"])
    why = _why(r)
    return (f"{name[:62]:<62} {r['findings']:>5} {r['fixable']:>5} {r['fixed']:>5} {r['left']:>4} "
            f"{'yes' if r['written'] else 'no':>5}  {num}{('  LEFT: ' + why) if why else ''}")


def totals(rows: list[dict]) -> str:
    lines = [HEADER.replace("model", "set  ", 1)]
    for kind in sorted({r["set"] for r in rows}):
        rs = [r for r in rows if r["set"] == kind and "findings" in r]
        errs = sum(1 for r in rows if r["set"] == kind and "findings" not in r)
        lines.append(
            f"{kind:<62} {sum(r['findings'] for r in rs):>5} {sum(r['fixable'] for r in rs):>5} "
            f"{sum(r['fixed'] for r in rs):>5} {sum(r['left'] for r in rs):>4} {sum(1 for r in rs if r['written']):>5}  "
            f"{len(rs)} models, {errs} errors, checker failures {sum(1 for r in rs if str(r.get('checker', 'ok')).startswith('FAIL'))} "
            f"(as the original {sum(1 for r in rs if str(r.get('checker', '')).startswith('as original'))}), "
            f"untidy {sum(1 for r in rs if r.get('tidy'))}, "
            f"numeric equal {sum(1 for r in rs if str(r.get('numeric', '')).startswith('numeric check: outputs equal'))} "
            f"(intended change, equal to its reference "
            f"{sum(1 for r in rs if str(r.get('numeric', '')).startswith('numeric check: an intended change'))}; "
            f"original cannot run {sum(1 for r in rs if 'the original cannot run' in str(r.get('numeric', '')))}), "
            f"re-checked from disk: ORT CPU equal {sum(1 for r in rs if str(r.get('ort_cpu', '')).startswith('outputs equal'))}"
            f"/{sum(1 for r in rs if r['written'])}, --format json valid and same "
            f"{sum(1 for r in rs if r.get('json') == 'ok')}/{sum(1 for r in rs if r['written'])}, "
            f"not written {sum(1 for r in rs if str(r.get('numeric', '')).startswith('fix not written'))}, "
            f"stdout noise {sum(1 for r in rows if r['set'] == kind and r.get('stdout_noise'))}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
