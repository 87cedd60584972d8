"""`onnxlint verify` and `onnxlint --verify`: the core behind the front end (no argument parsing, no output)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from onnxlint.config import config_file as config_mod
from onnxlint.config.settings import Settings
from onnxlint.linting.report import FileReport, Report
from onnxlint.model import loading
from onnxlint.support.errors import UsageError, did_you_mean
from onnxlint.verify.compare import FixedVerifyResult, VerifyResult, attach, verify_file


@dataclass(frozen=True)
class VerifyOptions:
    providers: tuple[str, ...] = ("CUDAExecutionProvider", "CPUExecutionProvider")
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    timeout: float = 300
    ort_version: str | None = None
    fix: bool = False
    optimization: str = "all"  # the session's graph optimization level, and the prediction's (ORT's default: all)

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


def fix_in_place(path: Path, target: str, ort_version: str | None) -> list[str]:
    """The lint --fix path (safe fixes only, verified, atomic), for `verify --fix`."""
    from onnxlint.linting.fixing import FixOptions, fix_file
    from onnxlint.linting.linter import lint_file

    settings = settings_for(path, target, ort_version)
    res = lint_file(path, settings, want_placement=False, digest=True)
    if res.error:
        return [f"fix not attempted: {res.error}"]
    fix_file(path, settings, res, FixOptions())
    if res.write_refused:
        return [*res.notes, f"fix not written: {res.write_refused}"]
    return res.notes or ["nothing to fix"]


def require_onnxruntime() -> None:
    """The session needs onnxruntime in this environment (it runs in a child of this Python)."""
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is None:
        raise UsageError("verification needs onnxruntime, which is not installed: pip install 'onnxlint[gpu]' "
                         "(onnxruntime-gpu; or onnxruntime for --providers CPUExecutionProvider)")


def verify_paths(paths: list[str], options: VerifyOptions) -> list[VerifyResult | FixedVerifyResult]:
    require_onnxruntime()
    results: list[VerifyResult | FixedVerifyResult] = []
    providers = list(options.providers)
    files = loading.expand_paths(paths)
    check_shape_names(files, options.shape_map)
    for path in files:  # verify_file never raises: one file's failure is its own result
        result = verify_file(path, providers, options.shape_map, options.timeout, options.ort_version, options.optimization)
        if options.fix:  # also when the session failed: a training-mode BatchNorm or mismatched Equal is fixable
            try:
                notes = fix_in_place(path, result.target, options.ort_version)
            except Exception as exc:
                notes = [f"fix not attempted: {type(exc).__name__}: {exc}"]
            after = verify_file(path, providers, options.shape_map, options.timeout, options.ort_version, options.optimization)
            results.append(FixedVerifyResult(str(path), result, notes, after))
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
    """`onnxlint --verify`: one real session per linted model (each in a child process), sequentially."""
    from onnxlint.rulefiles.ruleset import get_ruleset

    require_onnxruntime()
    for res in report.files:
        if res.error:
            continue
        path = Path(res.filename)
        s = settings_of(path)
        result = verify_file(path, providers, shapes, ort_version=s.ort_version, optimization=s.ort_optimization)
        attach(res, result, get_ruleset(s.rule_dirs), s.selected)
        res.notes.append(result.summary_line())
        res.notes.extend(result.notes())


__all__ = ["FileReport", "VerifyOptions", "lint_report", "parse_shapes", "verify_paths", "verify_report"]
