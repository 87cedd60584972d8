"""Writing a fixed model: atomically (temp file in the destination folder, re-read and checked, renamed over
the target), with its external tensors streamed into a new data file when written into another folder."""

from __future__ import annotations

import copy
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import onnx

from onnxlint.fixers.base import FixError
from onnxlint.model import write_guard
from onnxlint.model.loading import external_data_tensors, file_complaint, has_external_data, safe_external_path
from onnxlint.support import digest as digests
from onnxlint.support import reading

COPY_CHUNK = 16 * 2**20
DATA_ALIGN = 4096
# the replaced model is read for the data files it names only up to this size (one whose weights live in a data
# file is its graph alone); a larger one keeps its data files, as they were
REPLACED_MODEL_LIMIT = 64 << 20
# the first bytes of every data file onnxlint writes (the tensors follow, DATA_ALIGN-aligned): a data file is
# removed as the replaced output's only when it starts so, never one an exporter wrote under the same name
DATA_HEADER = b"onnxlint external data 1\n"


class ChangedSinceRead(FixError):
    """The file to be replaced is not the version the fix was computed from: nothing was written."""


@dataclass(frozen=True)
class ReadVersion:
    """The version of a model file a fix was computed from: loading's stamp (device, inode, size, mtime_ns) of
    what it read and the blake2b of the bytes read."""

    stamp: tuple[int, int, int, int]
    digest: str


def changed_since(path: Path, version: ReadVersion) -> str | None:
    """Why the file at path is not that version any more (None: it is): its stamp first, then its bytes (a copy
    that kept the mtime, a write within the clock's granularity)."""
    try:
        data, st = reading.read_with_stat(path, lambda size: None)
    except reading.Refused as exc:
        return str(exc)
    if reading.stamp(st) != version.stamp:
        return "its size, modification time or inode changed"
    if digests.hexdigest(data) != version.digest:
        return "its content changed"
    return None


def _new_data_name(dest: Path) -> str:
    """A name beside dest that nothing holds, not even a link leading nowhere (open's O_EXCL refuses one: the fix
    was not written, and its note named the model, "File exists")."""
    name = f"{dest.name}.data"
    n = 1
    while os.path.lexists(dest.parent / name):
        name = f"{dest.name}.{n}.data"
        n += 1
    return name


def _replaced_data(dest: Path) -> set[str]:
    """The data files beside dest, of the names onnxlint gives them (`<dest name>.data`, `<dest name>.N.data`),
    that the model now at dest names: what replacing it leaves unused, unless another model names them too."""
    own = re.compile(re.escape(dest.name) + r"(\.[1-9][0-9]*)?\.data")
    try:
        data, _ = reading.read_with_stat(dest, reading.within(REPLACED_MODEL_LIMIT, "model"))
        model = onnx.ModelProto()
        model.ParseFromString(data)
        tensors = external_data_tensors(model)
    except Exception:  # no model there, a link, unreadable, too large, not a model: nothing is removed
        return set()
    names = {e.value for t in tensors for e in t.external_data if e.key == "location"}
    return {n for n in names if own.fullmatch(n)}


def _named_in(folder: Path, name: str) -> bool:
    """Whether a model in folder (a file named *.onnx in any case, a link to one included) holds name anywhere in
    its bytes: a copy of the written model (`cp out/m.onnx out/backup.onnx`) names its data file as well. Read
    COPY_CHUNK at a time; a file that cannot be read counts as naming it."""
    needle = name.encode()
    try:
        entries = [e for e in os.scandir(folder) if e.name.lower().endswith(".onnx")]
    except OSError:
        return True
    for entry in entries:
        try:
            if not stat.S_ISREG(os.stat(entry.path).st_mode):
                continue
            with open(entry.path, "rb") as fh:
                tail = b""
                while chunk := fh.read(COPY_CHUNK):
                    if needle in tail + chunk:
                        return True
                    tail = chunk[-len(needle):]
        except OSError:
            return True
    return False


def _written_by_onnxlint(path: Path) -> os.stat_result | None:
    """The stat of path when it is a regular file that starts with DATA_HEADER (a data file onnxlint wrote), else
    None: an exporter's `model.onnx.data` beside the `model.onnx` that -o replaces is the user's own."""
    try:
        fd = os.open(path, write_guard.READ_OWN)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and os.read(fd, len(DATA_HEADER)) == DATA_HEADER:
            return st
    except OSError:
        pass
    finally:
        os.close(fd)
    return None


def _remove_unused_data(folder: Path, names: set[str]) -> None:
    """Remove the data files of the replaced model that onnxlint wrote (DATA_HEADER) and no model in folder names
    now (a link, or a file an exporter wrote, is left alone)."""
    for name in sorted(names):
        path = folder / name
        try:
            st = _written_by_onnxlint(path)
            if st is not None and not _named_in(folder, name) and os.path.samestat(os.lstat(path), st):
                os.unlink(path)
        except OSError:
            pass  # gone meanwhile, or not ours to remove: kept, as before


def relocate_external_data(model: onnx.ModelProto, source_dir: Path, dest: Path) -> Path | None:
    """Copy the external tensors the fixed model still uses (initializers, Constant values, tensor attributes,
    sparse parts, in every graph and function) into one new data file beside dest.

    The bytes are streamed range by range (at most COPY_CHUNK in memory); tensor offsets are re-based and
    aligned. The model's references are rewritten to the new file. Returns the new file (None: nothing).
    The copy is written to a temporary file of atomic_write's naming, locked while written (one a killed run left
    is removed as atomic_write's are: write_guard.remove_stale), and takes its free name once whole: a run killed while
    copying (SIGKILL, the OOM killer) leaves no half-written file under a data file's name."""
    # every tensor with external data, not only initializers: a Constant node's value left pointing at its old
    # location would read whatever file of that name sits beside the written model
    tensors = external_data_tensors(model)
    if not tensors:
        return None
    name = _new_data_name(dest)
    out_path = dest.parent / name
    fd, tmp = tempfile.mkstemp(prefix=write_guard.temp_prefix(dest), suffix=".tmp", dir=dest.parent)
    held = os.dup(fd)  # locked until the file has its name or is removed: never stale to another run's remove_stale
    try:
        with os.fdopen(fd, "wb") as out:
            write_guard.lock(held)
            _copy_tensors(out, tmp, tensors, source_dir, name)
            out.flush()
            os.fsync(out.fileno())
        _take_name(tmp, out_path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    finally:
        os.close(held)
    return out_path


def _copy_tensors(out: IO[bytes], tmp: str, tensors: list[onnx.TensorProto], source_dir: Path, name: str) -> None:
    """Write DATA_HEADER and then each tensor's bytes to out (the file tmp), each at a DATA_ALIGN-aligned offset,
    and point the tensor at its place in the data file to be called name."""
    handles: dict[Path, IO[bytes]] = {}
    try:
        out.write(DATA_HEADER)  # the tensors start DATA_ALIGN bytes in: ORT and onnx read them at their offsets
        for t in tensors:
            info = {e.key: e.value for e in t.external_data}
            src = safe_external_path(source_dir, info.get("location", ""))
            if src is None:  # never copy from outside the model's folder (fix_file refuses earlier too)
                raise FixError(f"tensor {t.name!r}: external data location {info.get('location')!r} is "
                               "outside the model's folder or unusable")
            if not handles:  # the new data file is as private as the weights it copies (mkstemp made it 0600)
                os.chmod(tmp, stat.S_IMODE(os.stat(src).st_mode))
            fh = handles.get(src) or handles.setdefault(src, open(src, "rb"))
            offset = int(info.get("offset", 0) or 0)
            length = int(info["length"]) if info.get("length") else os.fstat(fh.fileno()).st_size - offset
            pad = (-out.tell()) % DATA_ALIGN
            out.write(b"\0" * pad)
            new_offset = out.tell()
            fh.seek(offset)
            left = length
            while left:
                chunk = fh.read(min(COPY_CHUNK, left))
                if not chunk:
                    raise FixError(f"external data file {info['location']!r} ends before tensor {t.name!r}")
                out.write(chunk)
                left -= len(chunk)
            del t.external_data[:]
            for k, v in (("location", name), ("offset", str(new_offset)), ("length", str(length))):
                e = t.external_data.add()
                e.key, e.value = k, v
    finally:
        for fh in handles.values():
            fh.close()


def _take_name(tmp: str, path: Path) -> None:
    """Give the whole file tmp the name path, only while nothing holds that name (never replacing a file or link
    made there meanwhile): a hard link, refused when the name is taken, and the temporary name removed; where the
    file system has no hard links, a rename once the name is seen free."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise FixError(f"{path.name} was made beside it while the data was copied; not replaced") from None
    except OSError:  # no hard links here (FAT, some network and FUSE file systems)
        if os.path.lexists(path):
            raise FixError(f"{path.name} was made beside it while the data was copied; not replaced") from None
        os.rename(tmp, path)
        return
    os.unlink(tmp)


def write_fixed(model: onnx.ModelProto, dest: Path, source_dir: Path, known_error: str | None = None,
                expect: ReadVersion | None = None, data_root: str | None = None) -> list[str]:
    """Write a fixed model; one with external data gets its own data file when written into another folder, but
    for a folder holding links to its data files in data_root (the real source_dir: data_links.linked_folder,
    verify --fix's copy), where it is written alone.

    A destination that is a symlink is written through (the link stays a link, its target gets the model).
    expect: the version of dest the fix was computed from (an in-place fix): compare-and-swap, see atomic_write.
    Returns the names of the temporary files an earlier write of dest, killed, left beside it, removed now."""
    dest = Path(dest)
    # where the data must be: beside the path the user named (ORT resolves a model's data from the folder of
    # the path it is given, a link's folder for a link), whatever file that path leads to
    named_dir = dest.parent.resolve()
    if dest.is_symlink():
        dest = Path(os.path.realpath(dest))
    if data_root is not None:
        atomic_write(model, dest, known_error=known_error, expect=expect, data_root=data_root)
        return write_guard.remove_stale(dest)
    if has_external_data(model) and named_dir != Path(source_dir).resolve():
        model = copy.deepcopy(model)  # the in-memory fix keeps pointing at the source data
        # a model written by an earlier -o is replaced: its data file, which the new one cannot take (the new
        # data is written before the model is swapped), is removed after the swap when nothing else names it
        # (not through a link into another folder: the file it leads to is not this folder's model)
        linked_away = dest.parent.resolve() != named_dir  # dest was a link into another folder
        replaced = _replaced_data(dest) if not linked_away else set()
        new_data = relocate_external_data(model, Path(source_dir), named_dir / dest.name)
        try:
            atomic_write(model, dest, known_error=known_error, expect=expect)
        except BaseException:
            if new_data is not None and new_data.exists():
                new_data.unlink()
            raise
        _remove_unused_data(named_dir, replaced - {new_data.name if new_data else ""})
        # the data file's temporary name is beside the name given (a killed copy's too), the model's beside the file
        # a link at dest leads to
        stale = write_guard.remove_stale(dest)
        return stale + (write_guard.remove_stale(named_dir / dest.name) if linked_away else [])
    atomic_write(model, dest, known_error=known_error, expect=expect)
    return write_guard.remove_stale(dest)


def _owner_for(dest: Path) -> tuple[int, int] | None:
    """The (uid, gid) of the file dest replaces, or None for a new file. Only a regular file is replaced: a
    FIFO, a device or a socket at dest is refused (renaming over it would put a regular file in its place)."""
    try:
        st = os.stat(dest)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise FixError(f"{dest} is not a regular file (a FIFO, a device or a socket); not replaced")
    return st.st_uid, st.st_gid


def _keep_owner(tmp: str, dest: Path, owner: tuple[int, int]) -> None:
    """The written file gets the replaced file's owner and group; where they cannot be given (another user's
    file, a group this user is not in), nothing is written: the rename would silently change them."""
    st = os.stat(tmp)
    if (st.st_uid, st.st_gid) == owner:
        return
    try:
        os.chown(tmp, *owner)
    except OSError:
        raise FixError(f"{dest} is owned by uid {owner[0]} gid {owner[1]}; the fixed file could not be given that "
                       "owner, so it is not replaced (run as that user, or write elsewhere with -o)") from None


def _mode_for(dest: Path) -> int:
    """The permission bits the written file should have: the replaced file's, else what open() would give."""
    try:
        return stat.S_IMODE(os.stat(dest).st_mode)
    except OSError:
        return 0o666 & ~write_guard.umask()


def atomic_write(model: onnx.ModelProto, dest: Path, _fail_after_write: bool = False,
                 known_error: str | None = None, expect: ReadVersion | None = None, data_root: str | None = None) -> None:
    """Temp file in the same folder, re-read and check it, then rename over the destination.

    known_error: the first line of the checker's complaint about the original model; the same complaint about
    the written file does not stop the write (the fix did not cause it). expect: compare-and-swap: the rename
    happens only while dest still is the version the fix was computed from (an editor saved a new one, a
    `git checkout` replaced it, during the seconds the numeric check takes: ChangedSinceRead, nothing written).
    data_root: where the data links beside dest lead (write_fixed's)."""
    dest = Path(dest)
    owner = _owner_for(dest)
    fd, tmp = tempfile.mkstemp(prefix=write_guard.temp_prefix(dest), suffix=".tmp", dir=dest.parent)
    held = os.dup(fd)  # locked until the file is renamed or removed: never stale to another run's remove_stale
    try:
        write_guard.lock(held)
        _write_checked(model, dest, tmp, fd, owner, _fail_after_write, known_error, expect, data_root)
    finally:
        os.close(held)


def _write_checked(model: onnx.ModelProto, dest: Path, tmp: str, fd: int, owner: tuple[int, int] | None,
                   _fail_after_write: bool, known_error: str | None, expect: ReadVersion | None,
                   data_root: str | None = None) -> None:
    """atomic_write's work on its temporary file tmp (open as fd): written, re-read, checked, renamed over dest."""
    try:
        if owner is not None:  # first: a chown clears set-id bits
            _keep_owner(tmp, dest, owner)
        os.chmod(tmp, _mode_for(dest))  # mkstemp makes 0600; the file keeps the mode it had (or gets umask's)
        with os.fdopen(fd, "wb") as fh:
            fh.write(model.SerializeToString())
            fh.flush()
            os.fsync(fh.fileno())
        if _fail_after_write:
            raise OSError("injected failure after writing the temporary file")
        onnx.load(tmp, load_external_data=False)  # reads back as a model
        # by path: external data resolves beside it (stat only), a data file that is a link as ORT reads it; in the
        # native worker. NativeCrash or another error: raised
        complaint = file_complaint(tmp, data_root)
        if complaint is not None and complaint != known_error:
            raise onnx.checker.ValidationError(complaint)
        why = changed_since(dest, expect) if expect is not None else None
        if why is not None:
            raise ChangedSinceRead(f"changed since onnxlint read it ({why}); the fix was not written: run onnxlint "
                                   "--fix again on the new version")
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
