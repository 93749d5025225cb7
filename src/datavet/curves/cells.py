"""One cell of a training log: its state (never written, ambiguous, a value) and its number;
records flattened into columns."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from datavet.errors import InputError

_MISSING_TOKENS = {"", "na", "n/a", "none", "null", "nil", "-"}
_NONFINITE_TOKENS = {
    "nan": math.nan,
    "-nan": math.nan,
    "+nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
}
DENSE = 0.9  # a column with 5+ values on >= 90% of its rows is "dense": its empty cells may be NaN

# Cell states: never written (a missing key), ambiguous (empty cell, null, DataFrame NaN), a value.
_ABSENT, _EMPTY, _VALUE = 0, 1, 2


# --------------------------------------------------------------------------------------------
# cells


def _cell(value: Any) -> tuple[int, float]:
    """(state, float) of one cell; strings that are not numbers give (_VALUE, None)-like NaN
    with state -1 so the caller can tell a text column."""
    if value is None:
        return _EMPTY, math.nan
    if isinstance(value, bool):
        return _VALUE, float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        v = float(value)
        return _VALUE, v
    if hasattr(value, "item") and callable(value.item):  # a 0-d tensor / numpy scalar
        try:
            return _cell(value.item())
        except (TypeError, ValueError):
            return -1, math.nan
    text = str(value).strip()
    low = text.lower()
    if low in _MISSING_TOKENS:
        return _EMPTY, math.nan
    if low in _NONFINITE_TOKENS:
        return _VALUE, _NONFINITE_TOKENS[low]
    try:
        return _VALUE, float(text)
    except ValueError:
        m = re.fullmatch(r"tensor\(\s*([^,()]+?)\s*(?:,.*)?\)", text)  # "tensor(0.52)" in a log
        if m:
            return _cell(m.group(1))
        return -1, math.nan


def _flatten(record: Mapping, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in record.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "/"))
        else:
            out[key] = v
    return out


def _table(records: Iterable[Mapping], source: str) -> tuple[list[str], dict[str, list]]:
    """Column names in first-seen order and the raw cells, ``_ABSENT`` for a missing key."""
    names: list[str] = []
    seen: set[str] = set()
    rows = []
    for n, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise InputError(source, f"record {n + 1} is a {type(rec).__name__}, not an object")
        flat = _flatten(rec)
        for k in flat:
            if k not in seen:
                seen.add(k)
                names.append(k)
        rows.append(flat)
    cells = {k: [r.get(k, _Absent) for r in rows] for k in names}
    return names, cells


class _AbsentType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_Absent = _AbsentType()


class _Parsed:
    """A column already parsed (a numeric DataFrame column): NaN is ambiguous."""

    __slots__ = ("values", "states")

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.states = np.where(np.isnan(values), _EMPTY, _VALUE).astype(np.int8)


def _numeric(raw) -> tuple[np.ndarray, np.ndarray] | None:
    """(values, states) of a column, or None when it holds text."""
    if isinstance(raw, _Parsed):
        return raw.values, raw.states
    n = len(raw)
    values = np.full(n, np.nan)
    states = np.zeros(n, np.int8)
    text = 0
    for i, cell in enumerate(raw):
        if cell is _Absent:
            continue
        state, v = _cell(cell)
        if state == -1:
            text += 1
            continue
        states[i] = state
        values[i] = v
    if text and text >= max(1, (states == _VALUE).sum() // 10):
        return None
    return values, states
