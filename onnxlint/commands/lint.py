"""The lint run: what `onnxlint [PATHS]` does once its arguments are parsed.

A config per model folder, the rules in force, fixing, the result cache, verification, the baseline, the
rendered report and the exit code. The CLI (`cli.py`) parses arguments into a `LintRequest` and calls
`execute`; nothing here reads argparse. Like the CLI, this module imports only light modules at the top: a run
whose models are all in the result cache renders their stored reports without importing onnx, numpy or yaml.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from onnxlint import targets
from onnxlint.config import config_file as config_mod
from onnxlint.config.settings import Settings
from onnxlint.linting import linter
from onnxlint.linting.report import Report
from onnxlint.model import paths, write_guard
from onnxlint.support.errors import UsageError, did_you_mean
from onnxlint.support.escape import text as esc
from onnxlint.support.interrupt import signal_name

# a result-cache miss is parsed from the bytes its key was computed from (read and hashed once) while the misses
# of a run total this much; past it, a model is read and hashed again when it is linted (memory over time)
PREFETCH_BYTES = 128 << 20

DEFAULT_PROVIDERS = "CUDAExecutionProvider,CPUExecutionProvider"  # --verify's sessions, when --providers is not given


class LintRequest:
    """One lint run as the command line asks for it.

    overrides: the Settings overrides given explicitly (`Settings.from_config`), applied on every model
    folder's config; config: a config file for every model (None: the nearest one to each model's folder);
    cache_dir: the result cache folder (None: lint every model again); providers/shapes: --verify's and --fix's
    session settings as typed. A plain class, not a dataclass: generating its methods would cost every
    process, a cached run included."""

    def __init__(self, paths: list[str], *, overrides: dict[str, Any] | None = None, config: Path | None = None,
                 config_above_repo: bool = False, show_config: bool = False, format: str = "text",
                 output: Path | None = None, fix: bool = False, unsafe_fixes: bool = False, diff: bool = False,
                 verify: bool = False, providers: str = DEFAULT_PROVIDERS,
                 shapes: list[str] | None = None, progress: bool = True, jobs: int = 0, cache_dir: Path | None = None,
                 statistics: bool = False, quiet: bool = False, show_info: bool = False, expand: bool = False,
                 baseline: Path | None = None, update_baseline: bool = False, exit_zero: bool = False,
                 exclude: list[str] | None = None, extend_exclude: list[str] | None = None,
                 force_exclude: bool | None = None, respect_gitignore: bool | None = None, pre_commit: bool = False) -> None:
        self.paths = paths
        self.pre_commit = pre_commit  # the paths are the file names pre-commit passes: never patterns
        self.overrides = overrides or {}
        self.config = config
        self.config_above_repo = config_above_repo
        self.show_config = show_config
        self.format = format
        self.output = output
        self.fix = fix
        self.unsafe_fixes = unsafe_fixes
        self.diff = diff
        self.verify = verify
        self.providers = providers
        self.shapes = shapes
        self.progress = progress
        self.jobs = jobs
        self.cache_dir = cache_dir
        self.statistics = statistics
        self.quiet = quiet
        self.show_info = show_info
        self.expand = expand
        self.baseline = baseline
        self.update_baseline = update_baseline
        self.exit_zero = exit_zero
        self.exclude = exclude  # None: the config's, else the defaults
        self.extend_exclude = extend_exclude or []
        self.force_exclude = force_exclude  # None: the config's, else off
        self.respect_gitignore = respect_gitignore  # None: the config's, else on
        self.named_config: config_mod.Config | None = None  # --config's, read once (load_config)


def load_config(request: LintRequest, folder: Path) -> config_mod.Config:
    """The config in force for models in folder: the one named (read once per run: a walk asks per folder, and
    each read parsed the file and compiled its patterns again), else the nearest one."""
    if request.config:
        if request.named_config is None:
            request.named_config = config_mod.load_file(request.config)
        return request.named_config
    return config_mod.find_for(folder, request.config_above_repo)


def settings_of(request: LintRequest, cfg: config_mod.Config) -> Settings:
    settings = Settings.from_config(cfg, **{"info_details": shows_info_details(request), **request.overrides})
    if request.format != "html":
        return settings
    from onnxlint.formats import html_format

    return replace(settings, page_maker=html_format.lint_page)


def shows_info_details(request: LintRequest) -> bool:
    """Whether the run reads what infos say (message, hint, fixability): not when its output shows no info
    (text, GitHub annotations and SARIF without --show-info) and nothing else reads them (--statistics counts the
    fixable ones, --fix fixes them, --verify and --baseline look at every finding)."""
    return request.format not in ("text", "github", "sarif") or request.show_info or request.statistics \
        or request.fix or request.verify or request.baseline is not None


def providers(text: str) -> list[str]:
    """Execution provider names from a comma-separated list, each one onnxruntime knows (a UsageError if not)."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names:
        raise UsageError("--providers names no execution provider")
    known = _known_providers()
    for x in names:
        if not x.endswith("ExecutionProvider") or (known and x not in known):
            hint = did_you_mean(x, known) if known else " (e.g. CUDAExecutionProvider, CPUExecutionProvider)"
            raise UsageError(f"unknown execution provider {x!r}{hint}")
    return names


def _known_providers() -> list[str]:
    """Every provider name this onnxruntime build knows (available or not); [] without onnxruntime."""
    try:
        import onnxruntime
    except Exception:  # not installed, or a broken install: the session will say so
        return []
    return list(onnxruntime.get_all_providers())


def _progress(enabled: bool) -> Callable[[int, int, str], None]:
    def show(i: int, n: int, name: str) -> None:
        if enabled:
            bar = "#" * int(30 * i / n)
            line = f"[{bar:<30}] {i}/{n} {esc(name[-40:]):<40}"
            # the last one is cleared: the report, not the bar, is what stays on the screen
            sys.stderr.write(f"\r{line}" if i < n else "\r" + " " * len(line) + "\r")
            sys.stderr.flush()

    return show


def ruleset_of(settings: Settings, cache_dir: Path | None) -> Any:
    """The rules in force: from the cache's stored copy when there is one (a RuleIndex: no YAML, no onnx), else
    parsed and validated (a malformed rule file is a usage error here, before any model is read) and stored."""
    from onnxlint import cache

    if cache_dir is None:
        from onnxlint.rulefiles.ruleset import get_ruleset

        return get_ruleset(settings.rule_dirs)
    index = cache.rule_index(settings.rule_dirs, cache_dir)
    if index is not None:
        return index
    from onnxlint.rulefiles.ruleset import get_ruleset

    return cache.cached_ruleset(settings.rule_dirs, get_ruleset, cache_dir)


class CachedRules:
    """A lint's source of rule sets: the cache folder's copy of the parsed rules (cache.cached_ruleset), so a
    model that misses does not pay for parsing and validating every rule file again while the rule files are
    unchanged. Each run makes its own (a rule file edited between two runs in one process is read again); pool
    workers get it with each model, pickled without what it read, and share what they read per run in their
    process (_IN_WORKER)."""

    def __init__(self, cache_dir: Path):
        self.cache_dir = cache_dir
        self.run_id = os.urandom(8).hex()
        self._read: dict[tuple[Path, ...], Any] = {}

    def __call__(self, dirs: tuple[Path, ...]) -> Any:
        if dirs not in self._read:
            from onnxlint import cache
            from onnxlint.rulefiles.ruleset import get_ruleset

            self._read[dirs] = cache.cached_ruleset(dirs, get_ruleset, self.cache_dir)
        return self._read[dirs]

    def __getstate__(self) -> dict[str, Any]:
        return {"cache_dir": self.cache_dir, "run_id": self.run_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.cache_dir, self.run_id = state["cache_dir"], state["run_id"]
        self._read = _IN_WORKER.setdefault(self.run_id, {})


_IN_WORKER: dict[str, dict[tuple[Path, ...], Any]] = {}  # a pool worker's rule sets, per run (CachedRules)


def execute(request: LintRequest, settings: Settings) -> int:
    """Lint (and fix, verify) the request's paths, print or write the report; the exit code: 0 clean, 1
    findings at or above fail-on, 2 an input error. settings: those of the config found from the current
    folder (the rules checked before any model is read)."""
    rules = _Rules(settings, request.cache_dir, eager=_rules_first(request, settings))
    if not request.paths and request.show_config:  # alone: the config a model in the current folder would get
        c = config_mod.load_file(request.config) if request.config else config_mod.find_for(Path.cwd(), request.config_above_repo)
        print(f"onnxlint: config in force: {esc(str(c.path)) if c.path else 'none (defaults)'}", file=sys.stderr)
        return 0
    if not request.paths:
        raise UsageError("no paths given (try: onnxlint model.onnx, onnxlint models/, onnxlint --help)")
    if request.baseline is not None and not request.update_baseline and not request.baseline.exists():
        # recorded in its place, it passed every finding: a pull request deleting the baseline passed the gate
        raise UsageError(f"--baseline {request.baseline}: no such file; record the current findings in it with "
                         "--update-baseline")
    prints = _recorded(request.baseline) if request.baseline is not None and not request.update_baseline else None
    if rules.read is not None:
        linter.check_selection(settings, rules.read)
    settings_for = _SettingsByFolder(request)
    walk = _walk(request, settings.config)
    files = paths.expand_paths(request.paths, walk, literal=request.pre_commit)
    for note in walk.notes:
        print(f"onnxlint: note: {esc(note)}", file=sys.stderr)
    if not files:  # every file named was excluded (--force-exclude): nothing to lint is not a failure
        print("onnxlint: every file given is excluded (exclude / extend-exclude, --force-exclude); nothing to "
              "lint", file=sys.stderr)
    _check_output(request.output, files, request.fix, diff=request.diff)  # --diff writes nothing, no folder either
    if request.show_config:
        for path in sorted({settings_for(f).config.path or Path("-") for f in files}, key=str):
            print(f"onnxlint: config in force: {esc(str(path)) if str(path) != '-' else 'none (defaults)'}", file=sys.stderr)
    if not request.show_info and any(settings_for(f).fail_on == "info" for f in files):
        request.show_info = True  # what fails the gate is shown: `fail-on = "info"` exited 1 with nothing to see
        settings_for = _SettingsByFolder(request)  # made anew: those above give infos no message (info_details)
    _check_folder_codes(settings, settings_for, files, request.cache_dir)
    report, stopped = _lint(request, files, settings_for, rules, prints)
    if request.verify and stopped is None:
        from onnxlint.verify.command import check_shape_names, parse_shapes, verify_report

        shapes = {name: list(dims) for name, dims in parse_shapes(request.shapes)}
        check_shape_names(files, shapes)
        verify_report(report, providers(request.providers), shapes, settings_for)
    first = settings_for(files[0]) if files else settings
    _complete(report, request, settings, first, rules, settings_for)
    if request.baseline:
        recorded = _baseline(request.baseline, report, files, request.update_baseline, stopped, prints)
        if recorded is not None:
            return recorded
    # an interrupted run's report names only the models finished before the signal: written to -o, it replaced the
    # last whole report with one that reads as the whole run's (a SARIF upload after a CI timeout, `if: always()`,
    # closed every alert of the models not reached); -o is left as it was, standard output still gets it
    kept = request.output if stopped is not None and request.output is not None and not request.fix else None
    _show(report, request, first, settings_for, write=kept is None)
    return _exit_code(report, stopped, len(files), request.exit_zero, kept)


def _check_folder_codes(settings: Settings, settings_for: _SettingsByFolder, files: list[Path], cache_dir: Path | None) -> None:
    """The codes of each model's own config (select, ignore, extend-select, per-file-ignores, severity) name rules,
    as the current folder's config's must (checked before the walk): a nested config's misspelt code changed
    nothing, silently. The error names the config file."""
    for s in {id(s): s for s in map(settings_for, files)}.values():
        if s.config.path == settings.config.path or not _names_codes(s):
            continue
        try:
            linter.check_selection(s, ruleset_of(s, cache_dir))
        except UsageError as exc:  # one the config names says its file already
            said = str(exc)
            raise UsageError(said if said.startswith(f"{s.config.path}: ") else f"{s.config.path}: {said}") from None


def _walk(request: LintRequest, run_config: config_mod.Config) -> Any:
    """What folder walks and globs leave out: the command line's patterns (relative to the current folder), the
    config in force for each folder (its patterns relative to its own folder), the defaults; .gitignore and
    force-exclude as the command line says, else as the run's config (the current folder's, or --config) says."""
    from onnxlint.model import excludes

    cwd = os.getcwd()
    compiled: dict[int, tuple[Any, Any, Any]] = {}  # by config object (kept in the value: ids stay unique)

    def config_patterns(folder: str) -> tuple[Any, Any]:
        c = load_config(request, Path(folder))
        got = compiled.get(id(c))
        if got is None:
            base = os.fspath(c.path.parent) if c.path else cwd
            got = compiled[id(c)] = (c, excludes.compile_all(c.exclude, base) if c.exclude is not None else None,
                                     excludes.compile_all(c.extend_exclude, base))
        return got[1], got[2]

    def pick(given: bool | None, configured: bool | None, default: bool) -> bool:
        return given if given is not None else configured if configured is not None else default

    return excludes.Walk(cli=excludes.compile_all(request.exclude, cwd) if request.exclude is not None else None,
                         extend=excludes.compile_all(request.extend_exclude, cwd), config_patterns=config_patterns,
                         respect_gitignore=pick(request.respect_gitignore, run_config.respect_gitignore, True),
                         force_exclude=pick(request.force_exclude, run_config.force_exclude, False))


def _rules_first(request: LintRequest, settings: Settings) -> bool:
    """Whether the rules are read before any model: a malformed rule file is a usage error before any model is
    linted. With the result cache on and only the built-in rules (they come with the package, in every key), the
    rules are read only when something needs them (codes to check, SARIF's rule list, a model to lint): a run of
    hits needs none. A user's rule folder is always read: a model whose own config does not use it would otherwise
    hide that folder's error on a hit."""
    return request.cache_dir is None or bool(settings.rule_dirs) or request.format == "sarif" or _names_codes(settings)


def _names_codes(s: Settings) -> bool:
    """Whether the settings name rule codes that linter.check_selection checks (select, ignore, extend-select,
    per-file-ignores, severity)."""
    return bool(s.selection_codes()) or any(s.config.per_file_ignores.values()) or bool(s.config.severity)


class _Rules:
    """The rules in force for the run's settings, read once: at once when eager, else when first needed."""

    def __init__(self, settings: Settings, cache_dir: Path | None, eager: bool) -> None:
        self.settings, self.cache_dir = settings, cache_dir
        self.read: Any = ruleset_of(settings, cache_dir) if eager else None

    def get(self) -> Any:
        if self.read is None:
            self.read = ruleset_of(self.settings, self.cache_dir)
        return self.read


class _SettingsByFolder:
    """The settings of each model: its folder's config (one config search per folder, not per file; one Settings
    per config file), merged with the request's overrides."""

    def __init__(self, request: LintRequest) -> None:
        self.request = request
        self.by_config: dict[int, Settings] = {}
        self.by_dir: dict[str, Settings] = {}

    def __call__(self, p: Path) -> Settings:
        d = os.fspath(p.parent)
        got = self.by_dir.get(d)
        if got is None:
            c = load_config(self.request, p.parent)
            if id(c) not in self.by_config:
                self.by_config[id(c)] = settings_of(self.request, c)
            got = self.by_dir[d] = self.by_config[id(c)]
        return got


def _lint(request: LintRequest, files: list[Path], settings_for: _SettingsByFolder, rules: _Rules,
          prints: set[str] | None = None) -> tuple[Report, Any]:
    """The report of every model (fixed, from the cache or linted) and the signal that stopped the lint, if one did:
    what was finished is still reported. prints: the baseline's fingerprints (--fix leaves those findings alone)."""
    show = request.progress and sys.stderr.isatty() and request.format == "text" and linter.show_progress(files)
    report = Report()
    try:
        if request.fix:
            _fix(request, files, settings_for, report, show, prints)
        elif request.cache_dir is not None:
            from onnxlint import cache as cache_mod

            cache_dir = request.cache_dir
            run = cache_mod.CachedRun(files, settings_for, cache_dir, prefetch=PREFETCH_BYTES)

            def lint_misses(misses: list[Path]) -> list[Any]:
                rules.get()  # a malformed rule file stops the run here, before any lint
                return linter.lint_paths(misses, settings_for, jobs=request.jobs, progress=_progress(show), digest=True, expanded=True,
                                         rulesets=CachedRules(cache_dir), prefetched=run.prefetched).files

            report = Report(files=run.reports(lint_misses))
        else:
            report = linter.lint_paths(files, settings_for, jobs=request.jobs, progress=_progress(show), expanded=True)
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM (interrupt.signals_interrupt); pool workers are gone
        from onnxlint.support.interrupt import interrupted

        stopped = interrupted(exc, getattr(exc, "files", None) or report.files)
        return Report(files=stopped.files), stopped
    return report, None


def _fix(request: LintRequest, files: list[Path], settings_for: _SettingsByFolder, report: Report, show: bool,
         prints: set[str] | None) -> None:
    """Lint and fix each model in turn, its report appended as it is done. A finding the baseline records is not
    shown, so not fixed (--fix fixes what the run shows)."""
    from onnxlint.linting import baseline, fixing
    from onnxlint.verify.command import check_shape_names, parse_shapes

    fix_shapes = {name: list(dims) for name, dims in parse_shapes(request.shapes)}
    check_shape_names(files, fix_shapes)
    fix_options = fixing.FixOptions(unsafe=request.unsafe_fixes, diff=request.diff, output=request.output,
                                    shapes=fix_shapes, show_info=request.show_info,
                                    baselined=baseline.records(prints, request.baseline) if request.baseline and prints else None)
    for i, f in enumerate(files, 1):
        s = settings_for(f)
        res = linter.lint_file(f, s, digest=True)  # what was linted: the fix must find the same version
        if not res.error:
            fixing.fix_file(f, s, res, fix_options)
        report.files.append(res)
        _progress(show)(i, len(files), str(f))


def _complete(report: Report, request: LintRequest, settings: Settings, first: Settings, rules: _Rules,
              settings_for: _SettingsByFolder) -> None:
    """What the report says besides its models: the rules in force (SARIF lists them; the other formats read
    them only when they were read anyway), the fail-on severity, the runtime releases checked."""
    if rules.read is not None or request.format == "sarif":
        # every rule a config in force selects (SARIF describes each result's rule: the first model's config alone
        # left a result of another folder's without one), at the severity the run's config gives it
        chosen: dict[str, Any] = {}
        for s in (first, *(s for s in settings_for.by_config.values() if s is not first)):
            listed = rules.read if rules.read is not None and s.rule_dirs == settings.rule_dirs else ruleset_of(s, request.cache_dir)
            for r in listed.rules:
                if r.id not in chosen and s.selected(r.id, r.default):
                    chosen[r.id] = r
        report.rules = list(chosen.values())
        report.severity = dict(first.config.severity)
    report.fail_on = first.fail_on
    for res in report.files:
        own = settings_for(Path(res.filename)).fail_on
        if own != first.fail_on:
            report.fail_on_by_file[res.filename] = own
    report.releases = "; ".join(sorted(_checked_releases(report, settings_for) or {_releases(first)}))
    if request.format in ("json", "github"):  # each finding (annotation) names the tables its target was checked against
        by_settings: dict[int, dict[str, str]] = {}
        for res in report.files:
            s = settings_for(Path(res.filename))
            if id(s) not in by_settings:
                by_settings[id(s)] = _tables_by_target(s)
            report.checked[res.filename] = by_settings[id(s)]


def _recorded(path: Path) -> set[str]:
    """The baseline's fingerprints, read before any model is: a malformed one failed the run after the lint."""
    from onnxlint.linting import baseline

    return baseline.load(path)


def _baseline(path: Path, report: Report, files: list[Path], update: bool, stopped: Any,
              prints: set[str] | None) -> int | None:
    """Record the findings as the baseline (the exit code: never from part of a run) or mark the recorded ones
    (prints, read before the lint) suppressed (None: the run goes on to print)."""
    from onnxlint.linting import baseline

    if stopped is None and update:
        write_guard.check_target(path, files, "--baseline", "the baseline")
        if path.is_dir():
            raise UsageError(f"--baseline {path}: is a folder; give a file for the baseline")
        write_guard.check_report_folder(path, "--baseline")
        if not path.parent.is_dir():
            raise UsageError(f"--baseline {path}: folder {path.parent} does not exist")
        n = baseline.write(path, report)
        print(f"onnxlint: baseline {esc(str(path))}: recorded {n} finding(s); later runs fail only on "
              "new ones", file=sys.stderr)
        return 2 if report.errors else 0
    if prints is not None:
        baseline.apply(report, path, prints)
    return None


def _show(report: Report, request: LintRequest, first: Settings, settings_for: _SettingsByFolder, write: bool = True) -> None:
    """Render the report (to -o or stdout; write=False: neither); fix notes of the machine formats and input errors
    go to stderr."""
    from onnxlint import formats

    colour = request.format == "text" and request.output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    # how the report is rendered, with the format (a cached run renders its stored reports the same way)
    shown_as = {"colour": colour, "statistics": request.statistics, "quiet": request.quiet,
                "show_info": request.show_info, "expand": request.expand}
    # settings_for: the HTML page places each model as it was linted (its config's target, release, rules)
    if write:
        text = formats.render(request.format, report, **shown_as, config_file=first.config.path, settings_for=settings_for)
        _emit(text, request)
    if (request.fix or request.verify) and request.format != "text":
        # text output carries the fix and verify notes; the machine formats stay pure, so they go to stderr
        from onnxlint.formats.text_format import RUN_WIDE_NOTES, diff_lines

        said: set[str] = set()
        for res in report.files:
            for line in diff_lines(res.diff):
                print(line, file=sys.stderr)
            for note in res.notes:
                if note.startswith(RUN_WIDE_NOTES):  # said once for the run
                    if note not in said:
                        said.add(note)
                        print(f"onnxlint: {esc(note)}", file=sys.stderr)
                    continue
                print(f"onnxlint: {esc(res.filename)}: {esc(note)}", file=sys.stderr)
    for res in report.errors:
        print(f"onnxlint: error: {esc(res.filename)}: {esc(res.error)}", file=sys.stderr)
    for res in report.files:  # --fix found the file changed since it was read: nothing written (compare-and-swap)
        if res.write_refused:
            print(f"onnxlint: error: {esc(res.filename)}: {esc(res.write_refused)}", file=sys.stderr)


def _exit_code(report: Report, stopped: Any, n_files: int, exit_zero: bool = False, kept: Path | None = None) -> int:
    """0 clean, 1 findings at or above fail-on (0 with --exit-zero: report only), 2 a model that could not be
    read, the signal's code when one stopped the run. --exit-zero never hides an unreadable model: a report-only
    step still fails when it could not look at everything. kept: the -o an interrupted run left as it was."""
    if stopped is not None:
        where = (f"-o {esc(str(kept))} was left as it was (a report of those alone would read as the whole run's)"
                 if kept is not None else "the report above holds those")
        print(f"onnxlint: interrupted ({signal_name(stopped.signum)}) after {len(report.files)} of {n_files} "
              f"model(s); {where}", file=sys.stderr)
        return int(stopped.exit_code)
    if report.errors or any(res.write_refused for res in report.files):
        return 2
    return 1 if report.fails() and not exit_zero else 0


def _checked_releases(report: Report, settings_for: _SettingsByFolder) -> set[str]:
    """The releases each model was checked against: its config's targets, or those its content chose (a classic-ML
    model is checked as ort-cpu, against the CPU tables' release, whatever the config names)."""
    from dataclasses import replace

    said: dict[tuple[int, tuple[str, ...] | None], str] = {}
    for res in report.files:
        s = settings_for(Path(res.filename))
        key = (id(s), res.targets)
        if key not in said:
            said[key] = _releases(s if res.targets is None else replace(s, targets=res.targets))
    return set(said.values())


def _releases(s: Settings) -> str:
    """The runtime tables these settings check, for the summary line: `ORT 1.31.1, TensorRT 10.1+rtx1.4`, each
    with the version asked for when another release's table answers for it (`ORT 1.21.1 tables (asked 1.21.5)`)."""
    closure = targets.closure(s.targets)
    runtimes = {targets.get(t).runtime for t in closure}  # "ORT", "TensorRT": each named once
    parts = []
    if "ORT" in runtimes:
        from onnxlint.ort import kernel_registry

        eps = ("cuda", "cpu") if closure & {"ort-cuda", "ort-trt"} else ("cpu",)
        parts.append(kernel_registry.checked(s.ort_version, eps))
    if "TensorRT" in runtimes:
        from onnxlint.tensorrt import tables, versions

        label, inexact = tables.resolve(s.trt_version)
        parts.append(versions.checked(label) + (f" (asked {s.trt_version})" if inexact else ""))
    return ", ".join(parts)


def _tables_by_target(s: Settings) -> dict[str, str]:
    """Every target's tables at these settings' versions, as JSON names them per finding (`ORT 1.31.1`,
    `TensorRT-RTX 1.4`, `ORT 1.21.1 tables (asked 1.21.5)`): a model's own deployment intent may pick any target."""
    from onnxlint.ort import kernel_registry
    from onnxlint.tensorrt import tables, versions

    label, inexact = tables.resolve(s.trt_version)
    trt = versions.product(label) + (f" (asked {s.trt_version})" if inexact else "")
    cuda = kernel_registry.checked(s.ort_version, ("cuda", "cpu"))
    return {"ort-cuda": cuda, "ort-cpu": kernel_registry.checked(s.ort_version, ("cpu",)), "tensorrt": trt,
            "ort-trt": f"{trt}, {cuda}"}


def _emit(text: str, request: LintRequest) -> None:
    if request.output and not request.fix:
        try:
            write_guard.replace_text(request.output, text)
        except OSError as exc:  # a full disk, a folder gone: one line, exit 2
            raise UsageError(f"-o {request.output}: cannot write the report: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)


def check_fix_output(output: Path, inputs: list[Path]) -> None:
    """`-o` of a fix (`verify --fix -o`): a file for one model, a folder for several; never an input."""
    _check_output(output, inputs, True)


def check_report_output(output: Path, inputs: list[Path], suffix: str) -> None:
    """-o for a report (`onnxlint placement -o`), checked as a lint run's -o is (a command that has no --fix);
    suffix: the report's (".html"), for the name the advice gives."""
    _check_output(output, inputs, False, has_fix=False, suffix=suffix)


def _check_output(output: Path | None, inputs: list[Path], fix: bool, diff: bool = False, has_fix: bool = True,
                  suffix: str = ".json") -> None:
    """-o is a report file (or, with --fix, the fixed model or a folder for several: fixing.check_fix_output, which
    the API's fix(output=...) shares): never an input, never a folder for a report, and its folder must exist."""
    if output is None:
        return
    if fix:
        from onnxlint.linting import fixing  # imports onnx: not on a cached run's path

        fixing.check_fix_output(output, inputs, diff=diff)
        return
    if isinstance(output, paths.FolderPath) and not output.is_dir():
        raise UsageError(f"-o {output}{os.sep}: is a folder; give a file for the report")
    if any(write_guard.same_file(output, f) for f in inputs):
        raise UsageError(f"-o {output}: is one of the models being linted; the report would overwrite it")
    if output.suffix.lower() == ".onnx":  # `onnxlint m.onnx -o fixed.onnx`, --fix forgotten: a text file a walk lints
        # the command has no --fix to add (`onnxlint placement`): its report wants another name
        advice = "to write the fixed model there, add --fix" if has_fix else f"name the report otherwise (report{suffix})"
        raise UsageError(f"-o {output}: a report under a model's name (the next `onnxlint .` reads it as a corrupt "
                         f"model); {advice}")
    if output.is_dir():
        raise UsageError(f"-o {output}: is a folder; give a file for the report")
    write_guard.check_target(output, inputs, "-o", "the report")
    write_guard.check_report_folder(output, "-o")
    write_guard.check_folder(output, "-o")
