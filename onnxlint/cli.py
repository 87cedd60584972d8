"""Command line: parses arguments, builds Settings and dispatches: a lint to `onnxlint.commands.lint` (the lint run's
service layer), the subcommands to theirs; the exit code is theirs.

`onnxlint [PATHS]` lints (ruff-like); `placement`, `verify`, `doctor`, `clean` are subcommands. Exit codes:
0 clean, 1 findings at or above --fail-on (or a failed check), 2 usage or input error.

Start-up is most of a small model's cost, so this module imports only argparse and onnxlint's light modules
(no onnx, numpy or yaml): arguments are parsed first, and a run whose models are all in the result cache
(`onnxlint.cache`) renders their stored reports without importing the linter's heavy half at all.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from onnxlint import __version__, targets
from onnxlint.config import config_file as config_mod
from onnxlint.config.config_file import OPTIMIZATION_LEVELS
from onnxlint.config.settings import Settings
from onnxlint.formats import FORMATS
from onnxlint.model.paths import output_path
from onnxlint.support.errors import InputError, RuleError, UsageError, first_line
from onnxlint.support.escape import text as esc
from onnxlint.support.interrupt import signals_interrupt

SUBCOMMANDS = {
    "placement": "predict, per node, which execution provider ORT assigns",
    "verify": "build a real ORT session and compare where nodes ran with the prediction",
    "doctor": "check that onnxruntime-gpu, its providers and the CUDA/cuDNN libraries are usable",
    "clean": "remove the result cache folder (.onnxlint_cache, or --cache-dir / $ONNXLINT_CACHE_DIR)",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        """argparse builds a formatter per add_argument (to check metavars), and its default width imports
        shutil, which a cached run would otherwise not import: the width is read here as shutil would."""
        return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]


def _columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS when a positive number, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


MAX_SECONDS = 7 * 86400  # a child's wait past ~24 days overflows the poll: each model's session was an OverflowError


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v) or v <= 0 or v > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, at most {MAX_SECONDS} (a week), "
                                         f"got {text!r}")
    return v


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (one worker per CPU) or more, got {text!r}")
    return n


def _version_arg(runtime: str):
    def parse(text: str) -> str:
        if runtime == "ORT" and text == "installed":  # kernel_registry.INSTALLED: the installed onnxruntime's tables
            return text
        try:
            targets.base.parse_version(text, runtime)
        except targets.VersionError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return parse


def parse(parser: argparse.ArgumentParser, argv: list[str], positional: str, convert: Any = str,
          required: bool = False) -> argparse.Namespace:
    """parser.parse_args with the conventional end of options: every argument after the first `--` is one more
    positional (a path), whatever it looks like (`--baseline=b.onnx`), whether or not paths came before it. Done
    here, not by argparse, whose handling of `--` after positionals differs between Python releases."""
    head, tail = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    args = parser.parse_args(head)
    values = list(getattr(args, positional) or []) + [convert(t) for t in tail]
    if required and not values:
        parser.error(f"the following arguments are required: {positional}")
    setattr(args, positional, values)
    return args


PRE_COMMIT_NEEDS_MARKER = ("--pre-commit: the hook's args must end with '--' (pre-commit appends the file names after "
                           "them, and a file named like an option, such as --baseline=b.onnx, would be read as one): "
                           "args: [--target, ort-cuda, --]")


def build_parser() -> argparse.ArgumentParser:
    epilog = "subcommands:\n" + "\n".join(f"  onnxlint {name:<10} {text}" for name, text in SUBCOMMANDS.items())
    epilog += "\n\n(`onnxlint SUBCOMMAND --help` for each)"
    p = _Parser(prog="onnxlint", description="Static linter for ONNX models deployed on ONNX Runtime (CUDA, TensorRT).",
                epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="files, directories (searched for *.onnx) or globs (expanded by onnxlint, "
                   "`**` included); after `--` every argument is a path, even one that starts with `-`")
    p.add_argument("--exclude", action="append", default=None, metavar="PATTERNS",
                   help="path patterns a folder walk leaves out, replacing the defaults (.*/ venv/ node_modules/ "
                        "site-packages/ __pypackages__/) and the config's exclude (comma-separated, repeatable)")
    p.add_argument("--extend-exclude", action="append", default=[], metavar="PATTERNS",
                   help="path patterns to leave out besides the excluded ones (comma-separated, repeatable)")
    p.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                   help="files named on the command line honour the excludes too (what the pre-commit hook passes)")
    p.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                   help="leave out what git ignores when walking folders and matching globs (default: on)")
    p.add_argument("--select", action="append", default=None, help="only these rule codes or prefixes (comma-separated)")
    p.add_argument("--extend-select", action="append", default=[], help="add rule codes or prefixes")
    p.add_argument("--ignore", action="append", default=[], help="skip rule codes or prefixes")
    p.add_argument("--target", action="append", default=None, choices=list(targets.names()),
                   help=f"deployment target (repeatable; default: {', '.join(targets.DEFAULT_TARGETS)})")
    p.add_argument("--ort-version", type=_version_arg("ORT"), help="ONNX Runtime version whose kernel tables to use, or 'installed' "
                   "(default: the config's, else the newest shipped tables)")
    p.add_argument("--ort-optimization", choices=OPTIMIZATION_LEVELS,
                   help="ORT graph optimization level the session uses (default: all, ORT's default)")
    p.add_argument("--trt-version", type=_version_arg("TensorRT"), help="TensorRT version to check against (default: newest shipped)")
    p.add_argument("--rules", action="append", default=[], type=Path, help="extra directory (or file) of YAML rules")
    p.add_argument("--format", default="text", choices=list(FORMATS["lint"]))
    p.add_argument("-o", "--output", type=output_path,
                   help="write the report (or, with --fix, the fixed model; `DIR/`: into that folder, made if need be) here")
    p.add_argument("--fail-on", choices=["info", "warning", "error"], help="lowest severity that fails (default: warning)")
    p.add_argument("--exit-zero", action="store_true",
                   help="report only: exit 0 even with findings (still 2 on a usage error or an unreadable model)")
    p.add_argument("--config", type=Path, help="config file (pyproject.toml or .onnxlint.yaml); default: nearest one")
    p.add_argument("--config-above-repo", action="store_true",
                   help="also look for a config above the repository root (the folder holding .git)")
    p.add_argument("--show-config", action="store_true", help="say which config file is in force for each model")
    p.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    p.add_argument("--explain", metavar="ID", help="explain a rule and exit")
    p.add_argument("--statistics", action="store_true", help="print only the count of findings per rule")
    p.add_argument("--show-info", action="store_true", help="also show info findings (text, SARIF, GitHub; counted either way)")
    p.add_argument("--expand", action="store_true", help="one line (SARIF result, annotation) per finding, not grouped by rule and cause")
    p.add_argument("--baseline", type=Path, metavar="FILE",
                   help="fail only on findings not recorded in FILE (record them with --update-baseline)")
    p.add_argument("--update-baseline", action="store_true", help="with --baseline: record the current findings in FILE")
    p.add_argument("-q", "--quiet", action="store_true", help="findings only, no hints or summary")
    p.add_argument("--fix", action="store_true", help="apply safe automatic fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change the interface or numerics")
    p.add_argument("--diff", action="store_true", help="show what --fix would change, as a unified diff; write nothing "
                   "(implies --fix)")
    p.add_argument("--verify", action="store_true",
                   help="also build a real ORT session per model and report where nodes actually ran (OLX901-903)")
    p.add_argument("--providers", help="with --verify: execution providers for the session, in priority order "
                                       "(default: CUDAExecutionProvider,CPUExecutionProvider)")
    p.add_argument("--shape", action="append",
                   help="with --verify or --fix: dynamic input dims for the sessions, e.g. x=1x3x224x224 (default: "
                        "--verify 1; --fix's numeric check tries sizes until the model runs)")
    p.add_argument("--no-progress", action="store_true", help="never draw a progress bar")
    p.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="worker processes for 16 models or more: at most min(N, the models, the usable CPUs); 0 "
                        "(default): one per usable CPU, when the models are large enough to pay for starting workers")
    p.add_argument("--no-cache", action="store_true",
                   help="lint every model again: neither read nor write the result cache")
    p.add_argument("--cache-dir", type=Path, metavar="DIR",
                   help="result cache folder (default: $ONNXLINT_CACHE_DIR, or .onnxlint_cache in the current folder "
                        "in a git work tree, else the user's cache home)")
    p.add_argument("--pre-commit", action="store_true",
                   help="run as pre-commit's hook (.pre-commit-hooks.yaml): the file names pre-commit appends must follow "
                        "`--`, which the hook's args end with; without it the hook refuses to run")
    p.add_argument("--version", action="version", version=f"onnxlint {__version__}")
    return p


def _placement_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="onnxlint placement", description=SUBCOMMANDS["placement"])
    p.add_argument("models", nargs="*", type=Path, help="model files, folders or globs (after `--`: paths, whatever they look like)")
    p.add_argument("--target", choices=[t.name for t in targets.REGISTRY.values() if t.predicate == "placement"],
                   help="the execution provider placed for (default: ort-cuda where the config's targets name it, else "
                        "ort-cpu where they do, as the lint's; else ort-cpu for a GenAI model built for the CPU EP or a "
                        "classic-ML model, else ort-cuda)")
    p.add_argument("--ort-version", type=_version_arg("ORT"),
                   help="kernel tables of this ORT version (default: the config's ort-version, as the lint's, else the "
                        "newest shipped tables)")
    p.add_argument("--ort-optimization", choices=OPTIMIZATION_LEVELS,
                   help="ORT graph optimization level the session uses (default: the config's, else all, ORT's default)")
    p.add_argument("--format", default="text", choices=list(FORMATS["placement"]))
    p.add_argument("--compare", type=_version_arg("ORT"), metavar="VERSION",
                   help="with --format html: also place at this ORT release and show the nodes that change provider")
    p.add_argument("-o", "--output", type=output_path, help="write the report here (default: standard output)")
    return p


def _verify_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="onnxlint verify", description=SUBCOMMANDS["verify"])
    p.add_argument("models", nargs="*", type=Path, help="model files, folders or globs (after `--`: paths, whatever they look like)")
    p.add_argument("--providers", default="CUDAExecutionProvider,CPUExecutionProvider",
                   help="execution providers for the session, in priority order (default: "
                        "CUDAExecutionProvider,CPUExecutionProvider)")
    p.add_argument("--shape", action="append", help="dynamic input dims, e.g. x=1x3x224x224 (default: 1 for each)")
    p.add_argument("--format", default="text", choices=list(FORMATS["verify"]))
    p.add_argument("--timeout", type=_positive_float, default=300, metavar="SECONDS",
                   help="time limit of a model's session child (default: 300)")
    p.add_argument("--ort-version", type=_version_arg("ORT"), default="installed",
                   help="kernel tables of this ORT version for the prediction (default: installed, the ORT the session runs)")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes, verify the fixed model, and write it in "
                   "place only when a session on the providers ran it; show before/after")
    p.add_argument("-o", "--output", type=output_path, metavar="PATH",
                   help="with --fix: write the fixed model here (a file, or `DIR/`), verified or not; the model stays "
                        "(-o naming the model itself: fixed in place, only once verified, as without -o)")
    p.add_argument("--ort-optimization", choices=OPTIMIZATION_LEVELS, default="all",
                   help="the session's graph optimization level, and the prediction's (default: all, as ORT's)")
    return p


def _clean_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="onnxlint clean", description=SUBCOMMANDS["clean"])
    p.add_argument("--cache-dir", type=Path, metavar="DIR",
                   help="the cache folder to remove (default: as for a lint: $ONNXLINT_CACHE_DIR, or .onnxlint_cache in a git "
                        "work tree, else the user's cache home)")
    return p


def _doctor_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="onnxlint doctor", description=SUBCOMMANDS["doctor"])
    p.add_argument("--format", default="text", choices=list(FORMATS["doctor"]))
    return p


# ----------------------------------------------------------------------------- commands


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The Settings overrides the command line gives (None: not given)."""
    return dict(select=args.select, extend_select=args.extend_select, ignore=args.ignore, targets=args.target,
                ort_version=args.ort_version, trt_version=args.trt_version, fail_on=args.fail_on, rule_dirs=args.rules,
                ort_optimization=args.ort_optimization)


def settings_from_args(args: argparse.Namespace, cfg: config_mod.Config) -> Settings:
    return Settings.from_config(cfg, **_overrides(args))


def _cache_dir(args: argparse.Namespace) -> Path | None:
    """The result cache folder of this run, None when the run must lint afresh: --no-cache, and anything that
    writes a model or needs a live session (--fix, --diff, --verify)."""
    if args.no_cache or args.fix or args.verify:
        return None
    if args.cache_dir is not None:
        return Path(args.cache_dir)
    from onnxlint import cache

    return cache.default_dir()


def _patterns(given: list[str]) -> list[str]:
    """--exclude / --extend-exclude values: comma-separated, repeatable."""
    return [p.strip() for text in given for p in text.split(",") if p.strip()]


def _lint(argv: list[str]) -> int:
    from onnxlint.commands import lint

    if "--pre-commit" in argv and "--" not in argv:  # before parsing: a file name must not be parsed, even to fail
        raise UsageError(PRE_COMMIT_NEEDS_MARKER)
    args = parse(build_parser(), argv, "paths")
    if args.diff:
        args.fix = True
    _needs(args)
    cfg = config_mod.load_file(args.config) if args.config else config_mod.find_for(Path.cwd(), args.config_above_repo)
    settings = settings_from_args(args, cfg)
    if args.list_rules or args.explain:
        from onnxlint.commands import rules
        from onnxlint.rulefiles.ruleset import get_ruleset

        return rules.run(get_ruleset(settings.rule_dirs), args.explain, args.format)
    request = lint.LintRequest(
        [str(p) for p in args.paths], overrides=_overrides(args), config=args.config,
        config_above_repo=args.config_above_repo, show_config=args.show_config, format=args.format, output=args.output,
        fix=args.fix, unsafe_fixes=args.unsafe_fixes, diff=args.diff, verify=args.verify,
        providers=args.providers or lint.DEFAULT_PROVIDERS,
        shapes=args.shape, progress=not args.no_progress, jobs=args.jobs, cache_dir=_cache_dir(args),
        statistics=args.statistics, quiet=args.quiet, show_info=args.show_info, expand=args.expand,
        baseline=args.baseline, update_baseline=args.update_baseline, exit_zero=args.exit_zero,
        exclude=_patterns(args.exclude) if args.exclude is not None else None,
        extend_exclude=_patterns(args.extend_exclude), force_exclude=args.force_exclude,
        respect_gitignore=args.respect_gitignore, pre_commit=args.pre_commit)
    return lint.execute(request, settings)


def _needs(args: argparse.Namespace) -> None:
    """An option that only serves another is refused without it, as one line: `--update-baseline` alone recorded
    nothing and passed, `--providers`, `--shape` or `--unsafe-fixes` alone changed nothing, each silently."""
    if args.update_baseline and args.baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE (the file to record the findings in)")
    if args.providers is not None and not args.verify:
        raise UsageError("--providers is for --verify's sessions; add --verify")
    if args.shape and not (args.verify or args.fix):
        raise UsageError("--shape is for the sessions of --verify and --fix; add one of them")
    if args.unsafe_fixes and not args.fix:  # alone it fixed nothing, and `-o fixed.onnx` got the text report
        raise UsageError("--unsafe-fixes adds fixers to --fix; add --fix (or --diff)")


def _placement(argv: list[str]) -> int:
    from onnxlint.commands import placement

    args = parse(_placement_parser(), argv, "models", Path, required=True)
    return placement.run(args.models, args.target, args.ort_version, args.ort_optimization, args.format,
                         compare=args.compare, output=args.output)


def _verify(argv: list[str]) -> int:
    from onnxlint.commands import verify

    args = parse(_verify_parser(), argv, "models", Path, required=True)
    return verify.run(args.models, args.providers, args.shape, args.timeout, args.ort_version, args.fix,
                      args.ort_optimization, args.format, output=args.output)


def _doctor(argv: list[str]) -> int:
    from onnxlint.commands import doctor

    return doctor.run(_doctor_parser().parse_args(argv).format)


def _clean(argv: list[str]) -> int:
    from onnxlint.commands import clean

    return clean.run(_clean_parser().parse_args(argv).cache_dir)


_COMMANDS = {"placement": _placement, "verify": _verify, "doctor": _doctor, "clean": _clean}


# numpy's OpenBLAS starts a thread per core when numpy is imported, and they spin: CPU spent before a single matrix
# product, in every process and every pool worker. Linting multiplies no large
# matrices (folded values are shape-sized), so the CLI asks for one BLAS thread unless the user chose a number,
# or the command runs a model (--fix checks its rewrite numerically, verify runs sessions; onnx.reference, the
# fallback without onnxruntime, multiplies real weights).
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_RUNS_MODELS = ("--fix", "--diff", "--verify", "--unsafe-fixes")


def _runs_models(argv: list[str]) -> bool:
    if argv and argv[0] == "verify":
        return True
    for tok in argv:
        if tok == "--":
            break
        opt = tok.split("=", 1)[0]
        if len(opt) > 2 and opt.startswith("--") and any(name.startswith(opt) for name in _RUNS_MODELS):
            return True  # argparse takes an unambiguous prefix (--fi for --fix)
    return False


def _one_blas_thread(argv: list[str]) -> str | None:
    """Set OPENBLAS_NUM_THREADS=1 before numpy loads; the name set (to undo after main), or None."""
    if "numpy" in sys.modules or any(v in os.environ for v in _BLAS_THREADS) or _runs_models(argv):
        return None
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return "OPENBLAS_NUM_THREADS"


def main(argv: list[str] | None = None) -> int:
    from_command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if not from_command_line:  # a caller of main(argv) (tests, tools) keeps its streams and gets their errors
        return _main(argv, from_command_line)
    restore = _guard_streams()
    try:
        rc = _main(argv, from_command_line)
        sys.stdout.flush()  # what is still buffered: a full disk says so now, not after the exit code is chosen
        return rc
    except OutputError as exc:
        return _output_failed(exc)
    finally:
        restore()
        _quick_exit()


def _main(argv: list[str], from_command_line: bool) -> int:
    if argv == ["--version"]:  # what argparse would print, without building the parser (its target list)
        print(f"onnxlint {__version__}")
        return 0
    # only as the process's entry point (the onnxlint script, python -m onnxlint: no argv given); a caller of
    # main(argv) keeps numpy's threads, which would stay at one for the rest of its process
    blas = _one_blas_thread(argv) if from_command_line else None
    try:
        with signals_interrupt():  # SIGTERM (a CI timeout) stops the run as Ctrl-C does
            if from_command_line:
                _require_cwd()
            if argv and argv[0] in _COMMANDS:
                return _COMMANDS[argv[0]](argv[1:])
            return _lint(argv)
    except (InputError, RuleError, UsageError, targets.VersionError) as exc:
        print(f"onnxlint: error: {esc(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print("onnxlint: interrupted", file=sys.stderr)
        return getattr(exc, "exit_code", 130)
    except BrokenPipeError:
        _discard_stdout()
        return 0
    except OutputError:
        raise
    except Exception as exc:
        if not from_command_line:  # a caller of main(argv) (tests, tools) gets the exception itself
            raise
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG and exc.filename:
            # a path named on the command line (-o, --baseline, --rules) past the file system's limit: the user's
            # input, never "internal error ... please report it"
            print(f"onnxlint: error: {esc(str(exc.filename))}: {exc.strerror or 'file name too long'}", file=sys.stderr)
            return 2
        # a defect in onnxlint, as the process's entry point: one line and exit 2, never 1, which means "findings"
        print(f"onnxlint: internal error ({type(exc).__name__}: {esc(first_line(exc))}); please report it", file=sys.stderr)
        return 2
    finally:
        from onnxlint.model import write_guard

        write_guard.remove_made_empty()  # `--fix -o out/`'s folder, made for a fix that wrote nothing
        if blas is not None:  # main() called in-process: the caller's environment as it was
            os.environ.pop(blas, None)


# ----------------------------------------------------------------------------- the process's environment


class OutputError(Exception):
    """Standard output cannot be written (closed, a full disk, an I/O error): the run ends with exit 2."""


class _GuardedOutput:
    """sys.stdout as the process got it, whose write and flush failures are an OutputError (a broken pipe stays
    a BrokenPipeError: the reader left, which is no error); None (closed before the start) fails on first use."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _fail(self, exc: OSError | None) -> OutputError:
        why = "it is closed" if exc is None or exc.errno == errno.EBADF else (exc.strerror or str(exc))
        return OutputError(f"cannot write to standard output: {why}")

    def write(self, text: str) -> int:
        if self._stream is None:
            raise self._fail(None)
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:  # ValueError: I/O operation on a closed file
            raise self._fail(exc if isinstance(exc, OSError) else None) from None

    def writelines(self, pieces: Iterable[str]) -> None:
        """A report written as it is made (placement): each piece through write(), guarded alike."""
        for piece in pieces:
            self.write(piece)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            raise self._fail(exc if isinstance(exc, OSError) else None) from None

    def isatty(self) -> bool:
        try:
            return self._stream is not None and bool(self._stream.isatty())
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise self._fail(None)
        return getattr(self._stream, name)


def _guard_streams() -> Any:
    """Install the guarded stdout (and a stderr that swallows what cannot be shown when stderr was closed: an
    error line must never land on stdout); the function that puts them back."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = _GuardedOutput(out)
    if err is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process

    def restore() -> None:
        if isinstance(sys.stdout, _GuardedOutput):
            sys.stdout = out if out is not None else sys.stdout
    return restore


def _output_failed(exc: OutputError) -> int:
    """One line on stderr (when it can be written) and exit 2; what stayed buffered for stdout is dropped so
    that the interpreter's own flush at exit cannot print a traceback."""
    _discard_stdout()
    try:
        print(f"onnxlint: error: {exc}", file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return 2


def _discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null and drop stdout's buffer (Python's advice for a broken pipe)."""
    stream = sys.stdout._stream if isinstance(sys.stdout, _GuardedOutput) else sys.stdout  # noqa: SLF001
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    if stream is not None:
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _require_cwd() -> None:
    """The current folder must exist: relative paths, the config search and the cache folder start from it."""
    try:
        os.getcwd()
    except OSError as exc:
        raise UsageError(f"the current folder cannot be used ({exc.strerror or exc}: it was deleted, or a folder "
                         "above it cannot be entered); cd to an existing folder and run again") from None


def _quick_exit() -> None:
    """The process ends after main returns: keep Python's shutdown from walking every object left (onnx's and
    numpy's modules, the model) with the cyclic collector, a large share of a small model's lint. Frozen objects are left to
    the operating system; atexit handlers still run and the standard streams are still flushed. Nothing
    onnxlint writes depends on a collection at exit: its files are closed where they are written."""
    import gc

    gc.freeze()
