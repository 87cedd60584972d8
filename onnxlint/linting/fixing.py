"""`--fix`: apply the fixers a model's findings name, verify the result, write it atomically, re-lint.

The fixers receive the findings they fix; nothing is written unless the fixed model passes the checker,
strict shape inference and (for safe fixes) the numeric check, and clears at least one finding. Whatever
onnx-graphsurgeon, onnxslim, ORT or onnx.reference print while fixing and checking is captured at the file
descriptor level, so `--fix --format json` prints JSON only.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import onnx

from onnxlint.config.settings import Settings
from onnxlint.fixers.write import ReadVersion
from onnxlint.linting.linter import lint_file, lint_model
from onnxlint.linting.report import FileReport, Finding
from onnxlint.model import lfs, loading, write_guard
from onnxlint.model.loading import native
from onnxlint.support.errors import InputError, UsageError, clip, first_line


@dataclass(frozen=True)
class FixOptions:
    unsafe: bool = False
    diff: bool = False
    output: Path | None = None  # write the fixed model here (a file, or a folder: under the input's name)
    shapes: dict[str, list[int]] = field(default_factory=dict)  # numeric check input dims (--shape name=1x3x224x224)
    # what the run shows is what it fixes: infos only when shown (--show-info), or when their code was named
    # exactly (--select OLX201); a hidden fixable info is left alone, and a note says so
    show_info: bool = False
    show_info_words: str = "--show-info"  # how the caller asks for them: the API says show_info=True
    # whether a finding is one the baseline records: not shown, so left alone (a note says so); None: no baseline
    baselined: Callable[[Finding], bool] | None = None
    # a caller fixing one version of a model twice (verify --fix: into a copy a session runs, then in place) shares
    # this: that version's rewrite and numeric check are made once (_attempt), the second fix writes their result
    attempts: dict[Any, Any] | None = None
    # the folder of output holds a link to each data file of the model, which is in this (real) folder: the fixed
    # model is written alone, reading its data through them (verify --fix's copy: data_links.linked_folder)
    data_root: str | None = None


def check_output(paths: Sequence[Path], output: Path | None) -> None:
    """`--fix -o OUTPUT`: with several inputs OUTPUT must be a folder, existing or `DIR/` (each fixed model is written
    into it under its own name) and no two inputs may share a name. Raises UsageError otherwise.

    The CLI calls this once before fixing: `fixing.check_output(files, args.output)`."""
    if output is None or len(paths) <= 1:
        return
    if not is_folder(output):
        raise UsageError(f"-o {output}: with {len(paths)} models to fix, -o must be a folder, an existing one or "
                         f"{output}{os.sep} to make it (each fixed model is written into it under its own name)")
    seen: dict[str, Path] = {}
    for p in paths:
        other = seen.setdefault(Path(p).name, Path(p))
        if other != Path(p):
            raise UsageError(f"-o {output}: {other} and {p} would both be written as {Path(p).name}")


# the files a report is written to (--format's, and a log's): never a fixed model's name
REPORT_SUFFIXES = frozenset({".sarif", ".json", ".html", ".htm", ".txt", ".log", ".xml", ".md"})


def check_fix_output(output: Path, inputs: list[Path], option: str = "-o", diff: bool = False) -> None:
    """Where a fix writes (`--fix -o`, `verify --fix -o`, the API's `fix(output=...)`, named by option in the
    messages), checked before any model is read: a file for one model, a folder for several (`DIR/` made when
    missing; never a file named DIR; not with --diff, which names it and writes nothing); never a report's
    name, another input or any input's external data, a FIFO or a device; in a folder that exists. Raises
    UsageError."""
    from onnxlint.model.paths import FolderPath

    if isinstance(output, FolderPath) and not output.is_dir():
        if output.exists():  # the fixed model was written over that file, named as a folder
            raise UsageError(f"{option} {output}{os.sep}: {output} is a file, not a folder; name the file without the "
                             f"trailing {os.sep}")
        if output.parent.is_dir() and not diff:
            write_guard.make_folder(output)  # removed at the end of the run when nothing was written in it
    if output.suffix.lower() in REPORT_SUFFIXES and not is_folder(output):
        # a CI step writing a report (`--format sarif -o results.sarif`) that adds --fix wrote a model there; named
        # as the user typed it: --diff (which implies --fix) writes nothing there
        if option == "-o":
            where = ("with --diff, -o is where the fixed model would be written" if diff else
                     "with --fix, -o is where the fixed model is written")
            report = f"it goes to standard output: redirect it, > {output.name}"
        else:
            where, report = f"{option} is where the fixed model is written", "fix() returns it"
        raise UsageError(f"{option} {output}: {where}, not the report ({report})")
    check_output(inputs, output)  # several models: -o must be a folder, and no two write one file
    for f in inputs:  # no fixed model over another input or any input's external data, nor a FIFO or device
        dest = destination(f, output)
        # only f itself may be dest (`-o` naming the model): DIR/a.onnx a link to the input b.onnx is refused
        others = [i for i in inputs if not (write_guard.same_file(i, dest) and write_guard.same_file(i, f))]
        write_guard.check_target(dest, others, option, "the fixed model")
    write_guard.check_folder(output, option)


def destination(path: Path, output: Path | None) -> Path:
    if output is None:
        return path
    return Path(output) / path.name if is_folder(output) else Path(output)


def is_folder(output: Path) -> bool:
    """-o names a folder: one that exists, or `DIR/` (--diff does not make it)."""
    from onnxlint.model.paths import FolderPath

    return isinstance(output, FolderPath) or Path(output).is_dir()


NEEDS_ORT = ("--fix needs onnxruntime: a fixed model is written only once ORT ran it and the original on the same "
             "inputs and their outputs agreed; install it from PyPI with: pip install onnxruntime (the CPU build; "
             "on a GPU machine onnxruntime-gpu serves as well) (nothing was written)")


def require_numeric_check() -> None:
    """The numeric check runs both models on ONNX Runtime's CPU provider; without onnxruntime nothing can be
    checked, so nothing may be written (onnx.reference is no stand-in: it follows NumPy, not ORT, and refuses
    what ORT runs). Raises UsageError with the one line to print. Looks for the package, never imports it."""
    from importlib.util import find_spec

    try:
        found = find_spec("onnxruntime") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UsageError(NEEDS_ORT)
    from onnxlint.fixers.equivalence import check_limits

    check_limits()  # ONNXLINT_CHECK_TIMEOUT / _MEMORY_MB: one line for the run, not a failed check per model


def fix_file(path: Path, settings: Settings, res: FileReport, options: FixOptions) -> None:
    """Fix one linted model in place (or into options.output); what happened goes into res.notes and the
    findings the re-lint no longer reports are marked fixed. With --diff the notes say what a fix would do:
    nothing is written either way, so "not written" would be no news."""
    first = len(res.notes)
    try:
        _fix_file(path, settings, res, options)
    finally:
        if options.diff:
            res.notes[first:] = [_conditional(n) for n in res.notes[first:]]


def _conditional(note: str) -> str:
    for now, would in (("fix not written", "the fix would not be written"), ("left alone:", "not in this diff:")):
        if note.startswith(now):
            return would + note[len(now):]
    if note.startswith("nothing written: no finding shown has a fix; left alone:"):
        return "no diff: no finding shown has a fix; not in this diff:" + note.split("left alone:", 1)[1]
    if note.startswith("nothing written:"):
        return "nothing would be written:" + note[len("nothing written:"):]
    return note


def _held(f: Finding, options: FixOptions) -> bool:
    """Recorded in the baseline: not shown, so not fixed."""
    return options.baselined is not None and options.baselined(f)


def _visible(f: Finding, settings: Settings, options: FixOptions) -> bool:
    """Shown by the run: an error or a warning; an info with --show-info (show_info=True) or its code named."""
    return f.severity != "info" or options.show_info or settings.named(f.code)


def _fix_file(path: Path, settings: Settings, res: FileReport, options: FixOptions) -> None:
    from onnxlint import fixers

    fixable = [f for f in res.findings if f.fix and not f.suppressed]
    shown: list[Finding] = []
    hidden: list[Finding] = []  # one pass: `f not in shown` compared findings field by field, quadratic in them
    held: list[Finding] = []  # recorded in the baseline: not shown either
    for f in fixable:
        if _held(f, options):
            held.append(f)
        else:
            (shown if _visible(f, settings, options) else hidden).append(f)
    left_at = len(res.notes)  # where the "left alone" note is (_recount_left_alone)
    if hidden or held:
        left = _left_alone(hidden, held, options)
        # with nothing shown to fix, the note says first that the model stays as it is (a user who ran --fix on a
        # model whose run shows no finding must not have to guess whether it was rewritten)
        res.notes.append(left if shown else f"nothing written: no finding shown has a fix; {left}")
    requests = [fixers.FixRequest(str(f.fix), f.node or None, f.target) for f in shown]
    if not requests:
        if any(not f.suppressed for f in res.findings) and lfs.is_pointer_file(path):
            # its finding (OLX009) has no fix: the run said nothing of the fix; `--ignore OLX009` (pointers expected)
            # shows none, and then nothing is said here either, as --verify runs no session on it
            res.notes.append("fix not written: the file is a Git LFS pointer, not the model (OLX009); fix it once its "
                             "LFS object is fetched (git lfs install && git lfs pull)")
        return
    require_numeric_check()
    try:
        mf = loading.load(path, digest=True)
    except InputError as exc:  # gone or unreadable since the lint: this model's line; the run goes on to print
        res.write_refused = (f"cannot be read again for the fix ({first_line(exc)}); not fixed: run onnxlint --fix "
                             "again on the new version")
        return
    if res.digest is not None and mf.digest != res.digest:  # the lint read one version, the fix would read another
        res.write_refused = ("changed since onnxlint read it (its content changed between the lint and the fix); "
                             "not fixed: run onnxlint --fix again on the new version")
        return
    dest = destination(path, options.output)
    if not options.diff:
        through = _written_through(dest)
        if through is not None:
            res.notes.append(f"fix not written: {through}")
            return
    source = _source(path, mf, options, res)
    if source is None:
        return
    model, base = source
    dest_real = os.path.realpath(dest)
    if any(os.path.realpath(t.path) == dest_real for t in mf.external):
        # the model's own file holding its weights (a tensor's location naming it), or -o naming it: this model's
        # problem, said in its notes; a UsageError here stopped the run with no report, the models after it unfixed
        res.notes.append(f"fix not written: {dest} is the external data file of {path} (a tensor's location names "
                         "it); writing it would destroy the weights")
        return
    external = fixers.has_external_data(mf.model)
    done = _fixed(model, requests, settings, path, base, options, res)
    if done is None:
        return
    after = None if external else _relint(done.fixed, settings, res)  # a fix that clears no finding is not written
    if after is not None and not after.error and not _clears_a_finding(res, after):
        res.notes.append(f"nothing written: {', '.join(done.applied)} changed the model but cleared no finding")
        return
    if (hidden or held) and after is not None and not after.error:
        _recount_left_alone(res, left_at, hidden, held, after, options)
    if done.checked:
        res.notes.append(f"numeric check: {_intended(done.applied, done.checked)}")
    if options.diff:
        from onnxlint.fixers import diff

        res.diff = diff.unified(mf.model, done.fixed, res.filename)
        res.notes.append(f"would write {dest} ({', '.join(done.applied)})")
        return
    in_place = os.path.realpath(dest) == os.path.realpath(path)
    version = ReadVersion(mf.stamp, mf.digest) if in_place and mf.stamp and mf.digest else None
    others = _other_links(dest)
    if _write(_Read(model, path, base, external, version), done, dest, res, options.data_root):
        _note_written(res, after, dest, settings, done)
        if others:  # the fixed model is a new file renamed over this name (never half-written): theirs is the old one
            res.notes.append(f"{dest} had {others} other hard link{'s' if others != 1 else ''} to it: "
                             f"{'they keep' if others != 1 else 'it keeps'} the model as it was")


def _source(path: Path, mf: Any, options: FixOptions, res: FileReport) -> tuple[onnx.ModelProto, Path] | None:
    """The model the fix rewrites and the folder its external data is read in: the model's own; for a linked model
    whose data lies in the real folder of the file it leads to (the Hugging Face cache's blobs), fixed with -o, a
    copy naming that data where the lint read it, copied into -o's new data file. None, with a note, where the
    fix cannot use its data (_data_unusable)."""
    unusable = _data_unusable(path, mf)
    if unusable is None:
        return mf.model, path.parent
    real = loading.linked_data_folder(mf) if not options.diff and options.data_root is None else None
    if real is None or options.output is None:
        hint = "; `-o FIXED.onnx` writes the fix elsewhere, that data copied beside it" if real is not None else ""
        res.notes.append(f"fix not written: {unusable}{hint}")
        return None
    return loading.relocated(mf, real), real


def _data_unusable(path: Path, mf: Any) -> str | None:
    """Why the fix cannot use the model's external data: missing or short; or, the model being a link, lying in the
    real folder of the file it leads to (ORT reads it there through the link only, and the numeric check runs a copy
    of the model beside the link: its failure was worded "neither the original nor the fixed model runs")."""
    from onnxlint.support import worktree

    if mf.missing_external:
        return "external data is missing or short (see OLX003)"
    folder = os.path.realpath(path.parent)
    beyond = next((t for t in mf.external if not worktree.inside(os.path.realpath(t.path), folder)), None)
    if beyond is None:
        return None
    return (f"its external data {beyond.location!r} is in the folder of the file {path.name} links to, which ORT "
            "reads through that link only; the numeric check runs a copy of the model beside the link (fix a copy of "
            "the model and its data in one folder)")


def _left_alone(hidden: list[Finding], held: list[Finding], options: FixOptions) -> str:
    def names(found: list[Finding]) -> str:
        return ", ".join(dict.fromkeys(str(f.fix) for f in found))

    parts = []
    if hidden:
        parts.append(f"{len(hidden)} info finding{'s' if len(hidden) != 1 else ''} not shown ({names(hidden)}); "
                     f"{options.show_info_words} shows and fixes {'it' if len(hidden) == 1 else 'them'}")
    if held:
        parts.append(f"{len(held)} finding{'s' if len(held) != 1 else ''} the baseline records ({names(held)}); "
                     "--fix fixes what the run shows")
    return "left alone: " + "; ".join(parts)


def _recount_left_alone(res: FileReport, at: int, hidden: list[Finding], held: list[Finding], after: FileReport,
                        options: FixOptions) -> None:
    """The "left alone" note (res.notes[at]) names only the findings left (hidden infos, baselined ones) that the
    fixed model still holds: a fix of a shown finding can clear a hidden one too (upgrade-opset clears the
    old-opset info with the Resize warning), and the note said it was left while the count said both were fixed."""
    remaining = {(f.code, f.node) for f in after.findings if not f.suppressed}
    still = [f for f in hidden if (f.code, f.node) in remaining]
    still_held = [f for f in held if (f.code, f.node) in remaining]
    if still or still_held:
        res.notes[at] = _left_alone(still, still_held, options)
    else:
        del res.notes[at]


def _other_links(dest: Path) -> int:
    """The other names (hard links) of the file dest is, or leads to; 0 when it does not exist."""
    try:
        return max(os.stat(dest).st_nlink - 1, 0)
    except OSError:
        return 0


@dataclass
class _Attempt:
    """The fixers' rewrite of a model: the fixed model, the fixers that changed it, those left for
    --unsafe-fixes, and what the numeric check said (None: nothing applied, nothing checked)."""

    fixed: onnx.ModelProto
    applied: list[str]
    skipped: list[str]
    checked: str | None
    notes: list[str] = field(default_factory=list)  # what the fixers said (FixContext.notes)


def _attempt(model: onnx.ModelProto, requests: list[Any], settings: Settings, base: Path,
             options: FixOptions, digest: str | None = None) -> _Attempt:
    """Apply the fixers (their prints captured) and check the result numerically against the original; once per
    version of the model (digest: the file's, as the lint read it) and request, what it made or raised kept in
    options.attempts when given."""
    from onnxlint.fixers import fold_shapes

    if options.attempts is None or digest is None:
        return _attempt_now(model, requests, settings, base, options)
    key = (digest, tuple((r.fixer, r.location, r.target) for r in requests), options.unsafe,
           tuple(settings.targets), tuple(sorted((k, tuple(v)) for k, v in options.shapes.items())),
           fold_shapes.ENGINE["mode"], str(base))
    if key not in options.attempts:
        try:
            done = _attempt_now(model, requests, settings, base, options)
            options.attempts[key] = (done.fixed.SerializeToString(), done.applied, done.skipped, done.checked, done.notes)
        except Exception as exc:
            options.attempts[key] = exc
    kept = options.attempts[key]
    if isinstance(kept, Exception):
        raise kept
    fixed, applied, skipped, checked, notes = kept  # a model of its own for each write (a write may change it)
    return _Attempt(onnx.ModelProto.FromString(fixed), list(applied), list(skipped), checked, list(notes))


def _attempt_now(model: onnx.ModelProto, requests: list[Any], settings: Settings, base: Path,
                 options: FixOptions) -> _Attempt:
    from onnxlint import fixers
    from onnxlint.fixers.equivalence import capture_output

    checked = None
    notes: list[str] = []
    with capture_output():  # what the libraries print (onnxslim, graph-surgeon, onnx's checker) never reaches the user
        fixed, applied, skipped = fixers.apply_in_child(model, requests, unsafe=options.unsafe, targets=settings.targets,
                                                        notes=notes, base_dir=base)
        if applied:
            safe = all(fixers.REGISTRY[n].safe for n in applied)
            checked = fixers.verify(model, fixed, safe=safe, applied=applied, base_dir=base,
                                    shapes=dict(options.shapes) or None)
    return _Attempt(fixed, applied, skipped, checked, notes)


def _attempt_folding_alone(model: onnx.ModelProto, requests: list[Any], settings: Settings, base: Path,
                           options: FixOptions, res: FileReport) -> _Attempt:
    """_attempt; when onnxslim's rewrite failed the checks, again with onnxlint's own folder alone (what the lint
    claimed), saying so; the first failure when that fails too."""
    from onnxlint import fixers
    from onnxlint.fixers import fold_shapes

    try:
        return _attempt(model, requests, settings, base, options, res.digest)
    except Exception as first:
        if not any(r.fixer == "fold-shapes" for r in requests) or fold_shapes.ENGINE["mode"] != "onnxslim":
            raise
        fold_shapes.ENGINE["mode"] = "own"
        try:
            done = _attempt(model, requests, settings, base, options, res.digest)
        except Exception:
            raise first from None
        finally:
            fold_shapes.ENGINE["mode"] = "onnxslim"
        # onnxslim's own words are not the user's business: what failed, in ours
        why = f"it failed the checks: {first_line(first)}" if isinstance(first, fixers.FixError) else "onnxslim failed on it"
        res.notes.append(f"fold-shapes: folded by onnxlint alone (onnxslim's fold was not used: {why})")
        return done


# the findings that say a model is not valid ONNX (onnx's checker, strict validation): a fixer failing on it is the
# model's problem, not a defect to report
MALFORMED = frozenset({"OLX001", "OLX007"})


def _fixed(model: onnx.ModelProto, requests: list[Any], settings: Settings, path: Path, base: Path,
           options: FixOptions, res: FileReport) -> _Attempt | None:
    """The checked rewrite (its external data read in base); None, with a note saying why, when there is nothing
    to write."""
    from onnxlint import fixers

    try:
        done = _attempt_folding_alone(model, requests, settings, base, options, res)
    except fixers.FixError as exc:
        res.notes.append(f"fix not written: {exc}")
        return None
    except Exception as exc:  # a defect in a fixer: framed as such, never a library's bare words
        why = f"({type(exc).__name__}: {first_line(exc)})"
        if any(native.raised(exc, c) for c in loading.BYTES_ERRORS) and loading.repair_strings(copy.deepcopy(model)):
            # protobuf hands such a string over as bytes; the lint reads it repaired (`\xNN`), a fix would rename it
            res.notes.append("fix not written: the model holds text that is not UTF-8 (a name shown with \\xNN "
                             "escapes): a fix cannot rewrite it as it is")
            return None
        invalid = _why_invalid(model, path, res, settings, options)
        if invalid is not None:  # not onnxlint's defect: the model is not valid ONNX
            res.notes.append(f"fix not written: the model is not valid ONNX ({invalid}), and a fixer failed on it {why}")
        else:
            res.notes.append(f"fix not written: internal error in a fixer {why}; please report it")
        return None
    res.notes.extend(n for n in done.notes if n not in res.notes)
    if done.skipped:
        res.notes.append(f"{sum(1 for r in requests if r.fixer in done.skipped)} finding(s) need --unsafe-fixes "
                         f"({', '.join(done.skipped)})")
    if not done.applied:
        tried = list(dict.fromkeys(r.fixer for r in requests if r.fixer not in done.skipped))
        if tried:
            res.notes.append(f"nothing written: {', '.join(tried)} found nothing it can change safely")
        return None
    return done


def _why_invalid(model: onnx.ModelProto, path: Path, res: FileReport, settings: Settings,
                 options: FixOptions) -> str | None:
    """Why onnx rejects the model, said so the note stands on its own: the finding that says it when the run shows
    it ("OLX001 says why"), else onnx's own complaint (that finding is ignored, suppressed or baselined: the note
    named a finding the user could not see); None when onnx accepts it."""
    from onnxlint.fixers import has_external_data
    from onnxlint.fixers.equivalence import validity_error

    unknown = _unknown_type(model)
    if unknown is not None:  # onnx's checker lets it by (no finding says so); the fixers' libraries fail on it
        return unknown
    codes = sorted({f.code for f in res.findings if f.code in MALFORMED and not f.suppressed and not _held(f, options)
                    and _visible(f, settings, options)})
    if codes:
        return f"{'/'.join(codes)} says why"
    complaint = (_checker_complaint(path) if has_external_data(model) else None) or validity_error(model)
    return f"onnx rejects it: {clip(complaint, 300)}" if complaint else None


def _unknown_type(model: onnx.ModelProto) -> str | None:
    """The first stored tensor or typed value whose element type the installed onnx does not define (`data_type` 99:
    onnx's checker accepts it, ORT refuses the model, onnx-graphsurgeon fails with a KeyError), said with its number
    and that onnx's version (a newer one may define it: FLOAT6, 27-28, is not in onnx 1.21)."""
    from onnxlint.model.graph import iter_graphs
    from onnxlint.model.loading.external import all_tensors

    known = set(onnx.TensorProto.DataType.values())
    for t in all_tensors(model):
        if t.data_type not in known:
            return f"tensor {t.name!r} has data type {t.data_type}, which onnx {onnx.__version__} does not define"
    for g in iter_graphs(model):
        for v in (*g.input, *g.output, *g.value_info):
            elem = v.type.tensor_type.elem_type if v.type.HasField("tensor_type") else 0
            if elem not in known:
                return f"value {v.name!r} has element type {elem}, which onnx {onnx.__version__} does not define"
    return None


def _relint(fixed: onnx.ModelProto, settings: Settings, res: FileReport) -> FileReport | None:
    """The lint of the fixed model in memory (its prints captured); None when it could not run."""
    from onnxlint.fixers.equivalence import capture_output

    try:
        with capture_output():  # with its placement: after a write, the summary describes the written model
            return lint_model(fixed, settings, display=res.filename)
    except Exception:
        return None


def _clears_a_finding(res: FileReport, after: FileReport) -> bool:
    remaining = {(f.code, f.node) for f in after.findings if not f.suppressed}
    return any((f.code, f.node) not in remaining for f in res.findings if not f.suppressed)


def _written_through(dest: Path) -> str | None:
    """Why the fix is not written through a link on dest's path: it leads into a content-addressed store or out of
    the repository (_leads_out); None when it may be."""
    real = os.path.realpath(dest)
    store = _content_store(real) if real != os.path.abspath(dest) else None
    if store is not None:
        return (f"{dest} leads to {real}, {store}: the file is named by its content and shared by every link to it, "
                "so a fix is never written through into it: fix a copy with -o")
    out = _leads_out(dest)
    if out is not None:
        return (f"{dest} leads to {out}; a link of the repository's is never written through out of it: fix a copy "
                "with -o, or the file itself")
    return None


def _content_store(real: str) -> str | None:
    """Which content-addressed store the real path lies in, by its layout: a Hugging Face hub cache's blob
    (models--ORG--NAME/blobs/SHA, which its snapshots' files link to), git-annex's objects, DVC's cache; else None.
    A fix written there changed the model of every snapshot, revision or checkout holding that content."""
    parts = [q.lower() for q in Path(real).parts]
    if len(parts) >= 3 and parts[-2] == "blobs" and parts[-3].startswith(("models--", "datasets--", "spaces--")):
        return "a blob of a Hugging Face cache"
    runs = list(zip(parts, parts[1:], parts[2:]))
    if (".git", "annex", "objects") in runs:
        return "an object of git-annex"
    if any(pair == (".dvc", "cache") for pair in zip(parts, parts[1:])):
        return "a file of DVC's cache"
    return None


def _leads_out(dest: Path) -> str | None:
    """Where writing dest would land, when a link on its path leads out of the git work tree the path lies in,
    or into that tree's .git folder (said as "X, outside the repository (ROOT)"); else None (no link, no work
    tree). A committed link to a shared model store, another project's file or git-annex's objects is never
    rewritten through by a fix of the repository's. With no work tree around it (a source archive, a CI checkout
    made without git) the working folder stands for the repository, where the path lies in it (as for config
    files): a link of the checkout's was written through out of it."""
    from onnxlint.support import worktree

    named = os.path.abspath(dest)
    root = worktree.root(os.path.dirname(named), {})
    where = "the repository"
    if root is None:
        try:
            root, where = os.getcwd(), "the working folder, with no repository around it"
        except OSError:
            return None
        if not worktree.inside(named, root):
            return None  # a path of the user's own outside the checkout
    real, real_root = os.path.realpath(named), os.path.realpath(root)
    if not worktree.inside(real, real_root):
        return f"{real}, outside {where} ({root})"
    # any case: on a file system that ignores it (macOS's), `.GIT/` is the .git folder
    if os.path.relpath(real, real_root).split(os.sep, 1)[0].lower() == ".git":
        return f"{real}, inside the repository's .git folder"
    return None


@dataclass(frozen=True)
class _Read:
    """What the fix read, as the write needs it: the model it rewrote, its file, the folder its external data is
    read in, whether it has any, and the version to find at the destination (an in-place fix: compare-and-swap;
    None otherwise)."""

    model: onnx.ModelProto
    path: Path
    base: Path
    external: bool
    version: ReadVersion | None


def _write(read: _Read, done: _Attempt, dest: Path, res: FileReport, data_root: str | None = None) -> bool:
    """Write the fixed model atomically (compare-and-swap when in place: read.version is what the fix read); False,
    with a note, when it was not (nothing was replaced), or, when the file changed since it was read, with
    res.write_refused: the run says so in one line and exits 2. data_root: FixOptions.data_root."""
    from onnxlint import fixers
    from onnxlint.fixers.write import ChangedSinceRead

    try:
        known = None
        if done.checked and "fails the checker the same way" in done.checked:
            from onnxlint.fixers.equivalence import validity_error

            known = validity_error(read.model)
        elif read.external:  # the checker could only run by path: what it says against the original file
            known = _checker_complaint(read.path)
        stale = fixers.write_fixed(done.fixed, dest, read.base, known_error=known, expect=read.version,
                                   data_root=data_root)
    except ChangedSinceRead as exc:
        res.write_refused = str(exc)
        return False
    except OSError as exc:
        res.notes.append(f"fix not written to {dest}: {exc.strerror or exc}")
        return False
    except Exception as exc:  # the written file failed the re-read or the checker: nothing was replaced
        from onnxlint.model.loading import native

        what = "" if isinstance(exc, native.NativeCrash) else f"{type(exc).__name__}: "  # a crash says what crashed
        res.notes.append(f"fix not written to {dest}: {what}{first_line(exc)}")
        return False
    if stale:
        res.notes.append(f"removed {', '.join(stale)} beside {dest.name}: left by a --fix killed while writing it "
                         f"(unchanged for {write_guard.STALE_AFTER // 60} minutes, held by no process)")
    return True


def _note_written(res: FileReport, after: FileReport | None, dest: Path, settings: Settings, done: _Attempt) -> None:
    """Mark what the written file no longer holds fixed and say what was written."""
    if after is None or after.error:
        after = lint_file(dest, settings)
    res.written = str(dest)
    if not after.error:
        res.placement = dict(after.placement)  # the written model's, not the original's
    left = [f for f in after.findings if not f.suppressed]
    n_fixed = mark_fixed(res.findings, left)
    # from here the report lists what the written file holds: the fixed findings of the original, then the
    # re-lint's findings (a fix can move a finding, e.g. folding an If inlines its branch under a new path)
    res.findings = [f for f in res.findings if f.fixed] + list(after.findings)
    need_unsafe = sum(1 for f in left if f.fix in done.skipped)
    still_fixable = sum(1 for f in left if f.fix and f.fix not in done.skipped)
    tail = f"; {still_fixable} still marked fixable" if still_fixable else ""
    res.notes.append(f"{n_fixed} fixed, {len(left)} remaining ({need_unsafe} need --unsafe-fixes{tail}); "
                     f"wrote {dest} ({', '.join(done.applied)})")


def _intended(applied: list[str], checked: str) -> str:
    """What the numeric check showed, said truly: a fixer that changes outputs on purpose (a training-mode
    BatchNormalization's outputs depend on the batch) was compared with its reference, not the original."""
    from onnxlint.fixers import REGISTRY

    meant = [REGISTRY[n] for n in applied if REGISTRY[n].reference is not None]
    if not meant or not checked.startswith("outputs equal"):
        return checked
    what = "; ".join(f"{fx.name} {fx.intended[0]}" for fx in meant)
    against = " and ".join(dict.fromkeys(fx.intended[1] for fx in meant))
    return f"an intended change ({what}): outputs equal to {against}, {checked[len('outputs equal '):]}"


def _checker_complaint(path: Path) -> str | None:
    """The first line of onnx.checker's complaint about a model file (by path: its external data is stat'ed,
    not read), or None when it passes (loading.file_complaint; another error: nothing known about the original)."""
    from onnxlint.model.loading import file_complaint

    try:
        return file_complaint(path)
    except Exception:  # noqa: BLE001 - NativeCrash or another error: nothing known about the original
        return None


def mark_fixed(before: Sequence[Finding], after: Sequence[Finding]) -> int:
    """Mark the findings of `before` the re-lint (`after`, unsuppressed) no longer reports as fixed; returns how
    many. A finding whose node moved (same rule and op type, a node path the original does not have: an
    inlined If branch) is not fixed, only moved."""
    from collections import Counter

    exact = Counter((f.code, f.node) for f in after)
    before_keys = {(f.code, f.node) for f in before}
    moved = Counter((f.code, f.op_type) for f in after if (f.code, f.node) not in before_keys)
    n_fixed = 0
    for f in before:
        if f.suppressed:
            continue
        if exact[(f.code, f.node)] > 0:
            exact[(f.code, f.node)] -= 1
        elif moved[(f.code, f.op_type)] > 0:
            moved[(f.code, f.op_type)] -= 1
        else:
            f.fixed = True
            n_fixed += 1
    return n_fixed
