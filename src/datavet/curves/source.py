"""Read a training log into a :class:`CurveLog`: CSV/TSV, JSON lines, a JSON array of records, a
pandas DataFrame, a list of dicts, or a :class:`datavet.GradientMonitor` (or its saved log).

Columns are found by name (``loss`` -> ``train_loss``, ``iteration`` -> ``step``, ...) or mapped
by the user (``columns={"train_loss": "my_loss"}``). Rows that share a step are merged, so a log
that writes training and validation values on separate lines reads as one row per step.

A value that was never logged and a value that was logged as NaN are kept apart: ``nan``, ``inf``
and ``-inf`` tokens are logged values; a missing JSON key is "not logged"; an empty CSV cell, a
JSON ``null`` and a DataFrame NaN are ambiguous (pandas writes NaN as an empty cell) and count as
a logged NaN only in a column logged on (nearly) every row, on a row where another such column
was logged. The readers (``curves/readers.py``, the one module of the curve diagnosis that opens
a file) give column names and cells; ``curves/cells.py`` reads one cell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from datavet.curves.cells import _EMPTY, _VALUE, DENSE, _Absent, _numeric, _Parsed, _table
from datavet.curves.readers import (  # noqa: F401 (monitor_records: re-exported)
    _frame_cells,
    _records_from_file,
    _records_from_monitor,
    monitor_records,
)
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


# A column that tells runs apart: an export of several runs (W&B, a pandas concat) in one file.
RUN_COLUMNS = ("run", "run_id", "run_name", "name", "experiment", "experiment_name", "exp_name")


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
                    # exactly 0 for a constant series (a mean of 0.1s is not exactly 0.1)
                    "std": (0.0 if fin.min() == fin.max() else float(fin.std()))
                    if len(fin) > 1
                    else None,
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


def read_curves(
    log: Any,
    *,
    columns: Mapping[str, str] | Iterable[str] | None = None,
    run: str | None = None,
) -> CurveLog:
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
    run : str, optional
        The run to read from a log of several runs (a ``run``, ``run_id``, ``name`` or
        ``experiment`` column): the rows whose run column holds this value. A log of several
        runs is refused without it, since their steps would be spliced into one curve.

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
    notes: list[str] = []
    if isinstance(log, (str, Path)):
        path = Path(log)
        names, cells, fmt = _records_from_file(path, notes)
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
    cells = _one_run(names, cells, mapping, run, source, notes)
    return _build(names, cells, mapping, source=source, fmt=fmt, notes=notes)


def _run_label(cell) -> str | None:
    if cell is None or cell is _Absent or (isinstance(cell, float) and cell != cell):
        return None
    if isinstance(cell, float) and cell == int(cell):
        return str(int(cell))
    return str(cell).strip() or None


def _one_run(names, cells, mapping, run, source: str, notes: list[str]) -> dict:
    """The cells of one run: a log of several (a run column with two or more values) is refused
    unless ``run`` names one."""
    col = next((n for n in names if _norm(n) in RUN_COLUMNS and n not in mapping.values()), None)
    if col is None:
        if run is not None:
            raise UsageError(f"--run {run}: {source} has no run column ({', '.join(RUN_COLUMNS)})")
        return cells
    raw = cells[col]
    labels = [_run_label(c) for c in (raw.values.tolist() if isinstance(raw, _Parsed) else raw)]
    runs = list(dict.fromkeys(x for x in labels if x is not None))
    shown = ", ".join(repr(r) for r in runs[:5]) + (", ..." if len(runs) > 5 else "")
    if run is None:
        if len(runs) > 1:
            raise InputError(
                source,
                f"holds {len(runs)} runs in its {col!r} column ({shown}): their steps would "
                "be spliced into one curve; diagnose one at a time with --run NAME (run= in "
                "Python)",
            )
        return cells
    if str(run) not in runs:
        raise InputError(source, f"has no run {str(run)!r} in its {col!r} column ({shown})")
    keep = np.array([x == str(run) for x in labels])
    notes.append(f"run {str(run)!r}: {int(keep.sum())} of {len(keep)} rows ({col!r} column)")
    return {
        n: _Parsed(c.values[keep]) if isinstance(c, _Parsed) else [x for x, k in zip(c, keep) if k]
        for n, c in cells.items()
    }


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


def _build(names, cells, mapping, *, source: str, fmt: str, notes: list[str]) -> CurveLog:
    n_raw = len(_numeric_len(next(iter(cells.values())))) if cells else 0
    if n_raw == 0:
        raise InputError(source, "has no rows")
    found = _resolve(names, mapping, source)
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
