#!/usr/bin/env python3
"""Long fuzz run: python benchmarks/fuzz.py [N=10000] [SEED=1]. Prints cases, exits 0/1/2, tracebacks, hangs."""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import fuzzcases  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
with tempfile.TemporaryDirectory() as d:
    counts = fuzzcases.run(n, seed, Path(d))
failures = counts.pop("failures")
print(" ".join(f"{k}={v}" for k, v in counts.items()))
for name, detail in failures:
    print(f"FAIL {name}: {detail}")
sys.exit(1 if counts["traceback"] or counts["hang"] else 0)
