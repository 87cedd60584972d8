"""Command line: `onnxlint [PATHS]` (ruff-like), plus `placement`, `verify` and `doctor` subcommands."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from onnxlint import __version__, config as config_mod
from onnxlint.errors import InputError, RuleError, UsageError
from onnxlint.report import SEVERITY_RANK, FileResult, Report

DEFAULT_TARGETS = ["ort-cpu", "ort-cuda", "tensorrt"]
SUBCOMMANDS = ("placement", "verify", "doctor")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="onnxlint", description="Static linter for ONNX models deployed on ONNX Runtime (CUDA, TensorRT).")
    p.add_argument("paths", nargs="*", help="files, directories (searched for *.onnx) or globs")
    p.add_argument("--select", action="append", default=None, help="only these rule codes or prefixes (comma-separated)")
    p.add_argument("--extend-select", action="append", default=[], help="add rule codes or prefixes")
    p.add_argument("--ignore", action="append", default=[], help="skip rule codes or prefixes")
    p.add_argument("--target", action="append", default=None, choices=["ort-cpu", "ort-cuda", "ort-trt", "tensorrt"],
                   help="deployment target (repeatable; default: ort-cpu, ort-cuda, tensorrt)")
    p.add_argument("--ort-version", help="ONNX Runtime version whose kernel tables to use (default: installed)")
    p.add_argument("--trt-version", help="TensorRT version whose operator matrix to use (default: newest shipped)")
    p.add_argument("--rules", action="append", default=[], type=Path, help="extra directory (or file) of YAML rules")
    p.add_argument("--format", default="text", choices=["text", "json", "sarif", "github"])
    p.add_argument("-o", "--output", type=Path, help="write the report (or, with --fix, the fixed model) here")
    p.add_argument("--fail-on", choices=["info", "warning", "error"], help="lowest severity that fails (default: warning)")
    p.add_argument("--config", type=Path, help="config file (pyproject.toml or .onnxlint.yaml); default: nearest one")
    p.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    p.add_argument("--explain", metavar="ID", help="explain a rule and exit")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    p.add_argument("-q", "--quiet", action="store_true", help="findings only, no hints or summary")
    p.add_argument("--fix", action="store_true", help="apply safe automatic fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change the interface or numerics")
    p.add_argument("--diff", action="store_true", help="with --fix: show what would change, write nothing")
    p.add_argument("--verify", action="store_true",
                   help="also build a real ORT session per model and report where nodes actually ran (OLX901-903)")
    p.add_argument("--providers", default="CUDAExecutionProvider,CPUExecutionProvider",
                   help="with --verify: execution providers for the session, in priority order")
    p.add_argument("--shape", action="append", help="with --verify: dynamic input dims, e.g. x=1x3x224x224")
    p.add_argument("--no-progress", action="store_true", help="never draw a progress bar")
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per core when it pays)")
    p.add_argument("--version", action="version", version=f"onnxlint {__version__}")
    return p


def _split(values) -> list[str]:
    out = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _matches(code: str, prefixes) -> bool:
    return any(code.startswith(p) for p in prefixes)


class Settings:
    """Command line merged over the config file."""

    def __init__(self, args, cfg: config_mod.Config):
        self.cfg = cfg
        self.select = _split(args.select) if args.select else (cfg.select or [""])
        self.extend = _split(args.extend_select) + cfg.extend_select
        self.ignore = _split(args.ignore) + cfg.ignore
        self.targets = args.target or cfg.targets or DEFAULT_TARGETS
        self.ort_version = args.ort_version or cfg.ort_version
        self.trt_version = args.trt_version or cfg.trt_version
        self.fail_on = args.fail_on or cfg.fail_on or "warning"
        self.rule_dirs = list(args.rules) + cfg.rules

    def selected(self, code: str) -> bool:
        return (_matches(code, self.select) or _matches(code, self.extend)) and not _matches(code, self.ignore)


_RULESETS: dict = {}


def get_ruleset(dirs):
    from onnxlint.ruleset import load_ruleset

    key = tuple(str(d) for d in dirs)
    if key not in _RULESETS:
        _RULESETS[key] = load_ruleset(list(dirs))
    return _RULESETS[key]


def lint_file(path: Path, settings: Settings, want_placement: bool = True) -> FileResult:
    """Lint one model. The cyclic GC is paused meanwhile: indexing allocates an object per node and value,
    and generation scans over them cost a third of the walk on large models."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _lint_file(path, settings, want_placement)
    finally:
        if enabled:
            gc.enable()


def _lint_file(path: Path, settings: Settings, want_placement: bool = True) -> FileResult:
    from onnxlint import engine, loading
    res = FileResult(str(path))
    try:
        mf = loading.load(path)
    except InputError as exc:
        res.error = exc.message
        return res
    try:
        ruleset = get_ruleset(settings.rule_dirs)
        rules = [r for r in ruleset.rules if settings.selected(r.id)]
        index = loading.index_model(mf)
        targets = set(settings.targets)
        if "ort-trt" in targets:
            targets |= {"tensorrt", "ort-cuda"}
        opts = engine.Options(targets=targets, ort_version=settings.ort_version, trt_version=settings.trt_version)
        ctx = engine.LintContext(mf, index, opts, ruleset)
        res.findings = engine.lint(ctx, rules)
        _post_process(res, mf, settings)
        if want_placement:
            for target in ("ort-cuda", "ort-cpu"):
                if target in ctx._placement:
                    pl = ctx._placement[target]
                    res.placement[target] = pl.summary_line()
                    res.notes.extend(n for n in pl.notes if n not in res.notes)
            if "ort-trt" in settings.targets:
                from onnxlint import ort_trt

                res.placement["ort-trt"] = ort_trt.partition(ctx).summary_line()
            if ctx._trt is not None and ctx._trt.note:
                res.notes.append(ctx._trt.note)
    except RecursionError:
        res.error = "graph nesting too deep to analyse"
    except (RuleError, UsageError):
        raise
    except Exception as exc:  # a defect in onnxlint must not hide the other files' findings
        res.error = f"internal error while linting ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})"
    return res


def _post_process(res: FileResult, mf, settings: Settings) -> None:
    """Severity overrides and suppressions (per-file-ignores, model metadata, node doc_string)."""
    import re

    meta = {p.key: p.value for p in mf.model.metadata_props}
    model_ignores = [c.strip() for c in meta.get("onnxlint:ignore", "").split(",") if c.strip()]
    file_ignores = settings.cfg.ignored_for(res.filename)
    for f in res.findings:
        if f.code in settings.cfg.severity:
            f.severity = settings.cfg.severity[f.code]
        if _matches(f.code, file_ignores):
            f.suppressed = "per-file-ignores"
        elif _matches(f.code, model_ignores):
            f.suppressed = "metadata"
        elif f.doc_string and "onnxlint:" in f.doc_string:
            for m in re.finditer(r"onnxlint:\s*ignore\[([^\]]*)\]", f.doc_string):
                if _matches(f.code, [c.strip() for c in m.group(1).split(",") if c.strip()]):
                    f.suppressed = "doc_string"


def _progress(enabled: bool, i: int, n: int, name: str) -> None:
    if enabled:
        bar = "#" * int(30 * i / n)
        sys.stderr.write(f"\r[{bar:<30}] {i}/{n} {name[-40:]:<40}")
        if i == n:
            sys.stderr.write("\n")
        sys.stderr.flush()


def run_lint(args, paths: list[Path]) -> Report:
    from onnxlint import loading

    files = loading.expand_paths([str(p) for p in paths])
    cfg_cache: dict = {}

    def settings_for(p: Path) -> Settings:
        cfg = config_mod.load_file(args.config) if args.config else config_mod.find_for(p.parent)
        key = id(cfg)
        if key not in cfg_cache:
            cfg_cache[key] = Settings(args, cfg)
        return cfg_cache[key]

    show = (not args.no_progress and sys.stderr.isatty() and args.format == "text"
            and (len(files) >= 5 or sum(_size(f) for f in files) > 200e6))
    report = Report()
    jobs = args.jobs or (os.cpu_count() or 1)
    if jobs > 1 and len(files) >= 16 and not args.fix:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(lint_file, f, settings_for(f)) for f in files]
            for i, fut in enumerate(futures, 1):
                report.files.append(fut.result())
                _progress(show, i, len(files), str(files[i - 1]))
    else:
        for i, f in enumerate(files, 1):
            s = settings_for(f)
            res = lint_file(f, s)
            if args.fix and not res.error:
                _fix_file(args, f, s, res)
            report.files.append(res)
            _progress(show, i, len(files), str(f))
    if args.verify:
        _verify_results(args, report, settings_for)
    first = settings_for(files[0]) if files else Settings(args, config_mod.Config())
    report.rules = [r for r in get_ruleset(first.rule_dirs).rules if first.selected(r.id)]
    report.fail_on = first.fail_on
    return report


def _verify_results(args, report: Report, settings_for) -> None:
    """One real session per linted model (in a child process each), sequentially: sessions are heavy."""
    from onnxlint import verify

    providers = [x.strip() for x in args.providers.split(",") if x.strip()]
    shapes = verify._parse_shapes(args.shape)
    for res in report.files:
        if res.error:
            continue
        path = Path(res.filename)
        s = settings_for(path)
        entry = verify.verify_file(path, providers, shapes, ort_version=s.ort_version)
        verify.attach(res, entry, get_ruleset(s.rule_dirs), s.selected)
        res.notes.append(verify.summary_line(entry))
        res.notes.extend(verify.entry_notes(entry))


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def _fix_file(args, path: Path, settings: Settings, res: FileResult) -> None:
    from onnxlint import fixes, loading

    wanted = []
    for f in res.findings:
        if f.fix and not f.suppressed and f.fix not in wanted:
            wanted.append(f.fix)
    if not wanted:
        return
    mf = loading.load(path)
    model = mf.model
    dest = Path(args.output) if args.output else path
    if mf.missing_external:
        res.notes.append("fix not written: external data is missing or short (see OLX003)")
        return
    try:
        fixed, applied, skipped = fixes.apply(model, wanted, unsafe=args.unsafe_fixes)
        if not applied:
            tried = [n for n in wanted if n not in skipped]
            if tried:
                res.notes.append(f"nothing rewritten: {', '.join(tried)} found no node it can change safely")
            if skipped:
                res.notes.append(f"{len(skipped)} fix(es) need --unsafe-fixes: {', '.join(skipped)}")
            return
        caveat = fixes.verify(model, fixed, safe=all(fixes.REGISTRY[n].safe for n in applied), applied=applied,
                              base_dir=path.parent)
        if caveat:
            res.notes.append(f"numeric check: {caveat}")
    except fixes.FixError as exc:
        res.notes.append(f"fix not written: {exc}")
        return
    except Exception as exc:
        res.notes.append(f"fix not written: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
        return
    if args.diff:
        from onnxlint import diff

        res.notes.append("would change: " + diff.describe(model, fixed))
        return
    try:
        fixes.write_fixed(fixed, dest, path.parent)
    except OSError as exc:
        res.notes.append(f"fix not written to {dest}: {exc.strerror or exc}")
        return
    after = lint_file(dest, settings, want_placement=False)
    remaining = {(f.code, f.node) for f in after.findings}
    n_fixed = 0
    for f in res.findings:  # a finding the re-lint no longer reports is fixed, whichever fixer removed it
        if (f.code, f.node) not in remaining and not f.suppressed:
            f.fixed = True
            n_fixed += 1
    left = [f for f in after.findings if not f.suppressed]
    need_unsafe = sum(1 for f in left if f.fix in skipped)
    res.notes.append(f"{n_fixed} fixed, {len(left)} remaining ({need_unsafe} need --unsafe-fixes); wrote {dest}")


def explain(rule) -> str:
    from onnxlint import fixes

    fx = fixes.REGISTRY.get(rule.fix) if rule.fix else None
    fix_line = f"Fix: {fx.name} ({'safe' if fx.safe else 'unsafe: needs --unsafe-fixes'}): {fx.summary}" if fx else "Fix: no automatic fix"
    refs = "\n".join(f"  - {r}" for r in rule.references)
    return (f"{rule.id} ({rule.name}) [{rule.severity}] targets: {', '.join(rule.targets)}\n\n{rule.summary}\n\n"
            f"{rule.explanation}\n\n{fix_line}\n" + (f"\nReferences:\n{refs}\n" if refs else "") + f"\nDefined in {rule.origin}\n")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            from onnxlint import subcommands

            return getattr(subcommands, argv[0])(argv[1:])
        return _main(argv)
    except (InputError, RuleError, UsageError) as exc:
        print(f"onnxlint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("onnxlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _main(argv) -> int:
    args = build_parser().parse_args(argv)
    if args.diff:
        args.fix = True
    cfg = config_mod.load_file(args.config) if args.config else config_mod.find_for(Path.cwd())
    settings = Settings(args, cfg)
    if args.list_rules or args.explain:
        ruleset = get_ruleset(settings.rule_dirs)
        if args.explain:
            rule = ruleset.by_id().get(args.explain.upper())
            if rule is None:
                raise UsageError(f"no rule {args.explain!r}; see --list-rules")
            sys.stdout.write(explain(rule))
            return 0
        if args.format == "json":
            print(json.dumps([{"code": r.id, "name": r.name, "severity": r.severity, "targets": list(r.targets),
                               "summary": r.summary, "fix": r.fix} for r in ruleset.rules], indent=2))
        else:
            for r in ruleset.rules:
                fix = " [fix]" if r.fix else ""
                print(f"{r.id}  {r.name:<34} {r.severity:<8} {','.join(r.targets):<20} {r.summary}{fix}")
        return 0
    if not args.paths:
        raise UsageError("no paths given (try: onnxlint model.onnx, onnxlint models/, onnxlint --help)")
    get_ruleset(settings.rule_dirs)  # a malformed rule file is a usage error before any model is read
    report = run_lint(args, [Path(p) for p in args.paths])
    from onnxlint import formats

    colour = args.format == "text" and args.output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    text = formats.render(args.format, report, colour=colour, statistics=args.statistics, quiet=args.quiet)
    if args.output and not args.fix:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    for res in report.errors:
        print(f"onnxlint: error: {res.filename}: {res.error}", file=sys.stderr)
    if report.errors:
        return 2
    threshold = SEVERITY_RANK[report.fail_on]
    return 1 if report.worst() >= threshold else 0
