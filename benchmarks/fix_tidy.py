#!/usr/bin/env python3
"""`--fix` over a folder of models, each on a copy: does any fixed model keep a dead initializer or dead node,
or an unsorted graph? (What ORT warns about on every load, and what onnx.checker rejects.)

    python benchmarks/fix_tidy.py MODELS_DIR [--max-mb 20] [--unsafe]

Copies every model at most --max-mb big (with its external data files) into a temporary folder, runs
`onnxlint --fix` on the copies, and prints per fixed model what it wrote and what the tidy check finds;
exit 1 when any written model is not tidy. Prints the counts at the end."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fix_realworld import untidy  # benchmarks/ is sys.path[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", type=Path)
    ap.add_argument("--max-mb", type=float, default=20)
    ap.add_argument("--unsafe", action="store_true", help="also apply the unsafe fixers")
    args = ap.parse_args()
    picked = [p for p in sorted(args.models.rglob("*.onnx")) if p.stat().st_size <= args.max_mb * 1e6]
    bad = written = 0
    with tempfile.TemporaryDirectory() as tmp:
        for src in picked:
            dst = Path(tmp) / src.relative_to(args.models)
            dst.parent.mkdir(parents=True, exist_ok=True)
            for f in src.parent.glob(src.name + "*"):  # the model and its `<name>.data`
                shutil.copy(f, dst.parent / f.name)
            before = dst.read_bytes()
            cmd = [sys.executable, "-m", "onnxlint", str(dst), "--fix", "--no-cache", "-q", *(["--unsafe-fixes"] if args.unsafe else [])]
            subprocess.run(cmd, capture_output=True, text=True)
            if dst.read_bytes() == before:
                continue
            written += 1
            problems = untidy(dst)
            bad += bool(problems)
            print(f"{src.relative_to(args.models)}: {'; '.join(problems) or 'tidy'}")
    print(f"{len(picked)} models at most {args.max_mb:g} MB, {written} fixed and written, {bad} not tidy")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
