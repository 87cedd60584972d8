"""onnx's checker, asked once per model, its complaint on one line."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onnxlint.model.loading.model_file import ModelFile



_EXTERNAL_COMPLAINT = re.compile(r"should be stored in|^Data of TensorProto|^Location of external TensorProto|"
                                 r"external data", re.I)


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
    else:
        msg = checker_message(mf.raw if mf.raw is not None else mf.model)
    return own_complaint(mf, msg)


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
