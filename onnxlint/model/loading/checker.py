"""onnx's checker, asked once per model, its complaint on one line."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from onnxlint.model.loading.model_file import ExternalTensor, ModelFile



_EXTERNAL_COMPLAINT = re.compile(r"should be stored in|^Data of TensorProto|^Location of external TensorProto|"
                                 r"external data", re.I)
# the checker's refusal of a data file that is a symbolic link, or (onnx 1.23 on) a file with several hard links (onnx's
# checker.cc, resolve_external_data_location)
_LINKED_DATA = re.compile(r"^Data of TensorProto \( ?tensor name: .*\) should be stored in .*, but it "
                          r"(?:is a symbolic link|has multiple hard links)")


def checker_result(mf: ModelFile) -> str | None:
    """check_model(mf), run once; the file's bytes are dropped after, when inference has had them too."""
    if mf.checked is False:
        mf.checked = check_model(mf)
        if mf.inference_done:
            mf.raw = None
    return mf.checked  # type: ignore[return-value]


def check_model(mf: ModelFile) -> str | None:
    """onnx.checker's first complaint, or None.

    Checked from the file itself: the checker then resolves external data against the model's folder (and
    only stats it), and does not pay for re-serializing the weights."""
    if mf.external and not mf.outside_external:  # nothing outside the folder is even stat()ed
        msg = checker_message(str(mf.path))
        if msg and _LINKED_DATA.match(msg) and not mf.missing_external:
            msg = _check_with_links_as_files(mf, msg)
    else:
        msg = checker_message(mf.raw if mf.raw is not None else mf.model)
    return own_complaint(mf, msg)


def _check_with_links_as_files(mf: ModelFile, complaint: str) -> str | None:
    """The checker's complaint about the model with each external data file a regular file (recheck_links)."""
    raw = mf.raw if mf.raw is not None else mf.model.SerializeToString()
    return recheck_links(raw, mf.external, checker_message, complaint)


def recheck_links(raw: bytes, external: list[ExternalTensor], check: Callable[[str], str | None],
                  complaint: str) -> str | None:
    """check() of the model `raw` holds, in a temporary folder with a regular file as long as each data file.

    The checker refuses a data file that is a symbolic link, and (onnx 1.23 on) one with several hard links; ONNX
    Runtime (1.20.1, 1.24.4, 1.32.0; hard links 1.23.2, 1.24.4, 1.31.1) and TensorRT's parser (TensorRT-RTX 1.7)
    read it, and the Hugging Face cache, git-annex and DVC's link cache keep every data file that way (DVC's
    `cache.type hardlink` as a hard link): on such a model the complaint is no portability problem a user could act on. The
    data files are sparse copies of their size (the checker only stats them; nothing is read), so a real complaint
    behind the link's is still reported. external: the model's external tensors as external_tensors found them;
    complaint: the checker's on the model itself, kept where the check cannot be made (a location with a problem,
    no temporary folder)."""
    if any(t.problem for t in external):
        return complaint
    tmp = tempfile.mkdtemp(prefix="onnxlint-check-")
    try:
        model = os.path.join(tmp, "model.onnx")
        with open(model, "wb") as fh:
            fh.write(raw)
        for t in external:  # each location stayed in the model's folder (no problem: external_tensors)
            dest = os.path.normpath(os.path.join(tmp, t.location))
            if os.path.commonpath([tmp, dest]) != tmp or dest == tmp:
                return complaint
            if not os.path.exists(dest):
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "wb") as fh:
                    fh.truncate(os.stat(t.path).st_size)
        msg = check(model)
    except OSError:  # no temporary folder, or the data file went meanwhile: the complaint as it was
        return complaint
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return msg.replace(tmp + os.sep, "").replace(tmp, ".") if msg else None


def file_complaint(path: str | os.PathLike, data_root: str | None = None) -> str | None:
    """The first line of onnx.checker's complaint about a model file, by path (its external data is stat'ed, not
    read), past a data file's being a symbolic link (recheck_links); None when it passes. Raises what is not the
    checker's complaint (native.NativeCrash, another error): `--fix` checks the file it wrote with it. data_root:
    where the links beside a copy of a model in a temporary folder lead (loading.load's)."""
    import onnx

    from onnxlint.model.loading import native
    from onnxlint.support.errors import first_line

    def check(target: str) -> str | None:
        try:
            native.check_model(target)
        except Exception as exc:
            if not native.raised(exc, onnx.checker.ValidationError):
                raise
            return first_line(exc, limit=1 << 20)
        return None

    complaint = check(os.fspath(path))
    if complaint is None or not _LINKED_DATA.match(complaint):
        return complaint
    from onnxlint.model.loading.external import external_tensors, linked_real

    with open(path, "rb") as fh:
        raw = fh.read()
    model = onnx.load_from_string(raw)
    return recheck_links(raw, external_tensors(model, Path(path).parent, linked_real=linked_real(path, data_root)), check,
                         complaint)


def checker_message(target: Any) -> str | None:
    """onnx.checker.check_model(target)'s complaint on one line (at most 300 characters), or None. Run in a child
    (native.check_model): a crash of the C++ checker is that complaint ("onnx's checker crashed on this model
    (signal 11)"), the run goes on."""
    from onnxlint.model.loading import native

    try:
        native.check_model(target)
    except Exception as exc:  # ValidationError and friends
        # the checker's messages span lines ("input 'x' of node: \nname: a OpType: Add\n is not ..."): one line
        return (" ".join(str(exc).split()) or type(exc).__name__)[:300]
    return None


def own_complaint(mf: ModelFile, msg: str | None) -> str | None:
    if msg and mf.missing_external and _EXTERNAL_COMPLAINT.search(msg):
        return None  # missing, short or outside external data is its own finding (OLX003)
    return msg
