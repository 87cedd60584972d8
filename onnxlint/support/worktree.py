"""The git work tree a folder lies in: the nearest folder up from it that holds `.git` (a folder, or the file of
a linked worktree or a submodule). A walk asks for every folder it enters, so each answer is kept for every
folder walked on the way up: a tree thousands of folders deep costs one step per folder, not one per level."""

from __future__ import annotations

import os


def root(folder: str, memo: dict[str, str | None]) -> str | None:
    """folder's work tree root, or None outside any. folder: an absolute path (real or as given: the caller's
    choice, and memo's keys follow it); memo: folder -> root, filled for the folders walked."""
    walked, d = [], folder
    while True:
        if d in memo:
            found = memo[d]
            break
        walked.append(d)
        if os.path.lexists(os.path.join(d, ".git")):
            found = d
            break
        up = os.path.dirname(d)
        if up == d:
            found = None
            break
        d = up
    for w in walked:
        memo[w] = found
    return found


def inside(path: str, folder: str) -> bool:
    """Whether path is folder or lies below it (both absolute, and alike: both real paths, or both as given); a
    path on another drive (Windows) is outside."""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:
        return False
