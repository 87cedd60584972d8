"""`onnxlint verify` and `onnxlint --verify`: the core behind the front end (no argument parsing, no output)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from onnxlint.config import config_file as config_mod
from onnxlint.config.settings import Settings
from onnxlint.linting.report import FileReport, Report
from onnxlint.model import lfs, loading, write_guard
from onnxlint.support.errors import UsageError, did_you_mean
from onnxlint.verify.compare import FixedVerifyResult, VerifyResult, attach, verify_file
from onnxlint.verify.session import VERIFY_COPY


@dataclass(frozen=True)
class VerifyOptions:
    providers: tuple[str, ...] = ("CUDAExecutionProvider", "CPUExecutionProvider")
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    timeout: float = 300
    ort_version: str | None = None
    fix: bool = False
    optimization: str = "all"  # the session's graph optimization level, and the prediction's (ORT's default: all)
    output: Path | None = None  # verify --fix -o: the fixed model is written there, verified or not

    @property
    def shape_map(self) -> dict[str, list[int]]:
        return {name: list(dims) for name, dims in self.shapes}


def parse_shapes(values: list[str] | None) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """['x=1x3x224x224'] -> (('x', (1, 3, 224, 224)),); a malformed one is a usage error."""
    out = []
    for v in values or []:
        name, _, dims = v.partition("=")
        parts = dims.lower().split("x") if dims else []
        if not name or not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise UsageError(f"--shape wants name=1x3x224x224 (positive integers), got {v!r}")
        out.append((name, tuple(int(p) for p in parts)))
    return tuple(out)


def check_shape_names(files: list[Path], shapes: dict[str, list[int]]) -> None:
    """Every --shape name is an input of some model being verified (a typo would silently feed 1s)."""
    if not shapes:
        return
    names: set[str] = set()
    for path in files:
        try:
            model = loading.load(path).model
        except Exception:
            continue  # the session reports the unreadable file
        inits = {i.name for i in model.graph.initializer}
        names |= {i.name for i in model.graph.input if i.name not in inits}
    unknown = sorted(set(shapes) - names)
    if unknown:
        raise UsageError(f"--shape {unknown[0]}: no model input has this name{did_you_mean(unknown[0], names)} "
                         f"(inputs: {', '.join(sorted(names)) or 'none'})")


def settings_for(path: Path, target: str, ort_version: str | None) -> Settings:
    """The settings `onnxlint PATH --target TARGET` would use: the config nearest to the model."""
    return Settings.from_config(config_mod.find_for(path.parent), targets=[target], ort_version=ort_version)


def fix_in_place(path: Path, target: str, ort_version: str | None, output: Path | None = None,
                 verified: str | None = None, attempts: dict[Any, Any] | None = None, data_root: str | None = None
                 ) -> tuple[list[str], bool, str | None]:
    """The lint --fix path (safe fixes only, numerically checked, atomic), for `verify --fix`; into output
    when given. Its notes, whether it wrote the model (never read from the notes' text, which quotes the
    model's: a node named "; wrote x" in ORT's refusal passed for a written fix) and the digest of the version
    it read. verified: the digest of the version whose fix a session ran; another version is not written (the
    write's compare-and-swap is against this call's read, so a model edited after the verified fix was read
    was written fixed but never verified). attempts: shared by the two calls of one `verify --fix`, so the version
    whose fix ran is rewritten and numerically checked once (FixOptions.attempts). data_root: output's folder
    holds links to the model's data files, in this folder (FixOptions.data_root)."""
    from onnxlint.linting.fixing import FixOptions, fix_file
    from onnxlint.linting.linter import lint_file

    settings = settings_for(path, target, ort_version)
    res = lint_file(path, settings, want_placement=False, digest=True)
    if res.error:
        return [f"fix not attempted: {res.error}"], False, None
    if verified is not None and res.digest != verified:
        return ["fix not written: the model changed since its fix was verified; run `onnxlint verify --fix` again "
                "on the new version"], False, res.digest
    fix_file(path, settings, res, FixOptions(output=output, attempts=attempts, data_root=data_root))
    if res.write_refused:
        return [*res.notes, f"fix not written: {res.write_refused}"], False, res.digest
    return res.notes or ["nothing to fix"], res.written is not None, res.digest


def _verified(result: VerifyResult) -> bool:
    """A session ran the model on the providers asked for (misses are the prediction's, not the model's)."""
    return result.error is None and result.cuda_unavailable is None


def fix_and_verify(path: Path, before: VerifyResult, options: VerifyOptions) -> FixedVerifyResult:
    """`verify --fix` writes only what it could verify: the fix goes to a temporary copy (_fixed_copy), a session runs
    that copy on the providers asked for, and only then is the model fixed in place (the --fix path again: checked,
    atomic), if it is still the version whose fix ran. A fixed model no session could run (no GPU, a refused
    session) is not written; `-o FILE` writes it there whatever the session says, unless FILE is the model itself."""
    providers = list(options.providers)

    def verify(p: Path, data_root: str | None = None) -> VerifyResult:
        got = verify_file(p, providers, options.shape_map, options.timeout, options.ort_version, options.optimization,
                          data_root)
        got.filename = str(path)
        return got

    from onnxlint.linting.fixing import destination

    # the fix is given -o as typed: `out/` joined with the name stayed a folder path, written as out/m.onnx/m.onnx
    dest = destination(path, options.output)
    if options.output is not None and not write_guard.same_file(dest, path):
        notes, written, _ = fix_in_place(path, before.target, options.ort_version, options.output)
        # only what this run wrote: a file left at dest by an earlier run is no "after fix"
        if written and dest.exists():
            after = verify(dest)
            if not _verified(after):
                notes.append(f"written to {dest} without a verified session: {after.summary_line()}")
            return FixedVerifyResult(str(path), before, notes, after)
        return FixedVerifyResult(str(path), before, notes, before)
    with _fixed_copy(path) as (tmp, hold, data_root):
        attempts: dict[Any, Any] = {}  # the fix of the version read, made and checked once for both writes
        notes, written, read = fix_in_place(path, before.target, options.ort_version, tmp, attempts=attempts,
                                            data_root=data_root)
        hold()
        if not written:  # nothing to fix, or the fix was not written: the model stands as verified before
            return FixedVerifyResult(str(path), before, notes, before)
        after = verify(tmp, data_root)
        if not _verified(after):
            why = after.error or f"CUDAExecutionProvider was requested but not exercised: {after.cuda_unavailable}"
            if after.summary_line() == before.summary_line():
                why = "as before the fix, above"
            return FixedVerifyResult(str(path), before, [
                f"fix not written: no session could verify the fixed model ({why}); "
                "`onnxlint verify --fix -o FIXED.onnx` writes it without that"], before)
        # -o naming the model itself (its name, a link to it, another hard link of it) is the model fixed in place:
        # written, under the name -o gives, only once its session ran (it was written whatever the session said)
        notes, written, _ = fix_in_place(path, before.target, options.ort_version, options.output, verified=read,
                                         attempts=attempts)
        return FixedVerifyResult(str(path), before, notes, after if written else before)


@contextlib.contextmanager
def _fixed_copy(path: Path) -> Iterator[tuple[Path, Callable[[], None], str | None]]:
    """Where verify --fix writes the fixed model its session runs, a call that holds it once written, and the folder
    of its data (None: its own): a new temporary folder, so nothing is written beside the model (a repository under
    review, where a verify killed meanwhile left the copy); for a model with external data, beside a link to each
    data file (data_links.linked_folder: the fix into another folder copies its weights), its data folder the
    model's. Only where no link can be made (Windows without the privilege) is it beside the model
    (`.onnxlint-verify-XXXXXXXX.onnx`, locked while it exists: never stale to another run's remove_unheld, which
    removes one a killed run left)."""
    from onnxlint.fixers import data_links

    try:
        mf = loading.load(path)
    except Exception:  # the fix says what is wrong with the file
        mf = None
    if mf is None or not mf.external or any(t.problem for t in mf.external):  # the fix writes none of the last
        with tempfile.TemporaryDirectory(prefix="onnxlint-verify.") as folder:
            yield Path(folder) / path.name, lambda: None, None
        return
    write_guard.remove_unheld(path.parent, VERIFY_COPY)  # what a verify --fix killed (SIGKILL) left here
    with data_links.linked_folder(data_links.locations(mf.model), str(path.parent)) as linked:
        if linked is not None:
            yield Path(linked) / path.name, lambda: None, os.path.realpath(path.parent)
            return
    fd, tmp_name = tempfile.mkstemp(prefix=".onnxlint-verify-", suffix=".onnx", dir=path.parent)
    held = [fd]
    write_guard.lock(fd)
    tmp = Path(tmp_name)
    try:  # the fixed model takes the name (a new file): its lock
        yield tmp, lambda: held.append(write_guard.hold(tmp) or fd), None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
        for held_fd in set(held):
            os.close(held_fd)


def require_onnxruntime() -> None:
    """The session needs onnxruntime in this environment (it runs in a child of this Python), and its child's
    memory limit (ONNXLINT_CHECK_MEMORY_MB) must be one: said once for the run, not as each model's failure."""
    import importlib.util

    from onnxlint.fixers.equivalence import check_memory

    check_memory()
    if importlib.util.find_spec("onnxruntime") is None:
        raise UsageError("verification needs onnxruntime, which is not installed: pip install onnxruntime-gpu (from "
                         "PyPI; or onnxruntime, the CPU build, for --providers CPUExecutionProvider)")


def verify_paths(paths: list[str], options: VerifyOptions) -> list[VerifyResult | FixedVerifyResult]:
    require_onnxruntime()
    results: list[VerifyResult | FixedVerifyResult] = []
    providers = list(options.providers)
    files = loading.expand_paths(paths)
    check_shape_names(files, options.shape_map)
    unavailable: VerifyResult | None = None  # the first result whose CUDA EP cannot run here: the environment's
    for path in files:  # verify_file never raises: one file's failure is its own result
        if unavailable is not None and not options.fix:  # not tried again: a session child per model, said once
            results.append(VerifyResult(str(path), unavailable.target, providers, options.optimization,
                                        cuda_unavailable=f"not tried: as for {unavailable.filename}"))
            continue
        result = verify_file(path, providers, options.shape_map, options.timeout, options.ort_version, options.optimization)
        if result.cuda_unavailable and result.error is None:
            unavailable = result
        if options.fix:  # also when the session failed: a training-mode BatchNorm or mismatched Equal is fixable
            try:
                results.append(fix_and_verify(path, result, options))
            except Exception as exc:
                results.append(FixedVerifyResult(str(path), result, [f"fix not attempted: {type(exc).__name__}: {exc}"],
                                                 result))
        else:
            results.append(result)
    return results


def lint_report(results: list[VerifyResult | FixedVerifyResult], ort_version: str | None) -> Report:
    """The lint findings for each verified target, each marked with where its node ran, plus OLX901-903."""
    from onnxlint.linting.linter import lint_file
    from onnxlint.rulefiles.ruleset import get_ruleset

    report = Report()
    for entry in results:
        result = entry.after if isinstance(entry, FixedVerifyResult) else entry
        path = Path(result.filename)
        settings = settings_for(path, result.target, ort_version)
        res = lint_file(path, settings, want_placement=False)
        ruleset = get_ruleset(settings.rule_dirs)
        attach(res, result, ruleset, settings.selected)
        report.files.append(res)
        report.rules = [r for r in ruleset.rules if settings.selected(r.id, r.default)]
    return report


def verify_report(report: Report, providers: list[str], shapes: dict[str, list[int]],
                  settings_of: Callable[[Path], Settings]) -> None:
    """`onnxlint --verify`: one real session per linted model (each in a child process), sequentially. A CUDA EP
    that cannot run here (no GPU, a CPU-only build) is the environment's, not a model's: one note for the run
    (VERIFY_NOTE, printed once), no per-model error, and the other models are not tried."""
    from onnxlint.rulefiles.ruleset import get_ruleset

    require_onnxruntime()
    unavailable = None
    for res in report.files:
        if res.error or lfs.is_pointer_file(res.filename):
            continue  # a Git LFS pointer: no model to run (OLX009 says so, or its --ignore expects pointers)
        if unavailable is None:
            path = Path(res.filename)
            s = settings_of(path)
            result = verify_file(path, providers, shapes, ort_version=s.ort_version, optimization=s.ort_optimization)
            if result.cuda_unavailable and result.error is None:
                unavailable = result.cuda_unavailable
            else:
                if not attach(res, result, get_ruleset(s.rule_dirs), s.selected):  # else OLX903 says it
                    res.notes.append(result.summary_line())
                res.notes.extend(result.notes())
                continue
        res.notes.append(f"{VERIFY_NOTE}CUDAExecutionProvider was requested but not exercised: {unavailable}; the "
                         "findings are the static prediction")


VERIFY_NOTE = "--verify did not run: "  # a run-wide note: the text prints it once


__all__ = ["FileReport", "VerifyOptions", "lint_report", "parse_shapes", "verify_paths", "verify_report"]
