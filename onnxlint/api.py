"""The public API: lint, fix and predict placement from Python.

    >>> import onnxlint
    >>> report = onnxlint.lint("model.onnx")                       # nearest config, default targets
    >>> report = onnxlint.lint(model_proto, onnxlint.Settings.from_config(None, targets=["ort-cuda"]))
    >>> for f in report.findings: print(f.code, f.node, f.message)

Calls from several threads (a web service's worker threads) run one at a time: a lint holds process-wide state (the
child that runs onnx's C++ calls, answering down one pipe; the numeric check's capture of file descriptors 1 and
2), and two at once read each other's answers. For lints in parallel, use processes.
"""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

import onnx

from onnxlint.config import config_file as config_mod
from onnxlint.config.settings import Settings
from onnxlint.linting import linter
from onnxlint.linting.fixing import FixOptions, fix_file
from onnxlint.linting.report import FileReport
from onnxlint.rules.context import Options
from onnxlint.support.errors import RuleError, UsageError

_F = TypeVar("_F", bound=Callable[..., Any])
_ONE_AT_A_TIME = threading.RLock()


def _one_at_a_time(call: _F) -> _F:
    """The call holds the process's one lint lock (see the module's docstring): threads take turns."""
    @functools.wraps(call)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _ONE_AT_A_TIME:
            return call(*args, **kwargs)

    return locked  # type: ignore[return-value]


def _settings_near(path: Path | None) -> Settings:
    cfg = config_mod.find_for(path.parent) if path is not None else config_mod.Config()
    return Settings.from_config(cfg)


def _settings(given: object, path: Path | None) -> Settings:
    """The settings a call gave (the nearest config's without), their selection naming rules, as the command
    line checks it: a misspelt code in select or ignore linted with nothing selected or nothing ignored, silently."""
    if given is None:
        settings = _settings_near(path)
    elif isinstance(given, Settings):
        settings = given
    else:
        raise TypeError(f"settings must be onnxlint.Settings (Settings.from_config(...)), not {type(given).__name__}")
    try:
        ruleset = linter.ruleset_for(settings.rule_dirs)
    except RuleError:
        return settings  # a rule file that cannot be read: the lint raises it where it would start
    try:
        linter.check_selection(settings, ruleset)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    return settings


def _path(model: Any, call: str) -> Path:
    if not isinstance(model, (str, os.PathLike)):
        also = " or an onnx.ModelProto" if call == "lint" else ""
        raise TypeError(f"{call}() takes a model file's path{also}, not {type(model).__name__}")
    return Path(model)


@_one_at_a_time
def lint(model: str | Path | onnx.ModelProto, settings: Settings | None = None) -> FileReport:
    """Lint one model file or in-memory ModelProto. Without settings, the config nearest to the file applies
    (none for a ModelProto). A file that cannot be read gives a report whose .error says why. A selection that
    names no rule raises ValueError; settings that are not Settings, or a model that is neither, TypeError."""
    if isinstance(model, onnx.ModelProto):
        return linter.lint_model(model, _settings(settings if settings is not None else Settings.from_config(None), None))
    path = _path(model, "lint")
    return linter.lint_file(path, _settings(settings, path))


@_one_at_a_time
def fix(path: str | Path, settings: Settings | None = None, *, unsafe: bool = False, output: str | Path | None = None,
        diff: bool = False, shapes: dict[str, list[int]] | None = None, show_info: bool = False) -> FileReport:
    """Lint, then apply the safe (or, with unsafe=True, all) fixes the findings name; the report's notes say
    what was written and its fixed findings are marked. `shapes` gives dynamic input dims for the numeric check
    (default 1 for each). As the command line does, it fixes what a run shows: errors and warnings, infos only
    with show_info=True (or when the settings select their code by name); a note says what was left alone.
    With diff=True nothing is written and the report's `.diff` is the unified diff of the model's text form. An
    in-place write is compare-and-swap: when the file changed since it was read, nothing is written and the
    report's write_refused says so.

    `output` is checked as the command line checks `-o`, before anything is read: a file, or a folder (one that
    exists, or a string ending in `/`, made when missing) to write the fixed model into under its own name; never
    the model's external data, a report's name (`.json`, `.sarif`, ...), a FIFO or a device, nor in a folder that
    does not exist. Such an output raises ValueError, saying why; nothing is written. The output naming the model
    itself (or a link to it) fixes it in place. A ModelProto has no file to write: save it first."""
    from onnxlint.model import write_guard

    path = _path(path, "fix")
    try:
        out = _fix_output(output, path, diff=diff)
        settings = _settings(settings, path)
        res = linter.lint_file(path, settings, digest=True)
        if not res.error:
            fix_file(path, settings, res, FixOptions(unsafe=unsafe, diff=diff, output=out, shapes=dict(shapes or {}),
                                                     show_info=show_info, show_info_words="show_info=True"))
    finally:
        write_guard.remove_made_empty()  # an output folder made for a fix that wrote nothing
    return res


def _fix_output(output: str | Path | None, path: Path, diff: bool) -> Path | None:
    """fix()'s output as `-o` takes it (a string's trailing separator says a folder, which Path would drop), with
    the command line's checks: a ValueError (the caller's argument) where the command line exits 2."""
    if output is None or output == "":
        return None
    from onnxlint.linting.fixing import check_fix_output
    from onnxlint.model.paths import output_path

    out = output_path(output) if isinstance(output, str) else Path(output)
    try:
        check_fix_output(out, [path], option="output", diff=diff)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    return out


def predict(model: str | Path | onnx.ModelProto, target: str = "ort-cuda", ort_version: str | None = None,
            trt_version: str | None = None, ort_optimization: str = "all") -> Any:
    """A target's per-node prediction: for ort-cuda/ort-cpu the placement (`onnxlint.ort.verdicts.Placement`),
    for tensorrt the parser verdicts, for ort-trt the TensorRT EP partition. A target, version or level the
    command line would refuse raises ValueError (VersionError for a version); a file that cannot be read,
    InputError (LfsPointer for a Git LFS pointer)."""
    return _predict(model, target, ort_version, trt_version, ort_optimization)


@_one_at_a_time
def _predict(model: str | Path | onnx.ModelProto, target: str, ort_version: str | None, trt_version: str | None,
             ort_optimization: str, by_content: bool = False) -> Any:
    """predict(); by_content (`onnxlint placement` with no target named, by the command line or a config): a model
    whose content says ORT runs it on its CPU EP (a classic-ML model, model.intent.cpu_model) is placed for ort-cpu,
    as its lint checks it (linter._content_targets), a note saying so."""
    from onnxlint import targets
    from onnxlint.config.settings import check_runtime, check_targets
    from onnxlint.linting import engine
    from onnxlint.model import intent, loading
    from onnxlint.model.loading import native
    from onnxlint.rulefiles.ruleset import get_ruleset

    check_targets([target])
    check_runtime(ort_version, trt_version, ort_optimization)
    ort_version, trt_version = ort_version or None, trt_version or None  # "": not given, as Settings reads it
    if isinstance(model, onnx.ModelProto):
        mf = linter.model_file(model)
    else:
        mf = loading.load(_path(model, "predict"))
    ruleset = get_ruleset()

    def placed() -> Any:
        index = loading.index_model(mf)
        why = intent.cpu_model(index) if by_content else None
        chosen = "ort-cpu" if why else target
        options = Options(targets=targets.closure({chosen}), ort_version=ort_version, trt_version=trt_version,
                          ort_optimization=ort_optimization)
        pred = engine.new_context(mf, index, options, ruleset, targets.REGISTRY).prediction(chosen)
        if why:
            pred.notes = [*pred.notes, f"{why} is placed for ORT's CPU EP (ort-cpu), as its lint checks it; "
                                       f"--target {target} places it for that target"]
        return pred

    with native.one_model():  # a call into onnx's C++ past its limit: the model's later ones are not made
        pred = loading.with_strings_repaired(mf, placed)
    return _with_inference_note(pred, mf)


def _with_inference_note(pred: Any, mf: Any) -> Any:
    """A placement made without onnx's shape inference (past its budget or its limit) says so among its notes: its
    kernels were matched on the types the file declares (a lint says it as OLX008)."""
    if mf.inference_skipped and isinstance(getattr(pred, "notes", None), list) and mf.inference_skipped not in pred.notes:
        pred.notes = [*pred.notes, mf.inference_skipped]
    return pred
