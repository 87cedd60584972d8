#!/usr/bin/env python3
"""What a default `onnxlint` run shows on real models, and whether each shown finding is worth acting on.

Runs onnxlint with default settings (no config) over a set of real exports (`bench-out/models/`, made by
`benchmarks/make_exports.py`, `make_torchvision_exports.py`, `collect_pypi_models.py`; see benchmarks/README.md)
and the shared corpus, and prints per model the shown findings (errors and warnings; infos are hidden by
default) by code. Each shown finding is looked up in the committed judgement file
`benchmarks/realworld_judgements.tsv`, one row per (rule code, model glob, op types, message regex):
verdict `true` (a deployment engineer acts on it), `false` (wrong) or `noise` (right but not worth acting on),
with the reason. The run fails (exit 1) when a shown finding has no judgement, so new findings get judged.

    python benchmarks/realworld.py [MODEL_DIRS...] [--split dev|heldout|all] [--details]
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JUDGEMENTS = ROOT / "benchmarks" / "realworld_judgements.tsv"
DEFAULT_DIRS = [ROOT / "bench-out" / "models", ROOT.parent / "shared" / "corpus" / "models"]


def load_judgements(path: Path = JUDGEMENTS) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader((ln for ln in fh if not ln.startswith("#")), delimiter="\t")]
    for r in rows:
        if r["verdict"] not in ("true", "false", "noise"):
            raise SystemExit(f"{path}: verdict must be true, false or noise: {r}")
    return rows


def judge(finding: dict, rows: list[dict[str, str]], relpath: str | None = None) -> dict[str, str] | None:
    """The first judgement row matching the finding (code exact; model a glob matched against the file name or
    against its path below the models folder, e.g. `genai-builder/*_cpu/model.onnx`, where every GenAI model is
    called model.onnx; op type `*` or names separated by `|`; message a regex searched in the message)."""
    name = Path(finding["filename"]).name
    for r in rows:
        if r["code"] != finding["code"]:
            continue
        if not (fnmatch.fnmatch(name, r["model"]) or (relpath is not None and fnmatch.fnmatch(relpath, r["model"]))):
            continue
        if r["op_type"] != "*" and (finding.get("op_type") or "-") not in r["op_type"].split("|"):
            continue
        if r["message"] != "*" and not re.search(r["message"], finding["message"]):
            continue
        return r
    return None


def manifest_split(dirs: list[Path]) -> dict[str, str]:
    out: dict[str, str] = {}
    for d in dirs:
        m = d / "MANIFEST.tsv"
        if m.exists():
            with open(m, newline="") as fh:
                for row in csv.DictReader(fh, delimiter="\t"):
                    # bench-out's manifest names files by `path`; the shared corpus's by `filename`
                    name = row.get("path") or row.get("filename")
                    if name:
                        out[Path(name).name] = row.get("split") or "dev"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path)
    ap.add_argument("--split", default="all", choices=["dev", "heldout", "all"])
    ap.add_argument("--details", action="store_true", help="print every shown finding with its verdict")
    args = ap.parse_args(argv)
    dirs = [d for d in (args.dirs or DEFAULT_DIRS) if d.exists()]
    if not dirs:
        print("no model folders: run benchmarks/make_exports.py etc. first (see benchmarks/README.md)", file=sys.stderr)
        return 2
    splits = manifest_split(dirs)
    found = {p: (d, p.relative_to(d)) for d in dirs for p in d.rglob("*.onnx")
             if args.split == "all" or splits.get(p.name, "dev") == args.split}
    models = sorted(found)
    rel = {str(p): str(r) for p, (_, r) in found.items()}
    # the family is the first folder below the models folder (one per export script or PyPI package)
    family = {str(p): (r.parts[0] if len(r.parts) > 1 else d.name) for p, (d, r) in found.items()}
    proc = subprocess.run([sys.executable, "-m", "onnxlint", *map(str, models), "--format", "json", "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode not in (0, 1, 2):
        print(proc.stderr, file=sys.stderr)
        return 2
    findings = json.loads(proc.stdout or "[]")
    # a model's notes are shown lines too (a text run prints `path: note: ...`: a classic-ML model checked as a CPU
    # model, a GenAI model built for the CPU EP): counted beside the finding lines, not judged (they claim nothing
    # about a runtime)
    text = subprocess.run([sys.executable, "-m", "onnxlint", *map(str, models), "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT).stdout
    notes = Counter(ln.split(": note: ", 1)[0] for ln in text.splitlines() if ": note: " in ln and not ln.startswith("note: "))
    shown = [f for f in findings if not f["suppressed"] and f["severity"] != "info"]
    rows = load_judgements()
    from types import SimpleNamespace

    from onnxlint.formats.text_format import cause  # the text output's grouping: one line per rule and cause

    lines = {(f["filename"], *cause(SimpleNamespace(**f))) for f in shown}
    lines_per_model = Counter(key[0] for key in lines)
    per_model: dict[str, Counter] = defaultdict(Counter)
    verdicts: Counter = Counter()
    unjudged: list[dict] = []
    for f in shown:
        per_model[f["filename"]][f["code"]] += 1
        r = judge(f, rows, rel.get(f["filename"]))
        if r is None:
            unjudged.append(f)
            verdicts["unjudged"] += 1
            continue
        verdicts[r["verdict"]] += 1
        if args.details:
            print(f"{r['verdict']:<6} {f['code']} {rel.get(f['filename'])}:{f['node']} {f['message'][:110]}")
    print(f"{'model':<70} lines notes findings  by code")
    for m in models:
        c = per_model.get(str(m), Counter())
        print(f"{rel[str(m)][-70:]:<70} {lines_per_model.get(str(m), 0):5d} {notes.get(str(m), 0):5d} {sum(c.values()):8d}  "
              f"{', '.join(f'{k}×{v}' for k, v in sorted(c.items()))}")
    print(f"\n{'family':<32} models  lines  notes  (lines+notes)/model  max")
    by_family: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for m in models:
        by_family[family[str(m)]].append((lines_per_model.get(str(m), 0), notes.get(str(m), 0)))
    for fam, counts in sorted(by_family.items()):
        ln, nt = sum(a for a, _ in counts), sum(b for _, b in counts)
        print(f"{fam:<32} {len(counts):6d} {ln:6d} {nt:6d} {(ln + nt) / len(counts):20.2f} {max(a + b for a, b in counts):4d}")
    infos = sum(1 for f in findings if f["severity"] == "info" and not f["suppressed"])
    worst = max((sum(c.values()) for c in per_model.values()), default=0)
    worst_lines = max(lines_per_model.values(), default=0)
    n_notes = sum(notes.values())
    worst_shown = max((lines_per_model.get(str(m), 0) + notes.get(str(m), 0) for m in models), default=0)
    print(f"\nmodels: {len(models)}; shown: {len(lines)} text lines, {len(lines) / max(len(models), 1):.2f} per model "
          f"(max {worst_lines} on one model) for {len(shown)} "
          f"findings (max {worst} on one model); infos counted, not shown: {infos}")
    print(f"with the models' notes: {len(lines) + n_notes} shown lines ({n_notes} notes), "
          f"{(len(lines) + n_notes) / max(len(models), 1):.2f} per model, max {worst_shown} on one model")
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    errors_stderr = [ln for ln in proc.stderr.splitlines() if ln.startswith("onnxlint: error")]
    if errors_stderr:
        print(f"files onnxlint could not lint: {len(errors_stderr)}")
    for f in unjudged[:20]:
        print(f"UNJUDGED {f['code']} {rel.get(f['filename'])}:{f['node']} [{f.get('op_type')}] {f['message'][:120]}")
    return 1 if unjudged or verdicts.get("false") else 0


if __name__ == "__main__":
    sys.exit(main())
