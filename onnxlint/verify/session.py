"""Running the verification session in a child process with a time limit, and collecting its evidence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onnxlint.verify import logs


@dataclass
class SessionRun:
    """What one session told: providers it took, where each named node ran, and what went wrong."""

    error: str | None = None
    providers: list[str] = field(default_factory=list)
    run_error: str | None = None
    log_nodes: dict[str, str] = field(default_factory=dict)  # node name -> provider, from the VERBOSE log
    profile_nodes: dict[str, str] = field(default_factory=dict)  # node name -> provider, from profiling
    all_on: tuple[str, int] | None = None  # the log's "All nodes placed on [X]" (names no node)
    cuda_problem: str | None = None


def run_session(model: Path, providers: list[str], shapes: dict[str, list[int]], timeout: float = 300) -> SessionRun:
    from onnxlint import loading

    problem = loading.external_data_problem(model)  # ORT would follow a symlink out of the model's folder
    if problem:
        return SessionRun(error=f"not run: {problem}")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "onnxlint.verify.session_child", str(model), json.dumps(providers),
               json.dumps(shapes), tmp]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return SessionRun(error=f"session did not finish within {timeout:.0f} s")
        data: dict[str, Any] = {}
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                try:
                    data.update(json.loads(line))
                except ValueError:
                    continue
        if proc.returncode != 0 or "providers" not in data:
            why = logs.error_line(proc.stderr) or f"child exited with code {proc.returncode}"
            if proc.returncode < 0:
                why = f"the ORT process was killed by signal {-proc.returncode} (a provider library crashed): {why}"
            return SessionRun(error=why[:400])
        events = []
        if data.get("profile") and os.path.exists(data["profile"]):
            with open(data["profile"]) as fh:
                events = json.load(fh)
        return SessionRun(providers=list(data["providers"]), run_error=data.get("run_error"),
                          log_nodes=logs.parse_verbose_log(proc.stderr), profile_nodes=logs.parse_profile(events),
                          all_on=logs.all_placed_on(proc.stderr), cuda_problem=logs.cuda_problem(proc.stderr))
