"""Configuration: ``[tool.datavet]`` in ``pyproject.toml`` (or a ``datavet.toml``) plus command-line
overrides, resolved into one frozen :class:`Settings`.

Precedence, as in ruff: command-line flags > config file > defaults. The config is found by
walking up from the working directory to the first ``datavet.toml``, or ``pyproject.toml`` that
has a ``[tool.datavet]`` table. Unknown keys and bad values are a :class:`ConfigError` (exit 2)
whose one-line message names the file and the key: a typo must never silently disable a check.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from datavet.errors import UsageError
from datavet.findings import Finding, Outcome, Severity, Status

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_NAMES = ("datavet.toml", "pyproject.toml")
TASKS = ("auto", "classification", "regression")
_TOP_KEYS = (
    "select",
    "extend-select",
    "ignore",
    "fail-on",
    "severity",
    "thresholds",
    "per-column-ignores",
    "datasets",
    "target",
    "task",
    "baselines",
    "exclude",
    "extend-exclude",
)
_DATASET_KEYS = ("train", "test", "target", "task", "group", "time", "inputs", "delimiter")
_IGNORE_KEYS = ("rules", "reason")


class ConfigError(UsageError):
    """The configuration file is unreadable or has an unknown key or a bad value (exit 2)."""


# --------------------------------------------------------------------------------------------
# values


@dataclass(frozen=True)
class ColumnIgnore:
    """Findings of ``rules`` about ``column`` are ignored, and the report says why.

    ``column`` is an exact column name, or a pattern where ``*`` matches any run of characters
    and ``?`` one character. ``rules`` are codes, family prefixes or names, as in ``select``.
    """

    column: str
    rules: tuple[str, ...]
    reason: str

    @property
    def codes(self) -> frozenset[str]:
        from datavet.rules import select_rules

        return frozenset(r.code for r in select_rules(list(self.rules)))

    def matches_column(self, name: str) -> bool:
        if name == self.column:
            return True
        if "*" not in self.column and "?" not in self.column:
            return False
        return _pattern(self.column).fullmatch(name) is not None


def _pattern(glob: str) -> re.Pattern:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile("".join(parts), re.DOTALL)


@dataclass(frozen=True)
class Dataset:
    """A named dataset of the project: the paths of its splits, its target, and the columns the
    leakage rules key on (``group``, ``time``) or the tensor key of its inputs (``inputs``).

    ``lines`` holds where the config names it (``"table"``, ``"train"``, ``"test"`` -> line
    number, 1-based), so SARIF results and GitHub annotations can point at that line.
    """

    name: str
    train: str
    test: str | None = None
    target: str | None = None
    task: str | None = None
    group: str | None = None
    time: str | None = None
    inputs: str | None = None
    delimiter: str | None = None  # CSV field separator (default: sniffed)
    lines: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """The resolved settings: what ``datavet config`` prints and ``datavet audit`` uses."""

    config: Path | None = None
    select: tuple[str, ...] | None = None  # None: every rule
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    severity: Mapping[str, Severity] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    per_column_ignores: tuple[ColumnIgnore, ...] = ()
    datasets: Mapping[str, Dataset] = field(default_factory=dict)
    target: str | None = None
    task: str = "auto"
    baselines: bool = True
    exclude: tuple[str, ...] = ()  # globs, relative to the config file's folder
    extend_exclude: tuple[str, ...] = ()

    @property
    def effective_select(self) -> list[str] | None:
        if self.select is None:
            return None
        return [*self.select, *self.extend_select]

    def rules(self) -> list:
        """The rule classes an audit with these settings runs, in code order."""
        from datavet.rules import select_rules

        return select_rules(self.effective_select, list(self.ignore))

    def audit_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`datavet.audit`."""
        return {
            "select": self.effective_select,
            "ignore": list(self.ignore),
            "fail_on": self.fail_on,
            "severity": dict(self.severity),
            "thresholds": {k: dict(v) for k, v in self.thresholds.items()},
            "per_column_ignores": self.per_column_ignores,
            "baselines": self.baselines,
        }

    def override(
        self,
        *,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        fail_on: str | Severity | None = None,
        target: str | None = None,
        task: str | None = None,
        baselines: bool | None = None,
    ) -> Settings:
        """Command-line flags over the file. ``select`` replaces the file's selection (its
        ``select``, ``extend-select`` and ``ignore``); ``extend_select`` and ``ignore`` add."""
        from datavet.rules import select_rules

        changes: dict[str, Any] = {}
        if select:
            changes.update(select=_selectors(select), extend_select=(), ignore=())
        if extend_select:
            base = changes.get("extend_select", self.extend_select)
            changes["extend_select"] = (*base, *_selectors(extend_select))
        if ignore:
            base = changes.get("ignore", self.ignore)
            changes["ignore"] = (*base, *_selectors(ignore))
        if fail_on is not None:
            changes["fail_on"] = Severity.parse(fail_on)
        if target is not None:
            changes["target"] = target
        if task is not None:
            changes["task"] = task
        if baselines is not None:
            changes["baselines"] = baselines
        new = replace(self, **changes)
        select_rules(new.effective_select, list(new.ignore))  # unknown codes: UsageError now
        return new

    def to_dict(self) -> dict[str, Any]:
        """Plain data with the config file's key names (``fail-on``, ``per-column-ignores``)."""
        out: dict[str, Any] = {
            "select": list(self.select) if self.select is not None else ["ALL"],
            "extend-select": list(self.extend_select),
            "ignore": list(self.ignore),
            "fail-on": self.fail_on.label,
            "target": self.target,
            "task": self.task,
            "baselines": self.baselines,
            "exclude": list(self.exclude),
            "extend-exclude": list(self.extend_exclude),
            "severity": {k: v.label for k, v in self.severity.items()},
            "thresholds": {k: dict(v) for k, v in self.thresholds.items()},
            "per-column-ignores": {
                ig.column: {"rules": list(ig.rules), "reason": ig.reason}
                for ig in self.per_column_ignores
            },
            "datasets": {
                d.name: {
                    k: v
                    for k, v in (
                        ("train", d.train),
                        ("test", d.test),
                        ("target", d.target),
                        ("task", d.task),
                        ("group", d.group),
                        ("time", d.time),
                        ("inputs", d.inputs),
                        ("delimiter", d.delimiter),
                    )
                    if v is not None
                }
                for d in self.datasets.values()
            },
        }
        return out

    def to_toml(self) -> str:
        """The settings as a ``datavet.toml``: reading it back gives the same settings."""
        source = _display(self.config) if self.config else "defaults (no config file found)"
        head = [
            f"# datavet settings resolved from {source} and the command line",
            "# rules: " + ", ".join(r.code for r in self.rules()),
        ]
        return "\n".join(head) + "\n" + _toml(self.to_dict())


# --------------------------------------------------------------------------------------------
# finding and reading the file


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``datavet.toml``, or ``pyproject.toml`` with a ``[tool.datavet]`` table, in
    ``start`` (default: the working directory) or a directory above it."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        own = folder / "datavet.toml"
        if own.is_file():
            return own
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _has_tool_table(path: Path) -> bool:
    try:
        text = _read(path)
    except FileNotFoundError:
        return False
    # A cheap look first: most pyproject files on the way up are not ours. A file with our
    # table that does not parse is still ours, so load() reports its error.
    if "datavet" not in text:
        return False
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return re.search(r"^\s*\[\s*tool\s*\.\s*datavet\b", text, re.MULTILINE) is not None
    tool = data.get("tool", {})
    return isinstance(tool, Mapping) and "datavet" in tool


def load(path: str | os.PathLike | None = None, *, start=None) -> Settings:
    """Read the settings from ``path``, or from :func:`find_config` when it is None.

    Without a config file the defaults are returned. Raises :class:`ConfigError`.
    """
    if path is None:
        found = find_config(start)
        if found is None:
            return Settings()
        path = found
    path = Path(path)
    shown = _display(path)
    try:
        text = _read(path)
    except FileNotFoundError:
        raise ConfigError(f"{shown}: config file not found") from None
    data = _loads(text, shown)
    if path.name == "pyproject.toml" or set(data) == {"tool"}:  # a pyproject under another name
        prefix = ("tool", "datavet")
        tool = data.get("tool", {})
        table = tool.get("datavet") if isinstance(tool, Mapping) else None
        if table is None:
            raise ConfigError(f"{shown}: no [tool.datavet] table")
    else:
        prefix = ()
        table = data
    return parse(table, source=path, prefix=prefix, text=text)


MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 16  # [tool.datavet.per-column-ignores.col] with its rules list is 5 levels


def _read(path: Path) -> str:
    """A config file's text: UTF-8, bounded; a file that is not (UTF-16, binary, /dev/zero) is
    a ConfigError naming it, never skipped silently (its settings would be lost)."""
    from datavet._io import TooLarge, read_bounded

    shown = _display(path)
    try:
        raw = read_bounded(path, MAX_CONFIG_BYTES, text=False)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise ConfigError(f"{shown}: is a directory, not a config file") from None
    except TooLarge as exc:
        raise ConfigError(f"{shown}: {exc}: not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read config file ({exc.strerror or exc})") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and b"\0" in raw[:2]):
        raise ConfigError(f"{shown}: is UTF-16 text; TOML files must be UTF-8: save it as UTF-8")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise ConfigError(f"{shown}: holds a NUL byte at offset {nul}: a binary file, not TOML")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{shown}: is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "TOML files must be UTF-8"
        ) from None


def _loads(text: str, shown: str) -> dict:
    """Parsed TOML, with nesting bounded (a deeply nested array is an error, not a crash)."""
    from datavet._io import too_deep

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: invalid TOML: {exc}") from None
    except RecursionError:
        data = None
    if data is None or too_deep(data, MAX_DEPTH):
        raise ConfigError(f"{shown}: nests tables or arrays deeper than {MAX_DEPTH} levels")
    return data


def parse(
    table: Mapping[str, Any],
    *,
    source: Path | None = None,
    prefix: tuple[str, ...] = (),
    text: str | None = None,
) -> Settings:
    """Settings from an already-parsed table (the contents of ``[tool.datavet]``)."""
    p = _Parser(source, prefix)
    p.keys(table, _TOP_KEYS, ())
    select = p.selectors(table, "select") if "select" in table else None
    extend = p.selectors(table, "extend-select") if "extend-select" in table else ()
    ignore = p.selectors(table, "ignore") if "ignore" in table else ()
    settings = Settings(
        config=source,
        select=select,
        extend_select=extend,
        ignore=ignore,
        fail_on=p.severity(table, ("fail-on",)) if "fail-on" in table else Severity.ERROR,
        severity=MappingProxyType(p.severity_table(table.get("severity"))),
        thresholds=MappingProxyType(p.thresholds(table.get("thresholds"))),
        per_column_ignores=p.column_ignores(table.get("per-column-ignores")),
        datasets=MappingProxyType(p.datasets(table.get("datasets"), text)),
        target=p.string(table, ("target",)) if "target" in table else None,
        task=p.task(table, ("task",)) if "task" in table else "auto",
        baselines=p.boolean(table, ("baselines",)) if "baselines" in table else True,
        exclude=p.globs(table, "exclude") if "exclude" in table else (),
        extend_exclude=p.globs(table, "extend-exclude") if "extend-exclude" in table else (),
    )
    return settings


class _Parser:
    """Validation with errors that name the file and the dotted key."""

    def __init__(self, source: Path | None, prefix: tuple[str, ...], shown: str = "") -> None:
        self.shown = shown or (_display(source) if source is not None else "config")
        self.prefix = prefix
        self.base = source.parent if source is not None else Path.cwd()

    def error(self, keys: Sequence[str], problem: str) -> ConfigError:
        dotted = ".".join(_key(k) for k in (*self.prefix, *keys))
        return ConfigError(f"{self.shown}: {dotted}: {problem}")

    def keys(self, table: Any, allowed: Sequence[str], where: tuple[str, ...]) -> None:
        if not isinstance(table, Mapping):
            raise self.error(where, f"expected a table, got {_type(table)}")
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key.replace("_", "-"), allowed, n=1)
                maybe = f" (did you mean {close[0]!r}?)" if close else ""
                known = ", ".join(allowed)
                raise self.error((*where, key), f"unknown key {key!r}{maybe}; known keys: {known}")

    def string(self, table: Mapping, keys: tuple[str, ...]) -> str:
        value = table[keys[-1]]
        if not isinstance(value, str) or not value.strip():
            raise self.error(keys, f"expected a non-empty string, got {_shown(value)}")
        return value

    def boolean(self, table: Mapping, keys: tuple[str, ...]) -> bool:
        value = table[keys[-1]]
        if not isinstance(value, bool):
            raise self.error(keys, f"expected true or false, got {_shown(value)}")
        return value

    def task(self, table: Mapping, keys: tuple[str, ...]) -> str:
        value = self.string(table, keys)
        if value not in TASKS:
            raise self.error(keys, f"unknown task {value!r} (choose from {', '.join(TASKS)})")
        return value

    def severity(self, table: Mapping, keys: tuple[str, ...]) -> Severity:
        value = table[keys[-1]]
        try:
            if not isinstance(value, str):
                raise ValueError(f"expected a severity name, got {_shown(value)}")
            return Severity.parse(value)
        except ValueError as exc:
            raise self.error(keys, str(exc)) from None

    def selectors(self, table: Mapping, key: str) -> tuple[str, ...]:
        from datavet.rules import RULES, match_selector

        value = table[key]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise self.error((key,), f"expected a list of rule codes, got {_shown(value)}")
        out = _selectors(items)
        for sel in out:
            try:
                match_selector(sel, RULES)
            except UsageError:
                raise self.error(
                    (key,),
                    f"unknown rule selector {sel!r}: use a code (V001), a prefix (V, F00) or a "
                    "name (nan-values); `datavet rules` lists them",
                ) from None
        return out

    def globs(self, table: Mapping, key: str) -> tuple[str, ...]:
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error((key,), f"expected a list of path globs, got {_shown(value)}")
        for v in value:
            if not v.strip():
                raise self.error((key,), "expected a non-empty path glob, got ''")
            if "\0" in v:
                raise self.error((key,), f"a path glob holds a NUL character: {_shown(v)}")
            try:
                _path_glob(v)
            except re.error as exc:
                raise self.error((key,), f"bad glob {_shown(v)} ({exc})") from None
        return tuple(value)

    def rule(self, keys: tuple[str, ...]) -> str:
        from datavet.rules import BY_CODE, BY_NAME

        key = keys[-1]
        rule = BY_CODE.get(key.strip().upper()) or BY_NAME.get(key.strip().lower())
        if rule is None:
            close = difflib.get_close_matches(key.upper(), list(BY_CODE), n=1)
            maybe = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.error(keys, f"unknown rule {key!r}{maybe}; `datavet rules` lists them")
        return rule.code

    def severity_table(self, table: Any) -> dict[str, Severity]:
        if table is None:
            return {}
        if not isinstance(table, Mapping):
            raise self.error(("severity",), f"expected a table, got {_type(table)}")
        out = {}
        for key in table:
            code = self.rule(("severity", key))
            out[code] = self.severity(table, ("severity", key))
        return out

    def thresholds(self, table: Any) -> dict[str, Mapping[str, float]]:
        from datavet.rules import BY_CODE

        if table is None:
            return {}
        if not isinstance(table, Mapping):
            raise self.error(("thresholds",), f"expected a table, got {_type(table)}")
        out = {}
        for key, values in table.items():
            code = self.rule(("thresholds", key))
            known = BY_CODE[code].thresholds
            where = ("thresholds", key)
            if not isinstance(values, Mapping):
                raise self.error(where, f"expected a table of numbers, got {_shown(values)}")
            if not known:
                raise self.error(where, f"{code} has no thresholds")
            self.keys(values, tuple(known), where)
            tuned = {}
            for name, value in values.items():
                problem = threshold_problem(name, value)
                if problem:
                    raise self.error((*where, name), problem)
                tuned[name] = value
            out[code] = MappingProxyType(tuned)
        return out

    def column_ignores(self, table: Any) -> tuple[ColumnIgnore, ...]:
        if table is None:
            return ()
        if not isinstance(table, Mapping):
            raise self.error(("per-column-ignores",), f"expected a table, got {_type(table)}")
        out = []
        for column, entry in table.items():
            where = ("per-column-ignores", column)
            if not isinstance(entry, Mapping):
                raise self.error(
                    where,
                    f'expected {{ rules = ["F001"], reason = "why" }}, got {_shown(entry)}',
                )
            self.keys(entry, _IGNORE_KEYS, where)
            for required in _IGNORE_KEYS:
                if required not in entry:
                    raise self.error(
                        where, f"missing {required!r}: an ignore needs the rules and a reason"
                    )
            rules = self._ignore_rules(entry, where)
            reason = self.string(entry, (*where, "reason"))
            out.append(ColumnIgnore(column=column, rules=rules, reason=reason.strip()))
        return tuple(out)

    def _ignore_rules(self, entry: Mapping, where: tuple[str, ...]) -> tuple[str, ...]:
        from datavet.rules import RULES, match_selector

        value = entry["rules"]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise self.error((*where, "rules"), f"expected a list of rules, got {_shown(value)}")
        out = _selectors(items)
        if not out:
            raise self.error((*where, "rules"), "empty: name the rules to ignore")
        for sel in out:
            try:
                match_selector(sel, RULES)
            except UsageError:
                raise self.error(
                    (*where, "rules"),
                    f"unknown rule selector {sel!r}; `datavet rules` lists them",
                ) from None
        return out

    def datasets(self, table: Any, text: str | None) -> dict[str, Dataset]:
        if table is None:
            return {}
        if not isinstance(table, Mapping):
            raise self.error(("datasets",), f"expected a table, got {_type(table)}")
        out = {}
        for name, entry in table.items():
            where = ("datasets", name)
            if not isinstance(entry, Mapping):
                raise self.error(where, f'expected {{ train = "path" }}, got {_shown(entry)}')
            self.keys(entry, _DATASET_KEYS, where)
            if "train" not in entry:
                raise self.error(where, "missing 'train': the path of the training split")
            paths = {}
            for split in ("train", "test"):
                if split in entry:
                    paths[split] = self._path(self.string(entry, (*where, split)))
            out[name] = Dataset(
                name=name,
                train=paths["train"],
                test=paths.get("test"),
                target=self.string(entry, (*where, "target")) if "target" in entry else None,
                task=self.task(entry, (*where, "task")) if "task" in entry else None,
                **{
                    key: self.string(entry, (*where, key))
                    for key in ("group", "time", "inputs", "delimiter")
                    if key in entry
                },
                lines=MappingProxyType(_dataset_lines(text, (*self.prefix, *where))),
            )
        return out

    def _path(self, value: str) -> str:
        """A path in the config is relative to the config file's folder."""
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = self.base / path
        return _display(path)


# The range of every rule threshold, by its name: (low, high, bounds included, whole number).
# A threshold outside it would make a rule fire on everything or on nothing (max_ratio = -5
# calls a 1:1 split imbalanced). A test checks that every rule's thresholds are listed here.
_UNIT = (0.0, 1.0, "[]", False)
_COUNT = (1.0, math.inf, "[]", True)
_ABOVE_ONE = (1.0, math.inf, "[]", False)
_POSITIVE = (0.0, math.inf, "(]", False)
_NOT_NEGATIVE = (0.0, math.inf, "[]", False)
THRESHOLD_RANGES: dict[str, tuple[float, float, str, bool]] = {
    "alpha": (0.0, 1.0, "()", False),  # a p-value cut-off: 0 < alpha < 1
    "min_count": _COUNT,
    "min_rows": _COUNT,
    "min_groups": _COUNT,
    "groups": _COUNT,
    "max_classes": _COUNT,
    "digits": _COUNT,
    "min_numeric": _UNIT,
    "min_fraction": _UNIT,
    "max_unique_fraction": _UNIT,
    "min_shared": _UNIT,
    "max_auto_older": _UNIT,
    "min_score": _UNIT,
    "min_order": _UNIT,
    "min_auc": _UNIT,
    "min_tvd": _UNIT,
    "min_v": _UNIT,
    "min_gain": _UNIT,
    "min_rho": _UNIT,
    "max_ratio": _ABOVE_ONE,  # majority:minority, 1 = balanced
    "min_ratio": _ABOVE_ONE,
    "outlier_ratio": _ABOVE_ONE,
    "min_effect": _NOT_NEGATIVE,
    "min_d": _NOT_NEGATIVE,
    "max_abs_mean": _POSITIVE,
    "max_std": _POSITIVE,
    "min_std": _NOT_NEGATIVE,
    "near_constant": _UNIT,
    "min_agree": _UNIT,
    "min_columns": _COUNT,
    "confidence": (0.0, 1.0, "()", False),
}


def threshold_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the threshold ``name`` (None when it can): a finite number in
    the threshold's range, a whole number for counts."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"expected a number, got {_shown(value)}"
    low, high, bounds, whole = THRESHOLD_RANGES.get(name, (-math.inf, math.inf, "[]", False))
    if whole and float(value) != int(value):
        return f"expected a whole number, got {_shown(value)}"
    below = value < low or (value == low and bounds[0] == "(")
    above = value > high or (value == high and bounds[1] == ")")
    if below or above:
        return f"{_shown(value)} is out of range {bounds[0]}{low:g}, {high:g}{bounds[1]}"
    return None


def _selectors(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(p.strip() for v in values for p in str(v).split(",") if p.strip())


# --------------------------------------------------------------------------------------------
# per-column ignores


def column_ignores(value: Any) -> tuple[ColumnIgnore, ...]:
    """Normalise ``audit(per_column_ignores=...)``: ColumnIgnore objects, or a mapping as in the
    config file, ``{"id": {"rules": ["S002"], "reason": "..."}}``. Raises UsageError."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return _Parser(None, (), shown="audit(per_column_ignores=...)").column_ignores(value)
    items = tuple(value)
    for item in items:
        if not isinstance(item, ColumnIgnore):
            raise UsageError(
                "per_column_ignores: expected a mapping {column: {rules, reason}} or "
                f"ColumnIgnore objects, got {type(item).__name__}"
            )
        if not item.reason or not item.reason.strip():
            raise UsageError(f"per_column_ignores: {item.column!r} needs a reason")
        item.codes  # noqa: B018 - unknown rule selectors raise UsageError here
    return items


def apply_column_ignores(report, ignores: Any):
    """A copy of ``report`` without the findings that ``ignores`` cover, which are listed in
    ``report.ignored`` with their reason; each rule's outcome counts only what is left.

    A finding is ignored when it names at least one column and every column it names is
    covered by an ignore for its rule (a finding about ``x`` and ``y`` stays when only ``x``
    is ignored: it still says something about ``y``).
    """
    from datavet.report import Ignored

    ignores = column_ignores(ignores)
    if not ignores:
        return report
    codes = [(ig, ig.codes) for ig in ignores]
    kept: list[Finding] = []
    ignored = list(getattr(report, "ignored", []))
    for f in report.findings:
        reasons = _ignore_reasons(f, codes)
        if reasons is None:
            kept.append(f)
        else:
            ignored.append(Ignored(finding=f, reason="; ".join(reasons)))
    if len(kept) == len(report.findings):
        return report
    per_rule: dict[str, int] = {}
    for f in kept:
        per_rule[f.code] = per_rule.get(f.code, 0) + 1
    outcomes = [_recount(o, per_rule.get(o.code, 0)) for o in report.outcomes]
    return replace(report, findings=kept, outcomes=outcomes, ignored=ignored)


def _ignore_reasons(f: Finding, codes) -> list[str] | None:
    if not f.columns:
        return None
    reasons: list[str] = []
    for column in f.columns:
        hits = [ig for ig, c in codes if f.code in c and ig.matches_column(column)]
        if not hits:
            return None
        for ig in hits:
            if ig.reason not in reasons:
                reasons.append(ig.reason)
    return reasons


def _recount(o: Outcome, n: int) -> Outcome:
    if o.status not in (Status.PASSED, Status.FAILED):
        return o
    return replace(o, status=Status.FAILED if n else Status.PASSED, n_findings=n)


# --------------------------------------------------------------------------------------------
# the command line's view: which audits to run


@dataclass(frozen=True)
class Job:
    """One audit the command line runs: a named dataset from the config, or paths given."""

    name: str | None
    train: str
    test: str | None
    target: str | None
    task: str
    locations: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    group: str | None = None
    time: str | None = None
    inputs: str | None = None
    delimiter: str | None = None


def from_args(args) -> Settings:
    """Settings for a parsed command line: the config file (``--config``, or found; none with
    ``--isolated``) with the flags over it."""
    if getattr(args, "isolated", False):
        settings = Settings()
    else:
        settings = load(getattr(args, "config", None))
    return settings.override(
        select=getattr(args, "select", None),
        extend_select=getattr(args, "extend_select", None),
        ignore=getattr(args, "ignore", None),
        fail_on=getattr(args, "fail_on", None),
        target=None,  # --target applies to the audited data, not to the file's default
        task=None,
        baselines=None if getattr(args, "baselines", True) else False,
    )


def plan(settings: Settings, args) -> list[Job]:
    """The audits for ``datavet audit``: the given TRAIN/TEST, or the config's datasets
    (all of them, or those named with ``--dataset``)."""
    train = getattr(args, "train", None)
    wanted = getattr(args, "dataset", None) or []
    target = getattr(args, "target", None)
    task = getattr(args, "task", None)
    if train is not None:
        if wanted:
            raise UsageError("give either TRAIN or --dataset, not both")
        test = getattr(args, "test", None)
        named = _dataset_for(settings, train, test)
        return [_job(settings, named, train, test, target, task)]
    if getattr(args, "test", None) is not None:
        raise UsageError("--test needs TRAIN")
    if not settings.datasets:
        where = (
            f"{_display(settings.config)} has no datasets"
            if settings.config
            else "no config file found"
        )
        raise UsageError(
            f"nothing to audit: give TRAIN, or name datasets in [tool.datavet.datasets] ({where})"
        )
    unknown = [n for n in wanted if n not in settings.datasets]
    if unknown:
        known = ", ".join(settings.datasets)
        raise UsageError(f"unknown dataset {unknown[0]!r}; the config names: {known}")
    names = list(dict.fromkeys(wanted)) or list(settings.datasets)
    return [_job(settings, settings.datasets[n], None, None, target, task) for n in names]


def plan_files(settings: Settings, files: Sequence[str], args, note=None) -> list[Job]:
    """The audits for ``datavet check FILE...`` (the pre-commit hook): a file that a config
    dataset names is audited as that whole dataset (so train/test overlap is still checked),
    any other file alone. A file that ``exclude`` / ``extend-exclude`` matches is skipped,
    with a line to ``note`` (a callable taking the text) saying which pattern matched."""
    jobs: list[Job] = []
    seen: set[str] = set()
    for f in files:
        pattern = excluded(settings, f)
        if pattern is not None:
            if note is not None:
                where = _display(settings.config) if settings.config else "the settings"
                note(f"skipped {f}: excluded by {pattern!r} ({where})")
            continue
        named = _dataset_for(settings, f, None, either=True)
        key = f"dataset:{named.name}" if named else f"file:{_norm(f)}"
        if key in seen:
            continue
        seen.add(key)
        target, task = getattr(args, "target", None), getattr(args, "task", None)
        if named is not None:
            jobs.append(_job(settings, named, None, None, target, task))
        else:
            jobs.append(_job(settings, None, f, None, target, task))
    return jobs


def _path_glob(pattern: str) -> re.Pattern:
    """A path glob as ruff reads one: ``*`` and ``?`` within a name, ``[...]`` a set,
    ``**`` any number of folders."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def excluded(settings: Settings, path: str | os.PathLike) -> str | None:
    """The ``exclude`` / ``extend-exclude`` pattern that matches ``path``, or None.

    As in ruff: patterns are relative to the config file's folder (the working directory
    without one). A pattern without ``/`` (``lookup_*.csv``, ``fixtures``) matches a file or
    folder of that name anywhere; one with ``/`` (``data/lookup/*.csv``, ``tests/**``) matches
    the path from the config's folder. A folder that matches excludes everything in it.
    """
    patterns = (*settings.exclude, *settings.extend_exclude)
    if not patterns:
        return None
    base = Path(os.path.abspath(settings.config.parent if settings.config else Path.cwd()))
    absolute = Path(os.path.abspath(os.fspath(path)))
    try:
        parts = absolute.relative_to(base).parts
    except ValueError:
        parts = ()
    names = parts or absolute.parts[1:]  # outside the folder: only names can match
    # the path and each folder above it, up to the config's folder
    candidates = [
        (names[i - 1], "/".join(parts[:i]) if parts else None) for i in range(len(names), 0, -1)
    ]
    for pattern in patterns:
        anchored = "/" in pattern.strip("/") or pattern.startswith("/")
        regex = _path_glob(pattern.strip("/") if anchored else pattern.rstrip("/"))
        for name, relative in candidates:
            subject = relative if anchored else name
            if subject is not None and regex.fullmatch(subject):
                return pattern
    return None


def _job(settings, named: Dataset | None, train, test, target, task) -> Job:
    if named is not None and train is None:
        train, test = named.train, named.test
    target = target or (named.target if named else None) or settings.target
    task = task or (named.task if named else None) or settings.task
    locations: dict[str, tuple[str, int]] = {}
    if named is not None and settings.config is not None:
        uri = _repo_uri(settings.config)
        try:
            text = settings.config.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            text = []

        def at(line: int) -> tuple[str, int, int | None]:
            end = len(text[line - 1]) + 1 if 0 < line <= len(text) else None
            return (uri, line, end)

        table = named.lines.get("table", 1)
        locations["dataset"] = at(table)
        for split in ("train", "test"):
            locations[split] = at(named.lines.get(split, table))
    else:
        for split, path in (("train", train), ("test", test)):
            if path is not None and Path(path).is_file():
                locations[split] = (_repo_uri(Path(path)), 1)
        if "train" in locations:
            locations["dataset"] = locations["train"]
    return Job(
        name=named.name if named else None,
        train=str(train),
        test=str(test) if test is not None else None,
        target=target,
        task=task,
        locations=MappingProxyType(locations),
        group=named.group if named else None,
        time=named.time if named else None,
        inputs=named.inputs if named else None,
        delimiter=named.delimiter if named else None,
    )


def per_dataset_path(path: str | os.PathLike, job: Job) -> Path:
    """``reports/audit.html`` -> ``reports/audit-NAME.html``: one file per audited dataset."""
    p = Path(path)
    label = job.name or Path(job.train).stem
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("._") or "dataset"
    return p.with_name(f"{p.stem}-{safe}{p.suffix}")


def _norm(path) -> str:
    return os.path.normcase(os.path.abspath(str(path)))


def _dataset_for(settings: Settings, train, test, *, either: bool = False) -> Dataset | None:
    """The config dataset whose paths these are (to point SARIF at its config line)."""
    t = _norm(train)
    for d in settings.datasets.values():
        paths = {_norm(d.train), _norm(d.test) if d.test else None}
        if either and t in paths:
            return d
        same_test = (test is None and d.test is None) or (
            test is not None and d.test is not None and _norm(test) == _norm(d.test)
        )
        if _norm(d.train) == t and same_test:
            return d
    return None


# --------------------------------------------------------------------------------------------
# small helpers: display paths, repo-relative URIs, lines in the config, TOML writing


def _display(path: str | os.PathLike) -> str:
    """A path relative to the working directory when it is below it, else absolute."""
    p = Path(path)
    try:
        absolute = p.resolve() if p.is_absolute() else (Path.cwd() / p).resolve()
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(p)


def _repo_root() -> Path | None:
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        return Path(workspace).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _repo_uri(path: Path) -> str:
    """How GitHub code scanning names a file: relative to the repository root, with /."""
    absolute = Path(path).resolve()
    for root in (_repo_root(), Path.cwd().resolve()):
        if root is None:
            continue
        try:
            return absolute.relative_to(root).as_posix()
        except ValueError:
            continue
    return absolute.as_uri()


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*(\.|$)')


def _dotted(text: str) -> tuple[str, ...] | None:
    parts, pos = [], 0
    while pos < len(text):
        m = _KEY_TOKEN.match(text, pos)
        if not m:
            return None
        raw = m.group(1)
        value = json.loads(f'"{raw}"') if raw is not None else (m.group(2) or m.group(3))
        parts.append(value)
        pos = m.end()
        if not m.group(4):
            break
    return tuple(parts)


def _dataset_lines(text: str | None, path: tuple[str, ...]) -> dict[str, int]:
    """Line numbers (1-based) where the config defines a dataset and its ``train``/``test``
    keys; tomllib keeps no positions, so this reads the text. Best effort: the table's line, or
    the parent table's, when a key is written in a form it does not follow."""
    if not text:
        return {}
    lines = text.splitlines()
    out: dict[str, int] = {}
    parent, name = path[:-1], path[-1]
    current: tuple[str, ...] | None = None
    for i, line in enumerate(lines, 1):
        m = _HEADER.match(line)
        if m and not line.lstrip().startswith("[["):
            current = _dotted(m.group(1))
            if current == path:
                out["table"] = i
            elif current == parent and "table" not in out:
                out.setdefault("parent", i)
            continue
        if current == path:
            key = re.match(r"\s*(train|test)\s*=", line)
            if key:
                out.setdefault(key.group(1), i)
        elif current == parent:
            key = re.match(r'\s*(?:"([^"]+)"|\'([^\']+)\'|([A-Za-z0-9_-]+))\s*=', line)
            if key and (key.group(1) or key.group(2) or key.group(3)) == name:
                out.setdefault("table", i)
    if "table" not in out and "parent" in out:
        out["table"] = out["parent"]
    out.pop("parent", None)
    return out


def _type(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        # JSON strings are TOML basic strings once DEL is escaped too (TOML forbids it raw).
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _toml(data: dict[str, Any]) -> str:
    plain = [(k, v) for k, v in data.items() if not isinstance(v, dict) and v is not None]
    tables = [(k, v) for k, v in data.items() if isinstance(v, dict)]
    out = [f"{_key(k)} = {_toml_value(v)}" for k, v in plain]
    for name, table in tables:
        out.append("")
        out.append(f"[{_key(name)}]")
        for k, v in table.items():
            out.append(f"{_key(k)} = {_toml_value(v)}")
    return "\n".join(out) + "\n"
