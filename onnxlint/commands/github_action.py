"""The GitHub Action's lint step (action.yml): its inputs become onnxlint's arguments without a shell.

Run as `python -m onnxlint.commands.github_action` with the inputs in the environment (ONNXLINT_PATHS,
ONNXLINT_ARGS, ONNXLINT_SARIF). Nothing an input holds reaches a shell: both lists are split into words here
(shlex's POSIX rules: blanks and new lines separate words, quotes keep a name with a space whole; `$`, `*`,
backquotes stay plain text), every path goes after `--` (a file named `--baseline=b.onnx` is a path, never an
option), and globs (`**` included) are expanded by onnxlint itself, so `models/**/*.onnx` reaches every folder
depth, unlike bash, where `**` acts as `*`. The SARIF report is written only inside the workspace and never
through a symlink: a committed `onnxlint.sarif` link, a path leaving the workspace or a folder linked out of it
is refused (one line, exit 2). onnxlint runs twice, for the SARIF file and for the annotations (the second run
reads the result cache); the first run's exit code goes to the step's outputs (`exit-code`), and the step
fails only on a usage or input error (2): findings fail the action's last step.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

from onnxlint.support import pychild
from onnxlint.support.escape import text as esc


class ActionError(Exception):
    """An input the step cannot use: one line, exit 2."""


def words(name: str, value: str) -> list[str]:
    """An input's words (shlex, POSIX rules, no expansion of any kind)."""
    try:
        return shlex.split(value, comments=False, posix=True)
    except ValueError as exc:  # an unbalanced quote
        raise ActionError(f"input {name}: {exc} in {value!r}") from None


# options that would make a step do something else than lint and report: change the checkout (--fix writes the
# models, and its -o would be the SARIF file), record a baseline, or answer without linting (exit 0, no SARIF file)
_NOT_LINTING = ("--fix", "--unsafe-fixes", "--diff", "--update-baseline", "--list-rules", "--explain", "--show-config",
                "--version", "--help")


def _not_linting(arg: str) -> bool:
    """One of _NOT_LINTING, or a prefix argparse would take for one (--upd), or -h in a cluster of short flags."""
    if arg.startswith("-") and not arg.startswith("--"):
        return "h" in arg[1:].split("=", 1)[0]
    name = arg.split("=", 1)[0]
    return len(name) > 2 and any(option.startswith(name) for option in _NOT_LINTING)


def _names_output(arg: str) -> bool:
    """-o, -oFILE, --output, --output=FILE, a prefix argparse would take for it (--out), or -o at the end of a
    cluster of short flags (-qo FILE, -qoFILE: argparse reads -q, then -o)."""
    if arg.startswith("-") and not arg.startswith("--"):
        return "o" in arg[1:].split("=", 1)[0]  # whatever letters come first: no short option but -o takes a value
    name = arg.split("=", 1)[0]
    return len(name) > 2 and name.startswith("--") and "--output".startswith(name)


def sarif_target(value: str, workspace: Path) -> Path:
    """Where the SARIF report goes: the path named, relative to the workspace, when it stays inside the workspace
    (its folder resolved, links followed), is not itself a symlink and is a regular file if it exists. The real
    path is returned, so that nothing is written through a link found later."""
    if not value:
        raise ActionError("input sarif-file is empty")
    root = Path(os.path.realpath(workspace))
    named = Path(value) if os.path.isabs(value) else Path(workspace) / value
    folder = Path(os.path.realpath(named.parent))
    if folder != root and root not in folder.parents:
        raise ActionError(f"input sarif-file {value!r}: its folder {folder} is outside the workspace {root}; not written")
    if not folder.is_dir():
        raise ActionError(f"input sarif-file {value!r}: folder {folder} does not exist")
    target = folder / named.name
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return target
    if stat.S_ISLNK(st.st_mode):
        raise ActionError(f"input sarif-file {value!r} is a symbolic link (to {os.readlink(target)!r}); the report is "
                          "never written through a link: remove it or choose another sarif-file")
    if not stat.S_ISREG(st.st_mode):
        raise ActionError(f"input sarif-file {value!r} exists and is not a regular file; not replaced")
    return target


def commands(env: dict[str, str], workspace: Path) -> tuple[list[str], list[str], Path]:
    """The two onnxlint command lines (SARIF file, annotations) and the SARIF file's path."""
    paths = words("paths", env.get("ONNXLINT_PATHS", ".")) or ["."]
    args = words("args", env.get("ONNXLINT_ARGS", ""))
    if "--" in args:
        raise ActionError("input args: '--' is not allowed (paths go in the input paths; onnxlint puts them after '--')")
    if any(_names_output(a) for a in args):
        raise ActionError("input args: -o/--output is not allowed (the SARIF report goes to the input sarif-file)")
    refused = next((a for a in args if _not_linting(a)), None)
    if refused is not None:
        raise ActionError(f"input args: {refused!r} is not allowed: the action lints and reports (fixing, recording a "
                          "baseline, listing or explaining rules would change the checkout or skip the lint)")
    sarif = sarif_target(env.get("ONNXLINT_SARIF", "onnxlint.sarif"), workspace)
    onnxlint = [*pychild.module("onnxlint"), *args]
    # the step's own options after the user's (argparse keeps the last), the paths after the end of the options
    return ([*onnxlint, "--no-progress", "--format", "sarif", "-o", str(sarif), "--", *paths],
            [*onnxlint, "--no-progress", "--format", "github", "--", *paths], sarif)


def main() -> int:
    env = dict(os.environ)
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    try:
        to_sarif, to_log, _ = commands(env, workspace)
    except ActionError as exc:
        print(f"onnxlint action: error: {esc(str(exc))}", file=sys.stderr)
        return 2
    rc = subprocess.call(to_sarif)
    # the annotations' run meets the same input error again: said once, by the first run (its annotations stay)
    subprocess.call(to_log, stderr=subprocess.DEVNULL if rc == 2 else None)
    output = env.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as fh:
            fh.write(f"exit-code={rc}\n")
    return 2 if rc == 2 else 0


if __name__ == "__main__":
    sys.exit(main())
