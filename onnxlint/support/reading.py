"""The one guard every file onnxlint reads from a repository goes through: models, config and rule files, the
baseline, a genai_config.json, the result cache's entries.

Only a regular file is read (a FIFO would block, /dev/zero never ends, /dev/stdin waits for a terminal), and
only after stat() shows it is within the caller's size limit; it is opened non-blocking and checked again with
fstat (the path may have been swapped since), then read to its size and no further. A refusal is `Refused`,
one line without the path; each caller words it with the file's name into its own error (exit 2).
"""

from __future__ import annotations

import os
import stat
from typing import Callable

TEXT_LIMIT = 16 << 20  # a config or rule file, a genai_config.json: text a person writes
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """Why a file was not read: one line, without its path."""


def within(limit: int, what: str) -> Callable[[int], None]:
    """A size check for read_regular: Refused past limit bytes."""
    def check(size: int) -> None:
        if size > limit:
            raise Refused(f"{_size(size)}: over the {_size(limit)} limit for {what}; not read")
    return check


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


def require_regular(st: os.stat_result, directory: str = "is a directory") -> None:
    """Refused unless st is a regular file's (directory: what to say of a folder)."""
    if stat.S_ISREG(st.st_mode):
        return
    if stat.S_ISDIR(st.st_mode):
        raise Refused(directory)
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a plain file")
    raise Refused(f"not a regular file ({kind}); not read")


def read_regular(path: str | os.PathLike, check_size: Callable[[int], None],
                 directory: str = "is a directory") -> bytes:
    """The bytes of a regular file whose size check_size accepts (it raises to refuse), read once from what was
    opened. Refused for anything else: missing, unreadable, not a regular file, too large, changed meanwhile."""
    return read_with_stat(path, check_size, directory)[0]


def _missing(path: str | os.PathLike) -> str:
    """Why a path that stat() does not find is missing: a symbolic link says where it leads (git-annex's, whose
    content was not fetched, says how to get it)."""
    try:
        target = os.readlink(os.fspath(path))
    except (OSError, ValueError):
        return "no such file or directory"
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if "annex/objects/" in target.replace(os.sep, "/"):
        return f"a git-annex link whose content is not here ({target}): fetch it with `git annex get`"
    return f"a symbolic link to {target}, which does not exist"


def stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    """What identifies a file's version without reading it: (device, inode, size, mtime in ns)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def read_with_stat(path: str | os.PathLike, check_size: Callable[[int], None],
                   directory: str = "is a directory") -> tuple[bytes, os.stat_result]:
    """read_regular, and the fstat of what was read (a compare-and-swap write checks the file still is that)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Refused(_missing(path)) from None
    except PermissionError:
        raise Refused("permission denied") from None
    except (OSError, ValueError) as exc:  # ELOOP, ENAMETOOLONG, an embedded NUL
        raise Refused(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    require_regular(st, directory)
    check_size(st.st_size)
    try:
        fd = os.open(path, _FLAGS)
    except PermissionError:
        raise Refused("permission denied") from None
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)  # what was opened, should the path have been swapped since stat()
        require_regular(st, directory)
        size = st.st_size
        check_size(size)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(size)
            if len(data) != size or fh.read(1):
                raise Refused("the file changed while it was being read")
    except PermissionError:
        raise Refused("permission denied") from None
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    return data, st
