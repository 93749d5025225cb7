"""Configuration: ``[tool.datavet]`` in ``pyproject.toml`` (or a ``datavet.toml``) plus overrides,
resolved into one frozen :class:`Settings` value. No argparse here and no report rewriting: the
command line plans its jobs in :mod:`datavet.cli.plan`, and per-column ignores are applied after
the rules run by :mod:`datavet.ignores`.

Precedence, as in ruff: command-line flags > config file > defaults. The config is found by
walking up from the working directory to the first ``datavet.toml``, or ``pyproject.toml`` that
has a ``[tool.datavet]`` table. Unknown keys and bad values are a :class:`ConfigError` (exit 2)
whose one-line message names the file and the key: a typo must never silently disable a check.

Modules: ``settings`` (the values), ``parse`` (finding, reading, validating), ``thresholds``
(the range of every rule threshold), ``exclude`` (path globs), ``text`` (display, TOML).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from datavet.config.exclude import excluded
from datavet.config.parse import (
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    column_ignores,
    find_config,
    load,
    parse,
    tomllib,
)
from datavet.config.settings import CONFIG_NAMES, TASKS, ConfigError, Dataset, Settings
from datavet.config.thresholds import (
    THRESHOLD_RANGES,
    audit_rule,
    threshold_name_problem,
    threshold_problem,
)
from datavet.ignores import ColumnIgnore

if TYPE_CHECKING:
    from datavet.report import Report

__all__ = [
    "CONFIG_NAMES",
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "TASKS",
    "THRESHOLD_RANGES",
    "ColumnIgnore",
    "ConfigError",
    "Dataset",
    "Settings",
    "apply_column_ignores",
    "audit_rule",
    "column_ignores",
    "excluded",
    "find_config",
    "load",
    "parse",
    "threshold_name_problem",
    "threshold_problem",
    "tomllib",
]


def apply_column_ignores(report: Report, ignores: Any) -> Report:
    """:func:`datavet.ignores.apply_column_ignores` with ``ignores`` given as ``audit()`` takes
    them (a mapping as in the config file, or ColumnIgnore objects). Raises UsageError."""
    from datavet.ignores import apply_column_ignores as apply

    return apply(report, column_ignores(ignores))
