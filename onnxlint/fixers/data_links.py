"""Where ORT reads a model's external data from, when the model it loads is not the file beside that data.

ORT 1.21 and later read a model given as bytes with its external data from the folder
session.model_external_initializers_file_folder_path names (data_folder_option). ORT 1.20 ignores that option
and reads the data relative to the folder of the model file it loads, so a copy of a model (the numeric check's,
verify's renamed one) had to be written beside the data: in the model's folder, a repository under review or a
read-only folder, left there by a run killed meanwhile. session_file gives ORT 1.20 the copy in a new temporary
folder instead, beside a link to each data file its locations name (ORT 1.20.1 follows such a link: measured), so
nothing is written in the model's folder; verify --fix writes the fixed model its session runs beside such links
too (linked_folder), the model alone. Only where a link cannot be made (Windows without the privilege) is the
copy written beside the data, as before: locked while it exists, named by the caller so that a later run
removes one a killed run left.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Callable, Iterable, Iterator

from onnxlint.model import write_guard

OPTION = "session.model_external_initializers_file_folder_path"


def data_folder_option(version: str) -> bool:
    """Whether this ORT reads a model given as bytes with its external data from the folder
    session.model_external_initializers_file_folder_path names (1.21 and later; 1.20.1 ignores it)."""
    parts = version.split(".")[:2]
    return all(p.isdigit() for p in parts) and tuple(int(p) for p in parts) >= (1, 21)


def locations(model: object) -> list[str]:
    """The external-data locations the model's tensors name, each once (every graph, body and function)."""
    from onnxlint.model.loading import external_data_tensors

    found = (e.value for t in external_data_tensors(model) for e in t.external_data if e.key == "location")  # type: ignore[arg-type]
    return list(dict.fromkeys(found))


@contextlib.contextmanager
def linked_folder(names: Iterable[str], data_folder: str) -> Iterator[str | None]:
    """A new temporary folder holding a link to each data file `names` name (locations relative to data_folder,
    each checked by the caller to stay there): a model written in it reads its data from data_folder, and nothing
    is written there. None where a link cannot be made (Windows without the privilege); removed on leaving."""
    with tempfile.TemporaryDirectory(prefix="onnxlint-data.") as tmp:
        try:
            for name in names:
                link = os.path.join(tmp, name)
                os.makedirs(os.path.dirname(link), exist_ok=True)
                if not os.path.lexists(link):  # "w.bin" and "./w.bin" name one file
                    os.symlink(os.path.realpath(os.path.join(data_folder, name)), link)
        except (OSError, NotImplementedError):
            yield None
        else:
            yield tmp


@contextlib.contextmanager
def session_file(model: bytes, names: Iterable[str], data_folder: str, prefix: str,
                 said: Callable[[str], None] | None = None) -> Iterator[str]:
    """A file ORT 1.20 loads `model` from with its external data (`names`, locations relative to data_folder,
    each checked by the caller to stay there) read from data_folder: in a temporary folder beside links to those
    files (linked_folder); where a link cannot be made, beside the data (`prefix`XXXXXXXX.onnx, locked while it
    exists; said(path) is told its name first)."""
    with linked_folder(names, data_folder) as tmp:
        if tmp is not None:
            fd, path = tempfile.mkstemp(prefix=".onnxlint-model.", suffix=".onnx", dir=tmp)  # a name no location has
            with os.fdopen(fd, "wb") as fh:
                fh.write(model)
            yield path
            return
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".onnx", dir=data_folder)
    held = os.dup(fd)  # locked while it exists: never stale to another run's write_guard.remove_unheld
    try:
        write_guard.lock(held)
        if said is not None:
            said(path)
        with os.fdopen(fd, "wb") as fh:
            fh.write(model)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(held)
