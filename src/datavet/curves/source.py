"""Read a training log into a :class:`CurveLog`: CSV/TSV, JSON lines, a JSON array of records, a
pandas DataFrame, a list of dicts, or a :class:`datavet.GradientMonitor` (or its saved log).

Columns are found by name (``loss`` -> ``train_loss``, ``iteration`` -> ``step``, ...) or mapped
by the user (``columns={"train_loss": "my_loss"}``). Rows that share a step are merged, so a log
that writes training and validation values on separate lines reads as one row per step.

A value that was never logged and a value that was logged as NaN are kept apart: ``nan``, ``inf``
and ``-inf`` tokens are logged values; a missing JSON key is "not logged"; an empty CSV cell, a
JSON ``null`` and a DataFrame NaN are ambiguous (pandas writes NaN as an empty cell) and count as
a logged NaN only in a column logged on (nearly) every row, on a row where another such column
was logged. This is the one module of the curve diagnosis that opens a file.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from datavet._io import MIB, TooLarge, read_bounded, too_deep
from datavet.errors import InputError, UsageError

# The canonical columns, in the order reports show them.
CANONICAL = (
    "step",
    "epoch",
    "train_loss",
    "val_loss",
    "grad_norm",
    "lr",
    "train_metric",
    "val_metric",
)
SERIES = CANONICAL[2:]  # everything but the x axis

# Names looked for when the user maps nothing (compared after lower-casing and turning
# "/", ".", "-" and spaces into "_"), first match wins.
ALIASES: dict[str, tuple[str, ...]] = {
    "step": (
        "step",
        "global_step",
        "steps",
        "iteration",
        "iter",
        "it",
        "update",
        "batch_idx",
        "trainer_global_step",
        "train_step",
    ),
    "epoch": ("epoch", "epochs", "train_epoch"),
    "train_loss": (
        "train_loss",
        "training_loss",
        "loss",
        "train_loss_step",
        "trn_loss",
        "tr_loss",
        "loss_train",
        "train_loss_epoch",
        "train_total_loss",
    ),
    "val_loss": (
        "val_loss",
        "valid_loss",
        "validation_loss",
        "eval_loss",
        "dev_loss",
        "val_loss_epoch",
        "loss_val",
        "test_loss",
    ),
    "grad_norm": (
        "grad_norm",
        "gradient_norm",
        "global_grad_norm",
        "total_grad_norm",
        "grad_norm_total",
        "total_norm",
        "gnorm",
        "grad_total_norm",
    ),
    "lr": ("lr", "learning_rate", "lr_0", "lr_group_0", "lr_adam", "lr_sgd"),
    "train_metric": (
        "train_metric",
        "train_acc",
        "train_accuracy",
        "accuracy",
        "acc",
        "train_f1",
        "train_auc",
    ),
    "val_metric": (
        "val_metric",
        "val_acc",
        "val_accuracy",
        "valid_acc",
        "valid_accuracy",
        "validation_accuracy",
        "eval_accuracy",
        "eval_acc",
        "dev_acc",
        "val_f1",
        "val_auc",
        "test_acc",
        "test_accuracy",
    ),
}
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


def _norm(name: str) -> str:
    return re.sub(r"[\s/.\-]+", "_", str(name).strip().lower())


@dataclass
class CurveLog:
    """A training log, one row per step, with the canonical series it holds.

    ``values[name]`` holds one float per row (NaN where nothing was logged), ``logged[name]``
    says where a value was logged (a logged value may itself be NaN or inf). ``columns`` maps
    each canonical name found to the log's own column name.
    """

    steps: np.ndarray
    values: dict[str, np.ndarray]
    logged: dict[str, np.ndarray]
    columns: dict[str, str]
    source: str = "<frame>"
    format: str = "frame"
    raw_rows: int = 0
    step_from: str = "step"  # "step", "epoch" or "row" (no step column: the row number)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, np.ndarray] = field(default_factory=dict)  # other numeric columns

    def __len__(self) -> int:
        return len(self.steps)

    def has(self, name: str) -> bool:
        return name in self.values and bool(self.logged[name].any())

    def points(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row positions, steps, values) where ``name`` was logged; values may be non-finite."""
        if not self.has(name):
            empty = np.zeros(0)
            return empty.astype(int), empty, empty
        rows = np.flatnonzero(self.logged[name])
        return rows, self.steps[rows], self.values[name][rows]

    @property
    def integer_steps(self) -> bool:
        s = self.steps
        return bool(len(s)) and bool(np.all(s >= 0)) and bool(np.all(s == np.round(s)))

    def summary(self) -> dict:
        """The report's ``datasets["log"]`` entry: per-column counts and statistics."""
        cols = []
        for name in ("step", *SERIES):
            if name == "step":
                v, logged = self.steps, np.ones(len(self.steps), bool)
                label = self.columns.get("step") or self.columns.get("epoch") or "(row)"
            elif self.has(name):
                v, logged, label = self.values[name], self.logged[name], self.columns[name]
            else:
                continue
            x = v[logged]
            fin = x[np.isfinite(x)]
            distinct = len(np.unique(fin)) if len(fin) else 0
            cols.append(
                {
                    "name": label,
                    "dtype": "float64",
                    "kind": name,
                    "count": int(logged.sum()),
                    "nan": int(np.isnan(x).sum()),
                    "inf": int(np.isinf(x).sum()),
                    "mean": float(fin.mean()) if len(fin) else None,
                    "std": float(fin.std()) if len(fin) > 1 else None,
                    "min": float(fin.min()) if len(fin) else None,
                    "max": float(fin.max()) if len(fin) else None,
                    "distinct": distinct if distinct <= 1024 else None,
                }
            )
        return {
            "source": self.source,
            "format": self.format,
            "rows": len(self.steps),
            "raw_rows": self.raw_rows,
            "columns": cols,
        }


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


# --------------------------------------------------------------------------------------------
# readers


MAX_LOG_BYTES = 512 * MIB  # a CSV log of ten million steps; /dev/zero stops at its first byte
MAX_DEPTH = 32  # nesting of a JSON record ({"train": {"loss": ...}} is 2)
_TOO_DEEP = object()


def _read_text(path: Path) -> str:
    try:
        return read_bounded(path, MAX_LOG_BYTES).decode("utf-8-sig")
    except TooLarge as exc:
        raise InputError(str(path), f"{exc}: not a training log (CSV, TSV or JSON lines)") from None
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a directory, not a training log") from None
    except UnicodeDecodeError:
        raise InputError(str(path), "is not UTF-8 text (CSV, TSV or JSON lines)") from None
    except OSError as exc:
        raise InputError(str(path), exc.strerror or str(exc)) from None


def _records_from_file(path: Path) -> tuple[list[str], dict[str, list], str]:
    text = _read_text(path)
    src = str(path)
    if not text.strip():
        raise InputError(src, "is empty")
    head = text.lstrip()[:1]
    suffix = path.suffix.lower()
    if head == "[" or (head == "{" and suffix == ".json" and "\n{" not in text.strip()):
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(src, f"is not valid JSON ({exc.msg}, line {exc.lineno})") from None
        except RecursionError:
            payload = _TOO_DEEP
        if payload is _TOO_DEEP or too_deep(payload, MAX_DEPTH):
            raise InputError(src, f"nests deeper than {MAX_DEPTH} levels: not a training log")
        if isinstance(payload, Mapping):
            payload = _monitor_records(payload, src)
        names, cells = _table(payload, src)
        return names, cells, "json"
    if head == "{" or suffix in (".jsonl", ".ndjson"):
        records = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(src, f"line {lineno} is not JSON ({exc.msg})") from None
            except RecursionError:
                record = _TOO_DEEP
            if record is _TOO_DEEP or too_deep(record, MAX_DEPTH):
                raise InputError(src, f"line {lineno} nests deeper than {MAX_DEPTH} levels")
            records.append(record)
        names, cells = _table(records, src)
        return names, cells, "jsonl"
    delimiter = (
        "\t"
        if suffix == ".tsv" or ("\t" in text.splitlines()[0] and "," not in text.splitlines()[0])
        else ","
    )
    reader = _rows(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), src)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(src, "is empty") from None
    header = [h.strip() for h in header]
    if len(header) < 1 or not any(header):
        raise InputError(src, "has no header row")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InputError(src, f"repeats the column name(s) {', '.join(map(repr, dup))}")
    cells: dict[str, list] = {h: [] for h in header}
    for lineno, row in enumerate(reader, 2):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) > len(header):
            raise InputError(src, f"line {lineno} has {len(row)} fields, the header {len(header)}")
        for i, h in enumerate(header):
            cells[h].append(row[i] if i < len(row) else "")
    return header, cells, "tsv" if delimiter == "\t" else "csv"


def _monitor_records(payload: Mapping, source: str) -> list:
    """Records from a JSON object: a GradientMonitor's ``to_dict()`` (``curve`` and
    ``loss_curve``), a datavet report holding one (``probes.monitor``), or any object with a
    list of records under ``history`` / ``records``."""
    probes = payload.get("probes")
    if isinstance(probes, Mapping) and isinstance(probes.get("monitor"), Mapping):
        payload = probes["monitor"]
    if isinstance(payload.get("curve"), list):
        return monitor_records(payload)
    for key in ("history", "records", "log", "rows"):
        if isinstance(payload.get(key), list):
            return payload[key]
    raise InputError(
        source,
        "is a JSON object without a list of records (expected a list, JSON lines, a "
        "GradientMonitor's to_dict() or a datavet report of one)",
    )


def monitor_records(saved: Mapping) -> list[dict]:
    """One record per step from a GradientMonitor's ``to_dict()``: ``step``, ``grad_norm`` and
    ``train_loss`` (when the loss was passed to ``monitor.step``).

    Every entry of the monitor's curves is a recorded step, so a null there is a value JSON
    could not hold (NaN or inf): it is read as NaN. The monitor keeps at most 400 evenly spaced
    steps plus every spike, so spikes survive; other rules see the thinned curve.
    """
    rows: dict[float, dict] = {}

    def put(pairs, key):
        for pair in pairs or ():
            step, value = pair[0], pair[1]
            rows.setdefault(step, {"step": step})[key] = math.nan if value is None else value

    put(saved.get("curve"), "grad_norm")
    put(saved.get("loss_curve"), "train_loss")
    return [rows[k] for k in sorted(rows)]


def _records_from_monitor(obj: Any) -> list[Mapping] | None:
    """Records from a live :class:`datavet.GradientMonitor` (every recorded step), or from an
    object with ``to_records()`` / ``records`` / ``history``; None when ``obj`` is neither."""
    if hasattr(obj, "norms") and hasattr(obj, "step_numbers") and hasattr(obj, "losses"):
        _ = obj.first_nonfinite  # reading a result flushes norms still on the device
        return [
            {"step": s, "grad_norm": n, **({"train_loss": loss} if loss is not None else {})}
            for s, n, loss in zip(obj.step_numbers, obj.norms, obj.losses)
        ]
    for attr in ("to_records", "records", "history"):
        value = getattr(obj, attr, None)
        if value is None:
            continue
        value = value() if callable(value) else value
        if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a DataFrame
            return value.to_dict("records")
        if isinstance(value, list):
            return [v for v in value if isinstance(v, Mapping)]
    return None


def _frame_cells(df) -> tuple[list[str], dict[str, list]]:
    names = [str(c) for c in df.columns]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError("<frame>", f"repeats the column name(s) {', '.join(map(repr, dup))}")
    cells = {}
    for name, col in zip(names, df.columns):
        s = df[col]
        if s.dtype.kind in "biuf":
            # NaN in a frame is ambiguous (not logged, or logged NaN)
            cells[name] = _Parsed(s.to_numpy(dtype=float))
        else:
            cells[name] = [None if _isna(v) else v for v in s.tolist()]
    return names, cells


def _isna(v) -> bool:
    try:
        return v is None or (isinstance(v, float) and math.isnan(v)) or bool(v != v)
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------------------------
# the one entry point


def parse_columns(items: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["train_loss=loss", ...]`` or a mapping -> {canonical: log column}; checked."""
    if items is None:
        return {}
    if isinstance(items, Mapping):
        pairs = list(items.items())
    else:
        pairs = []
        for item in items:
            for part in str(item).split(","):
                if not part.strip():
                    continue
                if "=" not in part:
                    raise UsageError(
                        f"column mapping {part!r} is not CANONICAL=NAME (e.g. train_loss=loss)"
                    )
                k, v = part.split("=", 1)
                pairs.append((k.strip(), v.strip()))
    out = {}
    for k, v in pairs:
        if k not in CANONICAL:
            raise UsageError(
                f"unknown curve column {k!r}; choose from {', '.join(CANONICAL)} "
                "(map them as CANONICAL=NAME)"
            )
        out[k] = str(v)
    return out


def read_curves(log: Any, *, columns: Mapping[str, str] | Iterable[str] | None = None) -> CurveLog:
    """Read a training log.

    Parameters
    ----------
    log : path, DataFrame, list of dicts, GradientMonitor or CurveLog
        CSV/TSV, JSON lines (``.jsonl``), a JSON array of records or a saved GradientMonitor
        log (``{"history": [...]}``); a pandas DataFrame; records; a monitor object.
    columns : mapping, optional
        ``{canonical: name in the log}`` for names datavet does not recognise, e.g.
        ``{"train_loss": "nll", "step": "it"}``. Canonical names: step, epoch, train_loss,
        val_loss, grad_norm, lr, train_metric, val_metric.

    Returns
    -------
    CurveLog

    Examples
    --------
    >>> import pandas as pd
    >>> log = read_curves(pd.DataFrame({"it": [0, 1], "nll": [2.3, 2.1]}),
    ...                   columns={"step": "it", "train_loss": "nll"})
    >>> log.columns
    {'step': 'it', 'train_loss': 'nll'}
    """
    if isinstance(log, CurveLog):
        return log
    mapping = parse_columns(columns)
    if isinstance(log, (str, Path)):
        path = Path(log)
        names, cells, fmt = _records_from_file(path)
        source = str(log)
    elif hasattr(log, "columns") and hasattr(log, "dtypes"):  # a pandas DataFrame
        names, cells = _frame_cells(log)
        fmt, source = "frame", "<frame>"
    elif isinstance(log, list):
        names, cells = _table(log, "<records>")
        fmt, source = "records", "<records>"
    else:
        records = _records_from_monitor(log)
        if records is None:
            raise UsageError(
                f"cannot read a training log from a {type(log).__name__}: pass a path, a "
                "DataFrame, a list of dicts or a GradientMonitor"
            )
        names, cells = _table(records, "<monitor>")
        fmt, source = "monitor", f"<{type(log).__name__}>"
    return _build(names, cells, mapping, source=source, fmt=fmt)


def _resolve(names: list[str], mapping: Mapping[str, str], source: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for canon, name in mapping.items():
        if name not in names:
            close = [n for n in names if _norm(n) == _norm(name)]
            if len(close) == 1:
                name = close[0]
            else:
                raise InputError(
                    source,
                    f"has no column {name!r} (mapped to {canon}); its columns are "
                    + ", ".join(repr(n) for n in names[:30]),
                )
        found[canon] = name
    taken = set(found.values())
    by_norm: dict[str, str] = {}
    for n in names:
        by_norm.setdefault(_norm(n), n)
    for canon in CANONICAL:
        if canon in found:
            continue
        for alias in ALIASES[canon]:
            n = by_norm.get(alias)
            if n is not None and n not in taken:
                found[canon] = n
                taken.add(n)
                break
    return found


def _numeric_len(col):
    return col.values if isinstance(col, _Parsed) else col


def _build(names, cells, mapping, *, source: str, fmt: str) -> CurveLog:
    n_raw = len(_numeric_len(next(iter(cells.values())))) if cells else 0
    if n_raw == 0:
        raise InputError(source, "has no rows")
    found = _resolve(names, mapping, source)
    notes: list[str] = []
    parsed: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for canon, name in list(found.items()):
        col = _numeric(cells[name])
        if col is None:
            if canon in mapping:
                raise InputError(source, f"column {name!r} ({canon}) holds text, not numbers")
            del found[canon]
            continue
        parsed[canon] = col
    if not any(c in parsed for c in ("train_loss", "val_loss", "grad_norm")):
        raise InputError(
            source,
            "has no loss or gradient-norm column datavet recognises (columns: "
            + ", ".join(repr(n) for n in names[:30])
            + "); map one with --column train_loss=NAME",
        )
    # the x axis
    if "step" in parsed:
        x_values, x_states = parsed.pop("step")
        step_from = "step"
    elif "epoch" in parsed:
        x_values, x_states = parsed["epoch"]
        step_from = "epoch"
    else:
        x_values, x_states = np.arange(n_raw, dtype=float), np.full(n_raw, _VALUE, np.int8)
        step_from = "row"
    bad_x = (x_states == _VALUE) & ~np.isfinite(x_values)
    if bad_x.any():
        raise InputError(source, f"the {step_from} column holds NaN or inf")
    keep = x_states == _VALUE
    if not keep.any():
        raise InputError(source, f"the {step_from} column is empty")
    if not keep.all():
        notes.append(f"{int((~keep).sum())} rows without a {step_from} were left out")
    order = np.flatnonzero(keep)
    xs = x_values[order]
    if np.any(np.diff(xs) < 0):
        notes.append(
            f"the {step_from} column goes backwards (a resumed run?): rows were sorted by "
            f"{step_from}, and for a repeated {step_from} the later row wins"
        )
    # merge rows with the same step: per column, the last logged value wins
    sort = np.argsort(xs, kind="stable")
    xs_sorted = xs[sort]
    uniq, first = np.unique(xs_sorted, return_index=True)
    group = np.searchsorted(uniq, xs_sorted)
    m = len(uniq)
    values: dict[str, np.ndarray] = {}
    states: dict[str, np.ndarray] = {}
    for canon, (v, s) in parsed.items():
        v, s = v[order][sort], s[order][sort]
        if m == len(xs_sorted):  # one row per step: nothing to merge
            values[canon], states[canon] = v, s
            continue
        out_v = np.full(m, np.nan)
        out_s = np.zeros(m, np.int8)
        for g, val, st in zip(group, v, s):
            if st == _VALUE or (st == _EMPTY and out_s[g] != _VALUE):
                out_v[g] = val if st == _VALUE else np.nan
                out_s[g] = st
        values[canon], states[canon] = out_v, out_s
    logged = _logged(states, notes)
    for canon in list(values):
        if canon == "epoch" and step_from == "epoch":
            continue
        if not logged[canon].any():
            notes.append(f"column {found[canon]!r} ({canon}) holds no values")
    extra = {}  # dropout columns, raw (C007 reads only whether dropout was above 0)
    for name in names:
        if "dropout" in str(name).lower() and name not in found.values():
            col = _numeric(cells[name])
            if col is not None:
                extra[str(name)] = np.where(col[1] == _VALUE, col[0], np.nan)
    return CurveLog(
        steps=uniq.astype(float),
        values=values,
        logged=logged,
        columns=found,
        source=source,
        format=fmt,
        raw_rows=n_raw,
        step_from=step_from,
        notes=notes,
        extra=extra,
    )


def _logged(states: dict[str, np.ndarray], notes: list[str]) -> dict[str, np.ndarray]:
    """Where each column was logged. An ambiguous cell (empty, null, frame NaN) counts as a
    logged NaN only in a dense column, after its first value, on a row where another dense
    column holds a value (so an evaluation-only row does not read as a NaN training loss)."""
    value = {c: s == _VALUE for c, s in states.items()}
    dense = {}
    for c in states:
        idx = np.flatnonzero(value[c])
        if len(idx) == 0:
            dense[c] = False
            continue
        # rows after the last value may be the NaN tail of a diverged run: count them only when
        # another column was written there.
        dense[c] = len(idx) >= 5 and value[c][idx[0] : idx[-1] + 1].mean() >= DENSE and c != "epoch"
    out = {}
    for c, s in states.items():
        logged = value[c].copy()
        if dense[c]:
            first = int(np.flatnonzero(value[c])[0])
            others = [value[o] for o in states if o != c and dense[o] and o != "epoch"]
            support = np.logical_or.reduce(others) if others else np.zeros(len(s), bool)
            ambiguous = (s == _EMPTY) & support
            ambiguous[:first] = False
            if ambiguous.any():
                notes.append(
                    f"{int(ambiguous.sum())} empty cell(s) in the {c} column, on rows where "
                    "other columns were logged, were read as NaN (write NaN as 'nan' to be "
                    "explicit)"
                )
            logged |= ambiguous
        out[c] = logged
        if dense[c] and c != "epoch":
            last = int(np.flatnonzero(logged)[-1])
            tail = len(s) - 1 - last
            if tail >= 3 and not (s[last + 1 :] == _VALUE).any():
                notes.append(
                    f"the {c} column stops {tail} rows before the log ends: if the run wrote "
                    "NaN as empty cells there (pandas does), write 'nan' so datavet can see it"
                )
    return out


def _rows(reader, src: str):
    """``reader``'s rows; a malformed line (a stray line break or NUL) is a one-line error
    naming the file and the line, not an internal error."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(src, f"line {reader.line_num}: {exc}") from None
