"""Where a model lies in the repository, as code scanning and the runner's annotations name it: from the
repository root (not the working folder a step runs in), through the links of its folder but not its own."""

from __future__ import annotations

import os
from pathlib import Path


def real_folder(filename: str) -> Path:
    """The file's absolute path, its folder's links resolved but not the file's own: a git-annex model (a link into
    .git/annex/objects) or `latest.onnx -> v3.onnx` is named as the repository names it, and its alert stays one
    alert when its content changes."""
    absolute = os.path.abspath(filename)
    return Path(os.path.realpath(os.path.dirname(absolute))) / os.path.basename(absolute)


def repository_root(root: str | os.PathLike | None = None) -> Path:
    """What %SRCROOT% stands for: root when given, else the repository the run is in (git's toplevel, the
    folder holding `.git`), else the working folder; code scanning resolves a result's URI against the
    repository root, and the runner an annotation's file."""
    if root is not None:
        return Path(root).resolve()
    from onnxlint.config.config_file import repo_root

    cwd = Path.cwd().resolve()
    return (repo_root(cwd) or cwd).resolve()
