"""The arguments of ``datavet.audit``, checked once: a bad one is a UsageError naming the
argument and what it accepts, never a ValueError or TypeError from deep inside."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from datavet.config import (
    audit_rule,
    column_ignores,
    threshold_name_problem,
    threshold_problem,
)
from datavet.engines import ENGINES
from datavet.errors import UsageError
from datavet.findings import Severity
from datavet.rules import lookup, select_rules
from datavet.tasks import TASKS

_EXAMPLES = {"severity": '{"S002": "error"}', "thresholds": '{"L001": {"max_ratio": 5}}'}


@dataclass
class AuditArgs:
    """``audit``'s keyword arguments, checked and normalised."""

    fail_level: Severity
    rules: list  # the selected rule classes, in code order
    auditors: list  # their instances, with the severity and threshold overrides
    ignores: tuple  # ColumnIgnore
    target: str | int | None
    group: str | int | None
    time: str | int | None
    engine: str
    batch_rows: int
    sample_rows: int
    workers: int | None
    max_samples: int | None
    task: str
    baselines: bool
    progress: bool | None
    scheduler: str | None
    # what opening the inputs needs, passed on as given (checked by the readers)
    inputs: str | int | None
    channel_axis: int | str | None
    encoding: str | None
    delimiter: str | None
    max_memory: int | str | None


def check_arguments(
    *,
    train=None,
    test=None,
    target=None,
    inputs=None,
    channel_axis=None,
    group=None,
    time=None,
    task="auto",
    select=None,
    ignore=None,
    fail_on="error",
    severity=None,
    thresholds=None,
    per_column_ignores=None,
    baselines=True,
    engine=None,
    scheduler=None,
    workers=None,
    progress=None,
    batch_rows=None,
    sample_rows=None,
    encoding=None,
    delimiter=None,
    max_memory=None,
    max_samples=None,
) -> AuditArgs:
    """Check every argument of ``audit`` (the inputs themselves are checked when opened)."""
    try:
        fail_level = Severity.parse(fail_on)
    except UsageError as exc:
        raise UsageError(f"fail_on: {exc}") from None
    rules = select_rules(_selector_arg(select, "select"), _selector_arg(ignore, "ignore"))
    # the config file's checks: audit rules only (M001 is `datavet probe`'s), and every
    # threshold name known, whether or not its rule is selected
    overrides = {}
    for k, v in rule_map(severity, "severity", _audit_rule("severity")).items():
        try:
            overrides[audit_rule(k).code] = Severity.parse(v)
        except UsageError as exc:
            raise UsageError(f"severity[{k!r}]: {exc}") from None
    tuned = {
        audit_rule(k).code: _threshold_values(k, v)
        for k, v in rule_map(thresholds, "thresholds", _audit_rule("thresholds")).items()
    }
    if task not in TASKS:
        raise UsageError(f"unknown task {task!r:.80} (choose from {', '.join(TASKS)})")
    if engine is None:
        from datavet.sources.frames import is_dask_frame

        engine = "dask" if is_dask_frame(train) or is_dask_frame(test) else "local"
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r:.80} (choose local, dask or spark)")
    if scheduler is not None and not isinstance(scheduler, str):
        raise UsageError(
            f"scheduler must be an address such as 'tcp://host:8786', not {scheduler!r:.80}"
        )
    if encoding is not None and not isinstance(encoding, str):
        raise UsageError(f"encoding must be a codec name such as 'utf-8', not {encoding!r:.80}")
    _flag(baselines, "baselines")
    _flag(progress, "progress")
    _channel_axis_arg(channel_axis)
    if inputs is not None:
        _column_arg(inputs, "inputs")
    _ignores_arg(per_column_ignores)
    auditors = [r(severity=overrides.get(r.code), thresholds=tuned.get(r.code)) for r in rules]
    return AuditArgs(
        fail_level=fail_level,
        rules=rules,
        auditors=auditors,
        ignores=column_ignores(per_column_ignores),
        target=_column_arg(target, "target"),
        group=_column_arg(group, "group"),
        time=_column_arg(time, "time"),
        engine=engine,
        batch_rows=_count(batch_rows, "batch_rows"),
        sample_rows=_count(sample_rows, "sample_rows"),
        workers=_count_arg(workers, "workers", optional=True),
        max_samples=_count_arg(max_samples, "max_samples", optional=True),
        task=task,
        baselines=bool(baselines),
        progress=None if progress is None else bool(progress),
        scheduler=scheduler,
        inputs=inputs,
        channel_axis=channel_axis,
        encoding=encoding,
        delimiter=delimiter,
        max_memory=max_memory,
    )


def _column_arg(value, what: str):
    """A column argument: a name (str), an integer (a DataFrame's integer column name, a
    tensor tuple position) or a tuple (a MultiIndex column's name); anything else is a
    UsageError."""
    if value == "":
        raise UsageError(f"{what} is an empty column name: name a column, or leave {what} out")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if (
        isinstance(value, tuple)
        and len(value) > 1
        and all(isinstance(v, (str, int)) for v in value)
    ):
        # a pandas MultiIndex column, which datavet names as pandas prints it: "('t', 'y')"
        return str(value)
    kind = type(value).__name__
    one = isinstance(value, (list, tuple)) and what == "target"
    hint = "; datavet audits one target column" if one else ""
    raise UsageError(f"{what} must be one column name (a str), not a {kind} {value!r:.80}{hint}")


def _count(value, what: str) -> int:
    count = _count_arg(value, what)
    assert count is not None
    return count


def _count_arg(value, what: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        if value >= 1:
            return int(value)
    raise UsageError(f"{what} must be a whole number of at least 1, not {value!r:.80}")


def _flag(value, what: str) -> None:
    """True or False (None and 0/1 pass too: they always have)."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return
    if type(value) is int and value in (0, 1):
        return
    raise UsageError(f"{what} must be True or False, not {value!r:.80}")


def _channel_axis_arg(value) -> None:
    """None, an axis number, or "none"/"auto" (the layout checks the number against the shape)."""
    if value is None:
        return
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, str) and value.strip().lower() in ("none", "auto"):
        return
    if isinstance(value, str):
        try:
            int(value)
            return
        except ValueError:
            pass
    raise UsageError(f"channel_axis must be an axis number or 'none', not {value!r:.80}")


def _ignores_arg(value) -> None:
    if value is None or isinstance(value, Mapping):
        return
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise UsageError(
            "per_column_ignores must be a mapping {column: {rules, reason}} or a list of "
            f"ColumnIgnore objects, not a {type(value).__name__}"
        )


def rule_map(value, what: str, find=lookup) -> dict:
    """``value`` (a ``severity`` or ``thresholds`` mapping of the Python API) checked: a mapping
    keyed by rule codes or names (``find`` looks them up), no rule under two keys."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(
            f"{what} must be a mapping of rule code to setting, such as "
            f"{_EXAMPLES[what]}, not a {type(value).__name__}"
        )
    named: dict[str, str] = {}
    for key in value:
        if not isinstance(key, str):
            raise UsageError(f"{what}: rule keys are codes or names (str), not {key!r:.80}")
        code = find(key).code
        if code in named:  # which setting won would depend on the dict's order
            raise UsageError(
                f"{what}: {named[code]!r} and {key!r} both name {code}: give its setting under "
                "one key"
            )
        named[code] = key
    return dict(value)


def _audit_rule(what: str):
    """:func:`audit_rule` with the argument named in its error."""

    def find(key):
        try:
            return audit_rule(key)
        except UsageError as exc:
            raise UsageError(f"{what}[{key!r:.80}]: {exc}") from None

    return find


def _threshold_values(code: str, values) -> dict:
    if not isinstance(values, Mapping):
        raise UsageError(
            f"thresholds[{code!r}] must be a mapping of threshold name to number, such as "
            f"{{'max_ratio': 5}}, not {values!r:.80}"
        )
    rule = audit_rule(code)
    out = {}
    for name, number in values.items():
        unknown = threshold_name_problem(name, rule)
        if unknown is not None:
            raise UsageError(f"thresholds[{code!r}]: {unknown}")
        ok = isinstance(number, (int, float, np.integer, np.floating)) and not isinstance(
            number, (bool, np.bool_)
        )
        if not ok or not math.isfinite(number) or number < 0:
            raise UsageError(
                f"threshold {code}.{name} must be a finite number of at least 0, not {number!r:.80}"
            )
        problem = threshold_problem(name, float(number), rule)
        if problem is not None:  # the config file's ranges: one rule for both ways in
            raise UsageError(f"threshold {code}.{name}: {problem}")
        out[name] = number
    return out


def _selector_arg(value, what: str):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return value
    raise UsageError(
        f"{what} must be a rule code, prefix or name (str) or a list of them, not {value!r:.80}"
    )
