"""Lint settings: the config file merged with explicit overrides (from the command line or the API).

No argparse here: the CLI turns its arguments into keyword overrides, a library caller passes them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from onnxlint.config import config_file as config_mod
from onnxlint.rules.codes import matches, split_codes
from onnxlint.rules.severity import SEVERITIES

DEFAULT_FAIL_ON = "warning"

OVERRIDABLE = ("select", "extend_select", "ignore", "targets", "ort_version", "trt_version", "fail_on", "rule_dirs",
               "ort_optimization", "info_details")


@dataclass(frozen=True)
class Settings:
    """What one lint run selects: rules, targets and runtime versions, and the config they came from."""

    config: config_mod.Config = field(default_factory=config_mod.Config)
    # the selection in two layers, as ruff's: the config's (select, extend_select, ignore; the command line's
    # instead when it has a select), then the command line's extend-select and ignore on top of it
    select: tuple[str, ...] | None = None  # None: the default rule set (rules not marked `default: false`)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    cli_extend_select: tuple[str, ...] = ()
    cli_ignore: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    explicit_targets: tuple[str, ...] = ()  # the targets the command line or the config named (not the defaults)
    ort_version: str | None = None
    trt_version: str | None = None
    fail_on: str = DEFAULT_FAIL_ON
    rule_dirs: tuple[Path, ...] = ()
    ort_optimization: str = "all"
    # False: info findings get no message, hint or fixability (a run that shows no info: text without --show-info
    # computes them for nothing); the result cache keys reports by it, as by every field
    info_details: bool = True
    # `--format html` (formats.html_format.lint_page): what makes each model's page data from the lint's model,
    # index and predictions (FileReport.page), a module-level function (it travels to --jobs workers); not part of
    # the result cache's key (the findings are the same), not compared
    page_maker: Callable[..., Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_config(cls, config: config_mod.Config | str | Path | None = None, **overrides: Any) -> "Settings":
        """Settings from a config (a Config, a config file path, or None for no config) with overrides on top.

        Overrides use the attribute names (select, extend_select, ignore, targets, ort_version, trt_version,
        fail_on, rule_dirs, ort_optimization, info_details); None means "not given". select/extend_select/ignore layer
        over the config's the way ruff's command line does: a select replaces the config's whole selection, and
        extend_select and ignore apply after it (an extend_select selects a rule the config ignores)."""
        unknown = set(overrides) - set(OVERRIDABLE)
        if unknown:
            raise TypeError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        overrides = _checked(overrides)
        if config is None:
            cfg = config_mod.Config()
        elif isinstance(config, config_mod.Config):
            cfg = config
        else:
            cfg = config_mod.load_file(Path(config))
        from onnxlint import targets as targets_mod

        cli_select = split_codes(overrides.get("select"))
        select = cli_select or cfg.select or None
        given = split_codes(overrides.get("targets")) or list(cfg.targets or ())
        targets = given or list(targets_mod.DEFAULT_TARGETS)
        return cls(
            config=cfg,
            select=tuple(select) if select is not None else None,
            extend_select=() if cli_select else tuple(cfg.extend_select),
            ignore=() if cli_select else tuple(cfg.ignore),
            cli_extend_select=tuple(split_codes(overrides.get("extend_select"))),
            cli_ignore=tuple(split_codes(overrides.get("ignore"))),
            targets=tuple(targets),
            explicit_targets=tuple(given),
            ort_version=overrides.get("ort_version") or cfg.ort_version,
            trt_version=overrides.get("trt_version") or cfg.trt_version,
            fail_on=overrides.get("fail_on") or cfg.fail_on or DEFAULT_FAIL_ON,
            rule_dirs=tuple(Path(p) for p in _listed(overrides.get("rule_dirs"))) + tuple(cfg.rules),
            ort_optimization=overrides.get("ort_optimization") or cfg.ort_optimization or "all",
            info_details=overrides.get("info_details") is not False,
        )

    def with_targets(self, *targets: str) -> "Settings":
        return replace(self, targets=tuple(targets), explicit_targets=tuple(targets))

    def selected(self, code: str, default: bool = True) -> bool:
        """Whether a rule runs: named by select (or, without one, in the default set), or by extend-select,
        and not ignored. default: whether the rule is in the default set."""
        chosen = matches(code, self.select) if self.select is not None else default
        chosen = (chosen or matches(code, self.extend_select)) and not matches(code, self.ignore)
        return (chosen or matches(code, self.cli_extend_select)) and not matches(code, self.cli_ignore)

    def named(self, code: str) -> bool:
        """Whether select or extend-select names this very code (not a prefix): the user asked for its findings,
        at whatever severity (`--fix` fixes a hidden info the user named so)."""
        return code in (*(self.select or ()), *self.extend_select, *self.cli_extend_select)

    def selection_codes(self) -> list[str]:
        """Every code or prefix the selection names (to check that each names some rule)."""
        return [c for c in (*(self.select or ()), *self.extend_select, *self.ignore, *self.cli_extend_select,
                            *self.cli_ignore) if c]


def _listed(value: Any) -> list[Any]:
    """A setting that takes a list given one value (`rule_dirs="rules"`, as a config's `rules` takes it)."""
    if value is None:
        return []
    return [value] if isinstance(value, (str, Path)) else list(value)


def _checked(overrides: dict[str, Any]) -> dict[str, Any]:
    """The API's overrides, each checked as the command line's parser and a config file check it: a TypeError for a
    value of the wrong kind, a ValueError (VersionError for a version) for one the command line refuses. Unchecked,
    `targets="ort-cuda"` was read letter by letter and `targets=["mars"]` or `ort_optimization="max"` made every
    lint an internal error, and `ort_version="banana"` predicted with ORT 1.17's tables."""
    for key in ("select", "extend_select", "ignore", "targets"):
        value = overrides.get(key)
        if value is not None and not all(isinstance(v, str) for v in _listed(value)):
            raise TypeError(f"{key} must be a string or a list of strings, got {value!r}")
    check_targets(split_codes(overrides.get("targets")))
    check_runtime(overrides.get("ort_version"), overrides.get("trt_version"), overrides.get("ort_optimization"))
    fail_on = overrides.get("fail_on")
    if fail_on and fail_on not in SEVERITIES:
        raise ValueError(f"fail_on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
    if not all(isinstance(p, (str, Path)) for p in _listed(overrides.get("rule_dirs"))):
        raise TypeError(f"rule_dirs must be a path or a list of paths, got {overrides.get('rule_dirs')!r}")
    return overrides


def check_targets(names: list[str]) -> None:
    """ValueError for a target name the command line's parser refuses."""
    from onnxlint import targets as targets_mod

    for name in names:
        if name not in targets_mod.names():
            raise ValueError(f"unknown target {name!r} (known: {', '.join(targets_mod.names())})")


def check_runtime(ort_version: Any = None, trt_version: Any = None, ort_optimization: Any = None) -> None:
    """The runtime versions and the ORT optimization level the API was given (None or "": not given), as the
    command line's parser checks them: a version that is not one (ORT's may be `installed`), a level ORT lacks."""
    from onnxlint.config.config_file import OPTIMIZATION_LEVELS
    from onnxlint.targets.base import VERSION_EXAMPLE, parse_version

    for value, runtime, key in ((ort_version, "ORT", "ort_version"), (trt_version, "TensorRT", "trt_version")):
        if value is None or value == "" or (runtime == "ORT" and value == "installed"):
            continue
        if not isinstance(value, str):
            raise TypeError(f"{key} must be a string (e.g. '{VERSION_EXAMPLE[runtime]}'), got {value!r}")
        parse_version(value, runtime)
    if ort_optimization and ort_optimization not in OPTIMIZATION_LEVELS:
        raise ValueError(f"ort_optimization must be one of {', '.join(OPTIMIZATION_LEVELS)}, not {ort_optimization!r}")
