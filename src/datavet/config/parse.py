"""Finding, reading and validating ``[tool.datavet]`` (or a ``datavet.toml``): errors name the
file and the dotted key (exit 2); a typo must never silently disable a check."""

from __future__ import annotations

import difflib
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from datavet.config.exclude import _path_glob
from datavet.config.settings import (
    TASKS,
    ConfigError,
    Dataset,
    Settings,
    _selectors,
)
from datavet.config.text import dataset_lines, display, short_repr, toml_key, type_name
from datavet.config.thresholds import audit_rule, threshold_name_problem, threshold_problem
from datavet.errors import UsageError
from datavet.findings import Severity
from datavet.ignores import ColumnIgnore

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

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
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # as datavet.sources.fs reads a location


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``datavet.toml``, or ``pyproject.toml`` with a ``[tool.datavet]`` table, in
    ``start`` (default: the working directory) or a directory above it."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in ("datavet.toml", "pyproject.toml"):
            candidate = folder / name
            if not os.path.lexists(candidate):
                continue
            if not candidate.is_file():
                # a broken link, a folder, a FIFO: the error load() gives it, as with --config,
                # never passed over for a parent's settings
                return candidate
            if name == "datavet.toml" or _has_tool_table(candidate):
                return candidate
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

    Without a config file the defaults are returned. Raises :class:`ConfigError`, also for a
    found ``datavet.toml`` without a key that hides a ``[tool.datavet]`` table beside it.
    """
    found = path is None
    if found:
        path = find_config(start)
        if path is None:
            return Settings()
    path = Path(path)
    shown = display(path)
    try:
        text = _read(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise ConfigError(
                f"{shown}: config file not found (a broken symbolic link to {os.readlink(path)})"
            ) from None
        raise ConfigError(f"{shown}: config file not found") from None
    data = _loads(text, shown)
    if found and not data:
        _check_shadow(path)
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


def _check_shadow(path: Path) -> None:
    """A found config without a key (``datavet config > datavet.toml`` leaves one: the shell
    creates the file first) must not silently replace the ``[tool.datavet]`` table of the
    ``pyproject.toml`` beside it: the project's selection and gate would be lost."""
    pyproject = path.with_name("pyproject.toml")
    if path.name == "datavet.toml" and pyproject.is_file() and _has_tool_table(pyproject):
        shown = display(path)
        raise ConfigError(
            f"{shown}: holds no settings but hides [tool.datavet] in {display(pyproject)} "
            f"(datavet.toml wins in one folder): delete {shown}, or move the settings into it"
        )


MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 16  # [tool.datavet.per-column-ignores.col] with its rules list is 5 levels


def _read(path: Path) -> str:
    """A config file's text: UTF-8, bounded; a file that is not (UTF-16, binary, /dev/zero) is
    a ConfigError naming it, never skipped silently (its settings would be lost)."""
    from datavet._io import TooLarge, read_bounded

    shown = display(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read config file ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise ConfigError(f"{shown}: is a directory, not a config file")
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        # reading a pipe waits for a writer that may never come: a config must be a file
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket"
        raise ConfigError(f"{shown}: is {kind}; a config file must be a regular file")
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
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{shown}: is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "TOML files must be UTF-8"
        ) from None
    # one UTF-8 byte-order mark, as editors on Windows write it, is not part of the TOML
    return text[1:] if text.startswith("\ufeff") else text


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
        self.shown = shown or (display(source) if source is not None else "config")
        self.prefix = prefix
        self.base = source.parent if source is not None else Path.cwd()

    def error(self, keys: Sequence[str], problem: str) -> ConfigError:
        dotted = ".".join(toml_key(k) for k in (*self.prefix, *keys))
        return ConfigError(f"{self.shown}: {dotted}: {problem}")

    def keys(self, table: Any, allowed: Sequence[str], where: tuple[str, ...]) -> None:
        if not isinstance(table, Mapping):
            raise self.error(where, f"expected a table, got {type_name(table)}")
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key.replace("_", "-"), allowed, n=1)
                maybe = f" (did you mean {close[0]!r}?)" if close else ""
                known = ", ".join(allowed)
                raise self.error((*where, key), f"unknown key {key!r}{maybe}; known keys: {known}")

    def string(self, table: Mapping, keys: tuple[str, ...]) -> str:
        value = table[keys[-1]]
        if not isinstance(value, str) or not value.strip():
            raise self.error(keys, f"expected a non-empty string, got {short_repr(value)}")
        return value

    def boolean(self, table: Mapping, keys: tuple[str, ...]) -> bool:
        value = table[keys[-1]]
        if not isinstance(value, bool):
            raise self.error(keys, f"expected true or false, got {short_repr(value)}")
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
                raise ValueError(f"expected a severity name, got {short_repr(value)}")
            return Severity.parse(value)
        except ValueError as exc:
            raise self.error(keys, str(exc)) from None

    def selectors(self, table: Mapping, key: str) -> tuple[str, ...]:
        from datavet.rules import RULES, match_selector

        value = table[key]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise self.error((key,), f"expected a list of rule codes, got {short_repr(value)}")
        out = _selectors(items)
        for sel in out:
            try:
                match_selector(sel, RULES)
            except UsageError as exc:
                raise self.error((key,), str(exc)) from None
        return out

    def globs(self, table: Mapping, key: str) -> tuple[str, ...]:
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error((key,), f"expected a list of path globs, got {short_repr(value)}")
        for v in value:
            if not v.strip():
                raise self.error((key,), "expected a non-empty path glob, got ''")
            if "\0" in v:
                raise self.error((key,), f"a path glob holds a NUL character: {short_repr(v)}")
            try:
                _path_glob(v)
            except re.error as exc:
                raise self.error((key,), f"bad glob {short_repr(v)} ({exc})") from None
        return tuple(value)

    def rule(self, keys: tuple[str, ...]) -> str:
        try:
            return audit_rule(keys[-1]).code
        except UsageError as exc:
            raise self.error(keys, str(exc)) from None

    def rule_keys(self, table: Mapping, where: str) -> dict[str, str]:
        """``{key: code}`` for a table keyed by rule. One rule under two spellings (``S001`` and
        ``train-test-overlap``) is an error: which one won would depend on the order of the
        lines."""
        codes: dict[str, str] = {}
        for key in table:
            code = self.rule((where, key))
            first = next((k for k, c in codes.items() if c == code), None)
            if first is not None:
                raise self.error(
                    (where,),
                    f"{first!r} and {key!r} both name {code}: give its settings under one key",
                )
            codes[key] = code
        return codes

    def severity_table(self, table: Any) -> dict[str, Severity]:
        if table is None:
            return {}
        if not isinstance(table, Mapping):
            raise self.error(("severity",), f"expected a table, got {type_name(table)}")
        return {
            code: self.severity(table, ("severity", key))
            for key, code in self.rule_keys(table, "severity").items()
        }

    def thresholds(self, table: Any) -> dict[str, Mapping[str, float]]:
        from datavet.rules import BY_CODE

        if table is None:
            return {}
        if not isinstance(table, Mapping):
            raise self.error(("thresholds",), f"expected a table, got {type_name(table)}")
        out = {}
        for key, code in self.rule_keys(table, "thresholds").items():
            values = table[key]
            where = ("thresholds", key)
            if not isinstance(values, Mapping):
                raise self.error(where, f"expected a table of numbers, got {short_repr(values)}")
            if not BY_CODE[code].thresholds:
                raise self.error(where, f"{code} has no thresholds")
            tuned = {}
            for name, value in values.items():
                problem = threshold_name_problem(name, BY_CODE[code]) or threshold_problem(
                    name, value, BY_CODE[code]
                )
                if problem:
                    raise self.error((*where, name), problem)
                tuned[name] = value
            out[code] = MappingProxyType(tuned)
        return out

    def column_ignores(self, table: Any) -> tuple[ColumnIgnore, ...]:
        if table is None:
            return ()
        if not isinstance(table, Mapping):
            raise self.error(("per-column-ignores",), f"expected a table, got {type_name(table)}")
        out = []
        for column, entry in table.items():
            where = ("per-column-ignores", column)
            if not isinstance(entry, Mapping):
                raise self.error(
                    where,
                    f'expected {{ rules = ["F001"], reason = "why" }}, got {short_repr(entry)}',
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
            got = short_repr(value)
            raise self.error((*where, "rules"), f"expected a list of rules, got {got}")
        out = _selectors(items)
        if not out:
            raise self.error((*where, "rules"), "empty: name the rules to ignore")
        for sel in out:
            try:
                match_selector(sel, RULES)
            except UsageError as exc:
                raise self.error((*where, "rules"), str(exc)) from None
        return out

    def datasets(self, table: Any, text: str | None) -> dict[str, Dataset]:
        if table is None:
            return {}
        if not isinstance(table, Mapping):
            raise self.error(("datasets",), f"expected a table, got {type_name(table)}")
        out = {}
        for name, entry in table.items():
            where = ("datasets", name)
            if not isinstance(entry, Mapping):
                raise self.error(where, f'expected {{ train = "path" }}, got {short_repr(entry)}')
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
                    for key in ("group", "time", "inputs")
                    if key in entry
                },
                delimiter=self.delimiter(entry, (*where, "delimiter"))
                if "delimiter" in entry
                else None,
                lines=MappingProxyType(dataset_lines(text, (*self.prefix, *where))),
            )
        return out

    def delimiter(self, table: Mapping, keys: tuple[str, ...]) -> str:
        """A CSV field separator as the command line takes it: one ASCII character (a tab
        ``"\\t"`` and a space ``" "`` too) or a name (``tab``)."""
        from datavet.sources.csv import check_delimiter

        value = table[keys[-1]]
        if not isinstance(value, str) or not value:
            got = short_repr(value)
            raise self.error(keys, f"expected a delimiter such as ',' or 'tab', got {got}")
        try:
            check_delimiter(value)
        except UsageError as exc:
            raise self.error(keys, str(exc)) from None
        return value

    def _path(self, value: str) -> str:
        """A path in the config is relative to the config file's folder; a URL (``s3://``,
        ``gs://``, ``file://``) is kept as written."""
        if _URL.match(value):
            return value
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = self.base / path
        return display(path)


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
