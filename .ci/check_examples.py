"""The README's first command, `onnxlint examples/`, checked by what it prints, not only by its exit code: a crash
once exited 1 too, the code for "findings". Run by .ci/run in each test venv (the installed onnxlint script).

Text run: exit 1, nothing on stderr, the summary counts the example files. JSON run: every finding examples/
make_examples.py says a model demonstrates is there at its node, the clean model has none, and the text summary's
count is the JSON's count of the findings text shows (infos are hidden there).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"Found (\d+) findings? in (\d+) files?: (\d+) errors?, (\d+) warnings?")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("onnxlint")
    if exe is None:
        sys.exit("check_examples: no onnxlint script on PATH (is the venv active?)")
    return subprocess.run([exe, "--no-cache", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def main() -> int:
    sys.path.insert(0, str(ROOT / "examples"))
    import make_examples

    problems: list[str] = []
    text = run("examples/")
    if text.returncode != 1 or text.stderr:
        problems.append(f"text run: exit {text.returncode} (expected 1, findings), stderr: {text.stderr.strip()[-500:]!r}")
    lines = text.stdout.strip().splitlines()
    summary = SUMMARY.match(lines[-1]) if lines else None
    n_models = len(list((ROOT / "examples").glob("*.onnx")))
    if summary is None or int(summary[2]) != n_models:
        problems.append(f"text run: last line {lines[-1] if lines else ''!r} is not a summary of {n_models} files")
    js = run("examples/", "--format", "json")
    try:
        findings = json.loads(js.stdout) if js.returncode == 1 else None
    except json.JSONDecodeError:
        findings = None
    if findings is None:
        problems.append(f"json run: exit {js.returncode}, not a JSON list of findings: {js.stderr.strip()[-500:]!r}")
        findings = []
    got = {(Path(f["filename"]).name, f["code"], f["node"]) for f in findings}
    for name, expected in make_examples.EXPECTED.items():
        mine = {(code, node) for file, code, node in got if file == name}
        if expected is None and mine:
            problems.append(f"{name}: expected clean, got {sorted(mine)}")
        elif expected is not None and tuple(expected) not in mine:
            problems.append(f"{name}: expected {expected}, got {sorted(mine)}")
    shown = sum(1 for f in findings if f["severity"] != "info")
    if summary is not None and int(summary[1]) != shown:
        problems.append(f"text summary counts {summary[1]} findings, the JSON has {shown} errors and warnings")
    for p in problems:
        print(f"check_examples: {p}", file=sys.stderr)
    if not problems:
        print(f"examples: {lines[-1]}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
