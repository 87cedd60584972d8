"""Running onnxlint as a CI job would, bounded: a regression must fail the test fast, never hang CI or eat its
memory. Each run is a child process with a wall-clock timeout, an address-space limit and a CPU-time limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

MEMORY = 3 << 30  # address space: onnx, numpy and onnxruntime's imports reserve ~1.5 GB of it
CPU_SECONDS = 60


def limits(memory: int = MEMORY, cpu: int = CPU_SECONDS):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    return apply


def onnxlint(*args: str | os.PathLike, cwd: Path, timeout: float = 60, memory: int = MEMORY, stdin=subprocess.DEVNULL,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m onnxlint ARGS` in cwd under limits; the result cache in cwd/.cache unless env says otherwise."""
    full_env = {**os.environ, "ONNXLINT_CACHE_DIR": str(cwd / ".cache"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "onnxlint", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=stdin, env=full_env, preexec_fn=limits(memory))
